// The CPU kernels of ShardedFilename, SaveV2 and MergeV2Checkpoints
// (kernels/full/checkpoint_ops.cc): SaveV2 writes one tensor bundle (libexec/bundle's
// BundleWriter), MergeV2Checkpoints merges the shards with MergeBundles.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "bundle/bundle_merge.h"
#include "kernels/kernel_util.h"
#include "kiln/exec/tensor_bundle.h"

namespace kiln::exec {
namespace {

Status NodeError(const KernelContext& ctx, const Status& s) {
  return Status(s.code(), "node '" + std::string(ctx.node_name()) + "': " + s.message());
}

// ---- ShardedFilename -------------------------------------------------------------------------

Status ComputeShardedFilename(const KernelContext& ctx) {
  for (int i = 0; i < 3; ++i)
    if (ctx.input(i).rank() != 0)
      return ctx.Error("inputs must be scalars, input ", i, " has shape ",
                       ctx.input(i).shape().ToString());
  const int32_t shard = ctx.input(1).scalar<int32_t>();
  const int32_t num = ctx.input(2).scalar<int32_t>();
  char suffix[64];
  std::snprintf(suffix, sizeof(suffix), "-%05d-of-%05d", shard, num);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape()));
  out->scalar<std::string>() = ctx.input(0).scalar<std::string>() + suffix;
  return OkStatus();
}

// ---- SaveV2 ----------------------------------------------------------------------------------
// inputs: prefix (string scalar), tensor_names [N], shape_and_slices [N] (only "" is supported:
// whole tensors), tensors (N, attr dtypes). The data file holds the tensors in input order, as
// TF's SaveV2 writes them.

Status ComputeSaveV2(const KernelContext& ctx) {
  const int n = ctx.num_inputs() - 3;
  const Tensor& prefix = ctx.input(0);
  const Tensor& names = ctx.input(1);
  const Tensor& slices = ctx.input(2);
  if (prefix.NumElements() != 1)
    return ctx.Error("input 'prefix' must be a scalar, got shape ", prefix.shape().ToString());
  if (names.rank() != 1 || names.NumElements() != n)
    return ctx.Error("input 'tensor_names' must hold ", n, " names, got shape ",
                     names.shape().ToString());
  if (slices.rank() != 1 || slices.NumElements() != n)
    return ctx.Error("input 'shape_and_slices' must hold ", n, " entries, got shape ",
                     slices.shape().ToString());
  const std::string& path = prefix.scalar<std::string>();
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  if (ec) return ctx.Error("cannot create directory '", dir.string(), "': ", ec.message());
  BundleWriter writer(path);
  for (int i = 0; i < n; ++i) {
    const std::string& name = names.data<std::string>()[i];
    if (!slices.data<std::string>()[i].empty())
      return Status(StatusCode::kUnimplemented,
                    internal::StrCat("node '", ctx.node_name(), "': saving '", name, "' as slice '",
                                     slices.data<std::string>()[i],
                                     "': only whole tensors (\"\") are supported"));
    Status s = writer.Add(name, ctx.input(3 + i));
    if (!s.ok()) return NodeError(ctx, s);
  }
  Status s = writer.Finish();
  if (!s.ok()) return NodeError(ctx, s);
  return OkStatus();
}

// ---- MergeV2Checkpoints ----------------------------------------------------------------------

Status ComputeMerge(const KernelContext& ctx) {
  const Tensor& prefixes = ctx.input(0);
  const Tensor& dest = ctx.input(1);
  if (prefixes.rank() != 1)
    return ctx.Error("input 'checkpoint_prefixes' must be a vector, got shape ",
                     prefixes.shape().ToString());
  if (dest.NumElements() != 1)
    return ctx.Error("input 'destination_prefix' must be a scalar, got shape ",
                     dest.shape().ToString());
  const auto flat = prefixes.flat<std::string>();
  std::vector<std::string> sources(flat.begin(), flat.end());
  Status s = MergeBundles(sources, dest.scalar<std::string>(),
                          ctx.state<TypedOpState<MergeOptions>>().value);
  if (!s.ok()) return NodeError(ctx, s);
  return OkStatus();
}

constexpr KernelEntry kCpu[] = {
    {"ShardedFilename", ComputeShardedFilename},
    {"SaveV2", ComputeSaveV2},
    {"MergeV2Checkpoints", ComputeMerge},
};

}  // namespace

std::span<const KernelEntry> CheckpointCpuKernels() { return kCpu; }

}  // namespace kiln::exec
