// The CPU kernels of the fake quantisation ops in kernels/quantize_ops.cc, in float arithmetic
// exactly as TF's kernels (FakeQuant's rounding vectorised, kernels/cpu/vector_math.h).
#include "kernels/quantize_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/cpu/vector_math.h"
#include "kernels/fake_quant.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using quantize_ops::FakeQuantState;
using quantize_ops::QdqState;

// kDivide: Vars divides by the scale where Args multiplies by its inverse (as TF).
template <bool kDivide>
void Quantize(const KernelContext& ctx, const float* in, float* out, int64_t n, const Nudged& q) {
  const float quant_zero = NudgedZero(q);
  // floor((clamp(x) - min) * inv_scale - zero + 0.5) * scale, vectorised (vector_math.h).
  ctx.threads().ParallelFor(n, 32768, [&](int64_t begin, int64_t end) {
    vmath::FakeQuant(in + begin, out + begin, end - begin, q.min, q.max, q.scale, q.inv_scale,
                     quant_zero, kDivide);
  });
}

Status ComputeFakeQuantArgs(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const auto& st = ctx.state<FakeQuantState>();
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.ForwardInputOrAllocateOutput(0, 0, x.shape()));
  Quantize<false>(ctx, x.data<float>(), out->data<float>(), x.NumElements(),
                  Nudge(st.min, st.max, st.range));
  return OkStatus();
}

Status ComputeFakeQuantVars(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& min_t = ctx.input(1);
  const Tensor& max_t = ctx.input(2);
  if (min_t.rank() != 0 || max_t.rank() != 0) {
    return ctx.Error("inputs 'min' and 'max' must be scalars, got shapes ",
                     min_t.shape().ToString(), " and ", max_t.shape().ToString());
  }
  const float min = min_t.scalar<float>(), max = max_t.scalar<float>();
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.ForwardInputOrAllocateOutput(0, 0, x.shape()));
  if (min == 0.0f && max == 0.0f) {  // TF: an empty range quantises everything to 0
    std::fill_n(out->data<float>(), out->NumElements(), 0.0f);
    return OkStatus();
  }
  Quantize<true>(ctx, x.data<float>(), out->data<float>(), x.NumElements(),
                 Nudge(min, max, ctx.state<FakeQuantState>().range));
  return OkStatus();
}

// ---- FakeQuantWithMinMaxVarsPerChannel ----------------------------------------------------

Status ComputeFakeQuantPerChannel(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& min_t = ctx.input(1);
  const Tensor& max_t = ctx.input(2);
  const int64_t depth = x.rank() > 0 ? x.dim(x.rank() - 1) : 0;
  if (x.rank() < 1 || min_t.NumElements() != depth || max_t.NumElements() != depth)
    return ctx.Error("inputs 'min' and 'max' must have one element per channel of the last ",
                     "dimension of 'inputs' (", x.shape().ToString(), "), got ",
                     min_t.shape().ToString(), " and ", max_t.shape().ToString());
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.ForwardInputOrAllocateOutput(0, 0, x.shape()));
  const float* in = x.data<float>();
  float* o = out->data<float>();
  const int64_t rows = depth == 0 ? 0 : x.NumElements() / depth;
  const QuantRange range = ctx.state<FakeQuantState>().range;
  std::vector<Nudged> nudged(static_cast<size_t>(depth));
  for (int64_t c = 0; c < depth; ++c)  // an empty range (0, 0) has no grid: its channel is 0
    if (min_t.data<float>()[c] != 0.0f || max_t.data<float>()[c] != 0.0f)
      nudged[c] = Nudge(min_t.data<float>()[c], max_t.data<float>()[c], range);
  ctx.threads().ParallelFor(
      rows, std::max<int64_t>(1, 32768 / std::max<int64_t>(depth, 1)),
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r)
          for (int64_t c = 0; c < depth; ++c) {
            const int64_t i = r * depth + c;
            if (min_t.data<float>()[c] == 0.0f && max_t.data<float>()[c] == 0.0f) {
              o[i] = 0.0f;
              continue;
            }
            const Nudged& q = nudged[c];
            const float shifted = std::max(std::min(in[i], q.max), q.min) - q.min;
            o[i] = std::fma(std::floor(shifted / q.scale + 0.5f), q.scale, q.min);
          }
      });
  return OkStatus();
}

// ---- QuantizeAndDequantizeV2 / V3 / V4 ---------------------------------------------------

// One channel: TF's ComputeQuantizationRange, then clamp (range given), scale and round.
template <typename T>
void QdqChannel(const QdqState& st, int bits, T min_range, T max_range, const T* in, T* out,
                int64_t outer, int64_t stride, int64_t inner) {
  const int64_t min_q = st.signed_input ? (st.narrow_range ? -(int64_t{1} << (bits - 1)) + 1
                                                           : -(int64_t{1} << (bits - 1)))
                                        : 0;
  const int64_t max_q = st.signed_input ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
  const T from_min = static_cast<T>(min_q) * min_range > 0 ? static_cast<T>(min_q) / min_range
                                                           : std::numeric_limits<T>::max();
  const T from_max = static_cast<T>(max_q) * max_range > 0 ? static_cast<T>(max_q) / max_range
                                                           : std::numeric_limits<T>::max();
  T scale, inverse;
  if (from_min < from_max) {
    scale = from_min;
    inverse = min_range / static_cast<T>(min_q);
    max_range = static_cast<T>(max_q) * inverse;
  } else {
    scale = from_max;
    inverse = max_range / static_cast<T>(max_q);
    min_range = static_cast<T>(min_q) * inverse;
  }
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t k = o * stride + i;
      T v = in[k];
      if (st.range_given) v = std::max(std::min(v, max_range), min_range);
      const T scaled = v * scale;
      const T rounded = st.half_up ? std::floor(scaled + T(0.5)) : std::nearbyint(scaled);
      out[k] = rounded * inverse;
    }
}

Status ComputeQdq(const KernelContext& ctx) {
  const auto& st = ctx.state<QdqState>();
  const Tensor& x = ctx.input(0);
  int bits = st.num_bits;
  if (st.bits_input) {
    if (ctx.input(3).NumElements() != 1)
      return ctx.Error("input 'num_bits' must be a scalar, got ", ctx.input(3).DebugString());
    bits = ctx.input(3).data<int32_t>()[0];
  }
  const int64_t max_bits = st.signed_input ? 63 : 62;
  if (bits < 1 || bits > max_bits || (st.signed_input && bits < 2))
    return ctx.Error("num_bits is ", bits, ", out of range for ",
                     st.signed_input ? "signed" : "unsigned", " input");
  const int axis = st.axis;
  if (axis >= x.rank()) return ctx.Error("attr 'axis' is ", axis, " for input ", x.DebugString());
  const int64_t depth = axis < 0 ? 1 : x.dim(axis);
  int64_t inner = 1;
  for (int d = axis + 1; d < x.rank() && axis >= 0; ++d) inner *= x.dim(d);
  const int64_t outer = depth == 0 || inner == 0 ? 0 : x.NumElements() / (depth * inner);
  const Tensor& min_t = ctx.input(1);
  const Tensor& max_t = ctx.input(2);
  if (st.range_given && (min_t.NumElements() != depth || max_t.NumElements() != depth))
    return ctx.Error("inputs 'input_min' and 'input_max' must have ", depth,
                     " element(s), got shapes ", min_t.shape().ToString(), " and ",
                     max_t.shape().ToString());
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  return Dispatch<TypeList<float, double>>(st.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* in = x.data<T>();
    T* o = out->data<T>();
    for (int64_t c = 0; c < depth; ++c) {
      const T* cin = in + c * inner;
      T lo, hi;
      if (st.range_given) {
        lo = min_t.data<T>()[c];
        hi = max_t.data<T>()[c];
        if (lo > hi) return ctx.Error("invalid range: input_min ", lo, " > input_max ", hi);
      } else {
        lo = std::numeric_limits<T>::max();
        hi = std::numeric_limits<T>::lowest();
        for (int64_t q = 0; q < outer; ++q)
          for (int64_t i = 0; i < inner; ++i) {
            lo = std::min(lo, cin[q * depth * inner + i]);
            hi = std::max(hi, cin[q * depth * inner + i]);
          }
      }
      QdqChannel<T>(st, bits, lo, hi, cin, o + c * inner, outer, depth * inner, inner);
    }
    return OkStatus();
  });
}

// ---- Gradients: straight-through inside the (nudged) range -------------------------------

// TF multiplies the gradient by a 0/1 mask (so a NaN gradient outside the range stays NaN) and
// sums what falls below and above the range into min's and max's gradients.
struct RangeGrad {
  float below = 0, above = 0;
};
RangeGrad MaskedGrad(const float* g, const float* in, float* out, int64_t n, int64_t stride,
                     float lo, float hi) {
  RangeGrad r;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = k * stride;
    out[i] = g[i] * (in[i] >= lo && in[i] <= hi ? 1.0f : 0.0f);
    r.below += g[i] * (in[i] < lo ? 1.0f : 0.0f);
    r.above += g[i] * (in[i] > hi ? 1.0f : 0.0f);
  }
  return r;
}

Status CheckSameShapes(const KernelContext& ctx) {
  if (ctx.input(0).shape() != ctx.input(1).shape())
    return ctx.Error("inputs 'gradients' ", ctx.input(0).shape().ToString(), " and 'inputs' ",
                     ctx.input(1).shape().ToString(), " must have the same shape");
  return OkStatus();
}

Status ComputeFakeQuantArgsGrad(const KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(CheckSameShapes(ctx));
  const auto& st = ctx.state<FakeQuantState>();
  const Nudged q = Nudge(st.min, st.max, st.range);
  const Tensor& g = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, g.shape()));
  MaskedGrad(g.data<float>(), ctx.input(1).data<float>(), out->data<float>(), g.NumElements(), 1,
             q.min, q.max);
  return OkStatus();
}

template <bool kPerChannel>
Status ComputeFakeQuantVarsGrad(const KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(CheckSameShapes(ctx));
  const Tensor& g = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& min_t = ctx.input(2);
  const Tensor& max_t = ctx.input(3);
  const int64_t depth = !kPerChannel ? 1 : (x.rank() > 0 ? x.dim(x.rank() - 1) : 0);
  if (kPerChannel && (x.rank() < 1 || x.rank() > 4 || min_t.NumElements() != depth ||
                      max_t.NumElements() != depth))
    return ctx.Error("inputs 'min' and 'max' must have one element per channel of the last ",
                     "dimension of 'inputs' (", x.shape().ToString(), ", rank 1 to 4), got ",
                     min_t.shape().ToString(), " and ", max_t.shape().ToString());
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  KILN_ASSIGN_OR_RETURN(Tensor * dmin, ctx.AllocateOutput(1, min_t.shape()));
  KILN_ASSIGN_OR_RETURN(Tensor * dmax, ctx.AllocateOutput(2, max_t.shape()));
  const int64_t rows = depth == 0 ? 0 : x.NumElements() / depth;
  const QuantRange range = ctx.state<FakeQuantState>().range;
  for (int64_t c = 0; c < depth; ++c) {
    const float lo = min_t.data<float>()[c], hi = max_t.data<float>()[c];
    const float* gc = g.data<float>() + c;
    float* oc = out->data<float>() + c;
    RangeGrad r;
    if (lo == 0.0f && hi == 0.0f) {  // no grid: everything passes to the input
      for (int64_t k = 0; k < rows; ++k) oc[k * depth] = gc[k * depth];
    } else {
      const Nudged q = Nudge(lo, hi, range);
      r = MaskedGrad(gc, x.data<float>() + c, oc, rows, depth, q.min, q.max);
    }
    dmin->data<float>()[c] = r.below;
    dmax->data<float>()[c] = r.above;
  }
  return OkStatus();
}

Status ComputeQdqGrad(const KernelContext& ctx) {
  const auto& st = ctx.state<QdqState>();
  const Tensor& g = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& min_t = ctx.input(2);
  const Tensor& max_t = ctx.input(3);
  if (g.shape() != x.shape())
    return ctx.Error("inputs 'gradients' ", g.shape().ToString(), " and 'input' ",
                     x.shape().ToString(), " must have the same shape");
  if (st.axis >= x.rank())
    return ctx.Error("attr 'axis' is ", st.axis, " for input ", x.DebugString());
  const int64_t depth = st.axis < 0 ? 1 : x.dim(st.axis);
  if (min_t.rank() > 1 || max_t.rank() > 1 || min_t.NumElements() != depth ||
      max_t.NumElements() != depth)
    return ctx.Error("inputs 'input_min' and 'input_max' must have ", depth,
                     " element(s) (a scalar or a vector), got shapes ", min_t.shape().ToString(),
                     " and ", max_t.shape().ToString());
  int64_t inner = 1;
  for (int d = st.axis + 1; d < x.rank() && st.axis >= 0; ++d) inner *= x.dim(d);
  const int64_t outer = depth == 0 || inner == 0 ? 0 : x.NumElements() / (depth * inner);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  KILN_ASSIGN_OR_RETURN(Tensor * dmin, ctx.AllocateOutput(1, min_t.shape()));
  KILN_ASSIGN_OR_RETURN(Tensor * dmax, ctx.AllocateOutput(2, max_t.shape()));
  return Dispatch<TypeList<float, double>>(st.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    for (int64_t c = 0; c < depth; ++c) {
      const T lo = min_t.data<T>()[c], hi = max_t.data<T>()[c];
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t k = (o * depth + c) * inner + i;
          const T v = x.data<T>()[k];
          out->data<T>()[k] = g.data<T>()[k] * (v >= lo && v <= hi ? T(1) : T(0));
        }
      dmin->data<T>()[c] = T(0);
      dmax->data<T>()[c] = T(0);
    }
    return OkStatus();
  });
}

constexpr KernelEntry kCpu[] = {
    {"FakeQuantWithMinMaxArgs", ComputeFakeQuantArgs},
    {"FakeQuantWithMinMaxVars", ComputeFakeQuantVars},
    {"FakeQuantWithMinMaxVarsPerChannel", ComputeFakeQuantPerChannel},
    {"QuantizeAndDequantizeV2", ComputeQdq},
    {"QuantizeAndDequantizeV3", ComputeQdq},
    {"QuantizeAndDequantizeV4", ComputeQdq},
    {"FakeQuantWithMinMaxArgsGradient", ComputeFakeQuantArgsGrad},
    {"FakeQuantWithMinMaxVarsGradient", ComputeFakeQuantVarsGrad<false>},
    {"FakeQuantWithMinMaxVarsPerChannelGradient", ComputeFakeQuantVarsGrad<true>},
    {"QuantizeAndDequantizeV4Grad", ComputeQdqGrad},
};

}  // namespace

std::span<const KernelEntry> QuantizeCpuKernels() { return kCpu; }

}  // namespace kiln::exec
