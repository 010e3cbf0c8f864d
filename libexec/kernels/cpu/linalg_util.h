// What the linear-algebra CPU kernels share (kernels/cpu/linalg_ops.cc,
// linalg_decomposition_ops.cc, linalg_function_ops.cc: split so that Eigen's decompositions and
// matrix functions compile in parallel): Eigen maps of one matrix of a batch, run-time shape
// checks and the batch loop. The dtypes and prepared state are kernels/linalg_util.h's.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <mutex>
#include <string_view>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/linalg_util.h"

namespace kiln::exec::linalg {

template <typename T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using ConstMap = Eigen::Map<const Mat<T>>;
template <typename T>
using MutMap = Eigen::Map<Mat<T>>;
template <typename T>
using Real = typename Eigen::NumTraits<T>::Real;

inline Status CheckSquare(const KernelContext& ctx, const Tensor& t, std::string_view name) {
  if (t.rank() < 2 || t.dim(t.rank() - 1) != t.dim(t.rank() - 2))
    return ctx.Error("input '", name, "' must hold square matrices, got shape ",
                     t.shape().ToString());
  return OkStatus();
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
// linalg_ops.cc's table.
Status ComputeQr(const KernelContext& ctx);
Status ComputeSvd(const KernelContext& ctx);
Status ComputeEig(const KernelContext& ctx);
Status ComputeGeneralEig(const KernelContext& ctx);
Status ComputeMatrixSquareRoot(const KernelContext& ctx);
Status ComputeMatrixLogarithm(const KernelContext& ctx);
Status ComputeSolveLs(const KernelContext& ctx);
Status ComputeTridiagonalMatMul(const KernelContext& ctx);
Status ComputeTridiagonalSolve(const KernelContext& ctx);

}  // namespace kiln::exec::linalg
