// The CPU kernels of RestoreV2 and ReadFile (kernels/io_ops.cc): whole tensors from a tensor
// bundle, a file's contents.
#include "kernels/io_ops.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/kernel_util.h"
#include "kiln/core/file_util.h"
#include "kiln/exec/tensor_bundle.h"

namespace kiln::exec {
namespace {

using io::RestoreState;

// ---- RestoreV2 -------------------------------------------------------------------------------

Status ComputeRestoreV2(const KernelContext& ctx) {
  const std::vector<DType>& dtypes = ctx.state<RestoreState>().value;
  const Tensor& prefix_t = ctx.input(0);
  const Tensor& names = ctx.input(1);
  const Tensor& slices = ctx.input(2);
  const int64_t n = static_cast<int64_t>(dtypes.size());
  if (prefix_t.NumElements() != 1) {
    return ctx.Error("input 'prefix': expected a scalar, got shape ", prefix_t.shape().ToString());
  }
  if (names.rank() != 1 || names.NumElements() != n) {
    return ctx.Error("input 'tensor_names': expected ", n, " names (one per dtype), got shape ",
                     names.shape().ToString());
  }
  if (slices.rank() != 1 || slices.NumElements() != n) {
    return ctx.Error("input 'shape_and_slices': expected ", n, " entries, got shape ",
                     slices.shape().ToString());
  }

  const std::string& prefix = prefix_t.data<std::string>()[0];
  KILN_ASSIGN_OR_RETURN_CTX(std::unique_ptr<BundleReader> reader, BundleReader::Open(prefix),
                            "node '", ctx.node_name(), "' (RestoreV2)");
  for (int64_t i = 0; i < n; ++i) {
    const std::string& key = names.data<std::string>()[i];
    // A slice ("10 6 0,4:0,6") restores one partition of a partitioned variable.
    KILN_ASSIGN_OR_RETURN_CTX(Tensor t, reader->ReadSlice(key, slices.data<std::string>()[i]),
                              "node '", ctx.node_name(), "' (RestoreV2): restoring '", key, "'");
    if (t.dtype() != dtypes[i]) {
      return ctx.Error("restoring '", key, "' from '", prefix, "': attr dtypes[", i, "] expects ",
                       DTypeShortName(dtypes[i]), " but the checkpoint holds ",
                       DTypeShortName(t.dtype()));
    }
    ctx.SetOutput(static_cast<int>(i), std::move(t));
  }
  return OkStatus();
}

// ---- ReadFile ------------------------------------------------------------------------------

Status ComputeReadFile(const KernelContext& ctx) {
  const Tensor& name = ctx.input(0);
  if (name.NumElements() != 1)
    return ctx.Error("filename must be a scalar, got ", name.shape().ToString());
  auto contents = ReadFileToString(name.scalar<std::string>());
  if (!contents.ok())
    return contents.status().WithContext("node '" + std::string(ctx.node_name()) + "'");
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, DType::kString, Shape()));
  out->scalar<std::string>() = std::move(*contents);
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"RestoreV2", ComputeRestoreV2},
    {"ReadFile", ComputeReadFile},
};

}  // namespace

std::span<const KernelEntry> IoCpuKernels() { return kCpu; }

}  // namespace kiln::exec
