// Math kernels against plain-loop references: broadcasting binary ops, unary ops, MatMul in
// every transpose combination, Cast; and the Prepare error paths.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "exec/kernel_test_util.h"
#include "kernels/cpu/onednn.h"

namespace kiln::exec {
namespace {

using testing::BroadcastIndex;
using testing::CheckClose;
using testing::CheckError;
using testing::Make;
using testing::OpRunner;
using testing::Random;
using testing::RefBinary;
using testing::RefBroadcastShape;
using testing::Unravel;

const std::vector<std::pair<Shape, Shape>>& BroadcastCases() {
  static const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 3}, {2, 3}},
      {{2, 3}, {}},
      {{}, {2, 3}},
      {{}, {}},
      {{2, 3}, {3}},
      {{3}, {2, 3}},
      {{2, 1, 4}, {3, 1}},
      {{4, 1}, {1, 5}},
      {{2, 3, 4, 5}, {3, 1, 5}},
      {{1, 3}, {2, 1, 1}},
      {{0, 3}, {3}},
      {{5, 1, 1, 7}, {1, 6, 1}},
      {{37, 129}, {129}},
      {{37, 129}, {37, 1}},
      {{1}, {1, 1, 1}},
  };
  return cases;
}

template <typename T, typename F>
void CheckBinaryOp(const std::string& op, F ref, double rhs_lo = -3, double rhs_hi = 3) {
  uint32_t seed = 7;
  for (const auto& item_ : BroadcastCases()) {
    const auto& sa = std::get<0>(item_);
    const auto& sb = std::get<1>(item_);
    CAPTURE(op);
    CAPTURE(DTypeShortName(kDTypeOf<T>));
    CAPTURE(sa.ToString());
    CAPTURE(sb.ToString());
    Tensor a = Random<T>(sa, seed++);
    Tensor b = Random<T>(sb, seed++, rhs_lo, rhs_hi);
    auto got = OpRunner(op).T(kDTypeOf<T>).Input(a).Input(b).Run1();
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    CheckClose<T>(*got, RefBinary<T>(a, b, ref));
  }
}

template <typename T>
void CheckAllBinaryOps() {
  CheckBinaryOp<T>("AddV2", [](T a, T b) { return T(a + b); });
  CheckBinaryOp<T>("Add", [](T a, T b) { return T(a + b); });
  CheckBinaryOp<T>("Sub", [](T a, T b) { return T(a - b); });
  CheckBinaryOp<T>("Mul", [](T a, T b) { return T(a * b); });
  CheckBinaryOp<T>("Maximum", [](T a, T b) { return a > b ? a : b; });
  CheckBinaryOp<T>("Minimum", [](T a, T b) { return a < b ? a : b; });
  // Divisors kept away from zero.
  CheckBinaryOp<T>(
      "RealDiv", [](T a, T b) { return T(a / b); }, 1, 5);
}

TEST_CASE("binary ops broadcast like numpy: float32") { CheckAllBinaryOps<float>(); }
TEST_CASE("binary ops broadcast like numpy: float64") { CheckAllBinaryOps<double>(); }
TEST_CASE("binary ops broadcast like numpy: int32") { CheckAllBinaryOps<int32_t>(); }
TEST_CASE("binary ops broadcast like numpy: int64") { CheckAllBinaryOps<int64_t>(); }

TEST_CASE("RealDiv with negative divisors, and integer division by zero fails") {
  Tensor a = Make<float>({1, -2, 3}, {3});
  Tensor b = Make<float>({-4, 8, -0.5f}, {3});
  auto got = OpRunner("RealDiv").T(DType::kFloat).Input(a).Input(b).Run1();
  REQUIRE(got.ok());
  CheckClose<float>(*got, Make<float>({-0.25f, -0.25f, -6}, {3}));

  auto bad = OpRunner("RealDiv", "div")
                 .T(DType::kInt32)
                 .Input(Make<int32_t>({4, 5}, {2}))
                 .Input(Make<int32_t>({2, 0}, {2}))
                 .Run1();
  CheckError(bad.status(), {"div", "division by zero"});
}

TEST_CASE("Maximum and Minimum propagate NaN") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor a = Make<float>({nan, 1, 2}, {3});
  Tensor b = Make<float>({0, nan, 3}, {3});
  auto mx = OpRunner("Maximum").T(DType::kFloat).Input(a).Input(b).Run1();
  REQUIRE(mx.ok());
  CheckClose<float>(*mx, Make<float>({nan, nan, 3}, {3}));
  auto mn = OpRunner("Minimum").T(DType::kFloat).Input(a).Input(b).Run1();
  REQUIRE(mn.ok());
  CheckClose<float>(*mn, Make<float>({nan, nan, 2}, {3}));
}

TEST_CASE("Add and AddV2 concatenate strings with broadcasting") {
  for (const char* op : {"Add", "AddV2"}) {
    CAPTURE(op);
    Tensor a = Make<std::string>({"a", "bb", "", "c"}, {2, 2});
    Tensor b = Make<std::string>({"X", "Y"}, {2});
    auto got = OpRunner(op).T(DType::kString).Input(a).Input(b).Run1();
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    CHECK(TensorsEqual(*got, Make<std::string>({"aX", "bbY", "X", "cY"}, {2, 2})));
    auto scalar =
        OpRunner(op).T(DType::kString).Input(Tensor::StringScalar("pre-")).Input(a).Run1();
    REQUIRE(scalar.ok());
    CHECK(TensorsEqual(*scalar, Make<std::string>({"pre-a", "pre-bb", "pre-", "pre-c"}, {2, 2})));
  }
  auto sub = OpRunner("Sub")
                 .T(DType::kString)
                 .InputSpec({DType::kString, Shape{}})
                 .InputSpec({DType::kString, Shape{}});
  CheckError(sub.Prepare(), {"attr 'T'", "string", "not supported"});
}

TEST_CASE("binary ops: prepare infers partial shapes") {
  auto run = [](PartialShape a, PartialShape b) {
    OpRunner r("Mul");
    r.T(DType::kFloat).InputSpec({DType::kFloat, a}).InputSpec({DType::kFloat, b});
    Status s = r.Prepare();
    REQUIRE_MESSAGE(s.ok(), s.ToString());
    REQUIRE(r.output_specs().size() == 1);
    CHECK(r.output_specs()[0].dtype == DType::kFloat);
    return r.output_specs()[0].shape;
  };
  CHECK(run({-1, 3}, {3}) == PartialShape({-1, 3}));
  CHECK(run({-1}, {4}) == PartialShape({4}));
  CHECK(run({-1}, {1}) == PartialShape({-1}));
  CHECK(run({-1, 1}, {1, 5}) == PartialShape({-1, 5}));
  CHECK(run({2, 1, -1}, {7, -1}) == PartialShape({2, 7, -1}));
  CHECK(run(PartialShape::UnknownRank(), {3}).unknown_rank());
  CHECK(run(PartialShape::Scalar(), PartialShape::Scalar()) == PartialShape::Scalar());
}

TEST_CASE("binary ops: prepare errors name the problem") {
  SUBCASE("incompatible shapes") {
    OpRunner r("AddV2", "add");
    r.T(DType::kFloat).InputSpec({DType::kFloat, Shape{2, 3}}).InputSpec({DType::kFloat, Shape{4}});
    CheckError(r.Prepare(), {"node 'add'", "AddV2", "incompatible shapes", "(2, 3)", "(4,)"});
  }
  SUBCASE("wrong input dtype") {
    OpRunner r("Sub");
    r.T(DType::kFloat).InputSpec({DType::kFloat, Shape{2}}).InputSpec({DType::kInt32, Shape{2}});
    CheckError(r.Prepare(), {"input 'y'", "expected dtype float32", "got int32"});
  }
  SUBCASE("missing T") {
    OpRunner r("Mul");
    r.InputSpec({DType::kFloat, Shape{2}}).InputSpec({DType::kFloat, Shape{2}});
    CheckError(r.Prepare(), {"missing attr 'T'"});
  }
  SUBCASE("T of the wrong kind") {
    OpRunner r("Mul");
    r.Int("T", 1).InputSpec({DType::kFloat, Shape{2}}).InputSpec({DType::kFloat, Shape{2}});
    CheckError(r.Prepare(), {"attr 'T'", "expected type", "got int"});
  }
  SUBCASE("unsupported dtype") {
    OpRunner r("Maximum");
    r.T(DType::kBool).InputSpec({DType::kBool, Shape{2}}).InputSpec({DType::kBool, Shape{2}});
    CheckError(r.Prepare(), {"attr 'T'", "bool", "not supported", "float32"});
  }
  SUBCASE("wrong input count") {
    OpRunner r("AddV2");
    r.T(DType::kFloat).InputSpec({DType::kFloat, Shape{2}});
    CheckError(r.Prepare(), {"expected 2 inputs", "got 1"});
  }
  SUBCASE("shapes unknown at prepare and incompatible when run") {
    auto got = OpRunner("AddV2", "late")
                   .T(DType::kFloat)
                   .Input(Random<float>({2, 3}, 1), {DType::kFloat, PartialShape{-1, -1}})
                   .Input(Random<float>({4}, 2), {DType::kFloat, PartialShape{-1}})
                   .Run1();
    CheckError(got.status(), {"node 'late'", "incompatible shapes", "(2, 3)", "(4,)"});
  }
}

// ---- unary -----------------------------------------------------------------------------------

template <typename T, typename F>
void CheckUnaryOp(const std::string& op, F ref, double lo = -3, double hi = 3) {
  uint32_t seed = 11;
  for (const Shape& s : {Shape{}, Shape{5}, Shape{3, 4}, Shape{2, 3, 7}, Shape{0, 2}, Shape{301}}) {
    CAPTURE(op);
    CAPTURE(DTypeShortName(kDTypeOf<T>));
    CAPTURE(s.ToString());
    Tensor x = Random<T>(s, seed++, lo, hi);
    Tensor want(kDTypeOf<T>, s);
    for (int64_t i = 0; i < x.NumElements(); ++i) want.data<T>()[i] = ref(x.data<T>()[i]);
    auto got = OpRunner(op).T(kDTypeOf<T>).Input(x).Run1();
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    CheckClose<T>(*got, want);
  }
}

template <typename T>
void CheckRealUnaryOps() {
  CheckUnaryOp<T>("Neg", [](T x) { return T(-x); });
  CheckUnaryOp<T>("Abs", [](T x) { return x < 0 ? T(-x) : x; });
  CheckUnaryOp<T>("Square", [](T x) { return T(x * x); });
}

template <typename T>
void CheckFloatUnaryOps() {
  CheckRealUnaryOps<T>();
  CheckUnaryOp<T>(
      "Sqrt", [](T x) { return std::sqrt(x); }, 0, 9);
  CheckUnaryOp<T>(
      "Exp", [](T x) { return std::exp(x); }, -10, 10);
  CheckUnaryOp<T>(
      "Log", [](T x) { return std::log(x); }, 0.01, 100);
  CheckUnaryOp<T>(
      "Tanh", [](T x) { return std::tanh(x); }, -6, 6);
  CheckUnaryOp<T>(
      "Sigmoid", [](T x) { return T(1) / (T(1) + std::exp(-x)); }, -12, 12);
}

TEST_CASE("unary ops: float32") { CheckFloatUnaryOps<float>(); }
TEST_CASE("unary ops: float64") { CheckFloatUnaryOps<double>(); }
TEST_CASE("unary ops: int32 and int64") {
  CheckRealUnaryOps<int32_t>();
  CheckRealUnaryOps<int64_t>();
}

TEST_CASE("unary ops: special values") {
  const float inf = std::numeric_limits<float>::infinity();
  auto sqrt = OpRunner("Sqrt").T(DType::kFloat).Input(Make<float>({-1, 0, inf}, {3})).Run1();
  REQUIRE(sqrt.ok());
  CHECK(std::isnan(sqrt->data<float>()[0]));
  CHECK(sqrt->data<float>()[1] == 0);
  CHECK(sqrt->data<float>()[2] == inf);
  auto log = OpRunner("Log").T(DType::kFloat).Input(Make<float>({0}, {1})).Run1();
  REQUIRE(log.ok());
  CHECK(log->data<float>()[0] == -inf);
  auto sig = OpRunner("Sigmoid").T(DType::kFloat).Input(Make<float>({-100, 100}, {2})).Run1();
  REQUIRE(sig.ok());
  CHECK(sig->data<float>()[0] == doctest::Approx(0).epsilon(1e-6));
  CHECK(sig->data<float>()[1] == doctest::Approx(1).epsilon(1e-6));
}

TEST_CASE("unary ops: prepare errors") {
  OpRunner exp("Exp", "e");
  exp.T(DType::kInt32).InputSpec({DType::kInt32, Shape{2}});
  CheckError(exp.Prepare(), {"node 'e'", "attr 'T'", "int32", "not supported"});
  OpRunner neg("Neg");
  neg.T(DType::kFloat).InputSpec({DType::kDouble, Shape{2}});
  CheckError(neg.Prepare(), {"input 'x'", "expected dtype float32", "got float64"});
  OpRunner tanh("Tanh");
  tanh.T(DType::kFloat).InputSpec({DType::kFloat, PartialShape{-1, 3}});
  REQUIRE(tanh.Prepare().ok());
  CHECK(tanh.output_specs()[0].shape == PartialShape({-1, 3}));
}

// ---- MatMul ----------------------------------------------------------------------------------

// a is (m, k) (or (k, m) when transposed), b is (k, n) (or (n, k)).
template <typename T>
Tensor RefMatMul(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  const int64_t m = ta ? a.dim(1) : a.dim(0), k = ta ? a.dim(0) : a.dim(1);
  const int64_t n = tb ? b.dim(0) : b.dim(1);
  Tensor out(kDTypeOf<T>, Shape{m, n});
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      T sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        T av = ta ? a.data<T>()[p * a.dim(1) + i] : a.data<T>()[i * a.dim(1) + p];
        T bv = tb ? b.data<T>()[j * b.dim(1) + p] : b.data<T>()[p * b.dim(1) + j];
        sum += av * bv;
      }
      out.data<T>()[i * n + j] = sum;
    }
  }
  return out;
}

template <typename T>
void CheckMatMul() {
  const std::vector<std::array<int64_t, 3>> sizes = {{1, 1, 1}, {2, 3, 4},   {3, 4, 5}, {7, 1, 2},
                                                     {1, 9, 1}, {16, 33, 9}, {0, 3, 2}, {2, 0, 3}};
  uint32_t seed = 3;
  for (auto item_ : sizes) {
    auto m = std::get<0>(item_);
    auto k = std::get<1>(item_);
    auto n = std::get<2>(item_);
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        CAPTURE(DTypeShortName(kDTypeOf<T>));
        CAPTURE(m);
        CAPTURE(k);
        CAPTURE(n);
        CAPTURE(ta);
        CAPTURE(tb);
        Tensor a = Random<T>(ta ? Shape{k, m} : Shape{m, k}, seed++);
        Tensor b = Random<T>(tb ? Shape{n, k} : Shape{k, n}, seed++);
        OpRunner r("MatMul");
        r.T(kDTypeOf<T>).Bool("transpose_a", ta).Bool("transpose_b", tb).Input(a).Input(b);
        auto got = r.Run1();
        REQUIRE_MESSAGE(got.ok(), got.status().ToString());
        CHECK(r.output_specs()[0].shape == PartialShape({m, n}));
        CheckClose<T>(*got, RefMatMul<T>(a, b, ta, tb), std::is_same_v<T, float> ? 1e-4 : 1e-11);
      }
    }
  }
}

TEST_CASE("MatMul: float32, all transposes") { CheckMatMul<float>(); }
TEST_CASE("MatMul: float64, all transposes") { CheckMatMul<double>(); }
TEST_CASE("MatMul: int32, all transposes") { CheckMatMul<int32_t>(); }
TEST_CASE("MatMul: int64, all transposes") { CheckMatMul<int64_t>(); }

// A batched product with numpy broadcasting of the batch dims: (..., m, k) x (..., k, n).
Tensor RefBatchMatMul(const Tensor& a, const Tensor& b, bool adj_a, bool adj_b) {
  const int ra = a.rank(), rb = b.rank();
  const int64_t m = a.dim(ra - (adj_a ? 1 : 2)), k = a.dim(ra - (adj_a ? 2 : 1));
  const int64_t n = b.dim(rb - (adj_b ? 2 : 1));
  const int nb = std::max(ra, rb) - 2;
  Shape out;
  for (int d = 0; d < nb; ++d) {
    const int da = d - (nb - (ra - 2)), db = d - (nb - (rb - 2));
    out.AddDim(std::max(da >= 0 ? a.dim(da) : 1, db >= 0 ? b.dim(db) : 1));
  }
  const int64_t batches = out.num_elements();
  out.AddDim(m);
  out.AddDim(n);
  Tensor c(DType::kFloat, out);
  for (int64_t i = 0; i < batches; ++i) {
    int64_t rem = i, ao = 0, bo = 0, astride = m * k, bstride = k * n;
    for (int d = nb - 1; d >= 0; --d) {
      const int64_t idx = rem % out.dim(d);
      rem /= out.dim(d);
      const int da = d - (nb - (ra - 2)), db = d - (nb - (rb - 2));
      if (da >= 0) {
        if (a.dim(da) != 1) ao += idx * astride;
        astride *= a.dim(da);
      }
      if (db >= 0) {
        if (b.dim(db) != 1) bo += idx * bstride;
        bstride *= b.dim(db);
      }
    }
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p)
          sum += static_cast<double>(a.data<float>()[ao + (adj_a ? p * m + r : r * k + p)]) *
                 b.data<float>()[bo + (adj_b ? j * k + p : p * n + j)];
        c.data<float>()[(i * m + r) * n + j] = static_cast<float>(sum);
      }
    }
  }
  return c;
}

TEST_CASE(
    "BatchMatMulV2: batch-1 and broadcast operands reach oneDNN's GEMM, not its reference "
    "kernel") {
  // What Keras models hand over: a Dense on a sequence ((1, t, d) x (d, u)), attention scores at
  // batch 1 ((1, h, t, d) x (1, h, t, d) adjoint), and numpy broadcasting both ways. oneDNN 2.6
  // leaves its GEMM for loops hundreds of times slower when a size-1 batch dim is given stride
  // 0, which made a batch-1 BERT encoder take two minutes a call.
  struct Case {
    Shape a, b;
    bool adj_a, adj_b;
  };
  const std::vector<Case> cases = {
      {{1, 8, 16}, {16, 4}, false, false},         {{1, 8, 16}, {1, 16, 4}, false, false},
      {{3, 8, 16}, {16, 4}, false, false},         {{8, 16}, {3, 16, 4}, false, false},
      {{1, 2, 8, 16}, {1, 2, 8, 16}, false, true}, {{2, 1, 8, 16}, {5, 16, 4}, false, false},
      {{1, 16, 8}, {1, 16, 4}, true, false},       {{4, 16, 8}, {1, 4, 16}, true, true},
  };
  const int64_t before = onednn::ReferencePrimitivesMade();
  uint32_t seed = 40;
  for (const Case& c : cases) {
    CAPTURE(c.a.ToString());
    CAPTURE(c.b.ToString());
    Tensor a = Random<float>(c.a, seed++);
    Tensor b = Random<float>(c.b, seed++);
    auto got = OpRunner("BatchMatMulV2")
                   .T(DType::kFloat)
                   .Bool("adj_x", c.adj_a)
                   .Bool("adj_y", c.adj_b)
                   .Input(a)
                   .Input(b)
                   .Run1();
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    CheckClose<float>(*got, RefBatchMatMul(a, b, c.adj_a, c.adj_b), 1e-4);
  }
  CHECK(onednn::ReferencePrimitivesMade() == before);
}

TEST_CASE(
    "MatMul: constant weights with rows a multiple of 512 bytes (read from a copy with "
    "wider rows)") {
  // Dense layers 128, 256, 512... wide: the kernel copies such a constant b once with padded
  // rows; every transpose, a batch of rows, a sequence (BatchMatMulV2) and a fused bias must
  // give the plain product, also when the input's rows are not known at prepare time.
  uint32_t seed = 70;
  for (const auto& mkn : std::vector<std::array<int64_t, 3>>{{1, 40, 128}, {5, 256, 384}}) {
    const int64_t m = mkn[0];
    const int64_t k = mkn[1];
    const int64_t n = mkn[2];
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        CAPTURE(m);
        CAPTURE(k);
        CAPTURE(n);
        CAPTURE(ta);
        CAPTURE(tb);
        Tensor a = Random<float>(ta ? Shape{k, m} : Shape{m, k}, seed++);
        Tensor b = Random<float>(tb ? Shape{n, k} : Shape{k, n}, seed++);
        const TensorSpec a_spec{DType::kFloat, ta ? PartialShape{k, -1} : PartialShape{-1, k}};
        auto got = OpRunner("MatMul")
                       .T(DType::kFloat)
                       .Bool("transpose_a", ta)
                       .Bool("transpose_b", tb)
                       .Input(a, a_spec)
                       .ConstantInput(b)
                       .Run1();
        REQUIRE_MESSAGE(got.ok(), got.status().ToString());
        CheckClose<float>(*got, RefMatMul<float>(a, b, ta, tb), 1e-4);
      }
    }
  }
  Tensor x = Random<float>(Shape{2, 3, 64}, 90);
  Tensor w = Random<float>(Shape{64, 256}, 91);
  auto seq = OpRunner("BatchMatMulV2").T(DType::kFloat).Input(x).ConstantInput(w).Run1();
  REQUIRE_MESSAGE(seq.ok(), seq.status().ToString());
  CheckClose<float>(*seq, RefBatchMatMul(x, w, false, false), 1e-4);
  Tensor bias = Random<float>(Shape{256}, 92);
  Tensor rows = Random<float>(Shape{6, 64}, 93);
  auto fused = OpRunner("_FusedMatMul")
                   .T(DType::kFloat)
                   .StringList("fused_ops", {"BiasAdd"})
                   .Int("num_args", 1)
                   .Input(rows)
                   .ConstantInput(w)
                   .Input(bias)
                   .Run1();
  REQUIRE_MESSAGE(fused.ok(), fused.status().ToString());
  Tensor want = RefMatMul<float>(rows, w, false, false);
  for (int64_t i = 0; i < want.NumElements(); ++i)
    want.data<float>()[i] += bias.data<float>()[i % 256];
  CheckClose<float>(*fused, want, 1e-4);
}

TEST_CASE("MatMul: default attrs and partial shapes") {
  OpRunner r("MatMul");
  r.T(DType::kFloat)
      .InputSpec({DType::kFloat, PartialShape{-1, 784}})
      .InputSpec({DType::kFloat, PartialShape{784, 10}});
  REQUIRE(r.Prepare().ok());
  CHECK(r.output_specs()[0] == TensorSpec{DType::kFloat, PartialShape{-1, 10}});
  OpRunner u("MatMul");
  u.T(DType::kFloat)
      .Bool("transpose_b", true)
      .InputSpec({DType::kFloat, PartialShape::UnknownRank()})
      .InputSpec({DType::kFloat, PartialShape{10, -1}});
  REQUIRE(u.Prepare().ok());
  CHECK(u.output_specs()[0].shape == PartialShape({-1, 10}));
}

TEST_CASE("MatMul: prepare errors name the problem") {
  SUBCASE("rank") {
    OpRunner r("MatMul", "mm");
    r.T(DType::kFloat).InputSpec({DType::kFloat, Shape{3}}).InputSpec({DType::kFloat, Shape{3, 2}});
    CheckError(r.Prepare(), {"node 'mm'", "input 'a'", "expected rank 2", "(3,)"});
  }
  SUBCASE("inner dims") {
    OpRunner r("MatMul");
    r.T(DType::kFloat)
        .Bool("transpose_a", true)
        .InputSpec({DType::kFloat, Shape{2, 3}})
        .InputSpec({DType::kFloat, Shape{3, 2}});
    CheckError(r.Prepare(), {"inner dimensions", "(2, 3)", "(3, 2)", "transpose_a=true"});
  }
  SUBCASE("dtype") {
    OpRunner r("MatMul");
    r.T(DType::kFloat)
        .InputSpec({DType::kFloat, Shape{2, 3}})
        .InputSpec({DType::kInt64, Shape{3, 2}});
    CheckError(r.Prepare(), {"input 'b'", "expected dtype float32", "got int64"});
  }
  SUBCASE("missing T") {
    OpRunner r("MatMul");
    r.InputSpec({DType::kFloat, Shape{2, 3}}).InputSpec({DType::kFloat, Shape{3, 2}});
    CheckError(r.Prepare(), {"missing attr 'T'"});
  }
  SUBCASE("transpose attr of the wrong kind") {
    OpRunner r("MatMul");
    r.T(DType::kFloat)
        .String("transpose_a", "yes")
        .InputSpec({DType::kFloat, Shape{2, 3}})
        .InputSpec({DType::kFloat, Shape{3, 2}});
    CheckError(r.Prepare(), {"attr 'transpose_a'", "expected bool", "got string"});
  }
  SUBCASE("inner dims only known when run") {
    auto got = OpRunner("MatMul")
                   .T(DType::kFloat)
                   .Input(Random<float>({2, 3}, 1), {DType::kFloat, PartialShape{-1, -1}})
                   .Input(Random<float>({4, 2}, 2), {DType::kFloat, PartialShape{-1, -1}})
                   .Run1();
    CheckError(got.status(), {"inner dimensions", "(2, 3)", "(4, 2)"});
  }
}

// ---- Cast ------------------------------------------------------------------------------------

template <typename Src, typename Dst>
void CheckCast(const std::vector<Src>& in, const std::vector<Dst>& want) {
  CAPTURE(DTypeShortName(kDTypeOf<Src>));
  CAPTURE(DTypeShortName(kDTypeOf<Dst>));
  Shape s{static_cast<int64_t>(in.size())};
  OpRunner r("Cast");
  r.Type("SrcT", kDTypeOf<Src>).Type("DstT", kDTypeOf<Dst>).Input(Make<Src>(in, s));
  auto got = r.Run1();
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  CHECK(TensorsEqual(*got, Make<Dst>(want, s)));
}

TEST_CASE("Cast between numeric dtypes and bool") {
  CheckCast<float, int32_t>({1.9f, -1.9f, 0.f, 100.5f}, {1, -1, 0, 100});
  CheckCast<int32_t, float>({1, -7, 1 << 20}, {1.f, -7.f, 1048576.f});
  CheckCast<float, bool>({0.f, -0.f, 0.5f, -3.f}, {false, false, true, true});
  CheckCast<bool, float>({true, false}, {1.f, 0.f});
  CheckCast<int64_t, uint8_t>({0, 255, 256, -1}, {0, 255, 0, 255});
  CheckCast<double, float>({0.5, -2.25}, {0.5f, -2.25f});
  CheckCast<int32_t, int64_t>({-5, 7}, {-5, 7});
  CheckCast<int64_t, bool>({0, 2, -1}, {false, true, true});
  CheckCast<uint8_t, double>({0, 200}, {0.0, 200.0});
  CheckCast<int8_t, int16_t>({-128, 127}, {-128, 127});
  CheckCast<bool, int32_t>({true, false, true}, {1, 0, 1});
  // Same dtype: the input comes back.
  Tensor x = Make<float>({1, 2}, {2});
  auto same =
      OpRunner("Cast").Type("SrcT", DType::kFloat).Type("DstT", DType::kFloat).Input(x).Run1();
  REQUIRE(same.ok());
  CHECK(TensorsEqual(*same, x));
}

TEST_CASE("Cast: random tensors against static_cast") {
  Tensor x = Random<double>({3, 17}, 5, -1000, 1000);
  auto got =
      OpRunner("Cast").Type("SrcT", DType::kDouble).Type("DstT", DType::kInt32).Input(x).Run1();
  REQUIRE(got.ok());
  REQUIRE(got->shape() == x.shape());
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    CHECK(got->data<int32_t>()[i] == static_cast<int32_t>(x.data<double>()[i]));
  }
}

TEST_CASE("Cast: prepare errors") {
  OpRunner missing("Cast", "c");
  missing.Type("SrcT", DType::kFloat).InputSpec({DType::kFloat, Shape{2}});
  CheckError(missing.Prepare(), {"node 'c'", "missing attr 'DstT'"});
  OpRunner wrong("Cast");
  wrong.Type("SrcT", DType::kFloat)
      .Type("DstT", DType::kInt32)
      .InputSpec({DType::kInt32, Shape{2}});
  CheckError(wrong.Prepare(), {"input 'x'", "expected dtype float32", "got int32"});
  OpRunner str("Cast");
  str.Type("SrcT", DType::kString)
      .Type("DstT", DType::kInt32)
      .InputSpec({DType::kString, Shape{2}});
  CheckError(str.Prepare(), {"attr 'SrcT'", "string", "not supported"});
}

}  // namespace
}  // namespace kiln::exec
