// What the linear-algebra definitions share (kernels/linalg_ops.cc, linalg_decomposition_ops.cc,
// linalg_function_ops.cc; their CPU kernels share kernels/cpu/linalg_util.h): the dtypes, the
// prepared state and the prepare-time shape checks.
#pragma once

#include <complex>
#include <memory>
#include <string_view>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec::linalg {

using LinalgTypes = TypeList<float, double, std::complex<float>, std::complex<double>>;

// MatrixLogarithm's dtypes (TF registers the logarithm for complex types only).
using ComplexTypes = TypeList<std::complex<float>, std::complex<double>>;

// ---- shapes ----------------------------------------------------------------------------------

struct LinalgState : OpState {
  DType dtype = DType::kFloat;
  bool flag_a = false;  // adjoint / lower / full_matrices / compute_v / compute_uv
  bool flag_b = false;  // MatrixTriangularSolve: adjoint; Svd: full_matrices
};

// input `i` holds matrices: rank >= 2, square when `square`.
inline Status ExpectMatrices(const PrepareContext& ctx, int i, std::string_view name, bool square) {
  const PartialShape& s = ctx.inputs[i].shape;
  if (s.unknown_rank()) return OkStatus();
  if (s.rank() < 2)
    return ctx.Error("input '", name, "' must have rank >= 2, got shape ", s.ToPythonString());
  const int64_t r = s.dim(s.rank() - 2), c = s.dim(s.rank() - 1);
  if (square && r >= 0 && c >= 0 && r != c)
    return ctx.Error("input '", name, "' must hold square matrices, got shape ",
                     s.ToPythonString());
  return OkStatus();
}

// BandedTriangularSolve's matrix holds K bands of an M x M triangle as [..., K, M], TF's
// LEFT_RIGHT alignment: lower, row j is the j-th subdiagonal, right-aligned (A[i][i-j] at
// column i); upper, row K-1-j is the j-th superdiagonal, left-aligned (A[i][i+j] at column i).
struct TriangularSolveState : LinalgState {
  bool banded = false;
};

// The batch dims of `s` (all but the last two), followed by `tail`.
inline PartialShape BatchOf(const PartialShape& s, const std::vector<int64_t>& tail) {
  if (s.unknown_rank()) return PartialShape::UnknownRank();
  std::vector<int64_t> dims(s.dims().begin(), s.dims().end() - 2);
  dims.insert(dims.end(), tail.begin(), tail.end());
  auto r = PartialShape::FromDims(dims);
  return r.ok() ? *r : PartialShape::UnknownRank();
}

inline Result<std::shared_ptr<LinalgState>> ReadType(PrepareContext& ctx, int inputs) {
  auto st = std::make_shared<LinalgState>();
  KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->dtype, LinalgTypes::kDTypes));
  for (int i = 0; i < inputs; ++i)
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, i == 0 ? "input" : "rhs", st->dtype));
  return st;
}

// Definitions in linalg_decomposition_ops.cc and linalg_function_ops.cc, listed in
// linalg_ops.cc's table.
Status PrepareQr(PrepareContext& ctx);
Status PrepareSvd(PrepareContext& ctx);
Status PrepareEig(PrepareContext& ctx);
Status PrepareGeneralEig(PrepareContext& ctx);
Status PrepareMatrixSquareRoot(PrepareContext& ctx);
Status PrepareMatrixLogarithm(PrepareContext& ctx);
Status PrepareSolveLs(PrepareContext& ctx);
Status PrepareTridiagonalMatMul(PrepareContext& ctx);
Status PrepareTridiagonalSolve(PrepareContext& ctx);

}  // namespace kiln::exec::linalg
