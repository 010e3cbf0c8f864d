// Error paths of the element-wise math ops (math_unary_ops.cc, math_binary_ops.cc): bad attrs
// and dtypes fail at prepare naming node, attr and what TF expects; bad values and shapes fail
// when running, naming the problem. Values are covered by the op tester (tests/ops).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "exec/kernel_test_util.h"

namespace kiln::exec {
namespace {

using testing::CheckError;
using testing::Make;
using testing::OpRunner;

TEST_CASE("math ops: dtypes outside TF's lists fail at prepare") {
  for (const char* op : {"Sin", "Erf", "Floor", "IsNan", "Digamma"}) {
    OpRunner r(op, "u");
    r.T(DType::kInt32).InputSpec({DType::kInt32, Shape{2}});
    CheckError(r.Prepare(), {"node 'u'", op, "attr 'T'", "int32", "not supported", "float32"});
  }
  OpRunner invert("Invert");
  invert.T(DType::kFloat).InputSpec({DType::kFloat, Shape{2}});
  CheckError(invert.Prepare(), {"attr 'T'", "float32", "int8"});
  OpRunner shift("LeftShift");
  shift.T(DType::kHalf).InputSpec({DType::kHalf, Shape{2}}).InputSpec({DType::kHalf, Shape{2}});
  CheckError(shift.Prepare(), {"attr 'T'", "float16", "not supported"});
  OpRunner leaky("LeakyRelu");  // T defaults to float32
  leaky.InputSpec({DType::kInt32, Shape{2}});
  CheckError(leaky.Prepare(), {"input 'features'", "expected dtype float32", "got int32"});
  OpRunner mismatch("Atan2");
  mismatch.T(DType::kFloat)
      .InputSpec({DType::kFloat, Shape{2}})
      .InputSpec({DType::kDouble, Shape{2}});
  CheckError(mismatch.Prepare(), {"input 'y'", "expected dtype float32", "got float64"});
}

TEST_CASE("math ops: broadcasting errors name both shapes") {
  OpRunner r("Xlogy", "x");
  r.T(DType::kFloat).InputSpec({DType::kFloat, Shape{2, 3}}).InputSpec({DType::kFloat, Shape{4}});
  CheckError(r.Prepare(), {"node 'x'", "incompatible shapes", "(2, 3)", "(4,)"});
  auto late = OpRunner("SquaredDifference", "sd")
                  .T(DType::kInt32)
                  .Input(Make<int32_t>({1, 2, 3}, {3}), TensorSpec{DType::kInt32, PartialShape{-1}})
                  .Input(Make<int32_t>({1, 2}, {2}), TensorSpec{DType::kInt32, PartialShape{-1}})
                  .Run1();
  CheckError(late.status(), {"node 'sd'", "incompatible shapes"});
}

TEST_CASE("math ops: integer division and remainder by zero fail") {
  for (const char* op : {"Div", "TruncateDiv", "Mod", "TruncateMod"}) {
    auto got = OpRunner(op, "d")
                   .T(DType::kInt32)
                   .Input(Make<int32_t>({4, 5}, {2}))
                   .Input(Make<int32_t>({1, 0}, {2}))
                   .Run1();
    CheckError(got.status(), {"node 'd'", "integer division by zero"});
  }
  // Floats divide by zero as IEEE says; the *NoNan ops give 0.
  auto f = OpRunner("Div")
               .T(DType::kFloat)
               .Input(Make<float>({1}, {1}))
               .Input(Make<float>({0}, {1}))
               .Run1();
  REQUIRE(f.ok());
  CHECK(std::isinf(f->data<float>()[0]));
}

TEST_CASE("math ops: gradients want inputs of one size") {
  OpRunner relu("ReluGrad", "rg");
  relu.T(DType::kFloat).InputSpec({DType::kFloat, Shape{3}}).InputSpec({DType::kFloat, Shape{1}});
  CheckError(relu.Prepare(), {"node 'rg'", "'gradients' and 'features'", "same shape", "(3,)"});
  OpRunner tanh("TanhGrad", "tg");
  tanh.T(DType::kFloat).InputSpec({DType::kFloat, Shape{1}}).InputSpec({DType::kFloat, Shape{2}});
  CheckError(tanh.Prepare(), {"node 'tg'", "same number of elements"});
  // Same element count, other shape: TanhGrad takes y's shape (as TF).
  auto ok = OpRunner("TanhGrad")
                .T(DType::kFloat)
                .Input(Make<float>({0.5f, 0}, {2, 1}))
                .Input(Make<float>({1, 2}, {2}))
                .Run1();
  REQUIRE_MESSAGE(ok.ok(), ok.status().ToString());
  CHECK(ok->shape() == Shape({2, 1}));
  CHECK(ok->data<float>()[0] == 0.75f);
  CHECK(ok->data<float>()[1] == 2.0f);
  auto late = OpRunner("ReluGrad", "late")
                  .T(DType::kFloat)
                  .Input(Make<float>({1, 2}, {2}), TensorSpec{DType::kFloat, PartialShape{-1}})
                  .Input(Make<float>({1, 2, 3}, {3}), TensorSpec{DType::kFloat, PartialShape{-1}})
                  .Run1();
  CheckError(late.status(), {"node 'late'", "same shape", "(2,)", "(3,)"});
}

TEST_CASE("ClipByValue: bounds are scalars or have t's shape") {
  OpRunner r("ClipByValue", "clip");
  r.T(DType::kFloat)
      .InputSpec({DType::kFloat, Shape{2, 2}})
      .InputSpec({DType::kFloat, Shape{2}})
      .InputSpec({DType::kFloat, Shape{}});
  CheckError(r.Prepare(), {"node 'clip'", "'clip_value_min'", "scalar", "(2, 2)", "(2,)"});
  auto late = OpRunner("ClipByValue", "late")
                  .T(DType::kInt32)
                  .Input(Make<int32_t>({1, 2, 3}, {3}))
                  .Input(Make<int32_t>({0}, {1}), TensorSpec{DType::kInt32, PartialShape{-1}})
                  .Input(Tensor::Scalar<int32_t>(2))
                  .Run1();
  CheckError(late.status(), {"node 'late'", "scalars or have the shape of t"});
}

TEST_CASE("ComplexAbs: Tout must be the real type of T") {
  OpRunner r("ComplexAbs", "abs");
  r.Type("T", DType::kComplex128)
      .Type("Tout", DType::kFloat)
      .InputSpec({DType::kComplex128, Shape{2}});
  CheckError(r.Prepare(),
             {"node 'abs'", "attr 'Tout'", "float32", "complex128", "expected float64"});
  OpRunner real("ComplexAbs");
  real.Type("T", DType::kFloat).InputSpec({DType::kFloat, Shape{2}});
  CheckError(real.Prepare(), {"attr 'T'", "float32", "complex64"});
}

TEST_CASE("CheckNumerics: fails with its message on NaN or Inf, passes finite values on") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  auto run = [](const Tensor& x) {
    return OpRunner("CheckNumerics", "check")
        .T(x.dtype())
        .String("message", "after layer 3")
        .Input(x)
        .Run1();
  };
  CheckError(run(Make<float>({1, nan}, {2})).status(),
             {"node 'check'", "after layer 3 : Tensor had NaN values"});
  CheckError(run(Make<float>({-inf, 1}, {2})).status(), {"after layer 3 : Tensor had Inf values"});
  CheckError(run(Make<double>({inf, nan}, {2})).status(),
             {"after layer 3 : Tensor had Inf and NaN values"});
  auto fine = run(Make<float>({1, -2}, {2}));
  REQUIRE(fine.ok());
  CHECK(fine->data<float>()[1] == -2.0f);
  OpRunner no_message("CheckNumerics");
  no_message.T(DType::kFloat).InputSpec({DType::kFloat, Shape{2}});
  CheckError(no_message.Prepare(), {"message"});
  CHECK((FindOp("CheckNumerics")->flags & kOpStateful) != 0);
}

}  // namespace
}  // namespace kiln::exec
