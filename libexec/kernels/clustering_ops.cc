// NearestNeighbors (k-means inference): the k nearest centers of each point and their squared
// L2 distances, computed as TF does: 2 * (|p|^2 / 2 + (|c|^2 / 2 - p.c)), nearest first, ties
// to the lower center index. The k-means seeding ops (KMC2ChainInitialization,
// KmeansPlusPlusInitialization) with TF's draws, and IsotonicRegression.
// Definitions; the CPU kernels are in kernels/cpu/clustering_ops.cc.
#include "kernels/clustering_ops.h"

#include <algorithm>
#include <cstdint>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using clustering::IsotonicTypes;

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

// ---- KMC2ChainInitialization, KmeansPlusPlusInitialization ------------------------------------

Status ExpectScalarInt64(PrepareContext& ctx, int i, const char* name) {
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, name, DType::kInt64));
  return ExpectInputRank(ctx, i, name, 0);
}

// One Markov chain of k-MC^2: from the first point, move to point i with probability
// min(1, distances[i] / current), drawing as TF's kernel does.
Status PrepareKmc2(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "distances", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "distances", 1));
  KILN_RETURN_IF_ERROR(ExpectScalarInt64(ctx, 1, "seed"));
  ctx.outputs = {TensorSpec{DType::kInt64, PartialShape::Scalar()}};
  return OkStatus();
}

// k-means++ seeding: the first point uniformly, then points drawn in proportion to their half
// squared distance to the nearest chosen one; with retries, the draw (of 1 + retries) that
// leaves the least total distance. TF's draws, distances and order.
Status PrepareKmeansPlusPlus(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "points", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "points", 2));
  KILN_RETURN_IF_ERROR(ExpectScalarInt64(ctx, 1, "num_to_sample"));
  KILN_RETURN_IF_ERROR(ExpectScalarInt64(ctx, 2, "seed"));
  KILN_RETURN_IF_ERROR(ExpectScalarInt64(ctx, 3, "num_retries_per_sample"));
  const PartialShape& p = ctx.inputs[0].shape;
  int64_t k = -1;
  if (const Tensor* kt = ConstantInput(ctx, 1); kt != nullptr) k = kt->scalar<int64_t>();
  ctx.outputs = {TensorSpec{DType::kFloat, PartialShape{k, p.unknown_rank() ? -1 : p.dim(1)}}};
  return OkStatus();
}

// ---- IsotonicRegression ----------------------------------------------------------------------

// The non-increasing least-squares fit of each row (the last dim), by TF's pool-adjacent
// violators: blocks of equal value merged while a later block's mean exceeds the one before,
// means in the output type (float for 8/16-bit integers, double for 32/64-bit ones, the input's
// own float type otherwise); `segments` numbers each element's block.
DType IsotonicOutput(DType in) {
  if (in == DType::kInt8 || in == DType::kInt16) return DType::kFloat;
  if (in == DType::kInt32 || in == DType::kInt64) return DType::kDouble;
  return in;
}

Status PrepareIsotonic(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, IsotonicTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  KILN_PREPARE_ASSIGN(ctx, DType out, ctx.attrs.GetType("output_dtype", DType::kFloat));
  if (out != IsotonicOutput(t))
    return ctx.Error("attr 'output_dtype' is ", DTypeShortName(out), " for input ",
                     DTypeShortName(t), ", TF's kernel gives ", DTypeShortName(IsotonicOutput(t)));
  const PartialShape& x = ctx.inputs[0].shape;
  if (!x.unknown_rank() && x.rank() < 1)
    return ctx.Error("input 'input' must have rank >= 1, got ", x.ToPythonString());
  ctx.outputs = {TensorSpec{out, x}, TensorSpec{DType::kInt32, x}};
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"NearestNeighbors", "nearest_center_indices,nearest_center_distances", kOpFreshOutputs,
     PrepareNearestNeighbors},
    {"KMC2ChainInitialization", "index", kOpFreshOutputs, PrepareKmc2},
    {"KmeansPlusPlusInitialization", "samples", kOpFreshOutputs, PrepareKmeansPlusPlus},
    {"IsotonicRegression", "output,segments", kOpFreshOutputs, PrepareIsotonic},
};

}  // namespace

std::span<const OpDefinition> ClusteringOpDefs() { return kDefs; }

}  // namespace kiln::exec
