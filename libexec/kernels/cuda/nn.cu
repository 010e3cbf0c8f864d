// Softmax and LogSoftmax on the GPU over the last axis: one block per row, the max and the sum
// of exponentials reduced in float (half inputs too), as TF's kernels compute them.
#include <cfloat>

#include "kernels/cuda/launch.cuh"

namespace kiln::exec::cuda {
namespace {

// The block-wide reduction of v (max or sum) through shared memory; every thread gets it.
template <bool kMax>
__device__ float BlockReduce(float v, float* shared) {
  for (int o = 16; o > 0; o >>= 1) {
    const float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = kMax ? fmaxf(v, w) : v + w;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  const int warps = (blockDim.x + 31) / 32;
  v = lane < warps ? shared[lane] : (kMax ? -FLT_MAX : 0.0f);
  for (int o = 16; o > 0; o >>= 1) {
    const float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = kMax ? fmaxf(v, w) : v + w;
  }
  __syncthreads();  // `shared` is reused by the next reduction
  return v;
}

template <typename C, bool kLog>
__global__ void SoftmaxRows(const C* x, C* y, int64_t rows, int64_t n) {
  __shared__ float shared[32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const C* in = x + row * n;
    C* out = y + row * n;
    float m = -INFINITY;
    bool nan = false;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const float v = static_cast<float>(in[i]);
      nan |= v != v;
      m = fmaxf(m, v);
    }
    m = BlockReduce<true>(m, shared);
    // A NaN anywhere in the row makes the whole row NaN, as TF's kernels give.
    const float any_nan = BlockReduce<false>(nan ? 1.0f : 0.0f, shared);
    float s = 0.0f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += expf(static_cast<float>(in[i]) - m);
    s = BlockReduce<false>(s, shared);
    const float log_s = logf(s);
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const float d = static_cast<float>(in[i]) - m;
      float v = kLog ? d - log_s : expf(d) / s;
      if (any_nan > 0.0f) v = NAN;
      out[i] = static_cast<C>(v);
    }
  }
}

template <bool kLog>
Status ComputeSoftmax(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const Tensor& x = ctx.input(0);
  if (x.rank() < 1) return ctx.Error("logits must have at least one dimension");
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x.shape()));
  const int64_t n = x.dim(x.rank() - 1);
  if (x.NumElements() == 0) return OkStatus();
  const int64_t rows = x.NumElements() / n;
  const int threads = n >= 1024 ? 1024 : (n >= 256 ? 256 : 64);
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(rows, 65535));
  return Dispatch<GpuFloatTypes>(x.dtype(), [&](auto tag) {
    using C = ComputeType<typename decltype(tag)::type>;
    SoftmaxRows<C, kLog><<<blocks, threads, 0, dev.stream()>>>(
        reinterpret_cast<const C*>(x.raw_data()), static_cast<C*>(y->raw_data()), rows, n);
    return LaunchStatus(ctx, kLog ? "LogSoftmax" : "Softmax");
  });
}

template <typename C>
__global__ void ActivationKernel(C* x, int64_t n, Activation act, float alpha) {
  KILN_GRID_LOOP(i, n) {
    const float v = static_cast<float>(x[i]);
    float r = v;
    switch (act) {
      case Activation::kRelu:
        r = v < 0.0f ? 0.0f : v;
        break;
      case Activation::kRelu6:
        r = v < 0.0f ? 0.0f : (v > 6.0f ? 6.0f : v);
        break;
      case Activation::kElu:
        r = v < 0.0f ? expf(v) - 1.0f : v;
        break;
      case Activation::kLeakyRelu:
        r = v < 0.0f ? v * alpha : v;
        break;
      case Activation::kTanh:
        r = tanhf(v);
        break;
      case Activation::kSigmoid:
        r = 1.0f / (1.0f + expf(-v));
        break;
      case Activation::kGeluExact:
        r = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
        break;
      case Activation::kGeluTanh:
        r = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
        break;
      case Activation::kSwish:
        r = v / (1.0f + expf(-v));
        break;
    }
    x[i] = static_cast<C>(r);
  }
}

const KernelEntry kRows[] = {
    {"LogSoftmax", &ComputeSoftmax<true>, 0, 0, &SupportsFloat, nullptr},
    {"Softmax", &ComputeSoftmax<false>, 0, 0, &SupportsFloat, nullptr},
};

}  // namespace

std::span<const KernelEntry> NnKernels() { return kRows; }

Status LaunchActivation(const KernelContext& ctx, Activation act, float alpha, DType t, void* data,
                        int64_t n) {
  if (n == 0) return OkStatus();
  cudaStream_t stream = DeviceOf(ctx).stream();
  return Dispatch<GpuFloatTypes>(t, [&](auto tag) {
    using C = ComputeType<typename decltype(tag)::type>;
    ActivationKernel<C><<<Blocks(n), kThreads, 0, stream>>>(static_cast<C*>(data), n, act, alpha);
    return LaunchStatus(ctx, "an activation");
  });
}

}  // namespace kiln::exec::cuda
