// The CUDA kernel table and what its families share: the dtype lists, launch shapes, and the
// error check after a launch. Each family's rows live with its kernels (elementwise.cu,
// nn.cu, reduce.cu, array.cu, matmul.cc); CudaKernelTable joins them, sorted by op.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "kernels/type_lists.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::cuda {

std::span<const KernelEntry> CudaKernelTable();

std::span<const KernelEntry> ElementwiseKernels();
std::span<const KernelEntry> NnKernels();
std::span<const KernelEntry> ReduceKernels();
std::span<const KernelEntry> ArrayKernels();
std::span<const KernelEntry> MatMulKernels();

// What the GPU kernels compute on: float32, the two half types (in float registers), and the
// integer types indices and counters use.
using GpuFloatTypes = TypeList<float, Half, BFloat16>;
using GpuNumberTypes = TypeList<float, Half, BFloat16, int32_t, int64_t>;
bool IsGpuFloat(DType t);
bool IsGpuNumber(DType t);

// `supports` rows: every input and output (host-memory ones aside) is of the kind named.
bool SupportsFloat(const PrepareContext& ctx);
bool SupportsNumber(const PrepareContext& ctx);
// Any POD dtype: kernels that move bytes (transpose, concat, views).
bool SupportsPod(const PrepareContext& ctx);

// The most dims the strided kernels take (after merging dims that move together).
inline constexpr int kMaxDims = 8;

// An activation applied in place after a product (the fused epilogues cuBLASLt has no
// epilogue for), on `n` elements of float type `t` (nn.cu).
enum class Activation {
  kRelu,
  kRelu6,
  kElu,
  kLeakyRelu,
  kTanh,
  kSigmoid,
  kGeluExact,
  kGeluTanh,
  kSwish
};
Status LaunchActivation(const KernelContext& ctx, Activation act, float alpha, DType t, void* data,
                        int64_t n);

// The error of the launch just made, naming the node.
Status LaunchStatus(const KernelContext& ctx, std::string_view what);

}  // namespace kiln::exec::cuda
