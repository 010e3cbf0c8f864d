// NearestNeighbors (k-means inference): the k nearest centers of each point and their squared
// L2 distances, computed as TF does: 2 * (|p|^2 / 2 + (|c|^2 / 2 - p.c)), nearest first, ties
// to the lower center index.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/op_families.h"

namespace kiln::exec {
namespace {

Status PrepareNearestNeighbors(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "points", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "centers", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "k", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "points", 2));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "centers", 2));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "k", 0));
  const PartialShape& points = ctx.inputs[0].shape;
  const PartialShape& centers = ctx.inputs[1].shape;
  const int64_t n = points.unknown_rank() ? -1 : points.dim(0);
  int64_t k = -1;
  if (const Tensor* kt = ConstantInput(ctx, 2); kt != nullptr) {
    k = kt->scalar<int64_t>();
    if (k < 0) return ctx.Error("input 'k' must be >= 0, got ", k);
    const int64_t m = centers.unknown_rank() ? -1 : centers.dim(0);
    k = m < 0 ? -1 : std::min(k, m);
  }
  ctx.outputs = {TensorSpec{DType::kInt64, PartialShape{n, k}},
                 TensorSpec{DType::kFloat, PartialShape{n, k}}};
  return OkStatus();
}

Status ComputeNearestNeighbors(const KernelContext& ctx) {
  const Tensor& points = ctx.input(0);
  const Tensor& centers = ctx.input(1);
  const Tensor& k_t = ctx.input(2);
  if (points.rank() != 2 || centers.rank() != 2 || k_t.rank() != 0) {
    return ctx.Error("inputs 'points' and 'centers' must be matrices and 'k' a scalar, got ",
                     points.shape().ToString(), ", ", centers.shape().ToString(), " and ",
                     k_t.shape().ToString());
  }
  const int64_t n = points.dim(0), m = centers.dim(0), d = points.dim(1);
  if (centers.dim(1) != d) {
    return ctx.Error("'points' and 'centers' must have the same number of columns, got ", d,
                     " and ", centers.dim(1));
  }
  const int64_t k_in = k_t.scalar<int64_t>();
  if (k_in < 0) return ctx.Error("input 'k' must be >= 0, got ", k_in);
  const int64_t k = std::min(k_in, m);
  KILN_ASSIGN_OR_RETURN(Tensor * indices, ctx.AllocateOutput(0, Shape{n, k}));
  KILN_ASSIGN_OR_RETURN(Tensor * distances, ctx.AllocateOutput(1, Shape{n, k}));
  const float* p = points.data<float>();
  const float* c = centers.data<float>();
  std::vector<float> center_half(m);
  for (int64_t j = 0; j < m; ++j) {
    float s = 0;
    for (int64_t t = 0; t < d; ++t) s += c[j * d + t] * c[j * d + t];
    center_half[j] = 0.5f * s;
  }
  ctx.threads().ParallelFor(n, 1, [&](int64_t begin, int64_t end) {
    std::vector<std::pair<float, int64_t>> partial(m);
    for (int64_t i = begin; i < end; ++i) {
      const float* pi = p + i * d;
      float norm = 0;
      for (int64_t t = 0; t < d; ++t) norm += pi[t] * pi[t];
      for (int64_t j = 0; j < m; ++j) {
        float dot = 0;
        for (int64_t t = 0; t < d; ++t) dot += pi[t] * c[j * d + t];
        partial[j] = {center_half[j] - dot, j};
      }
      std::partial_sort(partial.begin(), partial.begin() + k, partial.end());
      for (int64_t j = 0; j < k; ++j) {
        distances->data<float>()[i * k + j] = 2.0f * (0.5f * norm + partial[j].first);
        indices->data<int64_t>()[i * k + j] = partial[j].second;
      }
    }
  });
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"NearestNeighbors", "nearest_center_indices,nearest_center_distances", kOpFreshOutputs,
     PrepareNearestNeighbors},
};

constexpr KernelEntry kCpu[] = {
    {"NearestNeighbors", ComputeNearestNeighbors},
};

}  // namespace

std::span<const OpDefinition> ClusteringOpDefs() { return kDefs; }
std::span<const KernelEntry> ClusteringCpuKernels() { return kCpu; }

}  // namespace kiln::exec
