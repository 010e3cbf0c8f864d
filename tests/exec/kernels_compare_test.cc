// Comparison, logical and Select kernels against plain-loop references, with numpy
// broadcasting, empty tensors, NaN, and the Prepare / run-time error paths.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>

#include "exec/kernel_test_util.h"

namespace kiln::exec {
namespace {

using testing::BroadcastIndex;
using testing::CheckError;
using testing::Make;
using testing::OpRunner;
using testing::RefBinary;
using testing::RefBroadcastShape;
using testing::Unravel;

// Values in {-2, ..., 2}, so that comparisons see many ties.
template <typename T>
Tensor SmallValues(const Shape& shape, uint32_t seed) {
  Tensor t(kDTypeOf<T>, shape);
  uint32_t state = seed * 2654435761u + 7u;
  for (T& v : t.flat<T>()) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<T>(static_cast<int>((state >> 16) % 5) - 2);
  }
  return t;
}

Tensor RandomBools(const Shape& shape, uint32_t seed) {
  Tensor t(DType::kBool, shape);
  uint32_t state = seed * 2654435761u + 3u;
  for (bool& v : t.flat<bool>()) {
    state = state * 1664525u + 1013904223u;
    v = (state >> 16) & 1;
  }
  return t;
}

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
      {{0, 3}, {3}},
      {{5, 0}, {1}},
      {{37, 129}, {37, 1}},
      {{1}, {1, 1, 1}},
  };
  return cases;
}

template <typename T, typename F>
void CheckCompareOp(const std::string& op, F ref) {
  uint32_t seed = 5;
  for (const auto& item_ : BroadcastCases()) {
    const auto& sa = std::get<0>(item_);
    const auto& sb = std::get<1>(item_);
    CAPTURE(op);
    CAPTURE(DTypeShortName(kDTypeOf<T>));
    CAPTURE(sa.ToString());
    CAPTURE(sb.ToString());
    Tensor a = SmallValues<T>(sa, seed++);
    Tensor b = SmallValues<T>(sb, seed++);
    OpRunner r(op);
    r.T(kDTypeOf<T>).Input(a).Input(b);
    auto got = r.Run1();
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    CHECK(r.output_specs()[0].dtype == DType::kBool);
    CHECK(TensorsEqual(*got, RefBinary<T, bool>(a, b, ref)));
  }
}

template <typename T>
void CheckAllCompareOps() {
  CheckCompareOp<T>("Less", [](T a, T b) { return a < b; });
  CheckCompareOp<T>("LessEqual", [](T a, T b) { return a <= b; });
  CheckCompareOp<T>("Greater", [](T a, T b) { return a > b; });
  CheckCompareOp<T>("GreaterEqual", [](T a, T b) { return a >= b; });
  CheckCompareOp<T>("Equal", [](T a, T b) { return a == b; });
  CheckCompareOp<T>("NotEqual", [](T a, T b) { return a != b; });
}

TEST_CASE("comparisons broadcast like numpy: float32") { CheckAllCompareOps<float>(); }
TEST_CASE("comparisons broadcast like numpy: float64") { CheckAllCompareOps<double>(); }
TEST_CASE("comparisons broadcast like numpy: int32") { CheckAllCompareOps<int32_t>(); }
TEST_CASE("comparisons broadcast like numpy: int64") { CheckAllCompareOps<int64_t>(); }

TEST_CASE("comparisons with NaN are false, except NotEqual") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor a = Make<float>({nan, 1, nan}, {3});
  Tensor b = Make<float>({1, nan, nan}, {3});
  for (const char* op : {"Less", "LessEqual", "Greater", "GreaterEqual", "Equal"}) {
    CAPTURE(op);
    auto got = OpRunner(op).T(DType::kFloat).Input(a).Input(b).Run1();
    REQUIRE(got.ok());
    CHECK(TensorsEqual(*got, Make<bool>({false, false, false}, {3})));
  }
  auto ne = OpRunner("NotEqual").T(DType::kFloat).Input(a).Input(b).Run1();
  REQUIRE(ne.ok());
  CHECK(TensorsEqual(*ne, Make<bool>({true, true, true}, {3})));
}

TEST_CASE("Equal and NotEqual on bool and string") {
  Tensor a = Make<bool>({true, false, true, false}, {2, 2});
  Tensor b = Make<bool>({true, true}, {2});
  auto eq = OpRunner("Equal").T(DType::kBool).Input(a).Input(b).Run1();
  REQUIRE_MESSAGE(eq.ok(), eq.status().ToString());
  CHECK(TensorsEqual(*eq, Make<bool>({true, false, true, false}, {2, 2})));

  Tensor s = Make<std::string>({"a", "bb", "", "a"}, {4});
  auto ne = OpRunner("NotEqual").T(DType::kString).Input(s).Input(Tensor::StringScalar("a")).Run1();
  REQUIRE_MESSAGE(ne.ok(), ne.status().ToString());
  CHECK(TensorsEqual(*ne, Make<bool>({false, true, true, false}, {4})));
  auto eq2 = OpRunner("Equal")
                 .T(DType::kString)
                 .Input(s)
                 .Input(Make<std::string>({"a", "b", "", "x"}, {4}))
                 .Run1();
  REQUIRE(eq2.ok());
  CHECK(TensorsEqual(*eq2, Make<bool>({true, false, true, false}, {4})));
}

TEST_CASE("Equal with incompatible_shape_error=false gives a scalar for incompatible shapes") {
  Tensor a = Make<int32_t>({1, 2, 3}, {3});
  Tensor b = Make<int32_t>({1, 2}, {2});
  for (const auto& item_ : {std::pair{"Equal", false}, std::pair{"NotEqual", true}}) {
    const auto& op = std::get<0>(item_);
    const auto& want = std::get<1>(item_);
    CAPTURE(op);
    OpRunner r(op);
    r.T(DType::kInt32).Bool("incompatible_shape_error", false).Input(a).Input(b);
    auto got = r.Run1();
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    CHECK(r.output_specs()[0].shape == PartialShape::Scalar());
    CHECK(TensorsEqual(*got, Tensor::Scalar<bool>(want)));
    // Shapes unknown at prepare: unknown rank, and the run still gives the scalar.
    OpRunner late(op);
    late.T(DType::kInt32)
        .Bool("incompatible_shape_error", false)
        .Input(a, {DType::kInt32, PartialShape{-1}})
        .Input(b, {DType::kInt32, PartialShape{-1}});
    auto got2 = late.Run1();
    REQUIRE(got2.ok());
    CHECK(late.output_specs()[0].shape.unknown_rank());
    CHECK(TensorsEqual(*got2, Tensor::Scalar<bool>(want)));
  }
  // Compatible shapes still broadcast.
  auto ok = OpRunner("Equal")
                .T(DType::kInt32)
                .Bool("incompatible_shape_error", false)
                .Input(a)
                .Input(Make<int32_t>({2}, {1}))
                .Run1();
  REQUIRE(ok.ok());
  CHECK(TensorsEqual(*ok, Make<bool>({false, true, false}, {3})));
  // The default is to fail.
  auto bad = OpRunner("Equal", "eq").T(DType::kInt32).Input(a).Input(b).Run1();
  CheckError(bad.status(), {"node 'eq'", "incompatible shapes", "(3,)", "(2,)"});
}

TEST_CASE("comparisons: prepare infers shapes and rejects bad inputs") {
  OpRunner r("Less");
  r.T(DType::kFloat)
      .InputSpec({DType::kFloat, PartialShape{-1, 3}})
      .InputSpec({DType::kFloat, PartialShape{3}});
  REQUIRE(r.Prepare().ok());
  CHECK(r.output_specs()[0] == TensorSpec{DType::kBool, PartialShape{-1, 3}});

  OpRunner str("Greater", "g");
  str.T(DType::kString).InputSpec({DType::kString, Shape{2}}).InputSpec({DType::kString, Shape{2}});
  CheckError(str.Prepare(), {"node 'g'", "attr 'T'", "string", "not supported"});
  OpRunner boolean("LessEqual");
  boolean.T(DType::kBool).InputSpec({DType::kBool, Shape{2}}).InputSpec({DType::kBool, Shape{2}});
  CheckError(boolean.Prepare(), {"attr 'T'", "bool", "not supported"});
  OpRunner dtype("Equal");
  dtype.T(DType::kFloat).InputSpec({DType::kFloat, Shape{2}}).InputSpec({DType::kInt32, Shape{2}});
  CheckError(dtype.Prepare(), {"input 'y'", "expected dtype float32", "got int32"});
  OpRunner shapes("GreaterEqual");
  shapes.T(DType::kInt64)
      .InputSpec({DType::kInt64, Shape{2, 3}})
      .InputSpec({DType::kInt64, Shape{4}});
  CheckError(shapes.Prepare(), {"incompatible shapes", "(2, 3)", "(4,)"});
  OpRunner count("Less");
  count.T(DType::kFloat).InputSpec({DType::kFloat, Shape{2}});
  CheckError(count.Prepare(), {"expected 2 inputs", "got 1"});
  OpRunner flag("Equal");
  flag.T(DType::kFloat)
      .Int("incompatible_shape_error", 1)
      .InputSpec({DType::kFloat, Shape{2}})
      .InputSpec({DType::kFloat, Shape{2}});
  CheckError(flag.Prepare(), {"attr 'incompatible_shape_error'", "expected bool"});
}

// ---- logical ---------------------------------------------------------------------------------

TEST_CASE("LogicalAnd and LogicalOr broadcast, LogicalNot") {
  uint32_t seed = 1;
  for (const auto& item_ : BroadcastCases()) {
    const auto& sa = std::get<0>(item_);
    const auto& sb = std::get<1>(item_);
    CAPTURE(sa.ToString());
    CAPTURE(sb.ToString());
    Tensor a = RandomBools(sa, seed++);
    Tensor b = RandomBools(sb, seed++);
    auto land = OpRunner("LogicalAnd").Input(a).Input(b).Run1();
    REQUIRE_MESSAGE(land.ok(), land.status().ToString());
    CHECK(TensorsEqual(*land, RefBinary<bool, bool>(a, b, [](bool x, bool y) { return x && y; })));
    auto lor = OpRunner("LogicalOr").Input(a).Input(b).Run1();
    REQUIRE(lor.ok());
    CHECK(TensorsEqual(*lor, RefBinary<bool, bool>(a, b, [](bool x, bool y) { return x || y; })));
    auto lnot = OpRunner("LogicalNot").Input(a).Run1();
    REQUIRE(lnot.ok());
    Tensor want(DType::kBool, sa);
    for (int64_t i = 0; i < a.NumElements(); ++i) want.data<bool>()[i] = !a.data<bool>()[i];
    CHECK(TensorsEqual(*lnot, want));
  }
}

TEST_CASE("logical ops: prepare errors") {
  OpRunner a("LogicalAnd", "and");
  a.InputSpec({DType::kBool, Shape{2}}).InputSpec({DType::kInt32, Shape{2}});
  CheckError(a.Prepare(), {"node 'and'", "input 'y'", "expected dtype bool", "got int32"});
  OpRunner o("LogicalOr");
  o.InputSpec({DType::kBool, Shape{2}}).InputSpec({DType::kBool, Shape{3}});
  CheckError(o.Prepare(), {"incompatible shapes", "(2,)", "(3,)"});
  OpRunner n("LogicalNot");
  n.InputSpec({DType::kFloat, Shape{2}});
  CheckError(n.Prepare(), {"input 'x'", "expected dtype bool", "got float32"});
  OpRunner n2("LogicalNot");
  n2.InputSpec({DType::kBool, PartialShape{-1, 2}});
  REQUIRE(n2.Prepare().ok());
  CHECK(n2.output_specs()[0] == TensorSpec{DType::kBool, PartialShape{-1, 2}});
}

// ---- Select, SelectV2 ------------------------------------------------------------------------

template <typename T>
Tensor Iota(const Shape& shape, T start) {
  Tensor t(kDTypeOf<T>, shape);
  T v = start;
  for (T& x : t.flat<T>()) x = v++;
  return t;
}

TEST_CASE("Select: same-shape, scalar and row-vector conditions") {
  Tensor t = Iota<float>({3, 2}, 0);    // 0..5
  Tensor e = Iota<float>({3, 2}, 100);  // 100..105
  SUBCASE("same shape") {
    Tensor c = Make<bool>({true, false, false, true, true, false}, {3, 2});
    auto got = OpRunner("Select").T(DType::kFloat).Input(c).Input(t).Input(e).Run1();
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    CHECK(TensorsEqual(*got, Make<float>({0, 101, 102, 3, 4, 105}, {3, 2})));
  }
  SUBCASE("scalar") {
    auto got = OpRunner("Select")
                   .T(DType::kFloat)
                   .Input(Tensor::Scalar<bool>(false))
                   .Input(t)
                   .Input(e)
                   .Run1();
    REQUIRE(got.ok());
    CHECK(TensorsEqual(*got, e));
  }
  SUBCASE("vector picks rows") {
    Tensor c = Make<bool>({false, true, false}, {3});
    OpRunner r("Select");
    r.T(DType::kFloat).Input(c).Input(t).Input(e);
    auto got = r.Run1();
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    CHECK(r.output_specs()[0].shape == PartialShape({3, 2}));
    CHECK(TensorsEqual(*got, Make<float>({100, 101, 2, 3, 104, 105}, {3, 2})));
  }
  SUBCASE("strings and empty tensors") {
    Tensor c = Make<bool>({true, false}, {2});
    auto got = OpRunner("Select")
                   .T(DType::kString)
                   .Input(c)
                   .Input(Make<std::string>({"a", "b"}, {2}))
                   .Input(Make<std::string>({"x", "y"}, {2}))
                   .Run1();
    REQUIRE(got.ok());
    CHECK(TensorsEqual(*got, Make<std::string>({"a", "y"}, {2})));
    auto empty = OpRunner("Select")
                     .T(DType::kInt32)
                     .Input(Tensor(DType::kBool, Shape{0, 4}))
                     .Input(Tensor(DType::kInt32, Shape{0, 4}))
                     .Input(Tensor(DType::kInt32, Shape{0, 4}))
                     .Run1();
    REQUIRE(empty.ok());
    CHECK(empty->shape() == Shape({0, 4}));
  }
}

TEST_CASE("Select: errors name the problem") {
  OpRunner shapes("Select", "sel");
  shapes.T(DType::kFloat)
      .InputSpec({DType::kBool, Shape{2}})
      .InputSpec({DType::kFloat, Shape{2}})
      .InputSpec({DType::kFloat, Shape{3}});
  CheckError(shapes.Prepare(), {"node 'sel'", "'t' and 'e'", "(2,)", "(3,)"});
  OpRunner cond("Select");
  cond.T(DType::kFloat)
      .InputSpec({DType::kBool, Shape{2}})
      .InputSpec({DType::kFloat, Shape{3, 2}})
      .InputSpec({DType::kFloat, Shape{3, 2}});
  CheckError(cond.Prepare(), {"input 'condition'", "(2,)", "(3, 2)"});
  OpRunner dtype("Select");
  dtype.T(DType::kFloat)
      .InputSpec({DType::kInt32, Shape{2}})
      .InputSpec({DType::kFloat, Shape{2}})
      .InputSpec({DType::kFloat, Shape{2}});
  CheckError(dtype.Prepare(), {"input 'condition'", "expected dtype bool", "got int32"});
  // Shapes only known when run.
  auto late = OpRunner("Select")
                  .T(DType::kFloat)
                  .Input(Make<bool>({true, false}, {2}), {DType::kBool, PartialShape{-1}})
                  .Input(Iota<float>({3, 2}, 0), {DType::kFloat, PartialShape{-1, -1}})
                  .Input(Iota<float>({3, 2}, 0), {DType::kFloat, PartialShape{-1, -1}})
                  .Run1();
  CheckError(late.status(), {"input 'condition'", "(2,)", "(3, 2)"});
}

Tensor RefSelectV2(const Tensor& c, const Tensor& t, const Tensor& e) {
  Shape so = RefBroadcastShape(c.shape(), RefBroadcastShape(t.shape(), e.shape()));
  Tensor want(DType::kInt32, so);
  for (int64_t i = 0; i < so.num_elements(); ++i) {
    std::vector<int64_t> idx = Unravel(i, so);
    want.data<int32_t>()[i] = c.data<bool>()[BroadcastIndex(idx, c.shape())]
                                  ? t.data<int32_t>()[BroadcastIndex(idx, t.shape())]
                                  : e.data<int32_t>()[BroadcastIndex(idx, e.shape())];
  }
  return want;
}

TEST_CASE("SelectV2 broadcasts all three inputs") {
  const std::vector<std::array<Shape, 3>> cases = {
      {Shape{2, 3}, Shape{2, 3}, Shape{2, 3}},
      {Shape{}, Shape{2, 3}, Shape{2, 3}},
      {Shape{3}, Shape{2, 3}, Shape{}},
      {Shape{2, 1}, Shape{1, 3}, Shape{3}},
      {Shape{4, 1, 1}, Shape{1, 5, 1}, Shape{1, 1, 6}},
      {Shape{0, 3}, Shape{3}, Shape{1}},
      {Shape{}, Shape{}, Shape{}},
      {Shape{2, 1, 7}, Shape{3, 1}, Shape{2, 3, 7}},
  };
  uint32_t seed = 9;
  for (const auto& item_ : cases) {
    const auto& sc = std::get<0>(item_);
    const auto& st = std::get<1>(item_);
    const auto& se = std::get<2>(item_);
    CAPTURE(sc.ToString());
    CAPTURE(st.ToString());
    CAPTURE(se.ToString());
    Tensor c = RandomBools(sc, seed++);
    Tensor t = Iota<int32_t>(st, 0);
    Tensor e = Iota<int32_t>(se, 1000);
    auto got = OpRunner("SelectV2").T(DType::kInt32).Input(c).Input(t).Input(e).Run1();
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    CHECK(TensorsEqual(*got, RefSelectV2(c, t, e)));
  }
  OpRunner bad("SelectV2", "sv2");
  bad.T(DType::kFloat)
      .InputSpec({DType::kBool, Shape{4}})
      .InputSpec({DType::kFloat, Shape{2, 3}})
      .InputSpec({DType::kFloat, Shape{3}});
  CheckError(bad.Prepare(), {"node 'sv2'", "incompatible shapes", "(4,)", "(2, 3)"});
  OpRunner partial("SelectV2");
  partial.T(DType::kFloat)
      .InputSpec({DType::kBool, PartialShape{-1, 1}})
      .InputSpec({DType::kFloat, PartialShape{3}})
      .InputSpec({DType::kFloat, PartialShape::Scalar()});
  REQUIRE(partial.Prepare().ok());
  CHECK(partial.output_specs()[0] == TensorSpec{DType::kFloat, PartialShape{-1, 3}});
}

}  // namespace
}  // namespace kiln::exec
