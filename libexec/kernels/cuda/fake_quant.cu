// FakeQuantWithMinMaxArgs and FakeQuantWithMinMaxVars on the GPU (quantization-aware trained
// models keep them between layers): TF's nudged range (fake_quant.h, on the host) and the CPU
// kernel's rounding, one operation at a time with the _rn intrinsics so nvcc contracts nothing
// into an FMA: the levels are the CPU's bit for bit. float32, as the ops are. The per-channel
// form quantizes weights, which are constants folded at prepare time, so it stays on the CPU.
#include "kernels/cuda/launch.cuh"
#include "kernels/fake_quant.h"
#include "kernels/quantize_ops.h"

namespace kiln::exec::cuda {
namespace {

using quantize_ops::FakeQuantState;

// floor((clamp(x) - lo) * inv_scale - zero + 0.5) * scale, or (x - lo) / scale with kDivide
// (FakeQuantWithMinMaxVars); NaN stays NaN; `zero_range`: everything is 0 (TF's empty range).
template <bool kDivide>
__global__ void FakeQuantKernel(const float* x, float* y, int64_t n, Nudged q, float zero,
                                bool zero_range) {
  KILN_GRID_LOOP(i, n) {
    const float v = x[i];
    if (zero_range) {
      y[i] = 0.0f;
      continue;
    }
    const float c = fmaxf(fminf(v, q.max), q.min);
    const float shifted = __fsub_rn(c, q.min);
    const float level = kDivide ? __fdiv_rn(shifted, q.scale) : __fmul_rn(shifted, q.inv_scale);
    const float r = __fadd_rn(__fsub_rn(level, zero), 0.5f);
    y[i] = v != v ? v : __fmul_rn(floorf(r), q.scale);
  }
}

template <bool kVars>
Status ComputeFakeQuant(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const Tensor& x = ctx.input(0);
  const auto& st = ctx.state<FakeQuantState>();
  float min = st.min, max = st.max;
  if constexpr (kVars) {
    const Tensor& min_t = ctx.input(1);
    const Tensor& max_t = ctx.input(2);
    if (min_t.rank() != 0 || max_t.rank() != 0)
      return ctx.Error("inputs 'min' and 'max' must be scalars, got shapes ",
                       min_t.shape().ToString(), " and ", max_t.shape().ToString());
    min = min_t.scalar<float>();
    max = max_t.scalar<float>();
  }
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x.shape()));
  const int64_t n = x.NumElements();
  if (n == 0) return OkStatus();
  const bool zero_range = kVars && min == 0.0f && max == 0.0f;
  const Nudged q = zero_range ? Nudged{} : Nudge(min, max, st.range);
  FakeQuantKernel<kVars><<<Blocks(n), kThreads, 0, dev.stream()>>>(
      x.data<float>(), y->data<float>(), n, q, zero_range ? 0.0f : NudgedZero(q), zero_range);
  return LaunchStatus(ctx, "FakeQuant");
}

bool SupportsFakeQuant(const PrepareContext& ctx) {
  return !ctx.inputs.empty() && ctx.inputs[0].dtype == DType::kFloat;
}

const KernelEntry kRows[] = {
    {"FakeQuantWithMinMaxArgs", &ComputeFakeQuant<false>, 0, 0, &SupportsFakeQuant, nullptr},
    // min and max (scalars) are read on the host, where the range is nudged.
    {"FakeQuantWithMinMaxVars", &ComputeFakeQuant<true>, (1u << 1) | (1u << 2), 0,
     &SupportsFakeQuant, nullptr},
};

}  // namespace

std::span<const KernelEntry> FakeQuantKernels() { return kRows; }

}  // namespace kiln::exec::cuda
