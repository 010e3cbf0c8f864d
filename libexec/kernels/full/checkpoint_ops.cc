// Writing checkpoints, the ops of a SavedModel's save function: ShardedFilename names a shard,
// SaveV2 writes tensors as one tensor bundle (libexec/bundle), MergeV2Checkpoints merges the
// shards into the final prefix.
// The CPU kernels are in kernels/cpu/full/checkpoint_ops.cc.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "bundle/bundle_merge.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

// ---- ShardedFilename -------------------------------------------------------------------------

Status PrepareShardedFilename(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "basename", DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "shard", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "num_shards", DType::kInt32));
  for (int i = 0; i < 3; ++i)
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, i,
                                         i == 0   ? "basename"
                                         : i == 1 ? "shard"
                                                  : "num_shards",
                                         0));
  ctx.outputs = {TensorSpec{DType::kString, PartialShape::Scalar()}};
  return OkStatus();
}

// ---- SaveV2 ----------------------------------------------------------------------------------
// inputs: prefix (string scalar), tensor_names [N], shape_and_slices [N] (only "" is supported:
// whole tensors), tensors (N, attr dtypes). The data file holds the tensors in input order, as
// TF's SaveV2 writes them.

Status PrepareSaveV2(PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, std::vector<DType> dtypes, ctx.attrs.GetTypeList("dtypes"));
  if (dtypes.empty()) return ctx.Error("attr 'dtypes' must list at least one dtype");
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3 + static_cast<int>(dtypes.size())));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "prefix", DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "tensor_names", DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "shape_and_slices", DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "prefix", 0));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "tensor_names", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "shape_and_slices", 1));
  for (size_t i = 0; i < dtypes.size(); ++i) {
    if (!DTypeIsPod(dtypes[i]) && dtypes[i] != DType::kString)
      return ctx.Error("attr 'dtypes': cannot save a ", DTypeShortName(dtypes[i]), " tensor");
    KILN_RETURN_IF_ERROR(
        ExpectInputDType(ctx, 3 + static_cast<int>(i), internal::StrCat("tensors:", i), dtypes[i]));
  }
  for (int i = 1; i <= 2; ++i) {
    const PartialShape& s = ctx.inputs[i].shape;
    if (s.rank() == 1 && s.dim(0) >= 0 && s.dim(0) != static_cast<int64_t>(dtypes.size()))
      return ctx.Error("input '", i == 1 ? "tensor_names" : "shape_and_slices", "' has ", s.dim(0),
                       " elements for ", dtypes.size(), " tensors");
  }
  return OkStatus();
}

// ---- MergeV2Checkpoints ----------------------------------------------------------------------

Status PrepareMerge(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "checkpoint_prefixes", DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "destination_prefix", DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "checkpoint_prefixes", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "destination_prefix", 0));
  auto st = std::make_shared<TypedOpState<MergeOptions>>(MergeOptions{});
  KILN_PREPARE_ASSIGN(ctx, st->value.delete_old_dirs, ctx.attrs.GetBool("delete_old_dirs", true));
  KILN_PREPARE_ASSIGN(ctx, st->value.allow_missing_files,
                      ctx.attrs.GetBool("allow_missing_files", false));
  ctx.state = std::move(st);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"ShardedFilename", "filename", kOpFreshOutputs, PrepareShardedFilename},
    {"SaveV2", "", kOpStateful, PrepareSaveV2},
    {"MergeV2Checkpoints", "", kOpStateful, PrepareMerge},
};

}  // namespace

std::span<const OpDefinition> CheckpointOpDefs() { return kDefs; }

}  // namespace kiln::exec
