// MaxPool and AvgPool, MaxPool3D and AvgPool3D (NHWC / NDHWC, TF's SAME/VALID windows, asymmetric
// padding included: one thread per output element walks its window; average pooling counts only the
// elements inside, as TF does), Pad / PadV2 (a constant border; also how a convolution with
// asymmetric padding gets a symmetric one, conv.cc) and MirrorPad (REFLECT, SYMMETRIC).
#include <cstring>
#include <vector>

#include "kernels/cuda/launch.cuh"
#include "kernels/pad_ops.h"
#include "kernels/pool_nd_ops.h"
#include "kernels/window_util.h"

namespace kiln::exec::cuda {
namespace {

// ---- pooling --------------------------------------------------------------------------------

struct PoolGeometry {
  int64_t n, h, w, c, out_h, out_w, k_h, k_w, s_h, s_w, pad_top, pad_left;
  // 3-D pooling (NDHWC): the depth dim; 1, 1, 1, 1 and 0 in 2-D.
  int64_t d, out_d, k_d, s_d, pad_front;
};

template <typename C, bool kMax, bool k3D>
__global__ void PoolKernel(const C* x, C* y, int64_t total, PoolGeometry g) {
  KILN_GRID_LOOP(i, total) {
    const int64_t c = i % g.c;
    int64_t r = i / g.c;
    const int64_t ow = r % g.out_w;
    r /= g.out_w;
    const int64_t oh = r % g.out_h;
    r /= g.out_h;
    int64_t od = 0;
    if constexpr (k3D) {
      od = r % g.out_d;
      r /= g.out_d;
    }
    const int64_t n = r;
    const int64_t d0 = od * g.s_d - g.pad_front;
    const int64_t h0 = oh * g.s_h - g.pad_top, w0 = ow * g.s_w - g.pad_left;
    float acc = kMax ? -INFINITY : 0.0f;
    int64_t count = 0;
    for (int64_t kd = 0; kd < (k3D ? g.k_d : 1); ++kd) {
      const int64_t dd = d0 + kd;
      if (k3D && (dd < 0 || dd >= g.d)) continue;
      for (int64_t kh = 0; kh < g.k_h; ++kh) {
        const int64_t h = h0 + kh;
        if (h < 0 || h >= g.h) continue;
        for (int64_t kw = 0; kw < g.k_w; ++kw) {
          const int64_t w = w0 + kw;
          if (w < 0 || w >= g.w) continue;
          const float v = static_cast<float>(x[(((n * g.d + dd) * g.h + h) * g.w + w) * g.c + c]);
          if constexpr (kMax) {
            if (v > acc) acc = v;  // a NaN is skipped, as TF's kernel (and oneDNN's) skip it
          } else {
            acc += v;
          }
          ++count;
        }
      }
    }
    y[i] = static_cast<C>(kMax ? acc : (count > 0 ? acc / static_cast<float>(count) : 0.0f));
  }
}

struct PoolState final : OpState {
  WindowSpec window;
};

Status CreatePoolState(PrepareContext& ctx) {
  auto st = std::make_shared<PoolState>();
  WindowAttrOptions opts;
  opts.read_ksize = true;
  opts.legacy_2d = true;
  KILN_RETURN_IF_ERROR(ReadWindowAttrs(ctx, opts, &st->window));
  ctx.state = st;
  return OkStatus();
}

// MaxPool and AvgPool (this file's state) or MaxPool3D and AvgPool3D (pool_nd's prepared state).
template <bool kMax, bool k3D>
Status ComputePool(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const WindowSpec& window =
      k3D ? ctx.state<pool_nd::PoolState>().attrs : ctx.state<PoolState>().window;
  const Tensor& x = ctx.input(0);
  const int rank = k3D ? 5 : 4;
  if (x.rank() != rank)
    return ctx.Error("input must have rank ", rank, ", got shape ", x.shape().ToString());
  std::array<WindowDim, 3> dims;
  const std::array<int64_t, 3> k =
      k3D ? window.ksize : std::array<int64_t, 3>{1, window.ksize[1], window.ksize[2]};
  Status s = MakeWindowDims(window, x.shape().dims(), k, &dims);
  if (!s.ok()) return ctx.Error(s.message());
  PoolGeometry g{};
  g.n = x.dim(0);
  g.d = k3D ? x.dim(1) : 1;
  g.h = x.dim(rank - 3);
  g.w = x.dim(rank - 2);
  g.c = x.dim(rank - 1);
  g.out_d = k3D ? dims[0].out : 1;
  g.out_h = dims[1].out;
  g.out_w = dims[2].out;
  g.k_d = k3D ? dims[0].k : 1;
  g.k_h = dims[1].k;
  g.k_w = dims[2].k;
  g.s_d = k3D ? dims[0].stride : 1;
  g.s_h = dims[1].stride;
  g.s_w = dims[2].stride;
  g.pad_front = k3D ? dims[0].pad_before : 0;
  g.pad_top = dims[1].pad_before;
  g.pad_left = dims[2].pad_before;
  Shape out = k3D ? Shape{g.n, g.out_d, g.out_h, g.out_w, g.c} : Shape{g.n, g.out_h, g.out_w, g.c};
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out));
  const int64_t total = y->NumElements();
  if (total == 0) return OkStatus();
  return Dispatch<GpuFloatTypes>(x.dtype(), [&](auto tag) {
    using C = ComputeType<typename decltype(tag)::type>;
    PoolKernel<C, kMax, k3D><<<Blocks(total), kThreads, 0, dev.stream()>>>(
        reinterpret_cast<const C*>(x.raw_data()), static_cast<C*>(y->raw_data()), total, g);
    return LaunchStatus(ctx, kMax ? "MaxPool" : "AvgPool");
  });
}

// ---- Pad ------------------------------------------------------------------------------------

struct PadMap {
  int rank = 0;
  int64_t out_dims[kMaxDims] = {}, in_dims[kMaxDims] = {}, before[kMaxDims] = {};
};

template <typename W>
__global__ void PadKernel(const W* x, W* y, int64_t total, PadMap m, W value) {
  KILN_GRID_LOOP(i, total) {
    int64_t r = i, off = 0, stride = 1;
    bool inside = true;
    for (int d = m.rank - 1; d >= 0; --d) {
      const int64_t o = r % m.out_dims[d];
      r /= m.out_dims[d];
      const int64_t in = o - m.before[d];
      inside = inside && in >= 0 && in < m.in_dims[d];
      off += in * stride;
      stride *= m.in_dims[d];
    }
    y[i] = inside ? x[off] : value;
  }
}

// Pad's paddings (host memory, [rank, 2]) and PadV2's constant (host memory too: one value).
Status ComputePad(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const Tensor& x = ctx.input(0);
  const Tensor& pads = ctx.input(1);
  const int rank = x.rank();
  if (pads.rank() != 2 || pads.dim(0) != rank || pads.dim(1) != 2)
    return ctx.Error("input 'paddings' must have shape [", rank, ", 2], got ",
                     pads.shape().ToString());
  int64_t before[kMaxRank] = {}, out_dims[kMaxRank] = {};
  Shape out;
  for (int d = 0; d < rank; ++d) {
    const int64_t b = IndexAt(pads, 2 * d);
    const int64_t a = IndexAt(pads, 2 * d + 1);
    if (b < 0 || a < 0)
      return ctx.Error("paddings must be non-negative: dim ", d, " has (", b, ", ", a, ")");
    before[d] = b;
    out_dims[d] = x.dim(d) + b + a;
    out.AddDim(out_dims[d]);
  }
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out));
  uint64_t value = 0;
  if (ctx.num_inputs() > 2) {
    const Tensor& v = ctx.input(2);
    if (v.NumElements() != 1) return ctx.Error("constant_values must be a scalar");
    std::memcpy(&value, v.raw_data(), DTypeSize(v.dtype()));
  }
  return LaunchPad(ctx, x.raw_data(), y->raw_data(), rank, x.shape().dims().data(), before,
                   out_dims, DTypeSize(x.dtype()), value);
}

// ---- MirrorPad ------------------------------------------------------------------------------

template <typename W>
__global__ void MirrorPadKernel(const W* x, W* y, int64_t total, PadMap m, int64_t edge) {
  KILN_GRID_LOOP(i, total) {
    int64_t r = i, off = 0, stride = 1;
    for (int d = m.rank - 1; d >= 0; --d) {
      const int64_t o = r % m.out_dims[d];
      r /= m.out_dims[d];
      off += pad::MirrorIndex(o, m.before[d], m.in_dims[d], edge) * stride;
      stride *= m.in_dims[d];
    }
    y[i] = x[off];
  }
}

// The CPU's checks (pad::Paddings, pad::CheckMirror) and index (pad::MirrorIndex).
Status ComputeMirrorPad(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const Tensor& x = ctx.input(0);
  const pad::Mirror mode = ctx.state<pad::MirrorState>().value;
  const int rank = x.rank();
  if (rank > kMaxDims) return ctx.Error("mirror-pads more than ", kMaxDims, " dims on the GPU");
  auto pads = pad::Paddings(ctx.input(1), rank);
  if (!pads.ok()) return ctx.Error(pads.status().message());
  PadMap m;
  m.rank = rank;
  Shape out;
  for (int d = 0; d < rank; ++d) {
    const pad::Pads& p = (*pads)[d];
    Status s = pad::CheckMirror(mode, d, x.dim(d), p.before, p.after);
    if (!s.ok()) return ctx.Error(s.message());
    m.in_dims[d] = x.dim(d);
    m.before[d] = p.before;
    m.out_dims[d] = x.dim(d) + p.before + p.after;
    out.AddDim(m.out_dims[d]);
  }
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out));
  const int64_t total = y->NumElements();
  if (total == 0) return OkStatus();
  const int64_t edge = mode == pad::Mirror::kReflect ? 0 : 1;
  const size_t bytes = DTypeSize(x.dtype());
  const bool launched = ForWord(bytes, [&](auto word) {
    using W = decltype(word);
    MirrorPadKernel<W><<<Blocks(total), kThreads, 0, dev.stream()>>>(
        static_cast<const W*>(x.raw_data()), static_cast<W*>(y->raw_data()), total, m, edge);
  });
  if (!launched) return ctx.Error("no GPU padding for elements of ", bytes, " bytes");
  return LaunchStatus(ctx, "MirrorPad");
}

bool SupportsPad(const PrepareContext& ctx) {
  if (!SupportsPod(ctx)) return false;
  const size_t b = DTypeSize(ctx.outputs[0].dtype);
  return b == 1 || b == 2 || b == 4 || b == 8;
}

constexpr uint32_t kHostPads = (1u << 1) | (1u << 2);  // paddings, constant_values

const KernelEntry kRows[] = {
    {"AvgPool", &ComputePool<false, false>, 0, 0, &SupportsFloat, &CreatePoolState},
    {"AvgPool3D", &ComputePool<false, true>, 0, 0, &SupportsFloat, nullptr},
    {"MaxPool", &ComputePool<true, false>, 0, 0, &SupportsFloat, &CreatePoolState},
    {"MaxPool3D", &ComputePool<true, true>, 0, 0, &SupportsFloat, nullptr},
    {"MirrorPad", &ComputeMirrorPad, 1u << 1, 0, &SupportsPad, nullptr},
    {"Pad", &ComputePad, kHostPads, 0, &SupportsPad, nullptr},
    {"PadV2", &ComputePad, kHostPads, 0, &SupportsPad, nullptr},
};

}  // namespace

std::span<const KernelEntry> PoolKernels() { return kRows; }

Status LaunchPad(const KernelContext& ctx, const void* x, void* y, int rank, const int64_t* in_dims,
                 const int64_t* before, const int64_t* out_dims, size_t elem_bytes,
                 uint64_t value_bits) {
  if (rank > kMaxDims) return ctx.Error("pads more than ", kMaxDims, " dims on the GPU");
  PadMap m;
  m.rank = rank;
  int64_t total = 1;
  for (int d = 0; d < rank; ++d) {
    m.out_dims[d] = out_dims[d];
    m.in_dims[d] = in_dims[d];
    m.before[d] = before[d];
    total *= out_dims[d];
  }
  if (total == 0) return OkStatus();
  cudaStream_t stream = DeviceOf(ctx).stream();
  const bool launched = ForWord(elem_bytes, [&](auto word) {
    using W = decltype(word);
    W v;
    std::memcpy(&v, &value_bits, sizeof(W));
    PadKernel<W><<<Blocks(total), kThreads, 0, stream>>>(static_cast<const W*>(x),
                                                         static_cast<W*>(y), total, m, v);
  });
  if (!launched) return ctx.Error("no GPU padding for elements of ", elem_bytes, " bytes");
  return LaunchStatus(ctx, "Pad");
}

}  // namespace kiln::exec::cuda
