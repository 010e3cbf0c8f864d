// The CPU kernels of the ops in kernels/segment_grad_ops.cc.
// As TF's CPU kernel: the scale is computed in double and cast to T, then each row is added in
// T's arithmetic in the order of `indices`.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

enum class GradKind { kSum, kMean, kSqrtN };

template <GradKind K, bool kV2>
Status ComputeSparseSegmentGrad(const KernelContext& ctx) {
  const Tensor& grad = ctx.input(0);
  const Tensor& indices_t = ctx.input(1);
  const Tensor& ids_t = ctx.input(2);
  const Tensor& dim0_t = ctx.input(3);
  const char* dim0_name = kV2 ? "dense_output_dim0" : "output_dim0";
  if (grad.rank() < 1) return ctx.Error("input 'grad' must have rank >= 1, got a scalar");
  if (indices_t.rank() != 1 || ids_t.rank() != 1 || indices_t.dim(0) != ids_t.dim(0)) {
    return ctx.Error(
        "inputs 'indices' and 'segment_ids' must be vectors of one length, got shapes ",
        indices_t.shape().ToString(), " and ", ids_t.shape().ToString());
  }
  if (dim0_t.rank() != 0) {
    return ctx.Error("input '", dim0_name, "' must be a scalar, got shape ",
                     dim0_t.shape().ToString());
  }
  const int64_t dim0 = dim0_t.scalar<int32_t>();
  if (dim0 < 0) return ctx.Error("input '", dim0_name, "' must be non-negative, got ", dim0);
  const std::vector<int64_t> rows = IndexValues(indices_t);
  const std::vector<int64_t> ids = IndexValues(ids_t);
  const int64_t n = static_cast<int64_t>(rows.size());
  const int64_t num_segments = grad.dim(0);
  if (n > 0 && ids.back() + 1 > num_segments) {
    return ctx.Error("invalid number of segments: segment_ids[", n - 1, "] = ", ids.back(),
                     " but input 'grad' has ", num_segments, " rows");
  }
  for (int64_t i = 0; i < n; ++i) {
    if (rows[i] < 0 || rows[i] >= dim0) {
      return ctx.Error("indices[", i, "] = ", rows[i], " is out of range [0, ", dim0, ")");
    }
    if (ids[i] < 0 || ids[i] >= num_segments) {
      return ctx.Error("segment_ids[", i, "] = ", ids[i], " is out of range [0, ", num_segments,
                       ")");
    }
  }
  // Output row of each index: the index itself (V1) or its place among the sorted unique ones.
  std::vector<int64_t> out_row = rows;
  std::vector<int64_t> unique;
  if (kV2) {
    unique = rows;
    std::sort(unique.begin(), unique.end());
    unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
    for (int64_t i = 0; i < n; ++i) {
      out_row[i] = std::lower_bound(unique.begin(), unique.end(), rows[i]) - unique.begin();
    }
  }
  const int64_t out_rows = kV2 ? static_cast<int64_t>(unique.size()) : dim0;
  Shape out_shape = grad.shape();
  out_shape.set_dim(0, out_rows);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  if (kV2) {
    KILN_ASSIGN_OR_RETURN(Tensor * u, ctx.AllocateOutput(1, Shape{out_rows}));
    for (int64_t k = 0; k < out_rows; ++k) {
      if (u->dtype() == DType::kInt32) {
        u->data<int32_t>()[k] = static_cast<int32_t>(unique[k]);
      } else {
        u->data<int64_t>()[k] = unique[k];
      }
    }
  }
  std::vector<double> scale;
  if (K != GradKind::kSum) {
    scale.assign(num_segments, 0.0);
    for (int64_t id : ids) scale[id] += 1;
    for (double& s : scale) {
      s = K == GradKind::kMean ? 1.0 / std::max(s, 1.0) : 1.0 / std::sqrt(std::max(s, 1.0));
    }
  }
  const int64_t inner = out_rows == 0 ? 0 : out_shape.num_elements() / out_rows;
  return Dispatch<FloatTypes>(grad.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* g = ComputeData<T>(grad);
    C* o = MutableComputeData<T>(out);
    std::fill_n(o, out_shape.num_elements(), C(0));
    // Threads take column blocks; each adds every index's row in order for its columns.
    ctx.threads().ParallelFor(inner, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, n)),
                              [&](int64_t c0, int64_t c1) {
                                for (int64_t i = 0; i < n; ++i) {
                                  const C* src = g + ids[i] * inner;
                                  C* dst = o + out_row[i] * inner;
                                  if (K == GradKind::kSum) {
                                    for (int64_t j = c0; j < c1; ++j) dst[j] += src[j];
                                  } else {
                                    const C s = static_cast<C>(scale[ids[i]]);
                                    for (int64_t j = c0; j < c1; ++j) dst[j] += src[j] * s;
                                  }
                                }
                              });
    return OkStatus();
  });
}

constexpr KernelEntry kCpu[] = {
    {"SparseSegmentSumGrad", ComputeSparseSegmentGrad<GradKind::kSum, false>},
    {"SparseSegmentMeanGrad", ComputeSparseSegmentGrad<GradKind::kMean, false>},
    {"SparseSegmentSqrtNGrad", ComputeSparseSegmentGrad<GradKind::kSqrtN, false>},
    {"SparseSegmentSumGradV2", ComputeSparseSegmentGrad<GradKind::kSum, true>},
    {"SparseSegmentMeanGradV2", ComputeSparseSegmentGrad<GradKind::kMean, true>},
    {"SparseSegmentSqrtNGradV2", ComputeSparseSegmentGrad<GradKind::kSqrtN, true>},
};

}  // namespace

std::span<const KernelEntry> SegmentGradCpuKernels() { return kCpu; }

}  // namespace kiln::exec
