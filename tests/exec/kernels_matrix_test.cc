// Error paths of the matrix ops: band bounds, square matrices, the band of diagonals k and its
// bounds, sizes of MatrixDiagV3, the diagonal's shape for MatrixSetDiagV3, the align attr.
// Values are covered by the op tester (tests/ops) and against TensorFlow (tests/tf).
#include <doctest/doctest.h>

#include "exec/kernel_test_util.h"

namespace kiln::exec {
namespace {

using testing::CheckError;
using testing::Make;
using testing::OpRunner;

TEST_CASE("MatrixBandPart: matrices, scalar bounds within the matrix") {
  auto band = [](int64_t lower, int64_t upper) {
    return OpRunner("MatrixBandPart", "band")
        .T(DType::kFloat)
        .Input(Tensor(DType::kFloat, Shape{3, 4}))
        .Input(Tensor::Scalar<int64_t>(lower))
        .Input(Tensor::Scalar<int64_t>(upper))
        .Run1();
  };
  CheckError(band(5, 0).status(), {"node 'band'", "'num_lower'", "number of rows (3)", "got 5"});
  CheckError(band(0, 5).status(), {"'num_upper'", "number of columns (4)", "got 5"});
  CHECK(band(3, 4).ok());
  OpRunner vec("MatrixBandPart", "v");
  vec.T(DType::kFloat)
      .InputSpec({DType::kFloat, Shape{3}})
      .InputSpec({DType::kInt64, Shape{}})
      .InputSpec({DType::kInt64, Shape{}});
  CheckError(vec.Prepare(), {"node 'v'", "rank >= 2", "(3,)"});
  OpRunner bound("MatrixBandPart");
  bound.T(DType::kFloat)
      .InputSpec({DType::kFloat, Shape{3, 3}})
      .InputSpec({DType::kInt64, Shape{1}})
      .InputSpec({DType::kInt64, Shape{}});
  CheckError(bound.Prepare(), {"input 'num_lower'", "expected rank 0"});
}

TEST_CASE("MatrixDeterminant: square float matrices") {
  OpRunner r("MatrixDeterminant", "det");
  r.T(DType::kFloat).InputSpec({DType::kFloat, Shape{2, 3}});
  CheckError(r.Prepare(), {"node 'det'", "square", "(2, 3)"});
  auto late = OpRunner("MatrixDeterminant", "late")
                  .T(DType::kDouble)
                  .Input(Tensor(DType::kDouble, Shape{2, 3}),
                         TensorSpec{DType::kDouble, PartialShape{-1, -1}})
                  .Run1();
  CheckError(late.status(), {"node 'late'", "square", "(2, 3)"});
  OpRunner type("MatrixDeterminant");
  type.T(DType::kInt32).InputSpec({DType::kInt32, Shape{2, 2}});
  CheckError(type.Prepare(), {"attr 'T'", "int32", "not supported"});
}

TEST_CASE("Matrix diagonals: k is one or two ordered diagonals inside the matrix") {
  auto part = [](const Tensor& k) {
    return OpRunner("MatrixDiagPartV3", "part")
        .T(DType::kFloat)
        .Input(Tensor(DType::kFloat, Shape{2, 3}))
        .Input(k)
        .Input(Tensor::Scalar<float>(0))
        .Run1();
  };
  CheckError(part(Make<int32_t>({1, 0}, {2})).status(),
             {"node 'part'", "lower diagonal 1", "upper 0"});
  CheckError(part(Tensor::Scalar<int32_t>(3)).status(),
             {"diagonal 3 is out of bounds", "2 x 3", "(-2, 3)"});
  CheckError(part(Tensor::Scalar<int32_t>(-2)).status(), {"diagonal -2 is out of bounds"});
  CheckError(part(Make<int32_t>({0, 1, 2}, {3})).status(), {"'k'", "1 or 2 elements", "(3,)"});
  CHECK(part(Make<int32_t>({-1, 2}, {2})).ok());
  OpRunner known("MatrixDiagPartV2", "known");
  known.T(DType::kFloat)
      .InputSpec({DType::kFloat, Shape{2, 3}})
      .ConstantInput(Tensor::Scalar<int32_t>(4))
      .InputSpec({DType::kFloat, Shape{}});
  CheckError(known.Prepare(), {"node 'known'", "diagonal 4 is out of bounds"});
  OpRunner align("MatrixDiagPartV3", "al");
  align.T(DType::kFloat)
      .String("align", "CENTER")
      .InputSpec({DType::kFloat, Shape{2, 3}})
      .InputSpec({DType::kInt32, Shape{}})
      .InputSpec({DType::kFloat, Shape{}});
  CheckError(align.Prepare(), {"node 'al'", "attr 'align'", "CENTER", "RIGHT_LEFT"});
}

TEST_CASE("MatrixDiagV3: sizes that hold the diagonals, diagonals of the band") {
  auto diag = [](const Tensor& d, const Tensor& k, int32_t rows, int32_t cols) {
    return OpRunner("MatrixDiagV3", "diag")
        .T(DType::kInt32)
        .Input(d)
        .Input(k)
        .Input(Tensor::Scalar<int32_t>(rows))
        .Input(Tensor::Scalar<int32_t>(cols))
        .Input(Tensor::Scalar<int32_t>(0))
        .Run1();
  };
  const Tensor two = Make<int32_t>({1, 2}, {2});
  CheckError(diag(two, Tensor::Scalar<int32_t>(0), 1, -1).status(),
             {"node 'diag'", "'num_rows' is 1", "at least 2"});
  CheckError(diag(two, Tensor::Scalar<int32_t>(1), -1, 2).status(),
             {"'num_cols' is 2", "at least 3"});
  CheckError(diag(two, Tensor::Scalar<int32_t>(0), 4, 4).status(), {"4 x 4", "does not fit"});
  CheckError(
      diag(Make<int32_t>({1, 2, 3, 4, 5, 6}, {3, 2}), Make<int32_t>({0, 1}, {2}), -1, -1).status(),
      {"must hold 2 diagonals", "(3, 2)"});
  auto ok = diag(two, Tensor::Scalar<int32_t>(-1), -1, -1);
  REQUIRE(ok.ok());
  CHECK(ok->shape() == Shape({3, 3}));
}

TEST_CASE("MatrixSetDiagV3: the diagonal must have the band's packed shape") {
  auto set = [](const Tensor& d, const Tensor& k) {
    return OpRunner("MatrixSetDiagV3", "set")
        .T(DType::kFloat)
        .Input(Tensor(DType::kFloat, Shape{3, 4}))
        .Input(d)
        .Input(k)
        .Run1();
  };
  CheckError(set(Make<float>({1, 2}, {2}), Tensor::Scalar<int32_t>(0)).status(),
             {"node 'set'", "'diagonal' has shape (2,)", "expected (3,)"});
  CheckError(set(Make<float>({1, 2, 3}, {3}), Make<int32_t>({0, 1}, {2})).status(),
             {"expected (2, 3)"});
  CHECK(set(Make<float>({1, 2, 3}, {3}), Tensor::Scalar<int32_t>(1)).ok());
}

}  // namespace
}  // namespace kiln::exec
