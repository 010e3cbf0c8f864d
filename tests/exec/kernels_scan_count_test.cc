// Error paths of the scans (Cumsum, Cumprod, LinSpace) and the counting and set ops (Bincount,
// DenseBincount, Unique*): prepare-time checks of attrs, dtypes and known values, and run-time
// checks of values only known when running. Values are covered by the op tester (tests/ops).
#include <doctest/doctest.h>

#include "exec/kernel_test_util.h"

namespace kiln::exec {
namespace {

using testing::CheckError;
using testing::Make;
using testing::OpRunner;

TEST_CASE("Cumsum, Cumprod: the axis must be a scalar in range") {
  OpRunner vec("Cumsum", "cs");
  vec.T(DType::kFloat).InputSpec({DType::kFloat, Shape{3}}).InputSpec({DType::kInt32, Shape{1}});
  CheckError(vec.Prepare(), {"node 'cs'", "input 'axis'", "expected rank 0"});
  OpRunner range("Cumprod", "cp");
  range.T(DType::kFloat)
      .InputSpec({DType::kFloat, Shape{3}})
      .ConstantInput(Tensor::Scalar<int32_t>(1));
  CheckError(range.Prepare(), {"node 'cp'", "axis 1 is out of range for rank 1"});
  auto late = OpRunner("Cumsum", "late")
                  .T(DType::kInt32)
                  .Input(Make<int32_t>({1, 2}, {2}))
                  .Input(Tensor::Scalar<int32_t>(-2))
                  .Run1();
  CheckError(late.status(), {"node 'late'", "'axis' is -2", "[-1, 1)"});
  OpRunner scalar("Cumsum");
  scalar.T(DType::kFloat)
      .InputSpec({DType::kFloat, Shape{}})
      .ConstantInput(Tensor::Scalar<int32_t>(0));
  CheckError(scalar.Prepare(), {"axis 0 is out of range for rank 0"});
  OpRunner type("Cumsum");
  type.T(DType::kBool).InputSpec({DType::kBool, Shape{2}}).InputSpec({DType::kInt32, Shape{}});
  CheckError(type.Prepare(), {"attr 'T'", "bool", "not supported"});
}

TEST_CASE("LinSpace: num must be positive, the ends scalars") {
  OpRunner zero("LinSpace", "ls");
  zero.T(DType::kFloat)
      .InputSpec({DType::kFloat, Shape{}})
      .InputSpec({DType::kFloat, Shape{}})
      .ConstantInput(Tensor::Scalar<int32_t>(0));
  CheckError(zero.Prepare(), {"node 'ls'", "'num' must be positive, got 0"});
  auto late = OpRunner("LinSpace", "late")
                  .T(DType::kDouble)
                  .Input(Tensor::Scalar<double>(0))
                  .Input(Tensor::Scalar<double>(1))
                  .Input(Tensor::Scalar<int32_t>(-3))
                  .Run1();
  CheckError(late.status(), {"node 'late'", "got -3"});
  OpRunner vec("LinSpace");
  vec.T(DType::kFloat)
      .InputSpec({DType::kFloat, Shape{1}})
      .InputSpec({DType::kFloat, Shape{}})
      .InputSpec({DType::kInt32, Shape{}});
  CheckError(vec.Prepare(), {"input 'start'", "expected rank 0"});
  OpRunner type("LinSpace");
  type.T(DType::kInt32)
      .InputSpec({DType::kInt32, Shape{}})
      .InputSpec({DType::kInt32, Shape{}})
      .InputSpec({DType::kInt32, Shape{}});
  CheckError(type.Prepare(), {"attr 'T'", "int32", "not supported"});
}

TEST_CASE("Bincount, DenseBincount: negative values and sizes, mismatched weights") {
  auto bincount = [](const Tensor& arr, int32_t size, const Tensor& w) {
    return OpRunner("Bincount", "bc")
        .T(w.dtype())
        .Input(arr)
        .Input(Tensor::Scalar<int32_t>(size))
        .Input(w)
        .Run1();
  };
  CheckError(bincount(Make<int32_t>({1, -1}, {2}), 3, Tensor(DType::kFloat, Shape{0})).status(),
             {"node 'bc'", "non-negative", "-1"});
  CheckError(bincount(Make<int32_t>({1}, {1}), -1, Tensor(DType::kFloat, Shape{0})).status(),
             {"'size' must be non-negative, got -1"});
  CheckError(bincount(Make<int32_t>({1, 1, 2}, {3}), 3, Make<float>({1, 2}, {2})).status(),
             {"'weights'", "(3,)", "(2,)"});
  OpRunner known("Bincount", "k");
  known.T(DType::kFloat)
      .InputSpec({DType::kInt32, Shape{3}})
      .ConstantInput(Tensor::Scalar<int32_t>(-4))
      .InputSpec({DType::kFloat, Shape{0}});
  CheckError(known.Prepare(), {"node 'k'", "non-negative, got -4"});
  OpRunner weights_type("Bincount");
  weights_type
      .T(DType::kBool)  // every number type weighs, as in TF; bool does not
      .InputSpec({DType::kInt32, Shape{3}})
      .InputSpec({DType::kInt32, Shape{}})
      .InputSpec({DType::kBool, Shape{0}});
  CheckError(weights_type.Prepare(), {"attr 'T'", "bool", "not supported"});
  OpRunner rank3("DenseBincount", "db");
  rank3.T(DType::kFloat)
      .Type("Tidx", DType::kInt32)
      .InputSpec({DType::kInt32, Shape{1, 1, 1}})
      .InputSpec({DType::kInt32, Shape{}})
      .InputSpec({DType::kFloat, Shape{0}});
  CheckError(rank3.Prepare(), {"node 'db'", "rank 1 or 2", "(1, 1, 1)"});
  auto dense = OpRunner("DenseBincount", "d")
                   .T(DType::kFloat)
                   .Type("Tidx", DType::kInt64)
                   .Input(Make<int64_t>({1, 2, 3, 0}, {2, 2}))
                   .Input(Tensor::Scalar<int64_t>(4))
                   .Input(Make<float>({1, 2, 3, 4}, {4}))
                   .Run1();
  CheckError(dense.status(), {"node 'd'", "'weights' must have the shape", "(2, 2)", "(4,)"});
}

TEST_CASE("Unique, UniqueV2: vectors only without an axis, one axis in range") {
  OpRunner matrix("Unique", "u");
  matrix.T(DType::kInt32).InputSpec({DType::kInt32, Shape{2, 2}});
  CheckError(matrix.Prepare(), {"node 'u'", "'x' must be a vector", "(2, 2)"});
  OpRunner two("UniqueV2", "u2");
  two.T(DType::kInt32)
      .InputSpec({DType::kInt32, Shape{2, 2}})
      .ConstantInput(Make<int64_t>({0, 1}, {2}));
  CheckError(two.Prepare(), {"node 'u2'", "at most 1 element"});
  OpRunner range("UniqueV2", "u3");
  range.T(DType::kInt32)
      .InputSpec({DType::kInt32, Shape{2, 2}})
      .ConstantInput(Make<int64_t>({2}, {1}));
  CheckError(range.Prepare(), {"node 'u3'", "'axis' is 2", "[-2, 2)"});
  auto late = OpRunner("UniqueV2", "late")
                  .T(DType::kFloat)
                  .Input(Make<float>({1, 2, 3, 4}, {2, 2}))
                  .Input(Make<int64_t>({}, {0}))
                  .Run();
  CheckError(late.status(), {"node 'late'", "must be a vector", "(2, 2)"});
  OpRunner idx("Unique");
  idx.T(DType::kInt32).Type("out_idx", DType::kInt16).InputSpec({DType::kInt32, Shape{2}});
  CheckError(idx.Prepare(), {"attr 'out_idx'", "int16", "not supported"});
}

}  // namespace
}  // namespace kiln::exec
