// TensorFlow's quantized tensors (qint8, quint8, qint16, quint16, qint32, each with a float
// range beside it), as TF's reference CPU kernels compute them (TF_ENABLE_ONEDNN_OPTS=0):
//  - QuantizeV2 and Dequantize (modes MIN_COMBINED, MIN_FIRST, SCALED; per tensor or per `axis`
//    slice; HALF_AWAY_FROM_ZERO or HALF_TO_EVEN), Requantize, RequantizationRange,
//    QuantizeDownAndShrinkRange, and the oneDNN build's RequantizePerChannel and
//    RequantizationRangePerChannel;
//  - QuantizedRelu, QuantizedRelu6, QuantizedBiasAdd, QuantizedAdd, QuantizedMul,
//    QuantizedConcat (QuantizedConcatV2 as oneDNN's build runs it), QuantizedMaxPool,
//    QuantizedAvgPool, QuantizedResizeBilinear (its fixed-point lerp),
//    QuantizedBatchNormWithGlobalNormalization (its qint32 fixed point) and
//    QuantizedInstanceNorm.
// Each uses the conversion TF's kernel uses (the scalar or the "Eigen" one, quantized_util.h),
// a qint32 read through float, and denormals flushed, so the integers are TF's (checked against
// TF in tests/tf/test_quantized_ops_tf.py). QuantizedReshape lives with Reshape (shape_ops.cc).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/op_families.h"
#include "kernels/quantized_util.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

using QType = QuantizedTypes;

Status ExpectScalar(const KernelContext& ctx, int i, std::string_view name) {
  if (ctx.input(i).rank() != 0)
    return ctx.Error("`", name, "` must be rank 0 but is rank ", ctx.input(i).rank());
  return OkStatus();
}

Status ExpectOneElement(const KernelContext& ctx, int i, std::string_view name) {
  if (ctx.input(i).NumElements() != 1)
    return ctx.Error(name, " must have 1 element, got shape ", ctx.input(i).shape().ToString());
  return OkStatus();
}

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

Status ReadMode(const PrepareContext& ctx, int* mode) {
  KILN_PREPARE_ASSIGN(ctx, std::string m, ctx.attrs.GetString("mode", "MIN_COMBINED"));
  if (m == "MIN_COMBINED") {
    *mode = 0;
  } else if (m == "MIN_FIRST") {
    *mode = 1;
  } else if (m == "SCALED") {
    *mode = 2;
  } else {
    return ctx.Error("Mode string must be 'MIN_COMBINED', 'MIN_FIRST', or 'SCALED', is '", m, "'");
  }
  return OkStatus();
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

struct QuantizeState : OpState {
  DType type = DType::kQUInt8;
  int mode = 0;
  bool half_to_even = false, narrow_range = false;
  int axis = -1;
  float ensure_minimum_range = 0.01f;
};

Status PrepareQuantizeV2(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  auto st = std::make_shared<QuantizeState>();
  KILN_PREPARE_ASSIGN(ctx, st->type, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->type, QType::kDTypes));
  for (int i = 0; i < 3; ++i)
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i,
                                          i == 0   ? "input"
                                          : i == 1 ? "min_range"
                                                   : "max_range",
                                          DType::kFloat));
  KILN_RETURN_IF_ERROR(ReadMode(ctx, &st->mode));
  KILN_PREPARE_ASSIGN(ctx, std::string round,
                      ctx.attrs.GetString("round_mode", "HALF_AWAY_FROM_ZERO"));
  if (round != "HALF_AWAY_FROM_ZERO" && round != "HALF_TO_EVEN")
    return ctx.Error("Round mode string must be 'HALF_AWAY_FROM_ZERO' or 'HALF_TO_EVEN', is '",
                     round, "'");
  st->half_to_even = round == "HALF_TO_EVEN";
  if (st->half_to_even && st->mode != 2)
    return ctx.Error("Round mode 'HALF_TO_EVEN' only supported for mode 'SCALED', but mode is '",
                     st->mode == 0 ? "MIN_COMBINED" : "MIN_FIRST", "'.");
  KILN_PREPARE_ASSIGN(ctx, st->narrow_range, ctx.attrs.GetBool("narrow_range", false));
  KILN_PREPARE_ASSIGN(ctx, int64_t axis, ctx.attrs.GetInt("axis", -1));
  st->axis = static_cast<int>(axis);
  KILN_PREPARE_ASSIGN(ctx, st->ensure_minimum_range,
                      ctx.attrs.GetFloat("ensure_minimum_range", 0.01f));
  const PartialShape& x = ctx.inputs[0].shape;
  PartialShape range{};
  if (st->axis >= 0) {
    if (x.unknown_rank() || x.dim(st->axis) < 0) {
      range = PartialShape::UnknownRank();
    } else if (x.dim(st->axis) != 1) {
      range = PartialShape{x.dim(st->axis)};
    }
  }
  ctx.outputs = {TensorSpec{st->type, x}, TensorSpec{DType::kFloat, range},
                 TensorSpec{DType::kFloat, range}};
  ctx.state = std::move(st);
  return OkStatus();
}

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

struct DequantizeState : OpState {
  DType type = DType::kQUInt8, out = DType::kFloat;
  int mode = 0;
  bool narrow_range = false;
  int axis = -1;
};

Status PrepareDequantize(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  auto st = std::make_shared<DequantizeState>();
  KILN_PREPARE_ASSIGN(ctx, st->type, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->type, QType::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", st->type));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "min_range", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "max_range", DType::kFloat));
  KILN_RETURN_IF_ERROR(ReadMode(ctx, &st->mode));
  KILN_PREPARE_ASSIGN(ctx, st->out, ctx.attrs.GetType("dtype", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "dtype", st->out, {DType::kFloat, DType::kBFloat16}));
  if (st->out == DType::kBFloat16 && st->mode != 0)
    return ctx.Error("When output type is bfloat16, Mode string must be 'MIN_COMBINED'");
  KILN_PREPARE_ASSIGN(ctx, st->narrow_range, ctx.attrs.GetBool("narrow_range", false));
  KILN_PREPARE_ASSIGN(ctx, int64_t axis, ctx.attrs.GetInt("axis", -1));
  if (axis < -1) return ctx.Error("axis should be at least -1, got ", axis);
  st->axis = static_cast<int>(axis);
  ctx.outputs = {TensorSpec{st->out, ctx.inputs[0].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

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

struct RequantizeState : OpState {
  DType out = DType::kQUInt8;
};

Status PrepareRequantize(PrepareContext& ctx) {
  const bool shrink = ctx.op == "QuantizeDownAndShrinkRange";
  const bool per_channel = ctx.op == "RequantizePerChannel";
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(shrink ? 3 : 5));
  auto st = std::make_shared<RequantizeState>();
  KILN_PREPARE_ASSIGN(ctx, DType in,
                      ctx.attrs.GetType(per_channel ? "T" : "Tinput", DType::kQInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, per_channel ? "T" : "Tinput", in, {DType::kQInt32}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", DType::kQInt32));
  for (int i = 1; i < static_cast<int>(ctx.inputs.size()); ++i)
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, "range", DType::kFloat));
  KILN_PREPARE_ASSIGN(ctx, st->out, ctx.attrs.GetType("out_type", DType::kQUInt8));
  if (shrink) {
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "out_type", st->out, {DType::kQUInt8}));
  } else {
    KILN_RETURN_IF_ERROR(
        ExpectAttrDTypeIn(ctx, "out_type", st->out, {DType::kQUInt8, DType::kQInt8}));
  }
  ctx.outputs = {TensorSpec{st->out, ctx.inputs[0].shape},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

Status ComputeRequantize(const KernelContext& ctx) {
  const auto& st = ctx.state<RequantizeState>();
  static constexpr std::string_view kNames[] = {"input_min", "input_max", "requested_output_min",
                                                "requested_output_max"};
  for (int i = 1; i < 5; ++i) KILN_RETURN_IF_ERROR(ExpectScalar(ctx, i, kNames[i - 1]));
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

Status PrepareRequantizationRange(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", DType::kQInt32));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "input_min", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "input_max", DType::kFloat));
  ctx.outputs = {TensorSpec{DType::kFloat, PartialShape::Scalar()},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()}};
  return OkStatus();
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
  KILN_RETURN_IF_ERROR(ExpectScalar(ctx, 1, "input_min"));
  KILN_RETURN_IF_ERROR(ExpectScalar(ctx, 2, "input_max"));
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
  KILN_RETURN_IF_ERROR(ExpectOneElement(ctx, 3, "requested_output_min"));
  KILN_RETURN_IF_ERROR(ExpectOneElement(ctx, 4, "requested_output_max"));
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

struct RangePerChannelState : OpState {
  float clip = 0;
};

Status PrepareRequantizationRangePerChannel(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(PrepareRequantizationRange(ctx));
  auto st = std::make_shared<RangePerChannelState>();
  const tensorflow::AttrValue* clip = ctx.attrs.Find("clip_value_max");
  if (clip == nullptr) return ctx.Error("attr 'clip_value_max' is missing");
  KILN_PREPARE_ASSIGN(ctx, st->clip, ctx.attrs.GetFloat("clip_value_max", 0.0f));
  ctx.state = std::move(st);
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

// ---- QuantizedRelu, QuantizedRelu6 ---------------------------------------------------------

struct UnaryState : OpState {
  DType type = DType::kQUInt8;
};

Status PrepareQuantizedRelu(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  auto st = std::make_shared<UnaryState>();
  KILN_PREPARE_ASSIGN(ctx, st->type, ctx.attrs.GetType("Tinput"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tinput", st->type, QType::kDTypes));
  KILN_PREPARE_ASSIGN(ctx, DType out, ctx.attrs.GetType("out_type", DType::kQUInt8));
  if (out != st->type)
    return ctx.Error("attr 'out_type' is ", DTypeShortName(out), "; TensorFlow's kernel gives ",
                     "the input's type ", DTypeShortName(st->type));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "features", st->type));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "min_features", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "max_features", DType::kFloat));
  ctx.outputs = {TensorSpec{st->type, ctx.inputs[0].shape},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

template <bool kSix>
Status ComputeQuantizedRelu(const KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(ExpectScalar(ctx, 1, "min_input"));
  KILN_RETURN_IF_ERROR(ExpectScalar(ctx, 2, "max_input"));
  const float mn = ScalarFloat(ctx.input(1)), mx = ScalarFloat(ctx.input(2));
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  KILN_RETURN_IF_ERROR(Dispatch<QType>(x.dtype(), [&](auto tag) -> Status {
    using Q = typename decltype(tag)::type;
    const auto lo = FloatToQuantized<Q>(0.0f, mn, mx).value;
    const auto hi = kSix ? FloatToQuantized<Q>(6.0f, mn, mx).value : QuantTraits<Q>::kHighest;
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      auto v = std::max(x.data<Q>()[i].value, lo);
      if (kSix) v = std::min<decltype(v)>(v, static_cast<decltype(v)>(hi));
      out->data<Q>()[i].value = v;
    }
    return OkStatus();
  }));
  KILN_ASSIGN_OR_RETURN(Tensor * a, ctx.AllocateOutput(1, Shape{}));
  KILN_ASSIGN_OR_RETURN(Tensor * b, ctx.AllocateOutput(2, Shape{}));
  a->data<float>()[0] = mn;
  b->data<float>()[0] = mx;
  return OkStatus();
}

// ---- QuantizedBiasAdd, QuantizedAdd, QuantizedMul ------------------------------------------

struct BinaryState : OpState {
  DType x = DType::kQUInt8, y = DType::kQUInt8;
};

Status PrepareQuantizedBinary(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(6));
  auto st = std::make_shared<BinaryState>();
  const bool bias_add = ctx.op == "QuantizedBiasAdd";
  KILN_PREPARE_ASSIGN(ctx, st->x, ctx.attrs.GetType("T1"));
  KILN_PREPARE_ASSIGN(ctx, st->y, ctx.attrs.GetType("T2"));
  if (bias_add) {
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T1", st->x, {DType::kQUInt8, DType::kQInt8}));
    if (st->y != st->x)
      return ctx.Error("attrs T1 and T2 must be equal (quint8 or qint8), got ",
                       DTypeShortName(st->x), " and ", DTypeShortName(st->y));
  } else {
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T1", st->x, {DType::kQUInt8}));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T2", st->y, {DType::kQUInt8}));
  }
  KILN_PREPARE_ASSIGN(ctx, DType out,
                      ctx.attrs.GetType(bias_add ? "out_type" : "Toutput", DType::kQInt32));
  KILN_RETURN_IF_ERROR(
      ExpectAttrDTypeIn(ctx, bias_add ? "out_type" : "Toutput", out, {DType::kQInt32}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, bias_add ? "input" : "x", st->x));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, bias_add ? "bias" : "y", st->y));
  for (int i = 2; i < 6; ++i)
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, "range", DType::kFloat));
  PartialShape shape = ctx.inputs[0].shape;
  if (!bias_add) {
    auto b = BroadcastPartialShapes(ctx.inputs[0].shape, ctx.inputs[1].shape);
    if (!b.ok()) return ctx.Error(b.status().message());
    shape = *b;
  }
  ctx.outputs = {TensorSpec{DType::kQInt32, shape},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

template <typename Q>
void BiasAddTyped(const Tensor& x, const Tensor& b, float min_x, float max_x, float min_b,
                  float max_b, float out_min, float out_max, Tensor* out) {
  const EigenDequantizer<Q> dx(min_x, max_x), db(min_b, max_b);
  const EigenQuantizer<QInt32> q(out_min, out_max);
  const int32_t zero = FloatToQuantized<QInt32>(0.0f, out_min, out_max).value;
  const int64_t depth = b.NumElements();
  std::vector<int32_t> bias(static_cast<size_t>(depth));
  for (int64_t c = 0; c < depth; ++c)
    bias[c] = static_cast<int32_t>(static_cast<uint32_t>(q(db(b.data<Q>()[c])).value) +
                                   static_cast<uint32_t>(zero));
  for (int64_t i = 0; i < x.NumElements(); ++i)
    out->data<QInt32>()[i].value =
        static_cast<int32_t>(static_cast<uint32_t>(q(dx(x.data<Q>()[i])).value) +
                             static_cast<uint32_t>(bias[i % depth]));
}

Status ComputeQuantizedBiasAdd(const KernelContext& ctx) {
  static constexpr std::string_view kNames[] = {"min_input", "max_input", "min_bias", "max_bias"};
  for (int i = 2; i < 6; ++i) KILN_RETURN_IF_ERROR(ExpectScalar(ctx, i, kNames[i - 2]));
  const Tensor& x = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (x.rank() < 2) return ctx.Error("Input tensor must be at least 2D: ", x.shape().ToString());
  if (b.rank() != 1) return ctx.Error("Biases must be 1D: ", b.shape().ToString());
  if (b.dim(0) != x.dim(x.rank() - 1))
    return ctx.Error("Must provide as many biases as the last dimension of the input tensor: ",
                     b.shape().ToString(), " vs. ", x.shape().ToString());
  if (b.dim(0) == 0) return ctx.Error("Must provide at least 1 bias");
  const float min_x = ScalarFloat(ctx.input(2)), max_x = ScalarFloat(ctx.input(3));
  const float min_b = ScalarFloat(ctx.input(4)), max_b = ScalarFloat(ctx.input(5));
  const float range = std::max(max_x, std::max(-min_x, std::max(max_b, -min_b))) * 131072.0f;
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  if (x.dtype() == DType::kQUInt8) {
    BiasAddTyped<QUInt8>(x, b, min_x, max_x, min_b, max_b, -range, range, out);
  } else {
    BiasAddTyped<QInt8>(x, b, min_x, max_x, min_b, max_b, -range, range, out);
  }
  KILN_ASSIGN_OR_RETURN(Tensor * a, ctx.AllocateOutput(1, Shape{}));
  KILN_ASSIGN_OR_RETURN(Tensor * m, ctx.AllocateOutput(2, Shape{}));
  a->data<float>()[0] = -range;
  m->data<float>()[0] = range;
  return OkStatus();
}

// The shapes QuantizedAdd and QuantizedMul take: TF's BCast reshaped to at most two dims, and
// its vector-by-tensor loop (which repeats the smaller operand along the flat index).
Status BroadcastForm(const KernelContext& ctx, const Shape& xs, const Shape& ys, Shape* out,
                     int* ndims) {
  auto b = BroadcastShapes(xs, ys);
  if (!b.ok()) return ctx.Error("Incompatible shapes: ", xs.ToString(), " vs. ", ys.ToString());
  *out = *b;
  // BCast's reshape: drop dims of size 1 in both, merge runs with the same broadcast pattern.
  const int rank = out->rank();
  int groups = 0, last = -1;
  for (int d = 0; d < rank; ++d) {
    const int64_t xd = d - (rank - xs.rank()) >= 0 ? xs.dim(d - (rank - xs.rank())) : 1;
    const int64_t yd = d - (rank - ys.rank()) >= 0 ? ys.dim(d - (rank - ys.rank())) : 1;
    if (xd == 1 && yd == 1) continue;
    const int pattern = (xd == 1 ? 1 : 0) | (yd == 1 ? 2 : 0);
    if (pattern != last) ++groups;
    last = pattern;
  }
  *ndims = groups;
  return OkStatus();
}

// One operand of QuantizedAdd as qint32 in [-range, range]: TF's 8-to-32 linear shortcut.
struct Linear8To32 {
  int64_t c0, mult;
  Linear8To32(float mn, float mx, float range) {
    c0 = FloatToQuantizedUnclamped<QInt32>(QuantizedToFloat(QUInt8{0}, mn, mx), -range, range);
    const int64_t c1 =
        FloatToQuantizedUnclamped<QInt32>(QuantizedToFloat(QUInt8{1}, mn, mx), -range, range);
    mult = static_cast<int32_t>(c1 - c0);
  }
  int32_t operator()(uint8_t v) const {
    return static_cast<int32_t>(std::clamp<int64_t>(c0 + int64_t{v} * mult,
                                                    std::numeric_limits<int32_t>::min(),
                                                    std::numeric_limits<int32_t>::max()));
  }
};

template <bool kMul>
Status ComputeQuantizedAddMul(const KernelContext& ctx) {
  static constexpr std::string_view kNames[] = {"min_x", "max_x", "min_y", "max_y"};
  for (int i = 2; i < 6; ++i) KILN_RETURN_IF_ERROR(ExpectScalar(ctx, i, kNames[i - 2]));
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  Shape out_shape;
  int ndims = 0;
  KILN_RETURN_IF_ERROR(BroadcastForm(ctx, x.shape(), y.shape(), &out_shape, &ndims));
  const float min_x = ScalarFloat(ctx.input(2)), max_x = ScalarFloat(ctx.input(3));
  const float min_y = ScalarFloat(ctx.input(4)), max_y = ScalarFloat(ctx.input(5));
  if (!(max_x > min_x)) return ctx.Error("max_x must be larger than min_x.");
  if (!(max_y > min_y)) return ctx.Error("max_y must be larger than min_y.");
  if (ndims > 2)
    return Unimplemented("node '", ctx.node_name(), "': Broadcast between ", x.shape().ToString(),
                         " and ", y.shape().ToString(), " is not supported yet.");
  float min_z, max_z;
  const auto* xv = reinterpret_cast<const uint8_t*>(x.raw_data());
  const auto* yv = reinterpret_cast<const uint8_t*>(y.raw_data());
  const int64_t n = out_shape.num_elements();
  std::vector<int32_t> z(static_cast<size_t>(n));
  if constexpr (kMul) {
    QuantizationRangeForMultiplication<QUInt8, QUInt8, QInt32>(min_x, max_x, min_y, max_y, &min_z,
                                                               &max_z);
    const auto ox = static_cast<int32_t>(FloatToQuantizedUnclamped<QUInt8>(0, min_x, max_x));
    const auto oy = static_cast<int32_t>(FloatToQuantizedUnclamped<QUInt8>(0, min_y, max_y));
    auto fx = [&](int64_t i) { return int32_t{xv[i]} - ox; };
    auto fy = [&](int64_t i) { return int32_t{yv[i]} - oy; };
    auto combine = [](int32_t a, int32_t b) {
      return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
    };
    if (ndims <= 1 && x.NumElements() == 1) {
      for (int64_t i = 0; i < n; ++i) z[i] = combine(fx(0), fy(i));
    } else if (ndims <= 1 && y.NumElements() == 1) {
      for (int64_t i = 0; i < n; ++i) z[i] = combine(fx(i), fy(0));
    } else if (ndims <= 1) {
      for (int64_t i = 0; i < n; ++i) z[i] = combine(fx(i), fy(i));
    } else {
      const bool x_vec = x.NumElements() < y.NumElements();
      const int64_t len = x_vec ? x.NumElements() : y.NumElements();
      if (len == 0) return ctx.Error("vector must have at least 1 element");
      for (int64_t i = 0; i < n; ++i)
        z[i] = x_vec ? combine(fx(i % len), fy(i)) : combine(fx(i), fy(i % len));
    }
  } else {
    const float range =
        std::max(std::abs(std::min(min_x, min_y)), std::abs(std::max(max_x, max_y))) * 16384.0f;
    min_z = -range;
    max_z = range;
    const Linear8To32 lx(min_x, max_x, range), ly(min_y, max_y, range);
    auto add = [](int32_t a, int32_t b) {
      return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
    };
    if (ndims <= 1 && x.NumElements() == 1) {
      const int32_t s =
          RequantizeInNewRange<QUInt8, QInt32>(QUInt8{xv[0]}, min_x, max_x, -range, range).value;
      for (int64_t i = 0; i < n; ++i) z[i] = add(ly(yv[i]), s);
    } else if (ndims <= 1 && y.NumElements() == 1) {
      const int32_t s =
          RequantizeInNewRange<QUInt8, QInt32>(QUInt8{yv[0]}, min_y, max_y, -range, range).value;
      for (int64_t i = 0; i < n; ++i) z[i] = add(lx(xv[i]), s);
    } else if (ndims <= 1) {
      for (int64_t i = 0; i < n; ++i) z[i] = add(lx(xv[i]), ly(yv[i]));
    } else {
      const bool x_vec = x.NumElements() < y.NumElements();
      const int64_t len = x_vec ? x.NumElements() : y.NumElements();
      if (len == 0) return ctx.Error("Must have some elements to add");
      for (int64_t i = 0; i < n; ++i)
        z[i] = x_vec ? add(lx(xv[i % len]), ly(yv[i])) : add(lx(xv[i]), ly(yv[i % len]));
    }
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  for (int64_t i = 0; i < n; ++i) out->data<QInt32>()[i].value = z[i];
  KILN_ASSIGN_OR_RETURN(Tensor * a, ctx.AllocateOutput(1, Shape{}));
  KILN_ASSIGN_OR_RETURN(Tensor * b, ctx.AllocateOutput(2, Shape{}));
  a->data<float>()[0] = min_z;
  b->data<float>()[0] = max_z;
  return OkStatus();
}

// ---- QuantizedConcat, QuantizedConcatV2 ----------------------------------------------------

struct ConcatState : OpState {
  DType type = DType::kQUInt8;
  int n = 0;
  bool v2 = false;  // values, axis, mins, maxes (V2) or concat_dim, values, mins, maxes
};

Status PrepareQuantizedConcat(PrepareContext& ctx) {
  auto st = std::make_shared<ConcatState>();
  st->v2 = ctx.op == "QuantizedConcatV2";
  KILN_PREPARE_ASSIGN(ctx, int64_t n, ctx.attrs.GetInt("N"));
  if (n < 2) return ctx.Error("attr 'N' is ", n, ", expected at least 2");
  st->n = static_cast<int>(n);
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3 * st->n + 1));
  KILN_PREPARE_ASSIGN(ctx, st->type, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->type, QType::kDTypes));
  const int first = st->v2 ? 0 : 1;
  const int axis_input = st->v2 ? st->n : 0;
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, axis_input, st->v2 ? "axis" : "concat_dim", 0));
  for (int i = 0; i < st->n; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, first + i, "values", st->type));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, st->n + 1 + i, "input_mins", DType::kFloat));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2 * st->n + 1 + i, "input_maxes", DType::kFloat));
  }
  const PartialShape& s0 = ctx.inputs[first].shape;
  ctx.outputs = {TensorSpec{st->type, s0.unknown_rank() ? s0 : UnknownDims(s0.rank())},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

template <typename Q>
void CopyRequantized(const Q* in, int64_t n, float mn, float mx, float out_min, float out_max,
                     Q* out) {
  if (mn == out_min && mx == out_max) {
    std::copy_n(in, n, out);
    return;
  }
  const EigenDequantizer<Q> dq(mn, mx);
  const EigenQuantizer<Q> q(out_min, out_max);
  for (int64_t i = 0; i < n; ++i) out[i] = q(dq(in[i]));
}

Status ComputeQuantizedConcat(const KernelContext& ctx) {
  const auto& st = ctx.state<ConcatState>();
  const int first = st.v2 ? 0 : 1;
  const Tensor& axis_t = ctx.input(st.v2 ? st.n : 0);
  if (axis_t.NumElements() != 1)
    return ctx.Error("Concat dim tensor should be a scalar integer, but got shape ",
                     axis_t.shape().ToString());
  int64_t axis = IndexValues(axis_t)[0];
  const Tensor& x0 = ctx.input(first);
  const int rank = x0.rank();
  if (st.v2 && axis < 0) axis += rank;
  if (axis < 0 || axis >= rank)
    return ctx.Error("ConcatOp : Expected concatenating dimensions in the range [0, ", rank,
                     "), but got ", axis);
  float overall_min = std::numeric_limits<float>::max();
  float overall_max = std::numeric_limits<float>::lowest();
  for (int i = 0; i < st.n; ++i) {
    for (int r : {st.n + 1 + i, 2 * st.n + 1 + i})
      if (ctx.input(r).NumElements() != 1)
        return ctx.Error(r <= 2 * st.n ? "input_mins" : "input_maxes",
                         " each tensor's num elements must be 1, given num elements ",
                         ctx.input(r).NumElements(), " in index ", i);
    overall_min = std::min(overall_min, ScalarFloat(ctx.input(st.n + 1 + i)));
    overall_max = std::max(overall_max, ScalarFloat(ctx.input(2 * st.n + 1 + i)));
  }
  overall_min = std::min(0.0f, overall_min);
  float out_min = overall_min, out_max = overall_max;
  if (IsSigned(st.type)) {
    const float largest = std::max(std::abs(overall_min), std::abs(overall_max));
    out_min = -largest;
    out_max = largest;
  }
  std::vector<int64_t> dims(x0.shape().dims().begin(), x0.shape().dims().end());
  int64_t total = 0;
  for (int i = 0; i < st.n; ++i) {
    const Tensor& xi = ctx.input(first + i);
    if (xi.rank() != rank)
      return ctx.Error("ConcatOp : Ranks of all input tensors should match: shape[0] = ",
                       x0.shape().ToString(), " vs. shape[", i, "] = ", xi.shape().ToString());
    for (int d = 0; d < rank; ++d)
      if (d != axis && xi.dim(d) != x0.dim(d))
        return ctx.Error("ConcatOp : Dimensions of inputs should match: shape[0] = ",
                         x0.shape().ToString(), " vs. shape[", i, "] = ", xi.shape().ToString());
    total += xi.dim(static_cast<int>(axis));
  }
  dims[axis] = total;
  KILN_ASSIGN_OR_RETURN(Shape out_shape, Shape::FromDims(dims));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= out_shape.dim(d);
  for (int d = static_cast<int>(axis) + 1; d < rank; ++d) inner *= out_shape.dim(d);
  KILN_RETURN_IF_ERROR(Dispatch<QType>(st.type, [&](auto tag) -> Status {
    using Q = typename decltype(tag)::type;
    int64_t offset = 0;
    for (int i = 0; i < st.n; ++i) {
      const Tensor& xi = ctx.input(first + i);
      std::vector<Q> requantized(static_cast<size_t>(xi.NumElements()));
      CopyRequantized(xi.data<Q>(), xi.NumElements(), ScalarFloat(ctx.input(st.n + 1 + i)),
                      ScalarFloat(ctx.input(2 * st.n + 1 + i)), out_min, out_max,
                      requantized.data());
      const int64_t chunk = xi.dim(static_cast<int>(axis)) * inner;
      for (int64_t o = 0; o < outer; ++o)
        std::copy_n(requantized.data() + o * chunk, chunk,
                    out->data<Q>() + o * total * inner + offset);
      offset += chunk;
    }
    return OkStatus();
  }));
  KILN_ASSIGN_OR_RETURN(Tensor * a, ctx.AllocateOutput(1, Shape{}));
  KILN_ASSIGN_OR_RETURN(Tensor * b, ctx.AllocateOutput(2, Shape{}));
  a->data<float>()[0] = out_min;
  b->data<float>()[0] = out_max;
  return OkStatus();
}

// ---- QuantizedMaxPool, QuantizedAvgPool ----------------------------------------------------

struct PoolState : OpState {
  WindowSpec window;
};

Status PrepareQuantizedPool(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, {DType::kQUInt8, DType::kQInt8}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "min_input", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "max_input", DType::kFloat));
  auto st = std::make_shared<PoolState>();
  WindowAttrOptions opts;
  opts.read_ksize = true;
  opts.has_data_format = false;
  KILN_RETURN_IF_ERROR(ReadWindowAttrs(ctx, opts, &st->window));
  const PartialShape& x = ctx.inputs[0].shape;
  if (!x.unknown_rank() && x.rank() != 4)
    return ctx.Error("input must be 4-dimensional, got ", x.ToPythonString());
  ctx.outputs = {TensorSpec{t, UnknownDims(4)}, TensorSpec{DType::kFloat, PartialShape::Scalar()},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

template <bool kMax>
Status ComputeQuantizedPool(const KernelContext& ctx) {
  for (int i : {1, 2})
    if (ctx.input(i).rank() != 0)
      return ctx.Error(i == 1 ? "min_input" : "max_input", " shape must be rank 0 but is rank ",
                       ctx.input(i).rank());
  const auto& st = ctx.state<PoolState>();
  const Tensor& x = ctx.input(0);
  if (x.rank() != 4) return ctx.Error("input must be 4-dimensional, got ", x.shape().ToString());
  std::array<WindowDim, 3> dims;
  const std::array<int64_t, 4> in{x.dim(0), x.dim(1), x.dim(2), x.dim(3)};
  // Right-aligned over three spatial dims: 2-D pooling uses the last two.
  KILN_RETURN_IF_ERROR(MakeWindowDims(st.window, in, st.window.ksize, &dims));
  const int64_t batch = x.dim(0), h = x.dim(1), w = x.dim(2), c = x.dim(3);
  const Shape out_shape{batch, dims[1].out, dims[2].out, c};
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  const bool u8 = x.dtype() == DType::kQUInt8;
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t oh = 0; oh < dims[1].out; ++oh)
      for (int64_t ow = 0; ow < dims[2].out; ++ow)
        for (int64_t ch = 0; ch < c; ++ch) {
          int32_t best = std::numeric_limits<int32_t>::min(), sum = 0, count = 0;
          for (int64_t i = 0; i < dims[1].k; ++i) {
            const int64_t ih = oh * dims[1].stride - dims[1].pad_before + i;
            if (ih < 0 || ih >= h) continue;
            for (int64_t j = 0; j < dims[2].k; ++j) {
              const int64_t iw = ow * dims[2].stride - dims[2].pad_before + j;
              if (iw < 0 || iw >= w) continue;
              const int64_t k = ((n * h + ih) * w + iw) * c + ch;
              const int32_t v = u8 ? x.data<QUInt8>()[k].value : x.data<QInt8>()[k].value;
              best = std::max(best, v);
              sum += v;
              ++count;
            }
          }
          const int32_t v = kMax ? best : (count > 0 ? sum / count : 0);
          const int64_t o = ((n * dims[1].out + oh) * dims[2].out + ow) * c + ch;
          if (u8) {
            out->data<QUInt8>()[o].value = static_cast<uint8_t>(v);
          } else {
            out->data<QInt8>()[o].value = static_cast<int8_t>(v);
          }
        }
  KILN_ASSIGN_OR_RETURN(Tensor * a, ctx.AllocateOutput(1, Shape{}));
  KILN_ASSIGN_OR_RETURN(Tensor * b, ctx.AllocateOutput(2, Shape{}));
  a->data<float>()[0] = ScalarFloat(ctx.input(1));
  b->data<float>()[0] = ScalarFloat(ctx.input(2));
  return OkStatus();
}

// ---- QuantizedResizeBilinear ---------------------------------------------------------------

struct ResizeState : OpState {
  DType type = DType::kQUInt8;
  bool align_corners = false, half_pixel_centers = false;
};

Status PrepareQuantizedResize(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  auto st = std::make_shared<ResizeState>();
  KILN_PREPARE_ASSIGN(ctx, st->type, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(
      ExpectAttrDTypeIn(ctx, "T", st->type, {DType::kQUInt8, DType::kQInt32, DType::kFloat}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "images", st->type));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "size", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "min", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "max", DType::kFloat));
  KILN_PREPARE_ASSIGN(ctx, st->align_corners, ctx.attrs.GetBool("align_corners", false));
  KILN_PREPARE_ASSIGN(ctx, st->half_pixel_centers, ctx.attrs.GetBool("half_pixel_centers", false));
  ctx.outputs = {TensorSpec{st->type, UnknownDims(4)},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

// One axis of TF's quantized bilinear resize: the two source rows and the fraction, in float
// and as a fixed-point weight of `res` bits.
struct ResizeAxis {
  std::vector<int64_t> lower, upper;
  std::vector<float> lerp;
  std::vector<int64_t> ilerp;
};

ResizeAxis MakeResizeAxis(int64_t in, int64_t out, bool align, bool half, int res) {
  ResizeAxis a;
  const float scale = align && in > 1 && out > 1
                          ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                          : static_cast<float>(in) / static_cast<float>(out);
  for (int64_t i = 0; i < out; ++i) {
    const float pos =
        half ? (static_cast<float>(i) + 0.5f) * scale - 0.5f : static_cast<float>(i) * scale;
    const float floor_pos = std::floor(pos);
    const int64_t upper = std::min(static_cast<int64_t>(std::ceil(pos)), in - 1);
    const int64_t lower = std::min(std::max(static_cast<int64_t>(floor_pos), int64_t{0}), upper);
    const float lerp = pos - floor_pos;
    a.lower.push_back(lower);
    a.upper.push_back(upper);
    a.lerp.push_back(lerp);
    a.ilerp.push_back(static_cast<int64_t>(lerp * static_cast<float>(int64_t{1} << res)));
  }
  return a;
}

Status ComputeQuantizedResize(const KernelContext& ctx) {
  const auto& st = ctx.state<ResizeState>();
  const Tensor& x = ctx.input(0);
  const Tensor& size = ctx.input(1);
  if (ctx.input(2).NumElements() != 1) return ctx.Error("min must be a scalar");
  if (ctx.input(3).NumElements() != 1) return ctx.Error("max must be a scalar");
  if (x.rank() != 4) return ctx.Error("input must be 4-dimensional", x.shape().ToString());
  if (size.rank() != 1 || size.NumElements() != 2)
    return ctx.Error("shape_t must be 1-dimensional with two elements", size.shape().ToString());
  const int64_t batch = x.dim(0), in_h = x.dim(1), in_w = x.dim(2), c = x.dim(3);
  const int64_t out_h = size.data<int32_t>()[0], out_w = size.data<int32_t>()[1];
  if (c <= 0) return ctx.Error("image must have at least one channel");
  if (in_h <= 0 || in_w <= 0) return ctx.Error("input image must be of non-zero size");
  if (out_h <= 0 || out_w <= 0) return ctx.Error("output dimensions must be positive");
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{batch, out_h, out_w, c}));
  const bool same = out_h == in_h && out_w == in_w;
  const int res = st.type == DType::kQUInt8 ? 7 : 30;
  const ResizeAxis ys = MakeResizeAxis(in_h, out_h, st.align_corners, st.half_pixel_centers, res);
  const ResizeAxis xs = MakeResizeAxis(in_w, out_w, st.align_corners, st.half_pixel_centers, res);
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t y = 0; y < out_h; ++y)
      for (int64_t xo = 0; xo < out_w; ++xo)
        for (int64_t ch = 0; ch < c; ++ch) {
          const int64_t o = ((n * out_h + y) * out_w + xo) * c + ch;
          auto at = [&](int64_t row, int64_t col) {
            return ((n * in_h + row) * in_w + col) * c + ch;
          };
          if (same) {
            std::memcpy(static_cast<char*>(out->raw_data()) + o * DTypeSize(st.type),
                        static_cast<const char*>(x.raw_data()) + o * DTypeSize(st.type),
                        DTypeSize(st.type));
            continue;
          }
          const int64_t tl = at(ys.lower[y], xs.lower[xo]), tr = at(ys.lower[y], xs.upper[xo]);
          const int64_t bl = at(ys.upper[y], xs.lower[xo]), br = at(ys.upper[y], xs.upper[xo]);
          if (st.type == DType::kFloat) {
            const float* v = x.data<float>();
            const float top = v[tl] + (v[tr] - v[tl]) * xs.lerp[xo];
            const float bottom = v[bl] + (v[br] - v[bl]) * xs.lerp[xo];
            out->data<float>()[o] = top + (bottom - top) * ys.lerp[y];
          } else if (st.type == DType::kQUInt8) {
            const QUInt8* v = x.data<QUInt8>();
            const int64_t xl = xs.ilerp[xo], yl = ys.ilerp[y];
            const int64_t top = int64_t{v[tl].value} * 128 + (v[tr].value - v[tl].value) * xl;
            const int64_t bottom = int64_t{v[bl].value} * 128 + (v[br].value - v[bl].value) * xl;
            const int64_t value = top + ((bottom - top) / 128) * yl;
            out->data<QUInt8>()[o].value = static_cast<uint8_t>((value + 64) / 128);
          } else {
            // qint32 read through float, in int64 at 30 fractional bits.
            auto f = [&](int64_t k) {
              return static_cast<int64_t>(static_cast<float>(x.data<QInt32>()[k].value));
            };
            const int64_t one = int64_t{1} << 30;
            const int64_t xl = xs.ilerp[xo], yl = ys.ilerp[y];
            const int64_t top = f(tl) * one + (f(tr) - f(tl)) * xl;
            const int64_t bottom = f(bl) * one + (f(br) - f(bl)) * xl;
            const int64_t value = top + ((bottom - top) / one) * yl;
            out->data<QInt32>()[o].value =
                static_cast<int32_t>(static_cast<uint32_t>((value + (one >> 1)) / one));
          }
        }
  KILN_ASSIGN_OR_RETURN(Tensor * a, ctx.AllocateOutput(1, Shape{}));
  KILN_ASSIGN_OR_RETURN(Tensor * b, ctx.AllocateOutput(2, Shape{}));
  a->data<float>()[0] = ScalarFloat(ctx.input(2));
  b->data<float>()[0] = ScalarFloat(ctx.input(3));
  return OkStatus();
}

// ---- QuantizedBatchNormWithGlobalNormalization ---------------------------------------------

struct BatchNormState : OpState {
  float epsilon = 0;
  bool scale_after = false;
};

Status PrepareQuantizedBatchNorm(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(15));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("Tinput"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tinput", t, {DType::kQUInt8}));
  KILN_PREPARE_ASSIGN(ctx, DType out, ctx.attrs.GetType("out_type"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "out_type", out, {DType::kQInt32}));
  for (int i = 0; i < 15; i += 3) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, "tensor", t));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i + 1, "min", DType::kFloat));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i + 2, "max", DType::kFloat));
  }
  auto st = std::make_shared<BatchNormState>();
  if (ctx.attrs.Find("variance_epsilon") == nullptr ||
      ctx.attrs.Find("scale_after_normalization") == nullptr)
    return ctx.Error("attrs 'variance_epsilon' and 'scale_after_normalization' are required");
  KILN_PREPARE_ASSIGN(ctx, st->epsilon, ctx.attrs.GetFloat("variance_epsilon", 0.0f));
  KILN_PREPARE_ASSIGN(ctx, st->scale_after, ctx.attrs.GetBool("scale_after_normalization", false));
  ctx.outputs = {TensorSpec{DType::kQInt32, ctx.inputs[0].shape},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

Status ComputeQuantizedBatchNorm(const KernelContext& ctx) {
  const auto& st = ctx.state<BatchNormState>();
  static constexpr std::string_view kNames[] = {"input", "mean", "var", "beta", "gamma"};
  for (int k = 0; k < 5; ++k) {
    KILN_RETURN_IF_ERROR(ExpectOneElement(ctx, 3 * k + 1, std::string(kNames[k]) + "_min"));
    KILN_RETURN_IF_ERROR(ExpectOneElement(ctx, 3 * k + 2, std::string(kNames[k]) + "_max"));
  }
  const Tensor& x = ctx.input(0);
  if (x.rank() != 4) return ctx.Error("input must be 4-dimensional", x.shape().ToString());
  const int64_t depth = x.dim(3);
  for (int k = 1; k < 5; ++k) {
    const Tensor& p = ctx.input(3 * k);
    if (p.rank() != 1) return ctx.Error(kNames[k], " must be 1-dimensional", p.shape().ToString());
    if (p.NumElements() != depth)
      return ctx.Error("Must provide as many ", kNames[k], " values as the last dimension of the ",
                       "input tensor: ", p.shape().ToString(), " vs. ", x.shape().ToString());
  }
  if (depth <= 1)
    return ctx.Error("Must have at least a mean value", ctx.input(3).shape().ToString());
  const float out_min = -1048576.0f, out_max = 1048576.0f;
  auto param = [&](int k, int64_t c) {
    return QuantizedToFloat(ctx.input(3 * k).data<QUInt8>()[c], ScalarFloat(ctx.input(3 * k + 1)),
                            ScalarFloat(ctx.input(3 * k + 2)));
  };
  std::vector<int32_t> scale_q(static_cast<size_t>(depth)), offset_q(static_cast<size_t>(depth));
  for (int64_t c = 0; c < depth; ++c) {
    float scale = 1.0f / std::sqrt(param(2, c) + st.epsilon);
    if (st.scale_after) scale *= param(4, c);
    const float offset = -param(1, c) * scale + param(3, c);
    scale_q[c] = FloatToQuantized<QInt32>(scale, out_min, out_max).value;
    offset_q[c] = FloatToQuantized<QInt32>(offset, out_min, out_max).value;
  }
  const int32_t one = FloatToQuantized<QInt32>(1.0f, out_min, out_max).value;
  const float in_min = ScalarFloat(ctx.input(1)), in_max = ScalarFloat(ctx.input(2));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    const int64_t c = i % depth;
    const int32_t in =
        RequantizeInNewRange<QUInt8, QInt32>(x.data<QUInt8>()[i], in_min, in_max, out_min, out_max)
            .value;
    const auto product =
        static_cast<int32_t>(static_cast<uint32_t>(in) * static_cast<uint32_t>(scale_q[c]));
    out->data<QInt32>()[i].value = static_cast<int32_t>(static_cast<uint32_t>(product / one) +
                                                        static_cast<uint32_t>(offset_q[c]));
  }
  KILN_ASSIGN_OR_RETURN(Tensor * a, ctx.AllocateOutput(1, Shape{}));
  KILN_ASSIGN_OR_RETURN(Tensor * b, ctx.AllocateOutput(2, Shape{}));
  a->data<float>()[0] = out_min;
  b->data<float>()[0] = out_max;
  return OkStatus();
}

// ---- QuantizedInstanceNorm -----------------------------------------------------------------

struct InstanceNormState : OpState {
  bool range_given = false;
  float given_min = 0, given_max = 0, epsilon = 1e-5f, min_separation = 1e-3f;
};

Status PrepareQuantizedInstanceNorm(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, {DType::kQUInt8}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "x_min", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "x_max", DType::kFloat));
  auto st = std::make_shared<InstanceNormState>();
  KILN_PREPARE_ASSIGN(ctx, st->range_given, ctx.attrs.GetBool("output_range_given", false));
  KILN_PREPARE_ASSIGN(ctx, st->given_min, ctx.attrs.GetFloat("given_y_min", 0.0f));
  KILN_PREPARE_ASSIGN(ctx, st->given_max, ctx.attrs.GetFloat("given_y_max", 0.0f));
  KILN_PREPARE_ASSIGN(ctx, st->epsilon, ctx.attrs.GetFloat("variance_epsilon", 1e-5f));
  KILN_PREPARE_ASSIGN(ctx, st->min_separation, ctx.attrs.GetFloat("min_separation", 1e-3f));
  if (st->range_given && !(st->given_min < st->given_max))
    return ctx.Error("given_y_min must be less than given_y_max : ", st->given_min,
                     " >= ", st->given_max);
  const PartialShape& x = ctx.inputs[0].shape;
  if (!x.unknown_rank() && x.rank() != 4)
    return ctx.Error("x must be 4-dimensional, got ", x.ToPythonString());
  ctx.outputs = {TensorSpec{t, x}, TensorSpec{DType::kFloat, PartialShape::Scalar()},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

Status ComputeQuantizedInstanceNorm(const KernelContext& ctx) {
  const auto& st = ctx.state<InstanceNormState>();
  KILN_RETURN_IF_ERROR(ExpectScalar(ctx, 1, "x_min"));
  KILN_RETURN_IF_ERROR(ExpectScalar(ctx, 2, "x_max"));
  const float x_min = ScalarFloat(ctx.input(1)), x_max = ScalarFloat(ctx.input(2));
  if (!(x_min < x_max))
    return ctx.Error("input_min must be less than input_max : ", x_min, " >= ", x_max);
  const Tensor& x = ctx.input(0);
  if (x.rank() != 4) return ctx.Error("x must be 4-dimensional, got ", x.shape().ToString());
  const int64_t batch = x.dim(0), h = x.dim(1), w = x.dim(2), c = x.dim(3);
  const float step = (x_max - x_min) / 255.0f;
  const auto count = static_cast<float>(h * w);
  std::vector<float> y(static_cast<size_t>(x.NumElements()));
  auto at = [&](int64_t n, int64_t i, int64_t j, int64_t ch) {
    return ((n * h + i) * w + j) * c + ch;
  };
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t ch = 0; ch < c; ++ch) {
      // TF's Eigen reductions over H and W: a sequential float sum, W outer, H inner.
      float sum = 0;
      for (int64_t j = 0; j < w; ++j)
        for (int64_t i = 0; i < h; ++i)
          sum += static_cast<float>(x.data<QUInt8>()[at(n, i, j, ch)].value);
      const float mean = sum / count;
      float sq = 0;
      for (int64_t j = 0; j < w; ++j)
        for (int64_t i = 0; i < h; ++i) {
          const float d =
              step * (static_cast<float>(x.data<QUInt8>()[at(n, i, j, ch)].value) - mean);
          sq += d * d;
        }
      const float inv_std = 1.0f / std::sqrt(sq / count + st.epsilon);
      for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < w; ++j) {
          const int64_t k = at(n, i, j, ch);
          const float d = step * (static_cast<float>(x.data<QUInt8>()[k].value) - mean);
          y[k] = d * inv_std;
        }
    }
  float y_min = st.given_min, y_max = st.given_max;
  if (!st.range_given) {
    y_min = std::numeric_limits<float>::max();
    y_max = std::numeric_limits<float>::lowest();
    for (float v : y) {
      y_min = std::min(y_min, v);
      y_max = std::max(y_max, v);
    }
  }
  if (y_max - y_min < st.min_separation) y_max = y_min + st.min_separation;
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  const EigenQuantizer<QUInt8> quantize(y_min, y_max);
  for (size_t k = 0; k < y.size(); ++k) out->data<QUInt8>()[k] = quantize(y[k]);
  KILN_ASSIGN_OR_RETURN(Tensor * a, ctx.AllocateOutput(1, Shape{}));
  KILN_ASSIGN_OR_RETURN(Tensor * b, ctx.AllocateOutput(2, Shape{}));
  a->data<float>()[0] = y_min;
  b->data<float>()[0] = y_max;
  return OkStatus();
}

constexpr char kQOut[] = "output,output_min,output_max";

constexpr OpDefinition kDefs[] = {
    {"QuantizeV2", kQOut, kOpFreshOutputs, PrepareQuantizeV2},
    {"Dequantize", "output", kOpFreshOutputs, PrepareDequantize},
    {"Requantize", kQOut, kOpFreshOutputs, PrepareRequantize},
    {"RequantizePerChannel", kQOut, kOpFreshOutputs, PrepareRequantize},
    {"QuantizeDownAndShrinkRange", kQOut, kOpFreshOutputs, PrepareRequantize},
    {"RequantizationRange", "output_min,output_max", kOpFreshOutputs, PrepareRequantizationRange},
    {"RequantizationRangePerChannel", "output_min,output_max", kOpFreshOutputs,
     PrepareRequantizationRangePerChannel},
    {"QuantizedRelu", "activations,min_activations,max_activations", kOpFreshOutputs,
     PrepareQuantizedRelu},
    {"QuantizedRelu6", "activations,min_activations,max_activations", kOpFreshOutputs,
     PrepareQuantizedRelu},
    {"QuantizedBiasAdd", "output,min_out,max_out", kOpFreshOutputs, PrepareQuantizedBinary},
    {"QuantizedAdd", "z,min_z,max_z", kOpFreshOutputs, PrepareQuantizedBinary},
    {"QuantizedMul", "z,min_z,max_z", kOpFreshOutputs, PrepareQuantizedBinary},
    {"QuantizedConcat", kQOut, kOpFreshOutputs, PrepareQuantizedConcat},
    {"QuantizedConcatV2", kQOut, kOpFreshOutputs, PrepareQuantizedConcat},
    {"QuantizedMaxPool", kQOut, kOpFreshOutputs, PrepareQuantizedPool},
    {"QuantizedAvgPool", kQOut, kOpFreshOutputs, PrepareQuantizedPool},
    {"QuantizedResizeBilinear", "resized_images,out_min,out_max", kOpFreshOutputs,
     PrepareQuantizedResize},
    {"QuantizedBatchNormWithGlobalNormalization", "result,result_min,result_max", kOpFreshOutputs,
     PrepareQuantizedBatchNorm},
    {"QuantizedInstanceNorm", "y,y_min,y_max", kOpFreshOutputs, PrepareQuantizedInstanceNorm},
};

constexpr KernelEntry kCpu[] = {
    {"QuantizeV2", ComputeQuantizeV2},
    {"Dequantize", ComputeDequantize},
    {"Requantize", ComputeRequantize},
    {"RequantizePerChannel", ComputeRequantizePerChannel},
    {"QuantizeDownAndShrinkRange", ComputeQuantizeDownAndShrinkRange},
    {"RequantizationRange", ComputeRequantizationRange},
    {"RequantizationRangePerChannel", ComputeRequantizationRangePerChannel},
    {"QuantizedRelu", ComputeQuantizedRelu<false>},
    {"QuantizedRelu6", ComputeQuantizedRelu<true>},
    {"QuantizedBiasAdd", ComputeQuantizedBiasAdd},
    {"QuantizedAdd", ComputeQuantizedAddMul<false>},
    {"QuantizedMul", ComputeQuantizedAddMul<true>},
    {"QuantizedConcat", ComputeQuantizedConcat},
    {"QuantizedConcatV2", ComputeQuantizedConcat},
    {"QuantizedMaxPool", ComputeQuantizedPool<true>},
    {"QuantizedAvgPool", ComputeQuantizedPool<false>},
    {"QuantizedResizeBilinear", ComputeQuantizedResize},
    {"QuantizedBatchNormWithGlobalNormalization", ComputeQuantizedBatchNorm},
    {"QuantizedInstanceNorm", ComputeQuantizedInstanceNorm},
};

}  // namespace

std::span<const OpDefinition> QuantizedOpDefs() { return kDefs; }
std::span<const KernelEntry> QuantizedCpuKernels() { return kCpu; }

}  // namespace kiln::exec
