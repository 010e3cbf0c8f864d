// Qr, Svd, SelfAdjointEigV2 and Eig: definitions, listed in linalg_ops.cc's table. The CPU kernels
// (Eigen's decompositions) are in kernels/cpu/linalg_decomposition_ops.cc.
// Op families: Linalg
#include <algorithm>

#include "kernels/kernel_util.h"
#include "kernels/linalg_util.h"

namespace kiln::exec::linalg {

// ---- Qr, Svd, SelfAdjointEigV2 ---------------------------------------------------------------

Status PrepareQr(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, auto st, ReadType(ctx, 1));
  KILN_PREPARE_ASSIGN(ctx, st->flag_a, ctx.attrs.GetBool("full_matrices", false));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 0, "input", false));
  const PartialShape& s = ctx.inputs[0].shape;
  if (s.unknown_rank()) {
    ctx.outputs = {TensorSpec{st->dtype, s}, TensorSpec{st->dtype, s}};
  } else {
    const int64_t m = s.dim(s.rank() - 2), n = s.dim(s.rank() - 1);
    const int64_t p = m < 0 || n < 0 ? -1 : std::min(m, n);
    const int64_t qc = st->flag_a ? m : p, rr = st->flag_a ? m : p;
    ctx.outputs = {TensorSpec{st->dtype, BatchOf(s, {m, qc})},
                   TensorSpec{st->dtype, BatchOf(s, {rr, n})}};
  }
  ctx.state = std::move(st);
  return OkStatus();
}

Status PrepareSvd(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, auto st, ReadType(ctx, 1));
  KILN_PREPARE_ASSIGN(ctx, st->flag_a, ctx.attrs.GetBool("compute_uv", true));
  KILN_PREPARE_ASSIGN(ctx, st->flag_b, ctx.attrs.GetBool("full_matrices", false));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 0, "input", false));
  const PartialShape& s = ctx.inputs[0].shape;
  const int64_t m = s.unknown_rank() ? -1 : s.dim(s.rank() - 2);
  const int64_t n = s.unknown_rank() ? -1 : s.dim(s.rank() - 1);
  const int64_t p = m < 0 || n < 0 ? -1 : std::min(m, n);
  const bool uv = st->flag_a, full = st->flag_b;
  ctx.outputs = {TensorSpec{st->dtype, BatchOf(s, {p})},
                 TensorSpec{st->dtype, uv ? BatchOf(s, {m, full ? m : p}) : PartialShape{0}},
                 TensorSpec{st->dtype, uv ? BatchOf(s, {n, full ? n : p}) : PartialShape{0}}};
  if (s.unknown_rank()) ctx.outputs[0].shape = ctx.outputs[1].shape = ctx.outputs[2].shape = s;
  ctx.state = std::move(st);
  return OkStatus();
}

Status PrepareEig(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, auto st, ReadType(ctx, 1));
  KILN_PREPARE_ASSIGN(ctx, st->flag_a, ctx.attrs.GetBool("compute_v", true));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 0, "input", true));
  const PartialShape& s = ctx.inputs[0].shape;
  const int64_t n = s.unknown_rank() ? -1 : s.dim(s.rank() - 1);
  ctx.outputs = {TensorSpec{st->dtype, s.unknown_rank() ? s : BatchOf(s, {n})},
                 TensorSpec{st->dtype, st->flag_a ? s : PartialShape{0}}};
  ctx.state = std::move(st);
  return OkStatus();
}

// Eig(input T, compute_v) -> e, v of type Tout: the eigen decomposition of a general matrix,
// complex64 for float32 and complex64 inputs, complex128 for float64 and complex128 (TF's
// kernels).
Status PrepareGeneralEig(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, auto st, ReadType(ctx, 1));
  KILN_PREPARE_ASSIGN(ctx, st->flag_a, ctx.attrs.GetBool("compute_v", true));
  KILN_PREPARE_ASSIGN(ctx, DType tout, ctx.attrs.GetType("Tout"));
  const DType want = st->dtype == DType::kFloat || st->dtype == DType::kComplex64
                         ? DType::kComplex64
                         : DType::kComplex128;
  if (tout != want)
    return ctx.Error("attr 'Tout' must be ", DTypeShortName(want), " for input type ",
                     DTypeShortName(st->dtype), ", got ", DTypeShortName(tout));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 0, "input", true));
  const PartialShape& s = ctx.inputs[0].shape;
  const int64_t n = s.unknown_rank() ? -1 : s.dim(s.rank() - 1);
  ctx.outputs = {TensorSpec{tout, s.unknown_rank() ? s : BatchOf(s, {n})},
                 TensorSpec{tout, st->flag_a ? s : PartialShape{0}}};
  ctx.state = std::move(st);
  return OkStatus();
}

}  // namespace kiln::exec::linalg
