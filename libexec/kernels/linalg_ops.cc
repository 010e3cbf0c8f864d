// Dense linear algebra on batches of matrices, as TensorFlow's CPU kernels compute it: Cholesky
// (and CholeskyGrad), MatrixInverse, MatrixSolve, MatrixTriangularSolve (batch dims broadcast),
// LogMatrixDeterminant and Lu here; Qr, Svd and SelfAdjointEigV2 in linalg_decomposition_ops.cc;
// MatrixSquareRoot, MatrixLogarithm, MatrixSolveLs and the tridiagonal ops in
// linalg_function_ops.cc; this file holds the family's definitions table. float32, float64,
// complex64, complex128; half-precision graphs run them in float32 (executor/half_precision.h).
// The CPU kernels are in kernels/cpu/linalg_ops.cc (and the two helpers beside it).
#include <memory>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/linalg_util.h"

namespace kiln::exec {
namespace {

using namespace linalg;  // NOLINT(google-build-using-namespace): the family's own helpers

// ---- Cholesky --------------------------------------------------------------------------------

Status PrepareCholesky(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, auto st, ReadType(ctx, 1));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 0, "input", true));
  ctx.outputs = {TensorSpec{st->dtype, ctx.inputs[0].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- CholeskyGrad ----------------------------------------------------------------------------

// The gradient of A = L L^T given dL, from the lower triangles of l and grad (float32 and
// float64, as TF): S = L^-T Phi(L^T dL) L^-1 (Murray, "Differentiation of the Cholesky
// decomposition", 2016, where Phi keeps the lower triangle and halves the diagonal), returned
// symmetrized, (S + S^T) / 2, as TF's blocked kernel returns it.
Status PrepareCholeskyGrad(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, auto st, ReadType(ctx, 2));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->dtype, {DType::kFloat, DType::kDouble}));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 0, "l", true));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 1, "grad", true));
  ctx.outputs = {TensorSpec{st->dtype, ctx.inputs[0].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- MatrixInverse, MatrixSolve --------------------------------------------------------------

Status PrepareInverse(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, auto st, ReadType(ctx, 1));
  KILN_PREPARE_ASSIGN(ctx, st->flag_a, ctx.attrs.GetBool("adjoint", false));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 0, "input", true));
  ctx.outputs = {TensorSpec{st->dtype, ctx.inputs[0].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

Status PrepareSolve(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, auto st, ReadType(ctx, 2));
  KILN_PREPARE_ASSIGN(ctx, st->flag_a, ctx.attrs.GetBool("adjoint", false));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 0, "matrix", true));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 1, "rhs", false));
  ctx.outputs = {TensorSpec{st->dtype, ctx.inputs[1].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- MatrixTriangularSolve, BandedTriangularSolve (batch dims broadcast, as TF 2) -------------

template <bool kBanded>
Status PrepareTriangularSolve(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, auto base, ReadType(ctx, 2));
  auto st = std::make_shared<TriangularSolveState>();
  st->dtype = base->dtype;
  st->banded = kBanded;
  KILN_PREPARE_ASSIGN(ctx, st->flag_a, ctx.attrs.GetBool("lower", true));
  KILN_PREPARE_ASSIGN(ctx, st->flag_b, ctx.attrs.GetBool("adjoint", false));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 0, "matrix", !kBanded));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 1, "rhs", false));
  const PartialShape &a = ctx.inputs[0].shape, &b = ctx.inputs[1].shape;
  PartialShape out = PartialShape::UnknownRank();
  if (!a.unknown_rank() && !b.unknown_rank()) {
    KILN_PREPARE_ASSIGN(ctx, PartialShape batch,
                        BroadcastPartialShapes(BatchOf(a, {}), BatchOf(b, {})));
    std::vector<int64_t> dims(batch.dims().begin(), batch.dims().end());
    dims.push_back(b.dim(b.rank() - 2));
    dims.push_back(b.dim(b.rank() - 1));
    KILN_PREPARE_ASSIGN(ctx, out, PartialShape::FromDims(dims));
  }
  ctx.outputs = {TensorSpec{st->dtype, out}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- LogMatrixDeterminant, Lu ----------------------------------------------------------------

Status PrepareLogDet(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, auto st, ReadType(ctx, 1));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 0, "input", true));
  const PartialShape batch = BatchOf(ctx.inputs[0].shape, {});
  ctx.outputs = {TensorSpec{st->dtype, batch}, TensorSpec{st->dtype, batch}};
  ctx.state = std::move(st);
  return OkStatus();
}

Status PrepareLu(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, auto st, ReadType(ctx, 1));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 0, "input", true));
  KILN_PREPARE_ASSIGN(ctx, DType idx, ctx.attrs.GetType("output_idx_type", DType::kInt32));
  KILN_RETURN_IF_ERROR(
      ExpectAttrDTypeIn(ctx, "output_idx_type", idx, {DType::kInt32, DType::kInt64}));
  const PartialShape& s = ctx.inputs[0].shape;
  ctx.outputs = {TensorSpec{st->dtype, s},
                 TensorSpec{idx, s.unknown_rank() ? s : BatchOf(s, {s.dim(s.rank() - 1)})}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"Cholesky", "output", kOpFreshOutputs, PrepareCholesky},
    {"CholeskyGrad", "output", kOpFreshOutputs, PrepareCholeskyGrad},
    {"MatrixInverse", "output", kOpFreshOutputs, PrepareInverse},
    {"MatrixSolve", "output", kOpFreshOutputs, PrepareSolve},
    {"MatrixTriangularSolve", "output", kOpFreshOutputs, PrepareTriangularSolve<false>},
    {"BandedTriangularSolve", "output", kOpFreshOutputs, PrepareTriangularSolve<true>},
    {"LogMatrixDeterminant", "sign,log_abs_determinant", kOpFreshOutputs, PrepareLogDet},
    {"Lu", "lu,p", kOpFreshOutputs, PrepareLu},
    {"Qr", "q,r", kOpFreshOutputs, PrepareQr},
    {"Svd", "s,u,v", kOpFreshOutputs, PrepareSvd},
    {"SelfAdjointEigV2", "e,v", kOpFreshOutputs, PrepareEig},
    {"Eig", "e,v", kOpFreshOutputs, PrepareGeneralEig},
    {"MatrixSquareRoot", "output", kOpFreshOutputs, PrepareMatrixSquareRoot},
    {"MatrixLogarithm", "output", kOpFreshOutputs, PrepareMatrixLogarithm},
    {"MatrixSolveLs", "output", kOpFreshOutputs, PrepareSolveLs},
    {"TridiagonalMatMul", "output", kOpFreshOutputs, PrepareTridiagonalMatMul},
    {"TridiagonalSolve", "output", kOpFreshOutputs, PrepareTridiagonalSolve},
};

}  // namespace

std::span<const OpDefinition> LinalgOpDefs() { return kDefs; }

}  // namespace kiln::exec
