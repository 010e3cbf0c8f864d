// MatrixSquareRoot, MatrixLogarithm, MatrixSolveLs and the tridiagonal TridiagonalMatMul and
// TridiagonalSolve: definitions, listed in linalg_ops.cc's table. The CPU kernels are in
// kernels/cpu/linalg_function_ops.cc.
// Op families: Linalg
#include <memory>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/linalg_util.h"

namespace kiln::exec::linalg {

// ---- MatrixSquareRoot, MatrixLogarithm ----------------------------------------------------------

template <bool kLog>
Status PrepareMatrixFunction(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, auto st, ReadType(ctx, 1));
  if (kLog) {  // TF registers the logarithm for complex types only
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->dtype, ComplexTypes::kDTypes));
  }
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 0, "input", true));
  ctx.outputs = {TensorSpec{st->dtype, ctx.inputs[0].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- MatrixSolveLs -----------------------------------------------------------------------------

Status PrepareSolveLs(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, auto st, ReadType(ctx, 2));
  KILN_PREPARE_ASSIGN(ctx, st->flag_a, ctx.attrs.GetBool("fast", true));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "l2_regularizer", DType::kDouble));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "l2_regularizer", 0));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 0, "matrix", false));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 1, "rhs", false));
  const PartialShape& a = ctx.inputs[0].shape;
  const PartialShape& r = ctx.inputs[1].shape;
  ctx.outputs = {TensorSpec{st->dtype, BatchOf(a, {a.unknown_rank() ? -1 : a.dim(a.rank() - 1),
                                                   r.unknown_rank() ? -1 : r.dim(r.rank() - 1)})}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- TridiagonalMatMul, TridiagonalSolve
// ---------------------------------------------------------

Status PrepareTridiagonalMatMul(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  auto st = std::make_shared<LinalgState>();
  KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->dtype, LinalgTypes::kDTypes));
  static constexpr const char* kNames[] = {"superdiag", "maindiag", "subdiag", "rhs"};
  for (int i = 0; i < 4; ++i) KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, kNames[i], st->dtype));
  ctx.outputs = {TensorSpec{st->dtype, ctx.inputs[3].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

Status PrepareTridiagonalSolve(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  auto st = std::make_shared<LinalgState>();
  KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->dtype, LinalgTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "diagonals", st->dtype));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "rhs", st->dtype));
  KILN_PREPARE_ASSIGN(ctx, st->flag_a, ctx.attrs.GetBool("partial_pivoting", true));
  KILN_PREPARE_ASSIGN(ctx, st->flag_b, ctx.attrs.GetBool("perturb_singular", false));
  if (st->flag_b) {
    return PrepareUnimplemented(ctx, "attr 'perturb_singular' = true is not supported");
  }
  ctx.outputs = {TensorSpec{st->dtype, ctx.inputs[1].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

Status PrepareMatrixSquareRoot(PrepareContext& ctx) { return PrepareMatrixFunction<false>(ctx); }
Status PrepareMatrixLogarithm(PrepareContext& ctx) { return PrepareMatrixFunction<true>(ctx); }

}  // namespace kiln::exec::linalg
