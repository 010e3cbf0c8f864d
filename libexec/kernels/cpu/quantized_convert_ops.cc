// The CPU kernels of the quantized conversions in kernels/quantized_convert_ops.cc, as TF's
// reference CPU kernels compute them (TF_ENABLE_ONEDNN_OPTS=0). Each uses the conversion TF's
// kernel uses (the scalar or the "Eigen" one, quantized_util.h), a qint32 read through float, and
// denormals flushed, so the integers are TF's (checked against TF in
// tests/tf/test_quantized_ops_tf.py).
#include "kernels/quantized_convert_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/quantized_util.h"

namespace kiln::exec {
namespace {

using quantized_convert::DequantizeState;
using quantized_convert::QType;
using quantized_convert::QuantizeState;
using quantized_convert::RangePerChannelState;
using quantized_convert::RequantizeState;

// The slices of a per-axis op: outer x depth x inner.
struct Slices {
  int64_t outer = 1, depth = 1, inner = 1;
};
Slices SlicesOf(const Shape& s, int axis) {
  Slices r;
  if (axis < 0) {
    r.inner = s.num_elements();
    return r;
  }
  r.depth = s.dim(axis);
  for (int d = 0; d < axis; ++d) r.outer *= s.dim(d);
  for (int d = axis + 1; d < s.rank(); ++d) r.inner *= s.dim(d);
  return r;
}

// float to bfloat16, rounding to nearest even.
BFloat16 ToBFloat16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (std::isnan(f)) return BFloat16{0x7fc0};
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return BFloat16{static_cast<uint16_t>(bits >> 16)};
}

// A float known to hold an integer, stored in Q as TF's casts do (qint32 through lrint, so 2^31
// wraps to -2^31).
template <typename Q>
Q StoreRounded(float v) {
  if constexpr (std::is_same_v<Q, QInt32>) {
    if (std::isnan(v)) return Q{0};
    const auto wide = static_cast<int64_t>(std::lrint(static_cast<double>(v)));
    return Q{static_cast<int32_t>(static_cast<uint32_t>(wide))};
  } else {
    using I = typename QuantTraits<Q>::Int;
    if (std::isnan(v)) return Q{0};
    const double c =
        std::clamp(static_cast<double>(v), static_cast<double>(QuantTraits<Q>::kLowest),
                   static_cast<double>(QuantTraits<Q>::kHighest));
    return Q{static_cast<I>(c)};
  }
}

// ---- QuantizeV2 ----------------------------------------------------------------------------

// One slice of QuantizeV2: the range moved to hold 0, then the mode's arithmetic.
template <typename Q>
void QuantizeSlice(const QuantizeState& st, const float* in, Q* out, const Slices& sl, int64_t c,
                   float imn, float imx, float* out_min, float* out_max) {
  using T = QuantTraits<Q>;
  float min_range = std::min(0.0f, imn);
  const float epsilon =
      std::max(1.0f, std::max(std::abs(imn), std::abs(imx))) * st.ensure_minimum_range;
  float max_range = std::max(0.0f, std::max(imx, min_range + epsilon));
  auto each = [&](auto&& f) {
    for (int64_t o = 0; o < sl.outer; ++o)
      for (int64_t i = 0; i < sl.inner; ++i) {
        const int64_t k = (o * sl.depth + c) * sl.inner + i;
        out[k] = f(in[k]);
      }
  };
  if (st.mode == 0) {  // MIN_COMBINED
    const auto scale =
        static_cast<float>((static_cast<double>(T::kHighest) - static_cast<double>(T::kLowest)) /
                           static_cast<double>(max_range - min_range));
    const auto half = static_cast<float>(
        (static_cast<double>(T::kHighest) - static_cast<double>(T::kLowest) + 1) / 2);
    each([&](float x) {
      const float t = (std::max(std::min(x, max_range), min_range) - min_range) * scale;
      if (std::isnan(t)) return Q{0};
      if constexpr (T::kLowest < 0) {
        return StoreRounded<Q>(std::round(t - half));
      } else {
        return StoreRounded<Q>(std::trunc(t + 0.5f));
      }
    });
  } else if (st.mode == 1) {  // MIN_FIRST
    const EigenQuantizer<Q> quantize(min_range, max_range);
    each([&](float x) { return quantize(x); });
  } else {  // SCALED
    const int64_t min_out_value = T::kLowest + (st.narrow_range ? 1 : 0);
    const int64_t max_out_value = T::kHighest;
    const auto min_v = static_cast<float>(min_out_value);
    const auto max_v = static_cast<float>(max_out_value);
    const float from_min =
        min_v * min_range > 0 ? min_v / min_range : std::numeric_limits<float>::max();
    const float from_max =
        max_v * max_range > 0 ? max_v / max_range : std::numeric_limits<float>::max();
    const float scale = std::min(from_min, from_max);
    min_range = FlushDenormal(min_v / scale);
    max_range = FlushDenormal(max_v / scale);
    each([&](float x) {
      const float v = std::max(std::min(x, max_range), min_range) * scale;
      return StoreRounded<Q>(st.half_to_even ? std::nearbyint(v) : std::round(v));
    });
  }
  *out_min = FlushDenormal(min_range);
  *out_max = FlushDenormal(max_range);
}

Status ComputeQuantizeV2(const KernelContext& ctx) {
  const auto& st = ctx.state<QuantizeState>();
  const Tensor& x = ctx.input(0);
  const Tensor& mins = ctx.input(1);
  const Tensor& maxs = ctx.input(2);
  int64_t slices = 1;
  if (st.axis > -1) {
    if (x.rank() <= st.axis)
      return ctx.Error("Axis is on a zero-based index, so its value must always be less than ",
                       "number of input's dims, but given axis value was ", st.axis,
                       " and input's dims was ", x.rank());
    slices = x.dim(st.axis);
    for (int i : {1, 2}) {
      const Tensor& r = ctx.input(i);
      const char* name = i == 1 ? "min_range" : "max_range";
      if (r.rank() != 1 || r.dim(0) != slices)
        return ctx.Error("If axis is specified, ", name, " must be a 1-D tensor whose size ",
                         "matches the axis dimension of the input and output tensors, got shape ",
                         r.shape().ToString(), " for an axis of size ", slices);
    }
  } else {
    for (int i : {1, 2})
      if (ctx.input(i).NumElements() != 1)
        return ctx.Error("If axis is not specified, ", i == 1 ? "min_range" : "max_range",
                         " must contain a single float element, but it contains ",
                         ctx.input(i).NumElements(), " elements");
  }
  if (slices > 1 && st.mode == 1)
    return Unimplemented("node '", ctx.node_name(),
                         "' (QuantizeV2): MIN_FIRST mode is not implemented for Quantize with "
                         "axis != -1.");
  for (int64_t c = 0; c < slices; ++c)
    if (maxs.data<float>()[c] < mins.data<float>()[c])
      return ctx.Error("input_max_range must be larger than input_min_range.");
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  const Shape range_shape = slices > 1 ? mins.shape() : Shape{};
  KILN_ASSIGN_OR_RETURN(Tensor * out_min, ctx.AllocateOutput(1, range_shape));
  KILN_ASSIGN_OR_RETURN(Tensor * out_max, ctx.AllocateOutput(2, range_shape));
  const Slices sl = SlicesOf(x.shape(), slices > 1 ? st.axis : -1);
  return Dispatch<QType>(st.type, [&](auto tag) -> Status {
    using Q = typename decltype(tag)::type;
    for (int64_t c = 0; c < slices; ++c)
      QuantizeSlice<Q>(st, x.data<float>(), out->data<Q>(), sl, c, mins.data<float>()[c],
                       maxs.data<float>()[c], &out_min->data<float>()[c],
                       &out_max->data<float>()[c]);
    return OkStatus();
  });
}

// ---- Dequantize ----------------------------------------------------------------------------

template <typename Q>
float DequantizeOne(const DequantizeState& st, Q q, float mn, float mx, bool per_tensor) {
  using T = QuantTraits<Q>;
  if (st.mode == 0) {
    const float levels = static_cast<float>(T::kHighest) - static_cast<float>(T::kLowest);
    const float scale = (mx - mn) / levels;
    const float half = T::kLowest == 0 ? 0.0f : (levels + 1.0f) / 2.0f;
    return (static_cast<float>(QuantizedValue(q)) + half) * scale + mn;
  }
  if (st.mode == 1) return EigenDequantizer<Q>(mn, mx)(q);
  const int64_t min_out_value = T::kLowest + (st.narrow_range ? 1 : 0);
  const float scale = T::kLowest == 0 ? mx / static_cast<float>(T::kHighest)
                                      : std::max(mn / static_cast<float>(min_out_value),
                                                 mx / static_cast<float>(T::kHighest));
  auto qf = static_cast<float>(QuantizedValue(q));
  // The per-tensor path reads a qint32 as int through float: 2^31 wraps to -2^31.
  if (std::is_same_v<Q, QInt32> && per_tensor && qf >= 2147483648.0f) qf = -2147483648.0f;
  return qf * scale;
}

Status ComputeDequantize(const KernelContext& ctx) {
  const auto& st = ctx.state<DequantizeState>();
  const Tensor& x = ctx.input(0);
  if (st.axis >= x.rank() && st.axis >= 0)
    return ctx.Error("Axis must be less than input dimension(", x.rank(), "), got ", st.axis);
  const int64_t slices = st.axis > -1 ? x.dim(st.axis) : 1;
  for (int i : {1, 2})
    if (ctx.input(i).NumElements() != slices)
      return ctx.Error(i == 1 ? "input_min_tensor" : "input_max_tensor",
                       " must have as many elements as input on the dequantization axis (", st.axis,
                       "), got ", ctx.input(i).NumElements(), ", expected ", slices);
  if (slices > 1 && st.mode == 1)
    return Unimplemented("node '", ctx.node_name(),
                         "' (Dequantize): MIN_FIRST mode is not implemented for Dequantize with "
                         "axis != -1.");
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  const Slices sl = SlicesOf(x.shape(), slices > 1 ? st.axis : -1);
  return Dispatch<QType>(st.type, [&](auto tag) -> Status {
    using Q = typename decltype(tag)::type;
    const Q* in = x.data<Q>();
    for (int64_t c = 0; c < slices; ++c) {
      const float mn = ctx.input(1).data<float>()[c], mx = ctx.input(2).data<float>()[c];
      for (int64_t o = 0; o < sl.outer; ++o)
        for (int64_t i = 0; i < sl.inner; ++i) {
          const int64_t k = (o * sl.depth + c) * sl.inner + i;
          const float v = DequantizeOne<Q>(st, in[k], mn, mx, slices == 1);
          if (st.out == DType::kFloat) {
            out->data<float>()[k] = v;
          } else {
            out->data<BFloat16>()[k] = ToBFloat16(v);
          }
        }
    }
    return OkStatus();
  });
}

// ---- Requantize, RequantizationRange, QuantizeDownAndShrinkRange ---------------------------

// TF's fixed-point qint32 -> quint8 requantizer (RequantizeManyInNewRangeReference).
void Requantize32To8(const QInt32* in, int64_t n, float min_in, float max_in, float min_out,
                     float max_out, QUInt8* out) {
  constexpr int kShift = 16;
  const float input_range = max_in - min_in;
  const float output_range = max_out - min_out;
  const float recip_output_range =
      output_range == 0.0f ? 0.0f : static_cast<float>(255.0 / output_range);
  const auto input_rezero = static_cast<float>((min_in + max_in) / 2.0);
  const int64_t range_scale_fp =
      output_range == 0.0f
          ? 0
          : static_cast<int64_t>(255.0 * (1 << kShift) * input_range / output_range);
  const auto input_offset_fp =
      static_cast<int64_t>(input_rezero * recip_output_range * static_cast<float>(1 << kShift));
  const int64_t output_offset_fp =
      output_range == 0.0f ? 0 : std::lround((1 << kShift) * (min_out * 255.0) / output_range);
  const int64_t delta = input_offset_fp - output_offset_fp + (1 << (kShift - 1));
  for (int64_t i = 0; i < n; ++i) {
    const auto v = static_cast<int64_t>(static_cast<float>(in[i].value));
    // int64 products wrap in TF; do the same without overflow.
    const auto prod =
        static_cast<int64_t>(static_cast<uint64_t>(v) * static_cast<uint64_t>(range_scale_fp));
    const int64_t fp = (prod >> 32) + delta;
    out[i].value = static_cast<uint8_t>(std::clamp<int64_t>(fp >> kShift, 0, 255));
  }
}

template <typename Out>
void RequantizeMany(const QInt32* in, int64_t n, float min_in, float max_in, float min_out,
                    float max_out, Out* out) {
  if constexpr (std::is_same_v<Out, QUInt8>) {
    Requantize32To8(in, n, min_in, max_in, min_out, max_out, out);
  } else {
    const EigenDequantizer<QInt32> dq(min_in, max_in);
    const EigenQuantizer<Out> q(min_out, max_out);
    for (int64_t i = 0; i < n; ++i) out[i] = q(dq(in[i]));
  }
}

Status ComputeRequantize(const KernelContext& ctx) {
  const auto& st = ctx.state<RequantizeState>();
  static constexpr std::string_view kNames[] = {"input_min", "input_max", "requested_output_min",
                                                "requested_output_max"};
  for (int i = 1; i < 5; ++i) KILN_RETURN_IF_ERROR(ExpectScalarInput(ctx, i, kNames[i - 1]));
  const float min_in = ScalarFloat(ctx.input(1)), max_in = ScalarFloat(ctx.input(2));
  const float min_out = ScalarFloat(ctx.input(3)), max_out = ScalarFloat(ctx.input(4));
  if (min_out > 0.0f) return ctx.Error("requested_output_min must be <= 0, but got ", min_out);
  if (max_out < min_out)
    return ctx.Error("requested_output_max must be >= requested_output_min, but got ", max_out,
                     " and ", min_out);
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  if (st.out == DType::kQUInt8) {
    RequantizeMany(x.data<QInt32>(), x.NumElements(), min_in, max_in, min_out, max_out,
                   out->data<QUInt8>());
  } else {
    RequantizeMany(x.data<QInt32>(), x.NumElements(), min_in, max_in, min_out, max_out,
                   out->data<QInt8>());
  }
  KILN_ASSIGN_OR_RETURN(Tensor * mn, ctx.AllocateOutput(1, Shape{}));
  KILN_ASSIGN_OR_RETURN(Tensor * mx, ctx.AllocateOutput(2, Shape{}));
  mn->data<float>()[0] = min_out;
  mx->data<float>()[0] = max_out;
  return OkStatus();
}

// The float range a qint32 tensor's values actually use (min at most 0).
void ActualRange(const Tensor& x, float min_in, float max_in, float* mn, float* mx) {
  int32_t lo = std::numeric_limits<int32_t>::max(), hi = std::numeric_limits<int32_t>::min();
  for (const QInt32& q : std::span(x.data<QInt32>(), static_cast<size_t>(x.NumElements()))) {
    lo = std::min(lo, q.value);
    hi = std::max(hi, q.value);
  }
  *mn = std::min(0.0f, QuantizedToFloat(QInt32{lo}, min_in, max_in));
  *mx = QuantizedToFloat(QInt32{hi}, min_in, max_in);
}

Status ComputeRequantizationRange(const KernelContext& ctx) {
  if (ctx.input(1).NumElements() == 0) return ctx.Error("Input min must not be empty.");
  if (ctx.input(2).NumElements() == 0) return ctx.Error("Input max must not be empty.");
  float mn, mx;
  ActualRange(ctx.input(0), ScalarFloat(ctx.input(1)), ScalarFloat(ctx.input(2)), &mn, &mx);
  KILN_ASSIGN_OR_RETURN(Tensor * a, ctx.AllocateOutput(0, Shape{}));
  KILN_ASSIGN_OR_RETURN(Tensor * b, ctx.AllocateOutput(1, Shape{}));
  a->data<float>()[0] = mn;
  b->data<float>()[0] = mx;
  return OkStatus();
}

Status ComputeQuantizeDownAndShrinkRange(const KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(ExpectScalarInput(ctx, 1, "input_min"));
  KILN_RETURN_IF_ERROR(ExpectScalarInput(ctx, 2, "input_max"));
  const Tensor& x = ctx.input(0);
  const float min_in = ScalarFloat(ctx.input(1)), max_in = ScalarFloat(ctx.input(2));
  float mn, mx;
  ActualRange(x, min_in, max_in, &mn, &mx);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  Requantize32To8(x.data<QInt32>(), x.NumElements(), min_in, max_in, mn, mx, out->data<QUInt8>());
  KILN_ASSIGN_OR_RETURN(Tensor * a, ctx.AllocateOutput(1, Shape{}));
  KILN_ASSIGN_OR_RETURN(Tensor * b, ctx.AllocateOutput(2, Shape{}));
  a->data<float>()[0] = mn;
  b->data<float>()[0] = mx;
  return OkStatus();
}

// Per channel (the last dim), as TF's oneDNN kernels: no zero point, symmetric ranges.
Status ComputeRequantizePerChannel(const KernelContext& ctx) {
  const auto& st = ctx.state<RequantizeState>();
  const Tensor& x = ctx.input(0);
  const Tensor& mins = ctx.input(1);
  const Tensor& maxs = ctx.input(2);
  const int64_t depth = mins.NumElements();
  if (x.rank() < 1 || x.dim(x.rank() - 1) != depth)
    return ctx.Error("input's last dimension must match input_min's ", depth,
                     " channels, got input shape ", x.shape().ToString());
  if (maxs.NumElements() != depth)
    return ctx.Error("input_max has incorrect size, expected ", depth, " was ", maxs.NumElements());
  KILN_RETURN_IF_ERROR(ExpectOneElementInput(ctx, 3, "requested_output_min"));
  KILN_RETURN_IF_ERROR(ExpectOneElementInput(ctx, 4, "requested_output_max"));
  const float req_min = ScalarFloat(ctx.input(3)), req_max = ScalarFloat(ctx.input(4));
  const bool s8 = st.out == DType::kQInt8;
  if (s8 && req_min >= 0)
    return ctx.Error("If out_type is QINT8, requested_output_min must be negative, got ", req_min);
  const float factor = s8 ? 127.0f : 255.0f;
  const float requested = std::max(std::abs(req_min), std::abs(req_max));
  std::vector<float> scales(static_cast<size_t>(depth));
  for (int64_t c = 0; c < depth; ++c) {
    const float range = std::max(std::abs(mins.data<float>()[c]), std::abs(maxs.data<float>()[c]));
    scales[c] = factor * (range / requested / static_cast<float>(int64_t{1} << 31));
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  const int64_t lo = s8 ? -128 : 0, hi = s8 ? 127 : 255;
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    const float v = static_cast<float>(x.data<QInt32>()[i].value) * scales[i % depth];
    const auto q = static_cast<int64_t>(std::clamp(
        std::nearbyint(static_cast<double>(v)), static_cast<double>(lo), static_cast<double>(hi)));
    if (s8) {
      out->data<QInt8>()[i].value = static_cast<int8_t>(q);
    } else {
      out->data<QUInt8>()[i].value = static_cast<uint8_t>(q);
    }
  }
  KILN_ASSIGN_OR_RETURN(Tensor * a, ctx.AllocateOutput(1, Shape{}));
  KILN_ASSIGN_OR_RETURN(Tensor * b, ctx.AllocateOutput(2, Shape{}));
  a->data<float>()[0] = req_min;
  b->data<float>()[0] = req_max;
  return OkStatus();
}

Status ComputeRequantizationRangePerChannel(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& mins = ctx.input(1);
  const Tensor& maxs = ctx.input(2);
  const int64_t depth = mins.NumElements();
  if (maxs.NumElements() != depth)
    return ctx.Error("input_min must have the same number of elements as input_max, got ", depth,
                     " and ", maxs.NumElements());
  if (x.NumElements() == 0) return ctx.Error("input must not be empty");
  if (x.rank() != 4) return ctx.Error("input must be in NHWC format");
  if (x.dim(3) != depth)
    return ctx.Error("input must have same number of channels as length of input_min: ", x.dim(3),
                     " vs ", depth);
  float out_range = std::numeric_limits<float>::min();
  bool non_negative = true;
  const float clip = ctx.state<RangePerChannelState>().clip;
  for (int64_t c = 0; c < depth; ++c) {
    int32_t lo = std::numeric_limits<int32_t>::max(), hi = std::numeric_limits<int32_t>::min();
    for (int64_t i = c; i < x.NumElements(); i += depth) {
      lo = std::min(lo, x.data<QInt32>()[i].value);
      hi = std::max(hi, x.data<QInt32>()[i].value);
    }
    const int64_t abs_max = std::max(std::abs(int64_t{lo}), std::abs(int64_t{hi}));
    const float scale = std::max(std::abs(mins.data<float>()[c]), std::abs(maxs.data<float>()[c]));
    const float range = scale *
                        static_cast<float>(static_cast<int32_t>(
                            std::min<int64_t>(abs_max, std::numeric_limits<int32_t>::max()))) /
                        static_cast<float>(int64_t{1} << 31);
    if (lo < 0) non_negative = false;
    out_range = std::max(out_range, range);
    if (out_range > clip) out_range = clip;
  }
  KILN_ASSIGN_OR_RETURN(Tensor * a, ctx.AllocateOutput(0, Shape{}));
  KILN_ASSIGN_OR_RETURN(Tensor * b, ctx.AllocateOutput(1, Shape{}));
  a->data<float>()[0] = non_negative ? 0.0f : -out_range;
  b->data<float>()[0] = out_range;
  return OkStatus();
}

constexpr KernelEntry kCpu[] = {
    {"QuantizeV2", ComputeQuantizeV2},
    {"Dequantize", ComputeDequantize},
    {"Requantize", ComputeRequantize},
    {"RequantizePerChannel", ComputeRequantizePerChannel},
    {"QuantizeDownAndShrinkRange", ComputeQuantizeDownAndShrinkRange},
    {"RequantizationRange", ComputeRequantizationRange},
    {"RequantizationRangePerChannel", ComputeRequantizationRangePerChannel},
};

}  // namespace

std::span<const KernelEntry> QuantizedConvertCpuKernels() { return kCpu; }

}  // namespace kiln::exec
