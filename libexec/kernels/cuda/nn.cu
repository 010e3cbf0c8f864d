// Softmax and LogSoftmax on the GPU over the last axis: a warp per row (a block per row past
// 1024 values), the max and the sum of exponentials reduced in float (half inputs too), as TF's
// kernels compute them; _MklLayerNorm, a warp per row; inference FusedBatchNorm; _KilnAttention,
// a warp per query row (scores in shared memory, or an online softmax for long sources).
#include <cfloat>

#include "kernels/attention_ops.h"
#include "kernels/cuda/launch.cuh"

namespace kiln::exec::cuda {
namespace {

// The warp-wide reduction of v (max or sum); every lane gets it.
template <bool kMax>
__device__ float WarpReduce(float v) {
  for (int o = 16; o > 0; o >>= 1) {
    const float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = kMax ? fmaxf(v, w) : v + w;
  }
  return v;
}

// The block-wide reduction of v (max or sum) through shared memory; every thread gets it.
template <bool kMax>
__device__ float BlockReduce(float v, float* shared) {
  v = WarpReduce<kMax>(v);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  const int warps = (blockDim.x + 31) / 32;
  v = WarpReduce<kMax>(lane < warps ? shared[lane] : (kMax ? -FLT_MAX : 0.0f));
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

// The same over rows of at most kWarpRow values, a warp per row and no block barrier: the
// attention's rows (the sequence length) left a block per row mostly waiting on barriers.
inline constexpr int64_t kWarpRow = 1024;
template <typename C, bool kLog>
__global__ void SoftmaxRowsWarp(const C* x, C* y, int64_t rows, int64_t n) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  KILN_WARP_ROW_LOOP(row, rows) {
    const C* in = x + row * n;
    C* out = y + row * n;
    float m = -INFINITY;
    bool nan = false;
    for (int64_t i = lane; i < n; i += 32) {
      const float v = static_cast<float>(in[i]);
      nan |= v != v;
      m = fmaxf(m, v);
    }
    m = WarpReduce<true>(m);
    const bool any_nan = __any_sync(0xffffffffu, nan);
    float s = 0.0f;
    for (int64_t i = lane; i < n; i += 32) s += expf(static_cast<float>(in[i]) - m);
    s = WarpReduce<false>(s);
    const float log_s = logf(s);
    for (int64_t i = lane; i < n; i += 32) {
      const float d = static_cast<float>(in[i]) - m;
      float v = kLog ? d - log_s : expf(d) / s;
      if (any_nan) v = NAN;
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
    if (n <= kWarpRow) {
      SoftmaxRowsWarp<C, kLog><<<WarpRowBlocks(rows), kThreads, 0, dev.stream()>>>(
          reinterpret_cast<const C*>(x.raw_data()), static_cast<C*>(y->raw_data()), rows, n);
      return LaunchStatus(ctx, kLog ? "LogSoftmax" : "Softmax");
    }
    SoftmaxRows<C, kLog><<<blocks, threads, 0, dev.stream()>>>(
        reinterpret_cast<const C*>(x.raw_data()), static_cast<C*>(y->raw_data()), rows, n);
    return LaunchStatus(ctx, kLog ? "LogSoftmax" : "Softmax");
  });
}

__device__ float Activate(Activation act, float v, float alpha) {
  switch (act) {
    case Activation::kRelu:
      return v < 0.0f ? 0.0f : v;
    case Activation::kRelu6:
      return v < 0.0f ? 0.0f : (v > 6.0f ? 6.0f : v);
    case Activation::kElu:
      return v < 0.0f ? expf(v) - 1.0f : v;
    case Activation::kLeakyRelu:
      return v < 0.0f ? v * alpha : v;
    case Activation::kTanh:
      return tanhf(v);
    case Activation::kSigmoid:
      return 1.0f / (1.0f + expf(-v));
    case Activation::kGeluExact:
      return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
    case Activation::kGeluTanh:
      return 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
    case Activation::kSwish:
      return v / (1.0f + expf(-v));
    case Activation::kHardSwish:
      return v * (fminf(fmaxf(v + 3.0f, 0.0f), 6.0f) * (1.0f / 6.0f));
  }
  return v;
}

template <typename C>
__global__ void ActivationKernel(C* x, int64_t n, Activation act, float alpha) {
  KILN_GRID_LOOP(i, n) { x[i] = static_cast<C>(Activate(act, static_cast<float>(x[i]), alpha)); }
}

// The same N elements at a time, one 16-byte access each way (an activation after a product:
// element by element, 2-byte accesses ran at a fraction of the bandwidth).
template <typename C, int N>
__global__ void ActivationVec(C* x, int64_t vectors, Activation act, float alpha) {
  KILN_GRID_LOOP(i, vectors) {
    Vec<C, N> v = reinterpret_cast<Vec<C, N>*>(x)[i];
#pragma unroll
    for (int k = 0; k < N; ++k)
      v.v[k] = static_cast<C>(Activate(act, static_cast<float>(v.v[k]), alpha));
    reinterpret_cast<Vec<C, N>*>(x)[i] = v;
  }
}

template <typename C>
__global__ void ChannelEpilogueKernel(const C* src, C* y, int64_t n, int64_t channels,
                                      const C* bias, const C* scale, const C* offset, const C* mean,
                                      const C* variance, float epsilon, const C* add, bool has_act,
                                      Activation act, float alpha) {
  KILN_GRID_LOOP(i, n) {
    const int64_t c = i % channels;
    float v = static_cast<float>(src[i]);
    if (bias != nullptr) v += static_cast<float>(bias[c]);
    if (scale != nullptr) {
      const float s =
          static_cast<float>(scale[c]) * rsqrtf(static_cast<float>(variance[c]) + epsilon);
      v = (v - static_cast<float>(mean[c])) * s + static_cast<float>(offset[c]);
    }
    if (add != nullptr) v += static_cast<float>(add[i]);
    if (has_act) v = Activate(act, v, alpha);
    y[i] = static_cast<C>(v);
  }
}

// The same N elements (N consecutive channels) at a time where the channels are whole vectors:
// one 16-byte access of x, y and the addend each, the channel found once per vector in index
// type I (32-bit where it fits).
template <typename C, int N, typename I>
__global__ void ChannelEpilogueVec(const C* src, C* y, I vectors, I channels, const C* bias,
                                   const C* scale, const C* offset, const C* mean,
                                   const C* variance, float epsilon, const C* add, bool has_act,
                                   Activation act, float alpha) {
  for (I i = blockIdx.x * blockDim.x + threadIdx.x; i < vectors; i += blockDim.x * gridDim.x) {
    const I c0 = static_cast<I>(i * N) % channels;
    const Vec<C, N> in = reinterpret_cast<const Vec<C, N>*>(src)[i];
    Vec<C, N> extra;
    if (add != nullptr) extra = reinterpret_cast<const Vec<C, N>*>(add)[i];
    Vec<C, N> out;
#pragma unroll
    for (int k = 0; k < N; ++k) {
      const I c = c0 + k;
      float v = static_cast<float>(in.v[k]);
      if (bias != nullptr) v += static_cast<float>(bias[c]);
      if (scale != nullptr) {
        const float s =
            static_cast<float>(scale[c]) * rsqrtf(static_cast<float>(variance[c]) + epsilon);
        v = (v - static_cast<float>(mean[c])) * s + static_cast<float>(offset[c]);
      }
      if (add != nullptr) v += static_cast<float>(extra.v[k]);
      if (has_act) v = Activate(act, v, alpha);
      out.v[k] = static_cast<C>(v);
    }
    reinterpret_cast<Vec<C, N>*>(y)[i] = out;
  }
}

// FusedBatchNorm (V1-V3) for inference, channels last, float32: y from x in one pass; the
// batch statistics outputs are the given mean and variance, as TF's kernel returns them.
bool SupportsBatchNorm(const PrepareContext& ctx) {
  auto training = ctx.attrs.GetBool("is_training", true);
  auto format = ctx.attrs.GetString("data_format", "NHWC");
  if (!training.ok() || *training || !format.ok() || (*format != "NHWC" && *format != "NDHWC"))
    return false;
  for (const TensorSpec& s : ctx.inputs)
    if (s.dtype != DType::kFloat) return false;
  return ctx.inputs.size() == 5;
}

struct EpsilonState final : OpState {
  float epsilon = 1e-4f;
};
Status CreateBatchNormState(PrepareContext& ctx) {
  auto st = std::make_shared<EpsilonState>();
  KILN_ASSIGN_OR_RETURN(st->epsilon, ctx.attrs.GetFloat("epsilon", 1e-4f));
  ctx.state = st;
  return OkStatus();
}

Status ComputeBatchNorm(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const Tensor& x = ctx.input(0);
  if (x.rank() != 4 && x.rank() != 5)
    return ctx.Error("input 'x' must be 4- or 5-dimensional, got ", x.shape().ToString());
  const int64_t c = x.dim(x.rank() - 1);
  for (int i = 1; i < 5; ++i)
    if (ctx.input(i).NumElements() != c)
      return ctx.Error("input ", i, " must have one element per channel of x (", c, ")");
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x.shape()));
  // batch_mean, batch_variance, reserve_space_1, reserve_space_2: the given statistics; NaN
  // for an empty x, as TensorFlow's kernel (and the CPU's) give.
  for (int o = 1; o < 5; ++o) {
    KILN_ASSIGN_OR_RETURN(Tensor * t, ctx.AllocateOutput(o, Shape{c}));
    if (x.NumElements() == 0) {
      KILN_RETURN_IF_ERROR(  // all-ones bits: a float32 NaN
          Check(cudaMemsetAsync(t->raw_data(), 0xFF, t->ByteSize(), dev.stream()), "NaN fill"));
      continue;
    }
    const Tensor& from = ctx.input(o % 2 == 1 ? 3 : 4);
    KILN_RETURN_IF_ERROR(Check(cudaMemcpyAsync(t->raw_data(), from.raw_data(), from.ByteSize(),
                                               cudaMemcpyDeviceToDevice, dev.stream()),
                               "batch norm statistics"));
  }
  if (ctx.num_outputs() > 5) {
    KILN_ASSIGN_OR_RETURN(Tensor * r3, ctx.AllocateOutput(5, Shape{}));
    KILN_RETURN_IF_ERROR(
        Check(cudaMemsetAsync(r3->raw_data(), 0, r3->ByteSize(), dev.stream()), "reserve"));
  }
  ChannelEpilogue e;
  e.src = x.raw_data();
  e.scale = ctx.input(1).raw_data();
  e.offset = ctx.input(2).raw_data();
  e.mean = ctx.input(3).raw_data();
  e.variance = ctx.input(4).raw_data();
  e.epsilon = ctx.state<EpsilonState>().epsilon;
  return LaunchChannelEpilogue(ctx, x.dtype(), y->raw_data(), x.NumElements(), c, e);
}

// ---- _MklLayerNorm ---------------------------------------------------------------------------

// A warp per row of the last dim: the mean, then the variance of the row (read again from
// cache), reduced in float, as the CPU kernel computes them; half types read and write their
// own type.
template <typename C>
__global__ void LayerNormRowsWarp(const C* x, const C* scale, const C* offset, C* y, int64_t rows,
                                  int64_t n, float epsilon) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  KILN_WARP_ROW_LOOP(row, rows) {
    const C* in = x + row * n;
    C* out = y + row * n;
    float s = 0.0f;
    for (int64_t i = lane; i < n; i += 32) s += static_cast<float>(in[i]);
    const float mean = WarpReduce<false>(s) / static_cast<float>(n);
    float q = 0.0f;
    for (int64_t i = lane; i < n; i += 32) {
      const float d = static_cast<float>(in[i]) - mean;
      q += d * d;
    }
    const float inv = rsqrtf(WarpReduce<false>(q) / static_cast<float>(n) + epsilon);
    for (int64_t i = lane; i < n; i += 32)
      out[i] =
          static_cast<C>((static_cast<float>(in[i]) - mean) * inv * static_cast<float>(scale[i]) +
                         static_cast<float>(offset[i]));
  }
}

Status CreateLayerNormState(PrepareContext& ctx) {
  auto st = std::make_shared<EpsilonState>();
  KILN_ASSIGN_OR_RETURN(st->epsilon, ctx.attrs.GetFloat("epsilon", 0.001f));
  ctx.state = st;
  return OkStatus();
}

Status ComputeLayerNorm(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const Tensor& x = ctx.input(0);
  if (x.rank() < 1) return ctx.Error("input 'x' must have rank >= 1, got a scalar");
  const int64_t n = x.dim(x.rank() - 1);
  if (ctx.input(1).NumElements() != n || ctx.input(2).NumElements() != n)
    return ctx.Error("scale and offset need ", n, " values (the last dim of x ",
                     x.shape().ToString(), ")");
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x.shape()));
  if (x.NumElements() == 0) return OkStatus();
  const int64_t rows = x.NumElements() / n;
  return Dispatch<GpuFloatTypes>(x.dtype(), [&](auto tag) {
    using C = ComputeType<typename decltype(tag)::type>;
    LayerNormRowsWarp<C><<<WarpRowBlocks(rows), kThreads, 0, dev.stream()>>>(
        reinterpret_cast<const C*>(x.raw_data()),
        reinterpret_cast<const C*>(ctx.input(1).raw_data()),
        reinterpret_cast<const C*>(ctx.input(2).raw_data()), static_cast<C*>(y->raw_data()), rows,
        n, ctx.state<EpsilonState>().epsilon);
    return LaunchStatus(ctx, "_MklLayerNorm");
  });
}

// ---- _KilnAttention ---------------------------------------------------------------------------

// The widest head a warp holds in registers: kMaxHeadPerLane values of each row per lane.
constexpr int kMaxHeadPerLane = 8;

// A warp per query row (b, n, t), rows of one (b, n) in consecutive warps so a block's warps
// read the same keys and values (from L1 after the first). Each lane keeps its share of the
// query row and of the output; per source position the lanes' partial dot products are summed
// by shuffles and the softmax runs online (a running maximum rescales the running sum and the
// output), so no row of scores is stored and any source length fits. float32 inside, as the
// CPU kernel computes.
template <typename C>
__global__ void AttentionRowsWarp(const C* q, const C* k, const C* v, const float* bias, C* out,
                                  attention::AttentionGeom g, float scale) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int64_t rows = g.b * g.n * g.t;
  KILN_WARP_ROW_LOOP(row, rows) {
    const int64_t t = row % g.t, n = (row / g.t) % g.n, b = row / (g.t * g.n);
    float qr[kMaxHeadPerLane], acc[kMaxHeadPerLane];
    const C* qp = q + ((b * g.t + t) * g.n + n) * g.h;
    for (int j = 0; j < kMaxHeadPerLane; ++j) {
      const int64_t i = lane + 32 * j;
      qr[j] = i < g.h ? static_cast<float>(qp[i]) : 0.0f;
      acc[j] = 0.0f;
    }
    float top = -INFINITY, sum = 0.0f;
    const float* brow = bias == nullptr ? nullptr
                                        : bias + b * g.bias_strides[0] + n * g.bias_strides[1] +
                                              t * g.bias_strides[2];
    for (int64_t s = 0; s < g.s; ++s) {
      const C* kp = k + ((b * g.s + s) * g.n + n) * g.h;
      float dot = 0.0f;
      for (int j = 0; j < kMaxHeadPerLane; ++j) {
        const int64_t i = lane + 32 * j;
        if (i < g.h) dot += qr[j] * static_cast<float>(kp[i]);
      }
      dot = WarpReduce<false>(dot);
      float score = dot * scale;
      if (brow != nullptr) score += brow[s * g.bias_strides[3]];
      // Rescale what came before when the maximum grows; a -inf score (a mask) weighs nothing,
      // even while every score so far is -inf.
      const float next = fmaxf(top, score);
      const float keep = top == next ? 1.0f : expf(top - next);
      const float w = score == -INFINITY ? 0.0f : expf(score - next);
      top = next;
      sum = sum * keep + w;
      const C* vp = v + ((b * g.s + s) * g.n + n) * g.hv;
      for (int j = 0; j < kMaxHeadPerLane; ++j) {
        const int64_t i = lane + 32 * j;
        if (i < g.hv) acc[j] = acc[j] * keep + w * static_cast<float>(vp[i]);
      }
    }
    C* op = out + ((b * g.t + t) * g.n + n) * g.hv;
    for (int j = 0; j < kMaxHeadPerLane; ++j) {
      const int64_t i = lane + 32 * j;
      if (i < g.hv) op[i] = static_cast<C>(g.s == 0 ? 0.0f : acc[j] / sum);
    }
  }
}

// The source lengths whose scores a warp keeps in shared memory (kThreads / 32 rows a block):
// up to this many the two-phase kernel below runs, past it the online one above.
constexpr int64_t kMaxSharedSource = 1024;

// A warp per query row again, in two phases over a row of scores in shared memory: each lane
// computes whole dot products for its own source positions (32 at a time, the query row read
// from shared memory), the warp reduces the maximum and the sum once, then each lane
// accumulates its output values over every source position. Per source position that is a few
// instructions a lane where the online kernel pays a warp-wide reduction; the keys and values
// of a block's rows (consecutive targets of one batch and head) come from L1.
template <typename C>
__global__ void AttentionRowsShared(const C* q, const C* k, const C* v, const float* bias, C* out,
                                    attention::AttentionGeom g, float scale) {
  extern __shared__ float smem[];
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  float* qs = smem + warp * g.h;                           // the query row
  float* p = smem + (blockDim.x / 32) * g.h + warp * g.s;  // its scores
  const int64_t rows = g.b * g.n * g.t;
  KILN_WARP_ROW_LOOP(row, rows) {
    const int64_t t = row % g.t, n = (row / g.t) % g.n, b = row / (g.t * g.n);
    const C* qp = q + ((b * g.t + t) * g.n + n) * g.h;
    for (int64_t i = lane; i < g.h; i += 32) qs[i] = static_cast<float>(qp[i]);
    __syncwarp();
    const float* brow = bias == nullptr ? nullptr
                                        : bias + b * g.bias_strides[0] + n * g.bias_strides[1] +
                                              t * g.bias_strides[2];
    float top = -INFINITY;
    for (int64_t s = lane; s < g.s; s += 32) {
      const C* kp = k + ((b * g.s + s) * g.n + n) * g.h;
      float dot = 0.0f;
      for (int64_t i = 0; i < g.h; ++i) dot += qs[i] * static_cast<float>(kp[i]);
      float score = dot * scale;
      if (brow != nullptr) score += brow[s * g.bias_strides[3]];
      p[s] = score;
      top = fmaxf(top, score);
    }
    top = WarpReduce<true>(top);
    float sum = 0.0f;
    for (int64_t s = lane; s < g.s; s += 32) {
      const float e = p[s] == -INFINITY ? 0.0f : expf(p[s] - top);
      p[s] = e;
      sum += e;
    }
    sum = WarpReduce<false>(sum);
    __syncwarp();
    C* op = out + ((b * g.t + t) * g.n + n) * g.hv;
    for (int64_t i = lane; i < g.hv; i += 32) {
      float acc = 0.0f;
      for (int64_t s = 0; s < g.s; ++s)
        acc += p[s] * static_cast<float>(v[((b * g.s + s) * g.n + n) * g.hv + i]);
      op[i] = static_cast<C>(g.s == 0 ? 0.0f : acc / sum);
    }
    __syncwarp();  // the next row overwrites qs and p
  }
}

Status ComputeAttention(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const auto& st = ctx.state<attention::AttentionState>();
  const Tensor& q = ctx.input(0);
  const Tensor* bias = st.has_bias ? &ctx.input(3) : nullptr;
  const Result<attention::AttentionGeom> g = attention::GeomOf(q, ctx.input(1), ctx.input(2), bias);
  if (!g.ok()) return ctx.Error(g.status().message());
  if (g->h > 32 * kMaxHeadPerLane || g->hv > 32 * kMaxHeadPerLane)
    return ctx.Error("heads of ", g->h, " and ", g->hv, " values are wider than the GPU kernel's ",
                     32 * kMaxHeadPerLane);
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, attention::OutputShape(*g)));
  const int64_t rows = g->b * g->n * g->t;
  if (y->NumElements() == 0) return OkStatus();
  return Dispatch<GpuFloatTypes>(q.dtype(), [&](auto tag) {
    using C = ComputeType<typename decltype(tag)::type>;
    const auto* qd = reinterpret_cast<const C*>(q.raw_data());
    const auto* kd = reinterpret_cast<const C*>(ctx.input(1).raw_data());
    const auto* vd = reinterpret_cast<const C*>(ctx.input(2).raw_data());
    const float* bd = bias == nullptr ? nullptr : bias->data<float>();
    auto* od = static_cast<C*>(y->raw_data());
    if (g->s <= kMaxSharedSource) {
      const size_t shared = static_cast<size_t>(kThreads / 32 * (g->h + g->s)) * sizeof(float);
      AttentionRowsShared<C><<<WarpRowBlocks(rows), kThreads, shared, dev.stream()>>>(
          qd, kd, vd, bd, od, *g, st.scale);
    } else {
      AttentionRowsWarp<C>
          <<<WarpRowBlocks(rows), kThreads, 0, dev.stream()>>>(qd, kd, vd, bd, od, *g, st.scale);
    }
    return LaunchStatus(ctx, "_KilnAttention");
  });
}

// Float query, key and value whose head dims (when known) fit a warp's registers.
bool SupportsAttention(const PrepareContext& ctx) {
  if (ctx.inputs.size() < 3 || !SupportsFloat(ctx)) return false;
  for (int i : {0, 2}) {
    const PartialShape& s = ctx.inputs[i].shape;
    if (!s.unknown_rank() && s.rank() >= 1 && s.dim(s.rank() - 1) > 32 * kMaxHeadPerLane)
      return false;
  }
  return true;
}

const KernelEntry kRows[] = {
    {"FusedBatchNorm", &ComputeBatchNorm, 0, 0, &SupportsBatchNorm, &CreateBatchNormState},
    {"FusedBatchNormV2", &ComputeBatchNorm, 0, 0, &SupportsBatchNorm, &CreateBatchNormState},
    {"FusedBatchNormV3", &ComputeBatchNorm, 0, 0, &SupportsBatchNorm, &CreateBatchNormState},
    {"LogSoftmax", &ComputeSoftmax<true>, 0, 0, &SupportsFloat, nullptr},
    {"Softmax", &ComputeSoftmax<false>, 0, 0, &SupportsFloat, nullptr},
    {"_KilnAttention", &ComputeAttention, 0, 0, &SupportsAttention, nullptr},
    {"_MklLayerNorm", &ComputeLayerNorm, 0, 0, &SupportsFloat, &CreateLayerNormState},
};

}  // namespace

std::span<const KernelEntry> NnKernels() { return kRows; }

Status LaunchActivation(const KernelContext& ctx, Activation act, float alpha, DType t, void* data,
                        int64_t n) {
  if (n == 0) return OkStatus();
  cudaStream_t stream = DeviceOf(ctx).stream();
  return Dispatch<GpuFloatTypes>(t, [&](auto tag) {
    using C = ComputeType<typename decltype(tag)::type>;
    constexpr int N = kVecOf<C>;
    auto* x = static_cast<C*>(data);
    const int64_t vectors = VecAligned<C, N>(x) ? n / N : 0;
    if (vectors > 0)
      ActivationVec<C, N><<<Blocks(vectors), kThreads, 0, stream>>>(x, vectors, act, alpha);
    const int64_t done = vectors * N;
    if (done < n)
      ActivationKernel<C>
          <<<Blocks(n - done), kThreads, 0, stream>>>(x + done, n - done, act, alpha);
    return LaunchStatus(ctx, "an activation");
  });
}

Status LaunchChannelEpilogue(const KernelContext& ctx, DType t, void* y, int64_t n,
                             int64_t channels, const ChannelEpilogue& e) {
  if (n == 0) return OkStatus();
  cudaStream_t stream = DeviceOf(ctx).stream();
  return Dispatch<GpuFloatTypes>(t, [&](auto tag) {
    using C = ComputeType<typename decltype(tag)::type>;
    constexpr int N = kVecOf<C>;
    const void* src = e.src != nullptr ? e.src : y;
    if (channels % N == 0 && VecAligned<C, N>(src) && VecAligned<C, N>(y) &&
        (e.add == nullptr || VecAligned<C, N>(e.add))) {
      auto launch = [&](auto index) {
        using I = decltype(index);
        ChannelEpilogueVec<C, N, I><<<Blocks(n / N), kThreads, 0, stream>>>(
            static_cast<const C*>(src), static_cast<C*>(y), static_cast<I>(n / N),
            static_cast<I>(channels), static_cast<const C*>(e.bias), static_cast<const C*>(e.scale),
            static_cast<const C*>(e.offset), static_cast<const C*>(e.mean),
            static_cast<const C*>(e.variance), e.epsilon, static_cast<const C*>(e.add), e.has_act,
            e.act, e.alpha);
      };
      if (n <= INT32_MAX) {
        launch(uint32_t{});
      } else {
        launch(int64_t{});
      }
      return LaunchStatus(ctx, "a convolution's epilogue");
    }
    ChannelEpilogueKernel<C><<<Blocks(n), kThreads, 0, stream>>>(
        static_cast<const C*>(e.src != nullptr ? e.src : y), static_cast<C*>(y), n, channels,
        static_cast<const C*>(e.bias), static_cast<const C*>(e.scale),
        static_cast<const C*>(e.offset), static_cast<const C*>(e.mean),
        static_cast<const C*>(e.variance), e.epsilon, static_cast<const C*>(e.add), e.has_act,
        e.act, e.alpha);
    return LaunchStatus(ctx, "a convolution's epilogue");
  });
}

}  // namespace kiln::exec::cuda
