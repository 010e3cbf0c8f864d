// Sum, Mean, Max, Min, Prod, ArgMax, ArgMin against plain-loop references over many shapes and
// axis sets (negative, empty, all), keep_dims, empty tensors, shape inference with constant and
// unknown axes, and the error paths.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <set>
#include <tuple>

#include "exec/kernel_test_util.h"

namespace kiln::exec {
namespace {

using testing::CheckClose;
using testing::CheckError;
using testing::Make;
using testing::OpRunner;
using testing::Random;
using testing::Unravel;

// Reduces `in` over `axes` (already non-negative) by visiting every element in order.
template <typename T, typename F>
Tensor RefReduce(const Tensor& in, const std::set<int>& axes, bool keep_dims, T init, F f,
                 bool mean = false) {
  Shape out_shape;
  for (int i = 0; i < in.rank(); ++i) {
    if (!axes.count(i)) {
      out_shape.AddDim(in.dim(i));
    } else if (keep_dims) {
      out_shape.AddDim(1);
    }
  }
  Tensor out(kDTypeOf<T>, out_shape);
  for (T& v : out.flat<T>()) v = init;
  for (int64_t i = 0; i < in.NumElements(); ++i) {
    std::vector<int64_t> idx = Unravel(i, in.shape());
    int64_t o = 0;
    for (int d = 0; d < in.rank(); ++d) {
      if (!axes.count(d)) o = o * in.dim(d) + idx[d];
    }
    out.data<T>()[o] = f(out.data<T>()[o], in.data<T>()[i]);
  }
  if (mean) {
    int64_t count = 1;
    for (int a : axes) count *= in.dim(a);
    for (T& v : out.flat<T>()) {
      if (count > 0 || std::is_floating_point_v<T>) v = static_cast<T>(v / static_cast<T>(count));
    }
  }
  return out;
}

struct AxisCase {
  Shape shape;
  std::vector<int64_t> axes;
};

const std::vector<AxisCase>& AxisCases() {
  static const std::vector<AxisCase> cases = {
      {{}, {}},
      {{5}, {0}},
      {{5}, {-1}},
      {{5}, {}},
      {{3, 4}, {0}},
      {{3, 4}, {1}},
      {{3, 4}, {-1, 0}},
      {{3, 4}, {}},
      {{2, 3, 4}, {1}},
      {{2, 3, 4}, {0, 2}},
      {{2, 3, 4}, {-2}},
      {{2, 1, 4}, {1}},
      {{2, 1, 4}, {0, 1}},
      {{2, 3, 4, 5}, {1, 3}},
      {{2, 3, 4, 5}, {0, 1, 2, 3}},
      {{2, 3, 4, 5}, {3, -3}},
      {{0, 3}, {0}},
      {{0, 3}, {1}},
      {{4, 0, 2}, {1}},
      {{37, 65}, {0}},
      {{37, 65}, {1}},
  };
  return cases;
}

std::set<int> Normalize(const std::vector<int64_t>& axes, int rank) {
  std::set<int> s;
  for (int64_t a : axes) s.insert(static_cast<int>(a < 0 ? a + rank : a));
  return s;
}

Tensor AxesTensor(const std::vector<int64_t>& axes, DType dt) {
  Shape s{static_cast<int64_t>(axes.size())};
  if (dt == DType::kInt64) return Make<int64_t>(axes, s);
  std::vector<int32_t> v(axes.begin(), axes.end());
  return Make<int32_t>(v, s);
}

template <typename T>
void CheckReductions() {
  uint32_t seed = 1;
  for (const AxisCase& c : AxisCases()) {
    for (bool keep : {false, true}) {
      for (DType tidx : {DType::kInt32, DType::kInt64}) {
        CAPTURE(DTypeShortName(kDTypeOf<T>));
        CAPTURE(c.shape.ToString());
        CAPTURE(AxesTensor(c.axes, DType::kInt64).SummarizeValue(-1));
        CAPTURE(keep);
        // Small values keep int products in range.
        Tensor x = Random<T>(c.shape, seed++, -2, 2);
        const std::set<int> axes = Normalize(c.axes, c.shape.rank());
        auto run = [&](const std::string& op) {
          OpRunner r(op);
          r.T(kDTypeOf<T>)
              .Type("Tidx", tidx)
              .Bool("keep_dims", keep)
              .Input(x)
              .ConstantInput(AxesTensor(c.axes, tidx));
          auto got = r.Run1();
          REQUIRE_MESSAGE(got.ok(), got.status().ToString());
          // Constant axes: prepare knows the whole output shape.
          CHECK(r.output_specs()[0].shape == PartialShape(got->shape()));
          return *got;
        };
        const T lowest = std::is_floating_point_v<T> ? -std::numeric_limits<T>::infinity()
                                                     : std::numeric_limits<T>::lowest();
        const T highest = std::is_floating_point_v<T> ? std::numeric_limits<T>::infinity()
                                                      : std::numeric_limits<T>::max();
        CheckClose<T>(run("Sum"), RefReduce<T>(x, axes, keep, T(0), [](T a, T b) { return a + b; }),
                      1e-5);
        CheckClose<T>(run("Prod"),
                      RefReduce<T>(x, axes, keep, T(1), [](T a, T b) { return a * b; }), 1e-5);
        // Max and Min select values, so they match exactly (infinities of empty runs too).
        CHECK(TensorsEqual(run("Max"), RefReduce<T>(x, axes, keep, lowest,
                                                    [](T a, T b) { return b > a ? b : a; })));
        CHECK(TensorsEqual(run("Min"), RefReduce<T>(x, axes, keep, highest,
                                                    [](T a, T b) { return b < a ? b : a; })));
        CheckClose<T>(run("Mean"),
                      RefReduce<T>(
                          x, axes, keep, T(0), [](T a, T b) { return a + b; }, /*mean=*/true),
                      1e-5);
      }
    }
  }
}

TEST_CASE("reductions: float32") { CheckReductions<float>(); }
TEST_CASE("reductions: float64") { CheckReductions<double>(); }
TEST_CASE("reductions: int32") { CheckReductions<int32_t>(); }
TEST_CASE("reductions: int64") { CheckReductions<int64_t>(); }

TEST_CASE("reductions: scalar axis, defaults, integer mean, empty and NaN") {
  Tensor x = Make<int32_t>({1, 2, 4, 7, 8, 9}, {2, 3});
  auto sum = OpRunner("Sum").T(DType::kInt32).Input(x).Input(Tensor::Scalar<int32_t>(1)).Run1();
  REQUIRE_MESSAGE(sum.ok(), sum.status().ToString());
  CHECK(TensorsEqual(*sum, Make<int32_t>({7, 24}, {2})));
  // Integer mean truncates, as TF's does.
  auto mean = OpRunner("Mean").T(DType::kInt32).Input(x).Input(Tensor::Scalar<int32_t>(0)).Run1();
  REQUIRE(mean.ok());
  CHECK(TensorsEqual(*mean, Make<int32_t>({4, 5, 6}, {3})));
  // Reducing an empty dim: the identity, and NaN for a float mean.
  Tensor empty(DType::kFloat, Shape{0, 2});
  auto esum =
      OpRunner("Sum").T(DType::kFloat).Input(empty).Input(Tensor::Scalar<int32_t>(0)).Run1();
  REQUIRE(esum.ok());
  CHECK(TensorsEqual(*esum, Make<float>({0, 0}, {2})));
  auto emax =
      OpRunner("Max").T(DType::kFloat).Input(empty).Input(Tensor::Scalar<int32_t>(0)).Run1();
  REQUIRE(emax.ok());
  CHECK(emax->data<float>()[0] == -std::numeric_limits<float>::infinity());
  auto emean =
      OpRunner("Mean").T(DType::kFloat).Input(empty).Input(Tensor::Scalar<int32_t>(0)).Run1();
  REQUIRE(emean.ok());
  CHECK(std::isnan(emean->data<float>()[1]));
  // NaN wins in Max and Min.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor f = Make<float>({1, nan, 3, 4}, {2, 2});
  for (const char* op : {"Max", "Min", "Sum"}) {
    CAPTURE(op);
    auto got = OpRunner(op).T(DType::kFloat).Input(f).Input(Tensor::Scalar<int32_t>(1)).Run1();
    REQUIRE(got.ok());
    CHECK(std::isnan(got->data<float>()[0]));
    CHECK(!std::isnan(got->data<float>()[1]));
  }
}

TEST_CASE("reductions: shape inference") {
  auto prepare = [](PartialShape in, const Tensor* axes, TensorSpec axes_spec, bool keep) {
    OpRunner r("Sum");
    r.T(DType::kFloat).Bool("keep_dims", keep).InputSpec({DType::kFloat, in});
    if (axes != nullptr) {
      r.ConstantInput(*axes);
    } else {
      r.InputSpec(axes_spec);
    }
    Status s = r.Prepare();
    REQUIRE_MESSAGE(s.ok(), s.ToString());
    return r.output_specs()[0].shape;
  };
  Tensor ax = Make<int32_t>({-1}, {1});
  CHECK(prepare({-1, 3, 5}, &ax, {}, false) == PartialShape({-1, 3}));
  CHECK(prepare({-1, 3, 5}, &ax, {}, true) == PartialShape({-1, 3, 1}));
  Tensor none = Make<int32_t>({}, {0});
  CHECK(prepare({-1, 3}, &none, {}, false) == PartialShape({-1, 3}));
  // Axes unknown at prepare: unknown rank, or the rank with keep_dims.
  TensorSpec unknown{DType::kInt32, PartialShape{-1}};
  CHECK(prepare({2, 3}, nullptr, unknown, false).unknown_rank());
  CHECK(prepare({2, 3}, nullptr, unknown, true) == PartialShape({-1, -1}));
  CHECK(prepare(PartialShape::UnknownRank(), &ax, {}, false).unknown_rank());

  // And the run reads the axes then.
  auto got = OpRunner("Max")
                 .T(DType::kDouble)
                 .Input(Make<double>({1, 5, 3, 2}, {2, 2}))
                 .Input(Make<int64_t>({0}, {1}), {DType::kInt64, PartialShape{-1}})
                 .Type("Tidx", DType::kInt64)
                 .Run1();
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  CHECK(TensorsEqual(*got, Make<double>({3, 5}, {2})));
}

TEST_CASE("reductions: errors name the problem") {
  SUBCASE("axis out of range at prepare") {
    OpRunner r("Sum", "s");
    r.T(DType::kFloat)
        .InputSpec({DType::kFloat, Shape{2, 3}})
        .ConstantInput(Make<int32_t>({2}, {1}));
    CheckError(r.Prepare(), {"node 's'", "invalid reduction dimension 2", "2 dimensions"});
  }
  SUBCASE("negative axis out of range when run") {
    auto got = OpRunner("Mean", "m")
                   .T(DType::kFloat)
                   .Input(Random<float>({2, 3}, 1))
                   .Input(Make<int32_t>({-3}, {1}))
                   .Run1();
    CheckError(got.status(), {"node 'm'", "invalid reduction dimension -3", "(2, 3)"});
  }
  SUBCASE("duplicate axes") {
    auto got = OpRunner("Prod")
                   .T(DType::kFloat)
                   .Input(Random<float>({2, 3}, 1))
                   .ConstantInput(Make<int32_t>({1, -1}, {2}))
                   .Run1();
    CheckError(got.status(), {"dimension 1 twice"});
  }
  SUBCASE("axes of rank 2") {
    OpRunner r("Sum");
    r.T(DType::kFloat)
        .InputSpec({DType::kFloat, Shape{2, 3}})
        .InputSpec({DType::kInt32, Shape{1, 1}});
    CheckError(r.Prepare(), {"'reduction_indices'", "scalar or a vector", "(1, 1)"});
  }
  SUBCASE("Tidx mismatch") {
    OpRunner r("Sum");
    r.T(DType::kFloat).InputSpec({DType::kFloat, Shape{2, 3}}).InputSpec({DType::kInt64, Shape{1}});
    CheckError(r.Prepare(), {"input 'reduction_indices'", "expected dtype int32", "got int64"});
  }
  SUBCASE("unsupported dtypes") {
    OpRunner r("Max");
    r.T(DType::kBool).InputSpec({DType::kBool, Shape{2}}).InputSpec({DType::kInt32, Shape{}});
    CheckError(r.Prepare(), {"attr 'T'", "bool", "not supported"});
    OpRunner t("Sum");
    t.T(DType::kFloat)
        .Type("Tidx", DType::kFloat)
        .InputSpec({DType::kFloat, Shape{2}})
        .InputSpec({DType::kFloat, Shape{}});
    CheckError(t.Prepare(), {"attr 'Tidx'", "float32", "not supported"});
  }
  SUBCASE("keep_dims of the wrong kind") {
    OpRunner r("Sum");
    r.T(DType::kFloat)
        .String("keep_dims", "yes")
        .InputSpec({DType::kFloat, Shape{2}})
        .InputSpec({DType::kInt32, Shape{}});
    CheckError(r.Prepare(), {"attr 'keep_dims'", "expected bool"});
  }
}

// ---- ArgMax, ArgMin --------------------------------------------------------------------------

template <typename T, typename Index>
Tensor RefArg(const Tensor& in, int axis, bool max) {
  Shape out_shape;
  for (int i = 0; i < in.rank(); ++i) {
    if (i != axis) out_shape.AddDim(in.dim(i));
  }
  Tensor out(kDTypeOf<Index>, out_shape);
  std::vector<T> best(out_shape.num_elements());
  std::vector<bool> seen(out_shape.num_elements(), false);
  for (int64_t i = 0; i < in.NumElements(); ++i) {
    std::vector<int64_t> idx = Unravel(i, in.shape());
    int64_t o = 0;
    for (int d = 0; d < in.rank(); ++d) {
      if (d != axis) o = o * in.dim(d) + idx[d];
    }
    T v = in.data<T>()[i];
    if (!seen[o] || (max ? v > best[o] : v < best[o])) {
      seen[o] = true;
      best[o] = v;
      out.data<Index>()[o] = static_cast<Index>(idx[axis]);
    }
  }
  return out;
}

template <typename T>
void CheckArgOps() {
  const std::vector<std::pair<Shape, int>> cases = {
      {{5}, 0},       {{5}, -1},      {{3, 4}, 0},    {{3, 4}, 1}, {{3, 4}, -2},
      {{2, 3, 4}, 1}, {{2, 3, 4}, 2}, {{2, 1, 4}, 1}, {{0, 3}, 1}, {{33, 17}, 0},
  };
  uint32_t seed = 3;
  for (const auto& item_ : cases) {
    const auto& shape = std::get<0>(item_);
    const auto& axis = std::get<1>(item_);
    CAPTURE(DTypeShortName(kDTypeOf<T>));
    CAPTURE(shape.ToString());
    CAPTURE(axis);
    Tensor x = Random<T>(shape, seed++, -3, 3);  // many ties: the first one wins
    const int a = axis < 0 ? axis + shape.rank() : axis;
    for (bool max : {true, false}) {
      OpRunner r(max ? "ArgMax" : "ArgMin");
      r.T(kDTypeOf<T>).Input(x).ConstantInput(Tensor::Scalar<int32_t>(axis));
      auto got = r.Run1();
      REQUIRE_MESSAGE(got.ok(), got.status().ToString());
      CHECK(r.output_specs()[0] == TensorSpec{DType::kInt64, got->shape()});
      CHECK(TensorsEqual(*got, RefArg<T, int64_t>(x, a, max)));
    }
    auto i32 = OpRunner("ArgMax")
                   .T(kDTypeOf<T>)
                   .Type("output_type", DType::kInt32)
                   .Type("Tidx", DType::kInt64)
                   .Input(x)
                   .Input(Tensor::Scalar<int64_t>(axis))
                   .Run1();
    REQUIRE_MESSAGE(i32.ok(), i32.status().ToString());
    CHECK(TensorsEqual(*i32, RefArg<T, int32_t>(x, a, true)));
  }
}

TEST_CASE("ArgMax and ArgMin: float32") { CheckArgOps<float>(); }
TEST_CASE("ArgMax and ArgMin: float64") { CheckArgOps<double>(); }
TEST_CASE("ArgMax and ArgMin: int32") { CheckArgOps<int32_t>(); }
TEST_CASE("ArgMax and ArgMin: int64") { CheckArgOps<int64_t>(); }

TEST_CASE("ArgMax and ArgMin: shape inference and errors") {
  OpRunner known("ArgMax");
  known.T(DType::kFloat)
      .InputSpec({DType::kFloat, PartialShape{-1, 10}})
      .ConstantInput(Tensor::Scalar<int32_t>(-1));
  REQUIRE(known.Prepare().ok());
  CHECK(known.output_specs()[0] == TensorSpec{DType::kInt64, PartialShape{-1}});
  OpRunner unknown_axis("ArgMin");
  unknown_axis.T(DType::kFloat)
      .InputSpec({DType::kFloat, PartialShape{4, 10, 3}})
      .InputSpec({DType::kInt32, PartialShape::Scalar()});
  REQUIRE(unknown_axis.Prepare().ok());
  CHECK(unknown_axis.output_specs()[0].shape == PartialShape({-1, -1}));

  OpRunner range("ArgMax", "am");
  range.T(DType::kFloat)
      .InputSpec({DType::kFloat, Shape{2, 3}})
      .ConstantInput(Tensor::Scalar<int32_t>(2));
  CheckError(range.Prepare(), {"node 'am'", "'dimension' is 2", "[-2, 2)"});
  OpRunner vec("ArgMax");
  vec.T(DType::kFloat).InputSpec({DType::kFloat, Shape{2, 3}}).InputSpec({DType::kInt32, Shape{1}});
  CheckError(vec.Prepare(), {"input 'dimension'", "expected rank 0"});
  OpRunner scalar("ArgMin");
  scalar.T(DType::kFloat).InputSpec({DType::kFloat, Shape{}}).InputSpec({DType::kInt32, Shape{}});
  CheckError(scalar.Prepare(), {"rank >= 1"});
  OpRunner out_type("ArgMax");
  out_type.T(DType::kFloat)
      .Type("output_type", DType::kFloat)
      .InputSpec({DType::kFloat, Shape{2}})
      .InputSpec({DType::kInt32, Shape{}});
  CheckError(out_type.Prepare(), {"attr 'output_type'", "float32", "not supported"});
  auto empty = OpRunner("ArgMax", "e")
                   .T(DType::kFloat)
                   .Input(Tensor(DType::kFloat, Shape{3, 0}))
                   .Input(Tensor::Scalar<int32_t>(1))
                   .Run1();
  CheckError(empty.status(), {"node 'e'", "reduction axis 1 is empty", "(3, 0)"});
  auto late = OpRunner("ArgMin")
                  .T(DType::kFloat)
                  .Input(Random<float>({2, 3}, 1))
                  .Input(Tensor::Scalar<int32_t>(-3), {DType::kInt32, PartialShape::Scalar()})
                  .Run1();
  CheckError(late.status(), {"'dimension' is -3", "(2, 3)"});
}

TEST_CASE("All and Any: bool inputs, no T attr") {
  OpRunner r("All", "all");
  r.InputSpec({DType::kFloat, Shape{2}}).InputSpec({DType::kInt32, Shape{}});
  CheckError(r.Prepare(), {"node 'all'", "input 'input'", "expected dtype bool", "got float32"});
  auto any = OpRunner("Any")
                 .Input(Make<bool>({false, true, false, false}, {2, 2}))
                 .ConstantInput(Make<int32_t>({1}, {1}))
                 .Run1();
  REQUIRE(any.ok());
  CHECK(TensorsEqual(*any, Make<bool>({true, false}, {2})));
  auto all = OpRunner("All")
                 .Input(Tensor(DType::kBool, Shape{0, 3}))
                 .ConstantInput(Make<int32_t>({0}, {1}))
                 .Run1();
  REQUIRE(all.ok());
  CHECK(TensorsEqual(*all, Make<bool>({true, true, true}, {3})));
}

}  // namespace
}  // namespace kiln::exec
