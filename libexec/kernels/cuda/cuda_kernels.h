// The CUDA kernel table and what its families share: the dtype lists, launch shapes, and the
// error check after a launch. Each family's rows live with its kernels (elementwise.cu,
// nn.cu, reduce.cu, array.cu, matmul.cc, image.cu, ...); CudaKernelTable joins them, sorted by op.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "kernels/type_lists.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::cuda {

std::span<const KernelEntry> CudaKernelTable();

// Whether the libraries loaded at run time are there: OK, or why not (cuBLASLt, then cuDNN).
Status BlasLtStatus();
Status DnnStatus();

std::span<const KernelEntry> ElementwiseKernels();
std::span<const KernelEntry> NnKernels();
std::span<const KernelEntry> ReduceKernels();
std::span<const KernelEntry> ArrayKernels();
std::span<const KernelEntry> MatMulKernels();
std::span<const KernelEntry> ConvKernels();
std::span<const KernelEntry> PoolKernels();
std::span<const KernelEntry> EinsumKernels();
std::span<const KernelEntry> SplitKernels();
std::span<const KernelEntry> FillKernels();
std::span<const KernelEntry> ImageKernels();
std::span<const KernelEntry> SpaceKernels();
std::span<const KernelEntry> FakeQuantKernels();

// What the GPU kernels compute on: float32, the two half types (in float registers), and
// int64. int32 values stay on the host, as TensorFlow keeps them: they are shapes, sizes and
// indices whose consumers read them there (a GPU Reshape would wait for a copy back). int32
// inputs (gather indices) are still taken.
using GpuFloatTypes = TypeList<float, Half, BFloat16>;
using GpuNumberTypes = TypeList<float, Half, BFloat16, int64_t>;
bool IsGpuFloat(DType t);
bool IsGpuNumber(DType t);

// `supports` rows: the outputs and the first input are of the kind named (int32 outputs
// never: see above).
bool SupportsFloat(const PrepareContext& ctx);
bool SupportsNumber(const PrepareContext& ctx);
// Any POD dtype: kernels that move bytes (transpose, concat, views).
bool SupportsPod(const PrepareContext& ctx);
// POD elements of 1, 2, 4 or 8 bytes: kernels that move them as words.
bool SupportsWords(const PrepareContext& ctx);

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
  kSwish,
  kHardSwish
};
Status LaunchActivation(const KernelContext& ctx, Activation act, float alpha, DType t, void* data,
                        int64_t n);

// What follows a convolution per output channel (the last dim), in TF's order: bias or batch
// norm (inference: (v - mean) * scale / sqrt(var + epsilon) + offset), a residual add, an
// activation. Null pointers are absent parts; all are device memory of the output's dtype.
struct ChannelEpilogue {
  const void* src = nullptr;  // read from here instead of y (then y is only written)
  const void* bias = nullptr;
  const void* scale = nullptr;
  const void* offset = nullptr;
  const void* mean = nullptr;
  const void* variance = nullptr;
  float epsilon = 0;
  const void* add = nullptr;
  bool has_act = false;
  Activation act = Activation::kRelu;
  float alpha = 0.2f;
};
Status LaunchChannelEpilogue(const KernelContext& ctx, DType t, void* y, int64_t n,
                             int64_t channels, const ChannelEpilogue& e);

// y (out_dims) = x (in_dims) placed `before` elements in along each dim, `value` (the bits of
// one element of `elem_bytes` bytes) around it (pool.cu).
Status LaunchPad(const KernelContext& ctx, const void* x, void* y, int rank, const int64_t* in_dims,
                 const int64_t* before, const int64_t* out_dims, size_t elem_bytes,
                 uint64_t value_bits);

// y = x (dims) with its dims permuted: y's dim i is x's dim perm[i] (array.cu).
Status LaunchPermute(const KernelContext& ctx, const void* x, void* y,
                     std::span<const int64_t> dims, std::span<const int> perm, size_t elem_bytes);

// One (batched) row-major product y = a b through cuBLASLt (matmul.cc), with its optional
// epilogue: + bias (per column), + add (y's shape, as cuBLASLt's C), then ReLU.
struct Gemm {
  DType dtype = DType::kFloat;
  const void* a = nullptr;
  const void* b = nullptr;
  void* y = nullptr;
  const void* bias = nullptr;
  const void* add = nullptr;
  bool relu = false;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool a_batched = true, b_batched = true;  // false: one matrix for the whole batch
  bool adj_a = false, adj_b = false;
  // float32 may use TF32 tensor cores (the node's _kiln_allow_tf32, LoadOptions::precision).
  bool tf32 = false;
};
// Whether a float32 product or convolution node may use TF32 math (graph/float_to_half.h's
// MarkTf32 sets the attr where the load asked for it).
inline bool AllowsTf32(const PrepareContext& ctx) {
  Result<bool> b = ctx.attrs.GetBool("_kiln_allow_tf32", false);
  return b.ok() && *b;
}
// The plans a node's products use (per shape and alignment), made on first use.
struct GemmPlans;
std::shared_ptr<GemmPlans> NewGemmPlans();
Status RunGemm(const KernelContext& ctx, GemmPlans& plans, const Gemm& g);

// The error of the launch just made, naming the node.
Status LaunchStatus(const KernelContext& ctx, std::string_view what);

}  // namespace kiln::exec::cuda
