// The CPU kernels of the ops in kernels/pool_nd_ops.cc: one channels-last walk over three
// spatial dims (2-D ops have a depth of 1). Windows leave the padding out: max ignores it,
// average divides by the number of real elements, as TensorFlow's CPU kernels do. Max picks the
// first maximum in window order (strictly greater replaces), the rule TensorFlow's argmax helper
// follows, so MaxPoolWithArgmax and MaxPoolGrad route to the same element TensorFlow does. Half
// and bfloat16 average and accumulate in float.
#include "kernels/pool_nd_ops.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/cpu/vector_math.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

using pool_nd::ForwardDims;
using pool_nd::IsAvgGrad;
using pool_nd::IsGradGrad;
using pool_nd::IsMaxGrad;
using pool_nd::MaxPool3DTypes;
using pool_nd::PoolKind;
using pool_nd::PoolState;
using pool_nd::SpatialOf;
using pool_nd::WindowInput;

struct PoolGeom {
  int64_t batch = 0, c = 0;
  std::array<WindowDim, 3> d;
  int64_t InPixels() const { return d[0].in * d[1].in * d[2].in; }      // per image
  int64_t OutPixels() const { return d[0].out * d[1].out * d[2].out; }  // per image
};

// The clipped window [lo, hi) of output coordinate o along w.
inline void WindowRange(const WindowDim& w, int64_t o, int64_t* lo, int64_t* hi) {
  const int64_t start = o * w.stride - w.pad_before;
  *lo = std::max<int64_t>(start, 0);
  *hi = std::min(start + w.k, w.in);
}

// Calls f(input pixel index within the image) for every element of output pixel p's window,
// in window order (depth, rows, columns).
template <typename F>
inline void ForWindow(const PoolGeom& g, int64_t p, F f) {
  const int64_t ox = p % g.d[2].out, oy = (p / g.d[2].out) % g.d[1].out,
                oz = p / (g.d[2].out * g.d[1].out);
  int64_t z0, z1, y0, y1, x0, x1;
  WindowRange(g.d[0], oz, &z0, &z1);
  WindowRange(g.d[1], oy, &y0, &y1);
  WindowRange(g.d[2], ox, &x0, &x1);
  for (int64_t z = z0; z < z1; ++z)
    for (int64_t y = y0; y < y1; ++y)
      for (int64_t x = x0; x < x1; ++x) f((z * g.d[1].in + y) * g.d[2].in + x);
}

// Max (first maximum wins) or average over every window; optionally the argmax of every
// output element as a flat index of the image ((z * H + y) * W + x) * C + c.
template <typename C, bool kMax>
void PoolForward(const KernelContext& ctx, const PoolGeom& g, const C* in, C* out,
                 int64_t* argmax) {
  using A = Acc<C>;
  const int64_t out_px = g.OutPixels(), in_px = g.InPixels();
  const int64_t window = g.d[0].k * g.d[1].k * g.d[2].k;
  ctx.threads().ParallelFor(
      g.batch * out_px, std::max<int64_t>(1, 8192 / std::max<int64_t>(1, window * g.c)),
      [&](int64_t begin, int64_t end) {
        for (int64_t bp = begin; bp < end; ++bp) {
          const int64_t b = bp / out_px, p = bp % out_px;
          const C* img = in + b * in_px * g.c;
          C* o = out + bp * g.c;
          if constexpr (kMax) {
            int64_t* am = argmax ? argmax + bp * g.c : nullptr;
            bool first = true;
            ForWindow(g, p, [&](int64_t ip) {
              const C* v = img + ip * g.c;
              const int64_t base = ip * g.c;
              if (first) {
                for (int64_t c = 0; c < g.c; ++c) o[c] = v[c];
                if (am) {
                  for (int64_t c = 0; c < g.c; ++c) am[c] = base + c;
                }
                first = false;
                return;
              }
              // Selects instead of branches, so the channel loop vectorises; the first
              // maximum wins ties, as in TensorFlow.
              if (am) {
                for (int64_t c = 0; c < g.c; ++c) {
                  const bool more = o[c] < v[c];
                  o[c] = more ? v[c] : o[c];
                  am[c] = more ? base + c : am[c];
                }
              } else {
                for (int64_t c = 0; c < g.c; ++c) o[c] = o[c] < v[c] ? v[c] : o[c];
              }
            });
            if (first) {  // an empty window (only with zero-sized inputs)
              for (int64_t c = 0; c < g.c; ++c) {
                o[c] = std::numeric_limits<C>::lowest();
                if (am) am[c] = 0;
              }
            }
          } else {
            // Sums in a small fixed buffer of channels at a time.
            constexpr int64_t kBlock = 64;
            for (int64_t c0 = 0; c0 < g.c; c0 += kBlock) {
              const int64_t n = std::min(kBlock, g.c - c0);
              A sum[kBlock] = {};
              int64_t count = 0;
              ForWindow(g, p, [&](int64_t ip) {
                const C* v = img + ip * g.c + c0;
                for (int64_t c = 0; c < n; ++c) sum[c] += static_cast<A>(v[c]);
                ++count;
              });
              for (int64_t c = 0; c < n; ++c)
                o[c0 + c] = static_cast<C>(count > 0 ? sum[c] / static_cast<A>(count) : A(0));
            }
          }
        }
      });
}

// The geometry of an input with channels-last dims `in` under ksize/strides in `a`.
Status MakePoolGeom(const WindowSpec& a, std::span<const int64_t> in, PoolGeom* g) {
  for (int64_t v : in) {
    if (v < 0) {
      return InvalidArgument("input shape ", DimsString(std::vector<int64_t>(in.begin(), in.end())),
                             " has a negative dimension");
    }
  }
  KILN_RETURN_IF_ERROR(CheckElementCount(in, "input shape"));
  g->batch = in[0];
  g->c = in[in.size() - 1];
  return MakeWindowDims(a, in, a.ksize, &g->d);
}

// d(input) of average pooling: every output's gradient spread evenly over the real (unpadded)
// elements of its window, what TensorFlow's default (oneDNN) CPU kernel computes. TF's
// non-oneDNN reference kernel differs only for windows that start in the padding and end past
// the input (its GetBroadcastSize then spreads over min(in, ksize) elements). Each image is
// summed by one worker in output order.
template <typename C>
void AvgPoolGradNd(const KernelContext& ctx, const PoolGeom& g, const C* dy, C* dx) {
  using A = Acc<C>;
  const int64_t in_px = g.InPixels(), out_px = g.OutPixels();
  ctx.threads().ParallelFor(g.batch, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      C* img = dx + b * in_px * g.c;
      std::fill(img, img + in_px * g.c, C(0));
      for (int64_t p = 0; p < out_px; ++p) {
        int64_t count = 0;
        ForWindow(g, p, [&](int64_t) { ++count; });
        if (count == 0) continue;
        const A coeff = A(1) / static_cast<A>(count);
        const C* src = dy + (b * out_px + p) * g.c;
        ForWindow(g, p, [&](int64_t ip) {
          C* dst = img + ip * g.c;
          for (int64_t k = 0; k < g.c; ++k)
            dst[k] = static_cast<C>(static_cast<A>(dst[k]) + static_cast<A>(src[k]) * coeff);
        });
      }
    }
  });
}

// MaxPoolGrad where windows never overlap (stride >= ksize on every dim, the usual 2x2 pool of
// stride 2): each input element is in at most one window, so every window writes its elements
// directly (dy to its first maximum, 0 to the rest) without an argmax buffer or a scatter.
template <typename C>
void MaxPoolGradDisjoint(const KernelContext& ctx, const PoolGeom& g, const C* x, const C* dy,
                         C* dx) {
  const int64_t in_px = g.InPixels(), out_px = g.OutPixels();
  bool covered = true;  // the windows tile the input exactly
  for (const WindowDim& w : g.d)
    covered = covered && w.stride == w.k && w.pad_before == 0 && w.out * w.k == w.in;
  if (!covered) std::fill(dx, dx + g.batch * in_px * g.c, C(0));
  const int64_t window = g.d[0].k * g.d[1].k * g.d[2].k;
  // float windows up to this size take the vectorised vmath kernel.
  constexpr int64_t kMaxVecWindow = 64;
  ctx.threads().ParallelFor(
      g.batch * out_px, std::max<int64_t>(1, 8192 / std::max<int64_t>(1, window * g.c)),
      [&](int64_t begin, int64_t end) {
        constexpr int64_t kBlock = 256;
        C best[kBlock];
        int32_t which[kBlock];
        const float* rows_in[kMaxVecWindow];
        float* rows_out[kMaxVecWindow];
        for (int64_t bp = begin; bp < end; ++bp) {
          const int64_t b = bp / out_px, p = bp % out_px;
          const C* img = x + b * in_px * g.c;
          C* dimg = dx + b * in_px * g.c;
          if constexpr (std::is_same_v<C, float>) {
            if (window <= kMaxVecWindow) {
              int64_t rows = 0;
              ForWindow(g, p, [&](int64_t ip) {
                rows_in[rows] = img + ip * g.c;
                rows_out[rows++] = dimg + ip * g.c;
              });
              vmath::MaxPoolGradWindow(rows_in, rows_out, rows, dy + bp * g.c, g.c);
              continue;
            }
          }
          for (int64_t c0 = 0; c0 < g.c; c0 += kBlock) {
            const int64_t n = std::min(kBlock, g.c - c0);
            int32_t j = 0;
            ForWindow(g, p, [&](int64_t ip) {
              const C* v = img + ip * g.c + c0;
              if (j == 0) {
                for (int64_t c = 0; c < n; ++c) {
                  best[c] = v[c];
                  which[c] = 0;
                }
              } else {
                // Strictly greater replaces: the first maximum wins, as in PoolForward.
                for (int64_t c = 0; c < n; ++c) {
                  const bool more = best[c] < v[c];
                  best[c] = more ? v[c] : best[c];
                  which[c] = more ? j : which[c];
                }
              }
              ++j;
            });
            const C* d = dy + bp * g.c + c0;
            j = 0;
            ForWindow(g, p, [&](int64_t ip) {
              C* o = dimg + ip * g.c + c0;
              for (int64_t c = 0; c < n; ++c) o[c] = which[c] == j ? d[c] : C(0);
              ++j;
            });
          }
        }
      });
}

template <typename C>
Status MaxPoolGradNd(const KernelContext& ctx, const PoolGeom& g, const C* x, const C* dy, C* dx) {
  using A = Acc<C>;
  if (std::all_of(g.d.begin(), g.d.end(), [](const WindowDim& w) { return w.stride >= w.k; })) {
    MaxPoolGradDisjoint<C>(ctx, g, x, dy, dx);
    return OkStatus();
  }
  const int64_t out_n = g.batch * g.OutPixels() * g.c, in_px = g.InPixels();
  KILN_ASSIGN_OR_RETURN(void* mem, ctx.AllocateTemp(sizeof(int64_t) * std::max<int64_t>(out_n, 1)));
  auto* argmax = static_cast<int64_t*>(mem);
  KILN_ASSIGN_OR_RETURN(void* vmem, ctx.AllocateTemp(sizeof(C) * std::max<int64_t>(out_n, 1)));
  PoolForward<C, true>(ctx, g, x, static_cast<C*>(vmem), argmax);
  // Each image's gradient is summed in output order by one worker.
  const int64_t per_out = g.OutPixels() * g.c;
  ctx.threads().ParallelFor(g.batch, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      C* img = dx + b * in_px * g.c;
      std::fill(img, img + in_px * g.c, C(0));
      for (int64_t i = b * per_out; i < (b + 1) * per_out; ++i) {
        C& dst = img[argmax[i]];
        dst = static_cast<C>(static_cast<A>(dst) + static_cast<A>(dy[i]));
      }
    }
  });
  return OkStatus();
}

// MaxPoolGradGrad: output element (b, p, c) is the grad of the first element of its window equal
// to orig_output there (TF compares with orig_output rather than recomputing the maximum), or 0.
template <typename C>
void MaxPoolGradGradNd(const KernelContext& ctx, const PoolGeom& g, const C* x, const C* y,
                       const C* dx, C* out) {
  const int64_t out_px = g.OutPixels(), in_px = g.InPixels();
  const int64_t window = g.d[0].k * g.d[1].k * g.d[2].k;
  ctx.threads().ParallelFor(g.batch * out_px,
                            std::max<int64_t>(1, 8192 / std::max<int64_t>(1, window * g.c)),
                            [&](int64_t begin, int64_t end) {
                              for (int64_t bp = begin; bp < end; ++bp) {
                                const int64_t b = bp / out_px, p = bp % out_px;
                                const C* img = x + b * in_px * g.c;
                                const C* grad = dx + b * in_px * g.c;
                                for (int64_t c = 0; c < g.c; ++c) {
                                  const C want = y[bp * g.c + c];
                                  C v = C(0);
                                  bool found = false;
                                  ForWindow(g, p, [&](int64_t ip) {
                                    if (!found && img[ip * g.c + c] == want) {
                                      v = grad[ip * g.c + c];
                                      found = true;
                                    }
                                  });
                                  out[bp * g.c + c] = v;
                                }
                              }
                            });
}

// MaxPoolGradWithArgmax: each grad element added at its argmax index (within its image, or
// within the whole input with include_batch_in_index); an index outside its image is an error.
template <typename C>
Status MaxPoolGradWithArgmaxNd(const KernelContext& ctx, const PoolGeom& g, bool batch_in_index,
                               const Tensor& argmax_t, const C* dy, C* dx) {
  const int64_t per_out = g.OutPixels() * g.c, per_in = g.InPixels() * g.c;
  const std::vector<int64_t> argmax = IndexValues(argmax_t);
  for (size_t i = 0; i < argmax.size(); ++i) {
    const int64_t b = static_cast<int64_t>(i) / per_out;
    const int64_t lo = batch_in_index ? b * per_in : 0;
    if (argmax[i] < lo || argmax[i] >= lo + per_in) {
      return ctx.Error("argmax[", i, "] = ", argmax[i], " is outside its image's range [", lo, ", ",
                       lo + per_in, ")");
    }
  }
  using A = Acc<C>;
  ctx.threads().ParallelFor(g.batch, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      C* img = dx + b * per_in;
      std::fill(img, img + per_in, C(0));
      const int64_t shift = batch_in_index ? b * per_in : 0;
      for (int64_t i = b * per_out; i < (b + 1) * per_out; ++i) {
        C& dst = img[argmax[i] - shift];
        dst = static_cast<C>(static_cast<A>(dst) + static_cast<A>(dy[i]));
      }
    }
  });
  return OkStatus();
}

template <PoolKind kKind, typename List>
Status ComputePoolNd(const KernelContext& ctx) {
  constexpr int spatial = SpatialOf<kKind>(), rank = spatial + 2;
  const auto& st = ctx.state<PoolState>();
  WindowSpec attrs = st.attrs;
  constexpr int window_input = WindowInput(kKind);
  if (window_input > 0) {
    for (int i : {window_input, window_input + 1}) {
      const bool ksize = i == window_input;
      const Tensor& v = ctx.input(i);
      if (v.rank() != 1) {
        return ctx.Error("input '", ksize ? "ksize" : "strides", "' must be a vector, got shape ",
                         v.shape().ToString());
      }
      KILN_RETURN_IF_ERROR(CheckWindowList(ctx, ksize ? "input 'ksize'" : "input 'strides'",
                                           IndexValues(v), spatial,
                                           ksize ? &attrs.ksize : &attrs.strides));
    }
  }
  std::vector<int64_t> in;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (IsAvgGrad(kKind) && i == 0) continue;
    if (window_input > 0 && i >= window_input) continue;
    if (ctx.input(i).rank() != rank) {
      return ctx.Error("input ", i, " must have rank ", rank, ", got shape ",
                       ctx.input(i).shape().ToString());
    }
  }
  if (IsAvgGrad(kKind)) {
    const Tensor& s = ctx.input(0);
    if (s.rank() != 1 || s.NumElements() != rank) {
      return ctx.Error("input 'orig_input_shape' must be a vector of ", rank,
                       " entries, got shape ", s.shape().ToString());
    }
    in = IndexValues(s);
  } else {
    in.assign(ctx.input(0).shape().dims().begin(), ctx.input(0).shape().dims().end());
  }
  PoolGeom g;
  Status s = MakePoolGeom(attrs, in, &g);
  if (!s.ok()) return Wrap(ctx, s);
  const std::vector<int64_t> fwd = ForwardDims(attrs, in, g.d);
  auto check_fwd = [&](int i, const char* name) -> Status {
    const auto dims = ctx.input(i).shape().dims();
    if (!std::equal(fwd.begin(), fwd.end(), dims.begin(), dims.end())) {
      return ctx.Error("input '", name, "' has shape ", ctx.input(i).shape().ToString(),
                       " but pooling the input gives ", DimsString(fwd));
    }
    return OkStatus();
  };
  if (IsMaxGrad(kKind)) {
    KILN_RETURN_IF_ERROR(check_fwd(1, "orig_output"));
    KILN_RETURN_IF_ERROR(check_fwd(2, "grad"));
  }
  if (IsAvgGrad(kKind)) KILN_RETURN_IF_ERROR(check_fwd(1, "grad"));
  if (IsGradGrad(kKind)) {
    KILN_RETURN_IF_ERROR(check_fwd(1, "orig_output"));
    if (ctx.input(2).shape() != ctx.input(0).shape()) {
      return ctx.Error("input 'grad' has shape ", ctx.input(2).shape().ToString(),
                       ", expected the shape of 'orig_input' ", ctx.input(0).shape().ToString());
    }
  }
  if (kKind == PoolKind::kMaxGradWithArgmax) {
    KILN_RETURN_IF_ERROR(check_fwd(1, "grad"));
    KILN_RETURN_IF_ERROR(check_fwd(2, "argmax"));
  }
  const bool grad = IsMaxGrad(kKind) || IsAvgGrad(kKind) || kKind == PoolKind::kMaxGradWithArgmax;
  KILN_ASSIGN_OR_RETURN(Shape out_shape, Shape::FromDims(grad ? in : fwd));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  return Dispatch<List>(st.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    C* o = MutableComputeData<T>(out);
    if constexpr (IsAvgGrad(kKind)) {
      AvgPoolGradNd<C>(ctx, g, ComputeData<T>(ctx.input(1)), o);
      return OkStatus();
    } else if constexpr (IsMaxGrad(kKind)) {
      return MaxPoolGradNd<C>(ctx, g, ComputeData<T>(ctx.input(0)), ComputeData<T>(ctx.input(2)),
                              o);
    } else if constexpr (IsGradGrad(kKind)) {
      MaxPoolGradGradNd<C>(ctx, g, ComputeData<T>(ctx.input(0)), ComputeData<T>(ctx.input(1)),
                           ComputeData<T>(ctx.input(2)), o);
      return OkStatus();
    } else if constexpr (kKind == PoolKind::kMaxGradWithArgmax) {
      return MaxPoolGradWithArgmaxNd<C>(ctx, g, st.include_batch_in_index, ctx.input(2),
                                        ComputeData<T>(ctx.input(1)), o);
    } else if constexpr (kKind == PoolKind::kAvg3D) {
      PoolForward<C, false>(ctx, g, ComputeData<T>(ctx.input(0)), o, nullptr);
      return OkStatus();
    } else if constexpr (kKind == PoolKind::kMaxWithArgmax) {
      KILN_ASSIGN_OR_RETURN(Tensor * am_t, ctx.AllocateOutput(1, out_shape));
      const int64_t n = out_shape.num_elements();
      KILN_ASSIGN_OR_RETURN(void* mem, ctx.AllocateTemp(sizeof(int64_t) * std::max<int64_t>(n, 1)));
      auto* am = static_cast<int64_t*>(mem);
      PoolForward<C, true>(ctx, g, ComputeData<T>(ctx.input(0)), o, am);
      // Indices within the image; with include_batch_in_index, within the whole input.
      const int64_t per_out = g.OutPixels() * g.c, per_in = g.InPixels() * g.c;
      for (int64_t i = 0; i < n; ++i) {
        const int64_t v = st.include_batch_in_index ? am[i] + (i / per_out) * per_in : am[i];
        if (am_t->dtype() == DType::kInt64) {
          am_t->data<int64_t>()[i] = v;
        } else {
          am_t->data<int32_t>()[i] = static_cast<int32_t>(v);
        }
      }
      return OkStatus();
    } else {
      PoolForward<C, true>(ctx, g, ComputeData<T>(ctx.input(0)), o, nullptr);
      return OkStatus();
    }
  });
}

constexpr KernelEntry kCpu[] = {
    {"AvgPool3D", ComputePoolNd<PoolKind::kAvg3D, FloatTypes>},
    {"MaxPool3D", ComputePoolNd<PoolKind::kMax3D, MaxPool3DTypes>},
    {"MaxPoolV2", ComputePoolNd<PoolKind::kMaxV2, RealTypes>},
    {"MaxPoolWithArgmax", ComputePoolNd<PoolKind::kMaxWithArgmax, RealTypes>},
    {"MaxPoolGrad", ComputePoolNd<PoolKind::kMaxGrad, RealTypes>},
    {"AvgPoolGrad", ComputePoolNd<PoolKind::kAvgGrad, FloatTypes>},
    {"MaxPoolGradV2", ComputePoolNd<PoolKind::kMaxGradV2, RealTypes>},
    {"MaxPool3DGrad", ComputePoolNd<PoolKind::kMaxGrad3D, MaxPool3DTypes>},
    {"AvgPool3DGrad", ComputePoolNd<PoolKind::kAvgGrad3D, FloatTypes>},
    {"MaxPoolGradGrad", ComputePoolNd<PoolKind::kMaxGradGrad, RealTypes>},
    {"MaxPoolGradGradV2", ComputePoolNd<PoolKind::kMaxGradGradV2, RealTypes>},
    {"MaxPool3DGradGrad", ComputePoolNd<PoolKind::kMaxGradGrad3D, MaxPool3DTypes>},
    {"MaxPoolGradWithArgmax", ComputePoolNd<PoolKind::kMaxGradWithArgmax, RealTypes>},
};

}  // namespace

std::span<const KernelEntry> PoolNdCpuKernels() { return kCpu; }

}  // namespace kiln::exec
