// Random ops: the Philox core against the Random123 known answers, the stateless ops'
// determinism and their key derivation, the stateful ops' per-node state (fresh values on each
// call, reproducible when seeded), moments and ranges of 10000 samples, and the error paths.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "exec/kernel_test_util.h"
#include "kernels/philox.h"

namespace kiln::exec {
namespace {

using random::Philox;
using testing::CheckError;
using testing::Make;
using testing::OpRunner;

TEST_CASE("Philox4x32-10 matches the Random123 known-answer vectors") {
  struct Kat {
    Philox::Result counter;
    Philox::Key key;
    Philox::Result want;
  };
  const Kat kats[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat& k : kats) {
    Philox gen(k.counter, k.key);
    CHECK(gen() == k.want);
  }
}

TEST_CASE("Philox counter: each block and Skip move the 128-bit counter") {
  Philox a(Philox::Result{0xfffffffe, 0xffffffff, 0xffffffff, 7}, Philox::Key{1, 2});
  a();
  CHECK(a.counter() == Philox::Result{0xffffffff, 0xffffffff, 0xffffffff, 7});
  a();
  CHECK(a.counter() == Philox::Result{0, 0, 0, 8});
  Philox b(Philox::Result{0xffffff00, 5, 0, 0}, Philox::Key{0, 0});
  b.Skip(0x100000100ull);
  CHECK(b.counter() == Philox::Result{0, 7, 0, 0});
  // Skipping n blocks lands where n calls would.
  Philox c(123, 456), d(123, 456);
  for (int i = 0; i < 5; ++i) c();
  d.Skip(5);
  CHECK(c() == d());
}

// ---- stateless -------------------------------------------------------------------------------

Result<Tensor> Stateless(const std::string& op, DType dtype, const Shape& shape,
                         const Tensor& seed) {
  std::vector<int64_t> dims = shape.ToVector();
  return OpRunner(op)
      .Type("dtype", dtype)
      .Type("T", DType::kInt64)
      .Type("Tseed", seed.dtype())
      .ConstantInput(Make<int64_t>(dims, Shape{static_cast<int64_t>(dims.size())}))
      .Input(seed)
      .Run1();
}

template <typename T>
void Moments(const Tensor& t, double* mean, double* var) {
  double s = 0, s2 = 0;
  for (T v : t.flat<T>()) {
    s += v;
    s2 += double(v) * v;
  }
  const double n = static_cast<double>(t.NumElements());
  *mean = s / n;
  *var = s2 / n - *mean * *mean;
}

template <typename T>
void CheckStateless() {
  const DType dt = kDTypeOf<T>;
  const Tensor seed = Make<int64_t>({1, 2}, {2});
  CAPTURE(DTypeShortName(dt));
  for (const char* op : {"StatelessRandomUniform", "StatelessRandomNormal"}) {
    CAPTURE(op);
    const bool uniform = std::string(op) == "StatelessRandomUniform";
    auto a = Stateless(op, dt, {100, 100}, seed);
    REQUIRE_MESSAGE(a.ok(), a.status().ToString());
    REQUIRE(a->shape() == Shape({100, 100}));
    auto b = Stateless(op, dt, {100, 100}, seed);
    REQUIRE(b.ok());
    CHECK(TensorsEqual(*a, *b));  // same seed, same values
    auto c = Stateless(op, dt, {100, 100}, Make<int64_t>({1, 3}, {2}));
    REQUIRE(c.ok());
    int64_t same = 0;
    for (int64_t i = 0; i < c->NumElements(); ++i) same += a->data<T>()[i] == c->data<T>()[i];
    CHECK(same < 10);  // another seed, other values
    // An int32 seed with the same values gives the same stream.
    auto d = Stateless(op, dt, {100, 100}, Make<int32_t>({1, 2}, {2}));
    REQUIRE(d.ok());
    CHECK(TensorsEqual(*a, *d));
    // A shorter request is a prefix of the longer one (a cut-short last group included).
    auto e = Stateless(op, dt, {7}, seed);
    REQUIRE(e.ok());
    for (int i = 0; i < 7; ++i) CHECK(e->data<T>()[i] == a->data<T>()[i]);

    double mean, var;
    Moments<T>(*a, &mean, &var);
    if (uniform) {
      // 10000 samples: the mean's sd is 0.0029, the variance's 0.00075.
      CHECK(std::abs(mean - 0.5) < 0.015);
      CHECK(std::abs(var - 1.0 / 12) < 0.005);
      for (T v : a->flat<T>()) {
        CHECK(v >= T(0));
        CHECK(v < T(1));
      }
    } else {
      // 10000 samples: the mean's sd is 0.01, the variance's 0.014.
      CHECK(std::abs(mean) < 0.05);
      CHECK(std::abs(var - 1) < 0.07);
    }
  }
}

TEST_CASE("stateless random ops: float32") { CheckStateless<float>(); }
TEST_CASE("stateless random ops: float64") { CheckStateless<double>(); }

TEST_CASE("StatelessRandomUniform derives key and counter from the seed as TF does") {
  // TF's GenerateKey: one Philox block over (seed0, seed1) under a fixed key gives the key
  // and the high half of the counter.
  const uint64_t s0 = 42, s1 = uint64_t(-7);  // int64 -7, as the seed tensor holds it
  Philox mixer(Philox::Result{uint32_t(s0), uint32_t(s0 >> 32), uint32_t(s1), uint32_t(s1 >> 32)},
               Philox::Key{0x3ec8f720, 0x02461e29});
  const Philox::Result mix = mixer();
  Philox gen(Philox::Result{0, 0, mix[2], mix[3]}, Philox::Key{mix[0], mix[1]});
  std::vector<float> want;
  for (int block = 0; block < 2; ++block) {
    Philox::Result r = gen();
    for (uint32_t x : r) want.push_back(random::Uint32ToFloat(x));
  }
  want.resize(6);
  auto got =
      Stateless("StatelessRandomUniform", DType::kFloat, {2, 3}, Make<int64_t>({42, -7}, {2}));
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  CHECK(TensorsEqual(*got, Make<float>(want, {2, 3})));
  // The float conversion keeps the low 23 bits as the mantissa of [1, 2), minus 1.
  CHECK(random::Uint32ToFloat(0) == 0.0f);
  CHECK(random::Uint32ToFloat(0x7fffff) == 1.0f - 1.0f / (1 << 23));
  CHECK(random::Uint32ToFloat(0xff800000u) == 0.0f);
  CHECK(random::Uint64ToDouble(0xfff00000u, 0) == 0.0);
  CHECK(random::Uint64ToDouble(0x80000u, 0) == 0.5);
}

TEST_CASE("stateless random ops: shapes, empty outputs and errors") {
  auto empty =
      Stateless("StatelessRandomNormal", DType::kFloat, {0, 3}, Make<int64_t>({1, 2}, {2}));
  REQUIRE(empty.ok());
  CHECK(empty->shape() == Shape({0, 3}));
  auto scalar = Stateless("StatelessRandomUniform", DType::kDouble, {}, Make<int64_t>({1, 2}, {2}));
  REQUIRE(scalar.ok());
  CHECK(scalar->shape() == Shape());

  OpRunner partial("StatelessRandomNormal");
  partial.InputSpec({DType::kInt32, PartialShape{3}}).InputSpec({DType::kInt64, PartialShape{2}});
  REQUIRE(partial.Prepare().ok());  // dtype float32, T int32, Tseed int64 by default
  CHECK(partial.output_specs()[0] == TensorSpec{DType::kFloat, PartialShape{-1, -1, -1}});

  OpRunner seed_shape("StatelessRandomUniform", "su");
  seed_shape.InputSpec({DType::kInt32, PartialShape{2}}).InputSpec({DType::kInt64, Shape{3}});
  CheckError(seed_shape.Prepare(), {"node 'su'", "input 'seed'", "(2,)", "(3,)"});
  OpRunner seed_type("StatelessRandomUniform");
  seed_type.InputSpec({DType::kInt32, PartialShape{2}}).InputSpec({DType::kInt32, Shape{2}});
  CheckError(seed_type.Prepare(), {"input 'seed'", "expected dtype int64", "got int32"});
  OpRunner dtype("StatelessRandomNormal");
  dtype.Type("dtype", DType::kInt32)
      .InputSpec({DType::kInt32, PartialShape{2}})
      .InputSpec({DType::kInt64, Shape{2}});
  CheckError(dtype.Prepare(), {"attr 'dtype'", "int32", "not supported"});
  OpRunner neg("StatelessRandomNormal");
  neg.ConstantInput(Make<int32_t>({2, -1}, {2})).InputSpec({DType::kInt64, Shape{2}});
  CheckError(neg.Prepare(), {"input 'shape'", "dimension 1 is -1"});
  OpRunner rank("StatelessRandomNormal");
  rank.InputSpec({DType::kInt32, Shape{2, 2}}).InputSpec({DType::kInt64, Shape{2}});
  CheckError(rank.Prepare(), {"input 'shape'", "expected rank 1"});
  auto late = OpRunner("StatelessRandomNormal", "late")
                  .Input(Make<int32_t>({2, -4}, {2}))
                  .Input(Make<int64_t>({1, 2}, {2}))
                  .Run1();
  CheckError(late.status(), {"node 'late'", "input 'shape'"});
}

// ---- stateful --------------------------------------------------------------------------------

// One prepared node called several times (OpRunner prepares afresh on every run).
class Node {
 public:
  Node(std::string op, ProtoAttrMap attrs, std::vector<Tensor> inputs)
      : op_(std::move(op)), attrs_(std::move(attrs)), inputs_(std::move(inputs)) {}

  Status Prepare() {
    std::vector<TensorSpec> specs;
    std::vector<const Tensor*> values;
    for (const Tensor& t : inputs_) {
      specs.push_back(TensorSpec{t.dtype(), t.shape()});
      values.push_back(&t);
    }
    SingleOpOptions options;
    options.print = &sink_;
    auto op = SingleOp::Prepare(op_, "node", attrs_, specs, values, options);
    if (!op.ok()) return op.status();
    op_state_.emplace(std::move(op).value());
    flags_ = op_state_->definition().flags;
    specs_ = op_state_->output_specs();
    return OkStatus();
  }

  Result<Tensor> Call() {
    KILN_ASSIGN_OR_RETURN(std::vector<Tensor> outs, op_state_->Run(inputs_));
    return outs[0];
  }

  uint32_t flags() const { return flags_; }
  const std::vector<TensorSpec>& specs() const { return specs_; }

 private:
  std::string op_;
  ProtoAttrMap attrs_;
  std::vector<Tensor> inputs_;
  uint32_t flags_ = 0;
  std::optional<SingleOp> op_state_;
  PrintSink sink_ = [](std::string_view, std::string_view) {};
  std::vector<TensorSpec> specs_;
};

ProtoAttrMap RandomAttrs(DType dtype_attr, const char* dtype_name, int64_t seed, int64_t seed2) {
  ProtoAttrMap attrs;
  attrs[dtype_name].set_type(static_cast<tensorflow::DataType>(DTypeToProto(dtype_attr)));
  attrs["T"].set_type(tensorflow::DT_INT32);
  attrs["seed"].set_i(seed);
  attrs["seed2"].set_i(seed2);
  return attrs;
}

Node FloatNode(const std::string& op, DType dtype, Shape shape, int64_t seed, int64_t seed2) {
  std::vector<int32_t> dims(shape.dims().begin(), shape.dims().end());
  Node n(op, RandomAttrs(dtype, "dtype", seed, seed2),
         {Make<int32_t>(dims, Shape{static_cast<int64_t>(dims.size())})});
  Status s = n.Prepare();
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  return n;
}

template <typename T>
void CheckStateful() {
  const DType dt = kDTypeOf<T>;
  CAPTURE(DTypeShortName(dt));
  for (const char* op : {"RandomUniform", "RandomStandardNormal"}) {
    CAPTURE(op);
    const bool uniform = std::string(op) == "RandomUniform";
    Node node = FloatNode(op, dt, {10000}, 0, 0);
    CHECK((node.flags() & kOpStateful) != 0);
    CHECK(node.specs()[0] == TensorSpec{dt, PartialShape{10000}});
    auto first = node.Call();
    REQUIRE_MESSAGE(first.ok(), first.status().ToString());
    auto second = node.Call();
    REQUIRE(second.ok());
    int64_t same = 0;
    for (int64_t i = 0; i < 10000; ++i) same += first->data<T>()[i] == second->data<T>()[i];
    CHECK(same < 10);  // a fresh draw on every call

    double mean, var;
    Moments<T>(*first, &mean, &var);
    if (uniform) {
      // 10000 samples: the mean's sd is 0.0029, the variance's 0.00075.
      CHECK(std::abs(mean - 0.5) < 0.015);
      CHECK(std::abs(var - 1.0 / 12) < 0.005);
      for (T v : first->flat<T>()) {
        CHECK(v >= T(0));
        CHECK(v < T(1));
      }
    } else {
      // 10000 samples: the mean's sd is 0.01, the variance's 0.014.
      CHECK(std::abs(mean) < 0.05);
      CHECK(std::abs(var - 1) < 0.07);
    }

    // Seeded: two nodes (two program runs) give the same sequence of calls.
    Node s1 = FloatNode(op, dt, {3, 5}, 87654321, 2);
    Node s2 = FloatNode(op, dt, {3, 5}, 87654321, 2);
    auto a1 = s1.Call(), a2 = s1.Call();
    auto b1 = s2.Call(), b2 = s2.Call();
    REQUIRE((a1.ok() && a2.ok() && b1.ok() && b2.ok()));
    CHECK(TensorsEqual(*a1, *b1));
    CHECK(TensorsEqual(*a2, *b2));
    CHECK(!TensorsEqual(*a1, *a2));
    // Unseeded nodes differ from each other.
    Node u1 = FloatNode(op, dt, {100}, 0, 0);
    Node u2 = FloatNode(op, dt, {100}, 0, 0);
    CHECK(!TensorsEqual(*u1.Call(), *u2.Call()));
  }
}

TEST_CASE("stateful random ops: float32") { CheckStateful<float>(); }
TEST_CASE("stateful random ops: float64") { CheckStateful<double>(); }

TEST_CASE("seeded RandomUniform follows TF's generator: Philox(seed, seed2), 256 blocks/value") {
  Node node = FloatNode("RandomUniform", DType::kFloat, {5}, 3, 4);
  auto a = node.Call();
  auto b = node.Call();
  REQUIRE((a.ok() && b.ok()));
  Philox gen(3, 4);
  CHECK(gen.key() == Philox::Key{3, 0});
  CHECK(gen.counter() == Philox::Result{0, 0, 4, 0});
  Philox later = gen;
  later.Skip(5 * 256);
  std::vector<float> want_a, want_b;
  for (int block = 0; block < 2; ++block) {
    for (uint32_t x : gen()) want_a.push_back(random::Uint32ToFloat(x));
    for (uint32_t x : later()) want_b.push_back(random::Uint32ToFloat(x));
  }
  want_a.resize(5);
  want_b.resize(5);
  CHECK(TensorsEqual(*a, Make<float>(want_a, {5})));
  CHECK(TensorsEqual(*b, Make<float>(want_b, {5})));
}

template <typename T>
void CheckUniformInt(T lo, T hi) {
  CAPTURE(DTypeShortName(kDTypeOf<T>));
  ProtoAttrMap attrs = RandomAttrs(kDTypeOf<T>, "Tout", 0, 0);
  Node node("RandomUniformInt", attrs,
            {Make<int32_t>({10000}, {1}), Tensor::Scalar<T>(lo), Tensor::Scalar<T>(hi)});
  Status s = node.Prepare();
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  CHECK(node.specs()[0] == TensorSpec{kDTypeOf<T>, PartialShape{10000}});
  auto a = node.Call();
  auto b = node.Call();
  REQUIRE_MESSAGE(a.ok(), a.status().ToString());
  REQUIRE(b.ok());
  CHECK(!TensorsEqual(*a, *b));
  std::set<T> seen;
  double sum = 0;
  for (T v : a->flat<T>()) {
    CHECK(v >= lo);
    CHECK(v < hi);
    seen.insert(v);
    sum += static_cast<double>(v);
  }
  CHECK(seen.size() == static_cast<size_t>(hi - lo));  // every value turns up
  // Within 5 standard deviations of the mean of a discrete uniform distribution.
  const double n = static_cast<double>(hi - lo);
  const double sd_of_mean = std::sqrt((n * n - 1) / 12 / 10000);
  CHECK(std::abs(sum / 10000 - (double(lo) + double(hi) - 1) / 2) < 5 * sd_of_mean);
}

TEST_CASE("RandomUniformInt: range, coverage, fresh values") {
  CheckUniformInt<int32_t>(-5, 6);
  CheckUniformInt<int64_t>(100, 117);
}

TEST_CASE("stateful random ops: errors") {
  ProtoAttrMap attrs = RandomAttrs(DType::kInt32, "Tout", 0, 0);
  Node bad_range("RandomUniformInt", attrs,
                 {Make<int32_t>({4}, {1}), Tensor::Scalar<int32_t>(3), Tensor::Scalar<int32_t>(3)});
  REQUIRE(bad_range.Prepare().ok());
  CheckError(bad_range.Call().status(), {"node 'node'", "minval < maxval", "3 >= 3"});
  Node vec_bounds(
      "RandomUniformInt", attrs,
      {Make<int32_t>({4}, {1}), Make<int32_t>({0, 1}, {2}), Tensor::Scalar<int32_t>(3)});
  CheckError(vec_bounds.Prepare(), {"input 'minval'", "expected rank 0"});

  ProtoAttrMap int_dtype = RandomAttrs(DType::kInt32, "dtype", 0, 0);
  Node wrong_dtype("RandomUniform", int_dtype, {Make<int32_t>({4}, {1})});
  CheckError(wrong_dtype.Prepare(), {"attr 'dtype'", "int32", "not supported"});
  ProtoAttrMap float_dtype = RandomAttrs(DType::kFloat, "dtype", 0, 0);
  Node wrong_shape_type("RandomStandardNormal", float_dtype, {Make<int64_t>({4}, {1})});
  CheckError(wrong_shape_type.Prepare(), {"input 'shape'", "expected dtype int32", "got int64"});
  ProtoAttrMap no_t = float_dtype;
  no_t.erase("T");
  Node missing_t("RandomStandardNormal", no_t, {Make<int32_t>({4}, {1})});
  CheckError(missing_t.Prepare(), {"missing attr 'T'"});
  ProtoAttrMap bad_seed = float_dtype;
  bad_seed["seed"].set_s("x");
  Node wrong_seed("RandomUniform", bad_seed, {Make<int32_t>({4}, {1})});
  CheckError(wrong_seed.Prepare(), {"attr 'seed'"});

  // A non-constant shape: its length gives the rank.
  OpRunner r("RandomUniform");
  r.Type("dtype", DType::kFloat).Type("T", DType::kInt32).InputSpec({DType::kInt32, Shape{2}});
  REQUIRE(r.Prepare().ok());
  CHECK(r.output_specs()[0] == TensorSpec{DType::kFloat, PartialShape{-1, -1}});
  // Empty output.
  Node empty = FloatNode("RandomStandardNormal", DType::kDouble, {0, 4}, 1, 1);
  auto got = empty.Call();
  REQUIRE(got.ok());
  CHECK(got->shape() == Shape({0, 4}));
}

// ---- against TensorFlow ----------------------------------------------------------------------

// Values printed by TensorFlow 2.21 (tensorflow-cpu, tf.raw_ops) for the same ops, seeds and
// shapes. Uniform values are pure bit manipulation and must match exactly; normal values go
// through log/sqrt/sin/cos and may differ in the last bit.
template <typename T>
void CheckValues(const Tensor& got, const std::vector<double>& want, double rel_tol) {
  REQUIRE(got.NumElements() == static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    CAPTURE(i);
    const double g = static_cast<double>(got.data<T>()[i]);
    if (rel_tol == 0) {
      CHECK(got.data<T>()[i] == static_cast<T>(want[i]));
    } else {
      CHECK(std::abs(g - want[i]) <= rel_tol * std::max(1.0, std::abs(want[i])));
    }
  }
}

TEST_CASE("stateless random ops give TensorFlow's values") {
  const Tensor seed = Make<int64_t>({42, -7}, {2});
  auto uf = Stateless("StatelessRandomUniform", DType::kFloat, {7}, seed);
  REQUIRE(uf.ok());
  CheckValues<float>(
      *uf,
      {0.39606618881225586, 0.7710427045822144, 0.2565664052963257, 0.7873572111129761,
       0.6018772125244141, 0.9119014739990234, 0.6322237253189087},
      0);
  auto nf = Stateless("StatelessRandomNormal", DType::kFloat, {7}, seed);
  REQUIRE(nf.ok());
  CheckValues<float>(
      *nf,
      {-1.3491313457489014, 0.17942215502262115, -1.6042351722717285, 0.3836206793785095,
       -0.5297349095344543, 0.8571957945823669, 0.7939965128898621},
      1e-6);
  auto ud = Stateless("StatelessRandomUniform", DType::kDouble, {7}, seed);
  REQUIRE(ud.ok());
  CheckValues<double>(
      *ud,
      {0.16852967584699896, 0.052531497156912854, 0.8150184488145662, 0.05778987175893957,
       0.648244414242692, 0.6055593749057622, 0.6099810410174895},
      0);
  auto nd = Stateless("StatelessRandomNormal", DType::kDouble, {7}, seed);
  REQUIRE(nd.ok());
  CheckValues<double>(
      *nd,
      {0.61162993492665, 1.7852718774803484, 0.22717209682683348, 0.5978978986864529,
       -0.5732691758733964, -0.733714791003586, 0.821963133624951},
      1e-14);
  // An int32 seed with a negative half is sign-extended, as TF does.
  auto u32 = Stateless("StatelessRandomUniform", DType::kFloat, {5}, Make<int32_t>({-3, 5}, {2}));
  REQUIRE(u32.ok());
  CheckValues<float>(*u32,
                     {0.5737379789352417, 0.16845500469207764, 0.5985572338104248,
                      0.7763354778289795, 0.04437398910522461},
                     0);
}

TEST_CASE("V2 stateless ops (key, counter, alg) and StatelessMultinomial give TF's values") {
  const Tensor seed = Make<int64_t>({42, -7}, {2});
  auto kc = OpRunner("StatelessRandomGetKeyCounter").Type("Tseed", DType::kInt64).Input(seed).Run();
  REQUIRE_MESSAGE(kc.ok(), kc.status().ToString());
  const Tensor key = (*kc)[0], counter = (*kc)[1];
  CHECK(key.data<uint64_t>()[0] == 2774805041207955654ull);
  CHECK(counter.data<uint64_t>()[0] == 0);
  CHECK(counter.data<uint64_t>()[1] == 372921912380631164ull);
  auto v2 = [&](const std::string& op, DType dtype, int64_t n) {
    OpRunner r(op);
    r.Type("dtype", dtype)
        .Type("Tshape", DType::kInt64)
        .ConstantInput(Make<int64_t>({n}, {1}))
        .Input(key)
        .Input(counter)
        .Input(Tensor::Scalar<int32_t>(1));
    if (op == "StatelessRandomUniformIntV2")
      r.Input(Tensor::Scalar<int32_t>(-5)).Input(Tensor::Scalar<int32_t>(7));
    return r.Run1();
  };
  // The first four truncated normals are the plain normals of the same seed (all within 2).
  auto trunc = v2("StatelessTruncatedNormalV2", DType::kFloat, 6);
  REQUIRE_MESSAGE(trunc.ok(), trunc.status().ToString());
  CheckValues<float>(*trunc,
                     {-1.3491313457489014, 0.17942215502262115, -1.6042351722717285,
                      0.3836206793785095, -0.08845454454421997, 1.0281952619552612},
                     1e-6);
  auto half = v2("StatelessRandomUniformV2", DType::kHalf, 5);
  REQUIRE(half.ok());
  const std::vector<uint16_t> half_bits = {14488, 13852, 14934, 10176, 14496};
  for (int i = 0; i < 5; ++i) CHECK(half->data<Half>()[i].bits == half_bits[i]);
  auto bf16 = v2("StatelessRandomNormalV2", DType::kBFloat16, 5);
  REQUIRE(bf16.ok());
  const std::vector<uint16_t> bf16_bits = {49069, 15928, 49101, 16068, 48904};
  for (int i = 0; i < 5; ++i) CHECK(bf16->data<BFloat16>()[i].bits == bf16_bits[i]);
  auto ints = v2("StatelessRandomUniformIntV2", DType::kInt32, 6);
  REQUIRE(ints.ok());
  const auto int_values = ints->flat<int32_t>();
  CHECK(std::vector<int32_t>(int_values.begin(), int_values.end()) ==
        std::vector<int32_t>{-5, 2, 6, -2, -1, 3});
  auto full = v2("StatelessRandomUniformFullIntV2", DType::kUInt64, 3);
  REQUIRE(full.ok());
  CHECK(full->data<uint64_t>()[0] == 3198313881469629004ull);
  CHECK(full->data<uint64_t>()[2] == 14480402320494234192ull);
  // Threefry is TPU-only: refused with what runs.
  OpRunner threefry("StatelessRandomUniformV2");
  threefry.Type("dtype", DType::kFloat)
      .Type("Tshape", DType::kInt64)
      .ConstantInput(Make<int64_t>({2}, {1}))
      .Input(key)
      .Input(counter)
      .Input(Tensor::Scalar<int32_t>(2));
  auto refused = threefry.Run1();
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find("only Philox") != std::string::npos);

  auto multinomial =
      OpRunner("StatelessMultinomial")
          .T(DType::kFloat)
          .Type("Tseed", DType::kInt64)
          .Type("output_dtype", DType::kInt64)
          .Input(Make<float>({std::log(0.2f), std::log(0.3f), std::log(0.5f)}, {1, 3}))
          .ConstantInput(Tensor::Scalar<int32_t>(6))
          .Input(seed)
          .Run1();
  REQUIRE_MESSAGE(multinomial.ok(), multinomial.status().ToString());
  const auto classes = multinomial->flat<int64_t>();
  CHECK(std::vector<int64_t>(classes.begin(), classes.end()) ==
        std::vector<int64_t>{0, 0, 2, 0, 2, 2});
}

TEST_CASE("seeded stateful random ops give TensorFlow's values on successive calls") {
  Node uniform = FloatNode("RandomUniform", DType::kFloat, {5}, 3, 4);
  auto u1 = uniform.Call(), u2 = uniform.Call();
  REQUIRE((u1.ok() && u2.ok()));
  CheckValues<float>(*u1,
                     {0.9237366914749146, 0.37043046951293945, 0.9481984376907349,
                      0.8158295154571533, 0.5395640134811401},
                     0);
  CheckValues<float>(*u2,
                     {0.8628836870193481, 0.3407667875289917, 0.7693074941635132,
                      0.5152323246002197, 0.32959532737731934},
                     0);
  Node normal = FloatNode("RandomStandardNormal", DType::kDouble, {5}, 11, 12);
  auto n1 = normal.Call(), n2 = normal.Call();
  REQUIRE((n1.ok() && n2.ok()));
  CheckValues<double>(*n1,
                      {0.4102194181443228, 1.2827021656851463, 0.5598978224121983,
                       -1.299077068268479, -0.2129884531079512},
                      1e-14);
  CheckValues<double>(*n2,
                      {1.6158481864857046, 0.9279792946956206, -1.3826231338605606,
                       -0.2660278662005064, 0.012329722153291063},
                      1e-14);
  ProtoAttrMap attrs = RandomAttrs(DType::kInt64, "Tout", 5, 6);
  Node ints(
      "RandomUniformInt", attrs,
      {Make<int32_t>({6}, {1}), Tensor::Scalar<int64_t>(-5), Tensor::Scalar<int64_t>(1000000007)});
  REQUIRE(ints.Prepare().ok());
  auto i1 = ints.Call(), i2 = ints.Call();
  REQUIRE((i1.ok() && i2.ok()));
  CHECK(TensorsEqual(
      *i1, Make<int64_t>({800369782, 51367768, 871272668, 897820616, 369514032, 853444230}, {6})));
  CHECK(TensorsEqual(
      *i2, Make<int64_t>({486569732, 329273724, 736278378, 950459431, 931604085, 245531421}, {6})));
}

// ---- Multinomial -----------------------------------------------------------------------------

TEST_CASE("Multinomial: TensorFlow 2.21's samples for a seeded node, call after call") {
  // tf.function(lambda l: tf.raw_ops.Multinomial(logits=l, num_samples=6, seed=5, seed2=7)),
  // called twice on the same logits.
  ProtoAttrMap attrs;
  attrs["T"].set_type(tensorflow::DT_FLOAT);
  attrs["seed"].set_i(5);
  attrs["seed2"].set_i(7);
  Node node("Multinomial", attrs,
            {Make<float>({0, 1, 2, 2, 1, -1}, {2, 3}), Tensor::Scalar<int32_t>(6)});
  REQUIRE(node.Prepare().ok());
  CHECK((node.flags() & kOpStateful) != 0);
  auto a = node.Call(), b = node.Call();
  REQUIRE((a.ok() && b.ok()));
  CHECK(TensorsEqual(*a, Make<int64_t>({2, 0, 2, 1, 1, 2, 0, 0, 0, 0, 0, 1}, {2, 6})));
  CHECK(TensorsEqual(*b, Make<int64_t>({1, 1, 0, 1, 2, 2, 0, 2, 0, 0, 0, 1}, {2, 6})));
  // float64 logits, -inf never drawn, int32 samples, seed2 0.
  ProtoAttrMap attrs2;
  attrs2["T"].set_type(tensorflow::DT_DOUBLE);
  attrs2["output_dtype"].set_type(tensorflow::DT_INT32);
  attrs2["seed"].set_i(3);
  const double inf = std::numeric_limits<double>::infinity();
  Node other("Multinomial", attrs2,
             {Make<double>({0.5, -1, 3, 0, -inf, 0, 0, 1, 1, 1, 1, 1}, {3, 4}),
              Tensor::Scalar<int32_t>(5)});
  REQUIRE(other.Prepare().ok());
  auto c = other.Call(), d = other.Call();
  REQUIRE((c.ok() && d.ok()));
  CHECK(TensorsEqual(*c, Make<int32_t>({0, 2, 2, 1, 0, 1, 3, 3, 2, 3, 2, 2, 1, 2, 1}, {3, 5})));
  CHECK(TensorsEqual(*d, Make<int32_t>({3, 2, 2, 2, 2, 3, 2, 3, 3, 3, 1, 3, 0, 1, 1}, {3, 5})));
}

TEST_CASE("Multinomial: errors") {
  OpRunner vec("Multinomial", "mn");
  vec.T(DType::kFloat).InputSpec({DType::kFloat, Shape{3}}).InputSpec({DType::kInt32, Shape{}});
  CheckError(vec.Prepare(), {"node 'mn'", "input 'logits'", "expected rank 2"});
  OpRunner neg("Multinomial", "neg");
  neg.T(DType::kFloat)
      .InputSpec({DType::kFloat, Shape{1, 3}})
      .ConstantInput(Tensor::Scalar<int32_t>(-1));
  CheckError(neg.Prepare(), {"node 'neg'", "'num_samples' must be non-negative, got -1"});
  auto empty = OpRunner("Multinomial", "e")
                   .T(DType::kFloat)
                   .Input(Tensor(DType::kFloat, Shape{2, 0}))
                   .Input(Tensor::Scalar<int32_t>(3))
                   .Run1();
  CheckError(empty.status(), {"node 'e'", "at least one class", "(2, 0)"});
  OpRunner type("Multinomial");
  type.T(DType::kInt32).InputSpec({DType::kInt32, Shape{1, 3}}).InputSpec({DType::kInt32, Shape{}});
  CheckError(type.Prepare(), {"attr 'T'", "int32", "not supported"});
  auto none = OpRunner("Multinomial")
                  .T(DType::kFloat)
                  .Input(Make<float>({1, 2}, {1, 2}))
                  .Input(Tensor::Scalar<int32_t>(0))
                  .Run1();
  REQUIRE(none.ok());
  CHECK(none->shape() == Shape({1, 0}));
}

TEST_CASE("Candidate samplers: unique draws from too few live ids fail, out-of-range classes") {
  // Two ids of five have a nonzero count: four distinct candidates can never be drawn (TF's
  // kernel CHECK-fails after 2^31 tries).
  auto few = OpRunner("FixedUnigramCandidateSampler", "few")
                 .Int("num_true", 1)
                 .Int("num_sampled", 4)
                 .Bool("unique", true)
                 .Int("range_max", 5)
                 .FloatList("unigrams", {1, 0, 0, 2, 0})
                 .Int("seed", 1)
                 .Int("seed2", 2)
                 .Input(Make<int64_t>({0, 3}, {2, 1}))
                 .Run();
  CheckError(few.status(), {"node 'few'", "4 distinct", "nonzero probability"});
  auto out_of_range = OpRunner("UniformCandidateSampler", "range")
                          .Int("num_true", 1)
                          .Int("num_sampled", 2)
                          .Bool("unique", false)
                          .Int("range_max", 5)
                          .Int("seed", 1)
                          .Int("seed2", 2)
                          .Input(Make<int64_t>({0, 5}, {2, 1}))
                          .Run();
  CheckError(out_of_range.status(), {"node 'range'", "out of range [0, 5)", "received 5"});
}

}  // namespace
}  // namespace kiln::exec
