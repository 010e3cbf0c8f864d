// The CPU kernels of the ops in kernels/norm_ops.cc. The statistics follow TensorFlow's CPU
// kernel (fused_batch_norm_op.cc): training normalises with the biased batch variance, reports
// the running variance with Bessel's correction (n / (n - 1)) blended by exponential_avg_factor,
// and keeps the batch mean and biased variance in reserve_space_1/2; V3's reserve_space_3 is a
// scalar 0. Where TF's CPU kernel leaves reserve_space_1/2 unwritten (inference) we give the
// mean and variance inputs, the values its gradient then reads. Channel sums run in double over
// one fixed order, so results do not depend on the thread count. Half and bfloat16 compute in
// float (U is float).
#include "kernels/norm_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using norm_ops::BatchNormState;
using norm_ops::LrnState;

// x viewed as [outer, channels, inner]: channels-last has inner 1, channels-first outer = batch.
struct ChannelView {
  int64_t outer = 0, c = 0, inner = 0;
  int64_t Rest() const { return outer * inner; }  // elements per channel
};

ChannelView ViewOf(const Shape& s, bool channels_first) {
  ChannelView v;
  const int ch = channels_first ? 1 : s.rank() - 1;
  v.c = s.dim(ch);
  v.outer = 1;
  v.inner = 1;
  for (int i = 0; i < ch; ++i) v.outer *= s.dim(i);
  for (int i = ch + 1; i < s.rank(); ++i) v.inner *= s.dim(i);
  return v;
}

// Calls f(c) for every channel, channels split across threads; each channel is visited by one
// thread, so per-channel sums have one order.
template <typename F>
void ForChannels(const KernelContext& ctx, const ChannelView& v, F f) {
  ctx.threads().ParallelFor(v.c, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, v.Rest())),
                            [&](int64_t b, int64_t e) {
                              for (int64_t c = b; c < e; ++c) f(c);
                            });
}

// Calls g(index) for every element of channel c in memory order.
template <typename G>
inline void ForChannelElems(const ChannelView& v, int64_t c, G g) {
  for (int64_t o = 0; o < v.outer; ++o) {
    const int64_t base = (o * v.c + c) * v.inner;
    for (int64_t i = 0; i < v.inner; ++i) g(base + i);
  }
}

// ---- FusedBatchNorm ------------------------------------------------------------------------

Status ComputeFusedBatchNorm(const KernelContext& ctx) {
  const auto& st = ctx.state<BatchNormState>();
  const Tensor& x = ctx.input(0);
  if (x.rank() != 4 && !(st.version == 3 && x.rank() == 5)) {
    return ctx.Error("input 'x' must be ",
                     st.version == 3 ? "4- or 5-dimensional" : "4-dimensional", ", got shape ",
                     x.shape().ToString());
  }
  const ChannelView v = ViewOf(x.shape(), st.channels_first);
  const bool check_stats = !st.training || st.avg_factor != 1.0f;
  static constexpr const char* kNames[] = {"scale", "offset", "mean", "variance"};
  for (int i = 1; i < (check_stats ? 5 : 3); ++i) {
    const Tensor& t = ctx.input(i);
    if (t.rank() != 1 || t.dim(0) != v.c) {
      return ctx.Error("input '", kNames[i - 1], "' must have one element per channel of x (", v.c,
                       "), got shape ", t.shape().ToString());
    }
  }
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x.shape()));
  float* outs[4];
  for (int i = 0; i < 4; ++i) {
    KILN_ASSIGN_OR_RETURN(Tensor * o, ctx.AllocateOutput(1 + i, Shape{v.c}));
    outs[i] = o->data<float>();
  }
  if (st.version == 3) {
    KILN_ASSIGN_OR_RETURN(Tensor * r3, ctx.AllocateOutput(5, Shape{}));
    r3->data<float>()[0] = 0.0f;
  }
  float* batch_mean = outs[0];
  float* batch_var = outs[1];
  float* saved_mean = outs[2];
  float* saved_var = outs[3];
  const float* scale = ctx.input(1).data<float>();
  const float* offset = ctx.input(2).data<float>();
  const float* est_mean = ctx.input(3).data<float>();
  const float* est_var = ctx.input(4).data<float>();
  const int64_t rest = v.Rest();
  if (x.NumElements() == 0) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::fill(batch_mean, batch_mean + v.c, nan);
    std::fill(batch_var, batch_var + v.c, nan);
    std::fill(saved_mean, saved_mean + v.c, nan);
    std::fill(saved_var, saved_var + v.c, nan);
    return OkStatus();
  }
  return Dispatch<TypeList<float, Half, BFloat16>>(st.t, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* xp = ComputeData<T>(x);
    C* yp = MutableComputeData<T>(y);
    const float eps = st.epsilon, factor = st.avg_factor;
    ForChannels(ctx, v, [&](int64_t c) {
      float mean, var;
      if (st.training) {
        double sum = 0;
        ForChannelElems(v, c, [&](int64_t i) { sum += static_cast<float>(xp[i]); });
        mean = static_cast<float>(sum / static_cast<double>(rest));
        double sq = 0;
        ForChannelElems(v, c, [&](int64_t i) {
          const double d = static_cast<double>(static_cast<float>(xp[i])) - mean;
          sq += d * d;
        });
        var = static_cast<float>(sq / static_cast<double>(rest));
        const float adjust = static_cast<float>(rest) / static_cast<float>(rest > 1 ? rest - 1 : 1);
        saved_mean[c] = mean;
        saved_var[c] = var;
        if (factor == 1.0f) {
          batch_mean[c] = mean;
          batch_var[c] = var * adjust;
        } else {
          const float keep = 1.0f - factor;
          batch_mean[c] = keep * est_mean[c] + factor * mean;
          batch_var[c] = keep * est_var[c] + (factor * adjust) * var;
        }
      } else {
        mean = est_mean[c];
        var = est_var[c];
        batch_mean[c] = saved_mean[c] = mean;
        batch_var[c] = saved_var[c] = var;
      }
      const float k = scale[c] / std::sqrt(var + eps);
      const float shift = offset[c];
      ForChannelElems(v, c, [&](int64_t i) {
        yp[i] = static_cast<C>((static_cast<float>(xp[i]) - mean) * k + shift);
      });
    });
    return OkStatus();
  });
}

// ---- FusedBatchNormGradV3 -------------------------------------------------------------------

Status ComputeFusedBatchNormGrad(const KernelContext& ctx) {
  const auto& st = ctx.state<BatchNormState>();
  const Tensor& dy = ctx.input(0);
  const Tensor& x = ctx.input(1);
  if (x.rank() != 4 && x.rank() != 5) {
    return ctx.Error("input 'x' must be 4- or 5-dimensional, got shape ", x.shape().ToString());
  }
  if (dy.shape() != x.shape()) {
    return ctx.Error("inputs 'x' and 'y_backprop' must have the same shape, got ",
                     x.shape().ToString(), " and ", dy.shape().ToString());
  }
  const ChannelView v = ViewOf(x.shape(), st.channels_first);
  static constexpr const char* kNames[] = {"scale", "reserve_space_1", "reserve_space_2"};
  for (int i = 2; i < 5; ++i) {
    const Tensor& t = ctx.input(i);
    if (t.rank() != 1 || t.dim(0) != v.c) {
      return ctx.Error("input '", kNames[i - 2], "' must have one element per channel of x (", v.c,
                       "), got shape ", t.shape().ToString());
    }
  }
  KILN_ASSIGN_OR_RETURN(Tensor * dx, ctx.AllocateOutput(0, x.shape()));
  KILN_ASSIGN_OR_RETURN(Tensor * dscale_t, ctx.AllocateOutput(1, Shape{v.c}));
  KILN_ASSIGN_OR_RETURN(Tensor * doffset_t, ctx.AllocateOutput(2, Shape{v.c}));
  KILN_RETURN_IF_ERROR(ctx.AllocateOutput(3, Shape{0}).status());
  KILN_RETURN_IF_ERROR(ctx.AllocateOutput(4, Shape{0}).status());
  float* dscale = dscale_t->data<float>();
  float* doffset = doffset_t->data<float>();
  if (x.NumElements() == 0) {
    std::fill(dscale, dscale + v.c, 0.0f);
    std::fill(doffset, doffset + v.c, 0.0f);
    return OkStatus();
  }
  const float* scale = ctx.input(2).data<float>();
  const float* mean = ctx.input(3).data<float>();
  const float* var = ctx.input(4).data<float>();
  const double rest = static_cast<double>(v.Rest());
  return Dispatch<TypeList<float, Half, BFloat16>>(st.t, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* dyp = ComputeData<T>(dy);
    const C* xp = ComputeData<T>(x);
    C* dxp = MutableComputeData<T>(dx);
    ForChannels(ctx, v, [&](int64_t c) {
      const float m = mean[c];
      const float inv = 1.0f / std::sqrt(var[c] + st.epsilon);
      double sum_dy = 0, sum_dy_xc = 0;
      ForChannelElems(v, c, [&](int64_t i) {
        const double g = static_cast<float>(dyp[i]);
        sum_dy += g;
        sum_dy_xc += g * (static_cast<double>(static_cast<float>(xp[i])) - m);
      });
      doffset[c] = static_cast<float>(sum_dy);
      dscale[c] = static_cast<float>(sum_dy_xc * inv);
      const float k = scale[c] * inv;
      if (st.training) {
        // x_backprop = scale * inv * (dy - mean(dy) - (x - mean) * inv^2 * mean(dy * (x - mean)))
        const float dy_mean = static_cast<float>(sum_dy / rest);
        const float coef2 = inv * inv * static_cast<float>(sum_dy_xc / rest);
        ForChannelElems(v, c, [&](int64_t i) {
          const float xc = static_cast<float>(xp[i]) - m;
          dxp[i] = static_cast<C>(k * (static_cast<float>(dyp[i]) - dy_mean - xc * coef2));
        });
      } else {
        ForChannelElems(
            v, c, [&](int64_t i) { dxp[i] = static_cast<C>(static_cast<float>(dyp[i]) * k); });
      }
    });
    return OkStatus();
  });
}

// ---- LRN -----------------------------------------------------------------------------------

Status ComputeLrn(const KernelContext& ctx) {
  const auto& st = ctx.state<LrnState>();
  const Tensor& x = ctx.input(0);
  if (x.rank() != 4)
    return ctx.Error("input must be 4-dimensional, got shape ", x.shape().ToString());
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  const int64_t depth = x.dim(3), rows = depth == 0 ? 0 : x.NumElements() / depth;
  return Dispatch<TypeList<float, Half, BFloat16>>(x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* in = ComputeData<T>(x);
    C* o = MutableComputeData<T>(out);
    ctx.threads().ParallelFor(rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(depth, 1)),
                              [&](int64_t b, int64_t e) {
                                for (int64_t r = b; r < e; ++r) {
                                  const C* row = in + r * depth;
                                  C* orow = o + r * depth;
                                  for (int64_t d = 0; d < depth; ++d) {
                                    const int64_t lo = std::max<int64_t>(0, d - st.radius);
                                    const int64_t hi = std::min(depth, d + st.radius + 1);
                                    float sq = 0;
                                    for (int64_t j = lo; j < hi; ++j) {
                                      const float val = static_cast<float>(row[j]);
                                      sq += val * val;
                                    }
                                    const float denom = std::pow(st.bias + st.alpha * sq, st.beta);
                                    orow[d] = static_cast<C>(static_cast<float>(row[d]) / denom);
                                  }
                                }
                              });
    return OkStatus();
  });
}

// ---- LRNGrad -------------------------------------------------------------------------------

// TF's CPU gradient: for each output i, its window's inputs k get
// -2 alpha beta x_k y_i g_i / n_i, and k = i also n_i^-beta g_i (n_i = bias + alpha sum x^2).
Status ComputeLrnGrad(const KernelContext& ctx) {
  const auto& st = ctx.state<LrnState>();
  const Tensor& g = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  if (x.rank() != 4 || g.shape() != x.shape() || y.shape() != x.shape()) {
    return ctx.Error("input_grads, input_image and output_image must be 4-D and of one shape, got ",
                     g.shape().ToString(), ", ", x.shape().ToString(), " and ",
                     y.shape().ToString());
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  const int64_t depth = x.dim(3), rows = depth == 0 ? 0 : x.NumElements() / depth;
  return Dispatch<TypeList<float, Half, BFloat16>>(x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* gp = ComputeData<T>(g);
    const C* xp = ComputeData<T>(x);
    const C* yp = ComputeData<T>(y);
    C* o = MutableComputeData<T>(out);
    ctx.threads().ParallelFor(
        rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(depth, 1)), [&](int64_t b, int64_t e) {
          std::vector<float> acc(depth);
          for (int64_t r = b; r < e; ++r) {
            const int64_t base = r * depth;
            std::fill(acc.begin(), acc.end(), 0.0f);
            for (int64_t i = 0; i < depth; ++i) {
              const int64_t lo = std::max<int64_t>(0, i - st.radius);
              const int64_t hi = std::min(depth, i + st.radius + 1);
              float norm = 0;
              for (int64_t j = lo; j < hi; ++j) {
                const float v = static_cast<float>(xp[base + j]);
                norm += v * v;
              }
              norm = st.alpha * norm + st.bias;
              const float gi = static_cast<float>(gp[base + i]);
              const float yi = static_cast<float>(yp[base + i]);
              for (int64_t k = lo; k < hi; ++k) {
                float d =
                    -2.0f * st.alpha * st.beta * static_cast<float>(xp[base + k]) * yi * gi / norm;
                if (k == i) d += std::pow(norm, -st.beta) * gi;
                acc[k] += d;
              }
            }
            for (int64_t k = 0; k < depth; ++k) o[base + k] = static_cast<C>(acc[k]);
          }
        });
    return OkStatus();
  });
}

constexpr KernelEntry kCpu[] = {
    {"FusedBatchNorm", ComputeFusedBatchNorm},
    {"FusedBatchNormV2", ComputeFusedBatchNorm},
    {"FusedBatchNormV3", ComputeFusedBatchNorm},
    {"FusedBatchNormGrad", ComputeFusedBatchNormGrad},
    {"FusedBatchNormGradV2", ComputeFusedBatchNormGrad},
    {"FusedBatchNormGradV3", ComputeFusedBatchNormGrad},
    {"LRN", ComputeLrn},
    {"LRNGrad", ComputeLrnGrad},
};

}  // namespace

std::span<const KernelEntry> NormCpuKernels() { return kCpu; }

}  // namespace kiln::exec
