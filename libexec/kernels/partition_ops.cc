// Splitting rows by a partition id and merging them back by index: DynamicPartition,
// DynamicStitch and ParallelDynamicStitch. The CPU kernels are in kernels/cpu/partition_ops.cc.
#include "kernels/partition_ops.h"

#include <cstdint>
#include <vector>

#include "kernels/array_util.h"

namespace kiln::exec {
namespace {

using partition::StartsWith;

// ---- DynamicPartition ------------------------------------------------------------------------

Status PreparePartition(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "data"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "partitions", DType::kInt32));
  KILN_PREPARE_ASSIGN(ctx, int64_t num, ctx.attrs.GetInt("num_partitions"));
  if (num < 1) return ctx.Error("attr 'num_partitions' must be at least 1, got ", num);
  const PartialShape& data = ctx.inputs[0].shape;
  const PartialShape& parts = ctx.inputs[1].shape;
  PartialShape out;
  if (!data.unknown_rank() && !parts.unknown_rank()) {
    if (!StartsWith(data.dims(), parts.dims())) {
      return ctx.Error("data.shape must start with partitions.shape, got data.shape = ",
                       data.ToPythonString(), ", partitions.shape = ", parts.ToPythonString());
    }
    std::vector<int64_t> dims = {-1};
    dims.insert(dims.end(), data.dims().begin() + parts.rank(), data.dims().end());
    if (dims.size() > static_cast<size_t>(kMaxRank)) return ctx.Error("result rank too large");
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs.assign(num, TensorSpec{t, out});
  return OkStatus();
}

// ---- DynamicStitch, ParallelDynamicStitch ---------------------------------------------------

Status PrepareStitch(PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, int64_t n, ctx.attrs.GetInt("N"));
  if (n < 1) return ctx.Error("attr 'N' must be at least 1, got ", n);
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(static_cast<int>(2 * n)));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  std::vector<int64_t> slice;  // data[m].shape[indices[m].rank:], -1 unknown
  bool slice_known = false;
  for (int m = 0; m < n; ++m) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, m, internal::StrCat("indices:", m), DType::kInt32));
    KILN_RETURN_IF_ERROR(
        ExpectInputDType(ctx, static_cast<int>(n) + m, internal::StrCat("data:", m), t));
    const PartialShape& ind = ctx.inputs[m].shape;
    const PartialShape& dat = ctx.inputs[n + m].shape;
    if (ind.unknown_rank() || dat.unknown_rank()) continue;
    if (!StartsWith(dat.dims(), ind.dims())) {
      return ctx.Error("data[", m, "].shape = ", dat.ToPythonString(),
                       " does not start with indices[", m, "].shape = ", ind.ToPythonString());
    }
    std::vector<int64_t> s(dat.dims().begin() + ind.rank(), dat.dims().end());
    if (slice_known) {
      bool ok = s.size() == slice.size();
      for (size_t d = 0; ok && d < s.size(); ++d) {
        ok = s[d] < 0 || slice[d] < 0 || s[d] == slice[d];
        if (slice[d] < 0) slice[d] = s[d];
      }
      if (!ok) {
        return ctx.Error("need data[0].shape[indices[0].rank:] = data[", m, "].shape[indices[", m,
                         "].rank:], got ", DimsString(slice), " and ", DimsString(s));
      }
    } else {
      slice = s;
      slice_known = true;
    }
  }
  PartialShape out;
  if (slice_known && slice.size() < static_cast<size_t>(kMaxRank)) {
    std::vector<int64_t> dims = {-1};
    dims.insert(dims.end(), slice.begin(), slice.end());
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"DynamicPartition", "outputs", kOpFreshOutputs, PreparePartition},
    {"DynamicStitch", "merged", kOpFreshOutputs, PrepareStitch},
    {"ParallelDynamicStitch", "merged", kOpFreshOutputs, PrepareStitch},
};

}  // namespace

std::span<const OpDefinition> PartitionOpDefs() { return kDefs; }

}  // namespace kiln::exec
