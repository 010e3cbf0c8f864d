// The CUDA device's kernel table: every family's rows, sorted by op once.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>

#include "device/cuda/cublaslt_api.h"
#include "device/cuda/cudnn_api.h"
#include "kernels/cuda/cuda_kernels.h"

namespace kiln::exec::cuda {
namespace {

template <typename List>
bool InList(DType t) {
  bool found = false;
  (void)Dispatch<List>(t, [&](auto) {
    found = true;
    return OkStatus();
  });
  return found;
}

// The node's values: its outputs and its first input (the other inputs are the same dtype, or
// host-memory arguments such as axes, which each family checks itself).
bool All(const PrepareContext& ctx, bool (*ok)(DType)) {
  if (!ctx.inputs.empty() && !ok(ctx.inputs[0].dtype)) return false;
  for (const TensorSpec& s : ctx.outputs)
    if (!ok(s.dtype)) return false;
  return true;
}

}  // namespace

bool IsGpuFloat(DType t) { return InList<GpuFloatTypes>(t); }
bool IsGpuNumber(DType t) { return InList<GpuNumberTypes>(t); }
bool SupportsFloat(const PrepareContext& ctx) { return All(ctx, &IsGpuFloat); }
bool SupportsNumber(const PrepareContext& ctx) { return All(ctx, &IsGpuNumber); }
bool SupportsPod(const PrepareContext& ctx) {
  for (const TensorSpec& s : ctx.outputs)
    if (s.dtype == DType::kInt32) return false;
  return All(ctx, [](DType t) { return DTypeIsPod(t) && t != DType::kInvalid; });
}
bool SupportsWords(const PrepareContext& ctx) {
  if (!SupportsPod(ctx)) return false;
  for (const TensorSpec& s : ctx.outputs) {
    const size_t b = DTypeSize(s.dtype);
    if (b != 1 && b != 2 && b != 4 && b != 8) return false;
  }
  return true;
}

Status LaunchStatus(const KernelContext& ctx, std::string_view what) {
  const cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) return OkStatus();
  return Internal("node '", ctx.node_name(), "': ", what, " on the GPU: ", cudaGetErrorName(err),
                  " (", cudaGetErrorString(err), ")");
}

Status BlasLtStatus() { return BlasLt().status(); }
Status DnnStatus() { return Dnn().status(); }

std::span<const KernelEntry> CudaKernelTable() {
  static const std::vector<KernelEntry> table = [] {
    std::vector<KernelEntry> t;
    for (auto family :
         {ElementwiseKernels(), NnKernels(), ReduceKernels(), ArrayKernels(), MatMulKernels(),
          ConvKernels(), PoolKernels(), EinsumKernels(), SplitKernels(), FillKernels(),
          ImageKernels(), SpaceKernels(), FakeQuantKernels()})
      t.insert(t.end(), family.begin(), family.end());
    std::sort(t.begin(), t.end(),
              [](const KernelEntry& a, const KernelEntry& b) { return a.op < b.op; });
    return t;
  }();
  return table;
}

}  // namespace kiln::exec::cuda
