// What the linear-algebra kernels share (kernels/linalg_ops.cc, linalg_decomposition_ops.cc,
// linalg_function_ops.cc: split so that Eigen's decompositions and matrix functions compile in
// parallel): the dtypes, Eigen maps of one matrix of a batch, the prepared state, shape checks
// and the batch loop.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <complex>
#include <mutex>
#include <string_view>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec::linalg {

using LinalgTypes = TypeList<float, double, std::complex<float>, std::complex<double>>;

template <typename T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using ConstMap = Eigen::Map<const Mat<T>>;
template <typename T>
using MutMap = Eigen::Map<Mat<T>>;
template <typename T>
using Real = typename Eigen::NumTraits<T>::Real;

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

inline Status CheckSquare(const KernelContext& ctx, const Tensor& t, std::string_view name) {
  if (t.rank() < 2 || t.dim(t.rank() - 1) != t.dim(t.rank() - 2))
    return ctx.Error("input '", name, "' must hold square matrices, got shape ",
                     t.shape().ToString());
  return OkStatus();
}

// The batch dims of `s` (all but the last two), followed by `tail`.
inline PartialShape BatchOf(const PartialShape& s, const std::vector<int64_t>& tail) {
  if (s.unknown_rank()) return PartialShape::UnknownRank();
  std::vector<int64_t> dims(s.dims().begin(), s.dims().end() - 2);
  dims.insert(dims.end(), tail.begin(), tail.end());
  auto r = PartialShape::FromDims(dims);
  return r.ok() ? *r : PartialShape::UnknownRank();
}
inline Shape BatchShape(const Shape& s, const std::vector<int64_t>& tail) {
  Shape out;
  for (int i = 0; i < s.rank() - 2; ++i) out.AddDim(s.dim(i));
  for (int64_t d : tail) out.AddDim(d);
  return out;
}
inline int64_t BatchCount(const Shape& s) {
  int64_t b = 1;
  for (int i = 0; i < s.rank() - 2; ++i) b *= s.dim(i);
  return b;
}

inline Result<std::shared_ptr<LinalgState>> ReadType(PrepareContext& ctx, int inputs) {
  auto st = std::make_shared<LinalgState>();
  KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->dtype, LinalgTypes::kDTypes));
  for (int i = 0; i < inputs; ++i)
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, i == 0 ? "input" : "rhs", st->dtype));
  return st;
}

// Runs fn(b) for each matrix of the batch on the pool; cost ~ n^3 per matrix.
template <typename F>
void ForEachMatrix(const KernelContext& ctx, int64_t batch, int64_t n, F&& fn) {
  const int64_t cost = std::max<int64_t>(1, n * n * n);
  ctx.threads().ParallelFor(batch, std::max<int64_t>(1, 32768 / cost), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) fn(i);
  });
}

// Collects the first failure of a parallel loop.
class FirstError {
 public:
  void Set(Status s) {
    std::lock_guard<std::mutex> lock(mu_);
    if (status_.ok()) status_ = std::move(s);
  }
  Status Take() { return std::move(status_); }

 private:
  std::mutex mu_;
  Status status_;
};

// Kernels defined in linalg_decomposition_ops.cc and linalg_function_ops.cc, listed in
// linalg_ops.cc's tables.
Status PrepareQr(PrepareContext& ctx);
Status ComputeQr(const KernelContext& ctx);
Status PrepareSvd(PrepareContext& ctx);
Status ComputeSvd(const KernelContext& ctx);
Status PrepareEig(PrepareContext& ctx);
Status ComputeEig(const KernelContext& ctx);
Status PrepareMatrixSquareRoot(PrepareContext& ctx);
Status ComputeMatrixSquareRoot(const KernelContext& ctx);
Status PrepareMatrixLogarithm(PrepareContext& ctx);
Status ComputeMatrixLogarithm(const KernelContext& ctx);
Status PrepareSolveLs(PrepareContext& ctx);
Status ComputeSolveLs(const KernelContext& ctx);
Status PrepareTridiagonalMatMul(PrepareContext& ctx);
Status ComputeTridiagonalMatMul(const KernelContext& ctx);
Status PrepareTridiagonalSolve(PrepareContext& ctx);
Status ComputeTridiagonalSolve(const KernelContext& ctx);

}  // namespace kiln::exec::linalg
