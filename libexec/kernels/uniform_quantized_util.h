// The helpers the uniform quantization kernels share (uniform_quantized_ops.cc,
// uniform_quantized_conv_ops.cc, after TF's tensorflow/core/kernels/uniform_quant_ops): an
// operand's quantization attrs and TF's checks of its scales and zero points, TF's float to int32
// cast, its fixed-point requantization multiplier, the operands of a uniform quantized product
// and the per-row quantization of a Hybrid op's float lhs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/quantized_util.h"

namespace kiln::exec {

// The quantization of one operand: its axis and integer range (attrs with a prefix).
struct UniformSpec {
  int axis = -1;
  int64_t qmin = 0, qmax = 0;
};

inline Status ReadUniformSpec(const PrepareContext& ctx, const std::string& prefix,
                              UniformSpec* s) {
  KILN_PREPARE_ASSIGN(ctx, int64_t axis, ctx.attrs.GetInt(prefix + "quantization_axis", -1));
  if (axis < -1) return ctx.Error(prefix, "quantization_axis must be >= -1, given: ", axis);
  s->axis = static_cast<int>(axis);
  KILN_PREPARE_ASSIGN(ctx, s->qmin, ctx.attrs.GetInt(prefix + "quantization_min_val"));
  KILN_PREPARE_ASSIGN(ctx, s->qmax, ctx.attrs.GetInt(prefix + "quantization_max_val"));
  return OkStatus();
}

// TF's QuantizationAxisAndShapeValid: scales and zero points scalars (axis -1) or vectors as
// long as the data's axis.
inline Status CheckScales(const KernelContext& ctx, const Shape& data, const Tensor& scales,
                          const Tensor& zero_points, int axis) {
  if (scales.shape() != zero_points.shape())
    return ctx.Error("scales and zero_points shape must be same, but given scales shape ",
                     scales.shape().ToString(), " and zero_points shape ",
                     zero_points.shape().ToString());
  if (axis < -1 || axis >= data.rank())
    return ctx.Error("quantization_axis must be -1 or in range [0, input.rank), but given ", axis);
  if (axis == -1 && scales.rank() != 0)
    return ctx.Error("If quantization_axis is -1, scales and zero_points must be scalar tensors, ",
                     "but given scales shape ", scales.shape().ToString());
  if (axis >= 0 && (scales.rank() != 1 || scales.dim(0) != data.dim(axis)))
    return ctx.Error("If quantization_axis is not -1, scales and zero_points must be a tensor of ",
                     "rank 1 and the size must be equal to the input.dim_size(",
                     "quantization_axis), but given quantization_axis ", axis, ", scales shape ",
                     scales.shape().ToString());
  return OkStatus();
}

inline Status CheckPositive(const KernelContext& ctx, const Tensor& scales, std::string_view who) {
  for (float s : std::span(scales.data<float>(), static_cast<size_t>(scales.NumElements())))
    if (!(s > 0)) return ctx.Error(who, " scales elements must be all positive.");
  return OkStatus();
}

// float to int32 as x86's conversion: NaN and values past int32 give INT32_MIN.
inline int32_t ToInt32(float v) {
  if (!(v >= -2147483648.0f && v < 2147483648.0f)) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(v);
}

// v clamped to [qmin, qmax], stored in Q.
template <typename Q>
Q Clamped(int64_t v, int64_t qmin, int64_t qmax) {
  return Q{static_cast<typename QuantTraits<Q>::Int>(std::max(std::min(v, qmax), qmin))};
}

// TF's QuantizeMultiplier: a double multiplier as a Q31 fixed-point value and a shift.
inline void QuantizeMultiplier(double m, int32_t* fixed, int* shift) {
  const double q = std::frexp(m, shift);
  auto q_fixed = static_cast<int64_t>(std::round(q * static_cast<double>(int64_t{1} << 31)));
  if (q_fixed == (int64_t{1} << 31)) {
    q_fixed /= 2;
    ++*shift;
  }
  if (*shift < -31) {
    *shift = 0;
    q_fixed = 0;
  }
  if (*shift > 30) {
    *shift = 30;
    q_fixed = (int64_t{1} << 31) - 1;
  }
  *fixed = static_cast<int32_t>(q_fixed);
}

// x * multiplier, rounding half toward +inf, saturated to int32.
inline int64_t MultiplyByQuantizedMultiplier(int64_t x, int32_t fixed, int shift) {
  const int total = 31 - shift;
  const int64_t r = (x * fixed + (int64_t{1} << (total - 1))) >> total;
  return std::clamp<int64_t>(r, std::numeric_limits<int32_t>::min(),
                             std::numeric_limits<int32_t>::max());
}

// The operands of a uniform quantized product (Dot, Convolution) and their quantization attrs:
// qint8 x qint8 -> qint32, or the Hybrid form float x qint8 -> float (rhs attrs only).
inline Status ReadProductOperands(PrepareContext& ctx, bool hybrid, UniformSpec* lhs,
                                  UniformSpec* rhs, UniformSpec* out) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(hybrid ? 4 : 8));
  if (hybrid) {
    KILN_PREPARE_ASSIGN(ctx, DType l, ctx.attrs.GetType("Tlhs"));
    KILN_PREPARE_ASSIGN(ctx, DType r, ctx.attrs.GetType("Trhs"));
    KILN_PREPARE_ASSIGN(ctx, DType o, ctx.attrs.GetType("Tout"));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tlhs", l, {DType::kFloat}));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Trhs", r, {DType::kQInt8}));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tout", o, {DType::kFloat}));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "lhs", DType::kFloat));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "rhs", DType::kQInt8));
    KILN_RETURN_IF_ERROR(ReadUniformSpec(ctx, "rhs_", rhs));
  } else {
    KILN_PREPARE_ASSIGN(ctx, DType in, ctx.attrs.GetType("Tin"));
    KILN_PREPARE_ASSIGN(ctx, DType o, ctx.attrs.GetType("Tout"));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tin", in, {DType::kQInt8}));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tout", o, {DType::kQInt32}));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "lhs", in));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "rhs", in));
    KILN_RETURN_IF_ERROR(ReadUniformSpec(ctx, "lhs_", lhs));
    KILN_RETURN_IF_ERROR(ReadUniformSpec(ctx, "rhs_", rhs));
    KILN_RETURN_IF_ERROR(ReadUniformSpec(ctx, "output_", out));
    if (lhs->axis != -1) return ctx.Error("lhs_quantization_axis Attr must be -1 (per-tensor).");
  }
  for (int i = 2; i < (hybrid ? 4 : 8); i += 2) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, "scales", DType::kFloat));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i + 1, "zero_points", DType::kInt32));
  }
  return OkStatus();
}

// TF's AsymmetricQuantize of one float row to int8: its own scale and zero point.
inline void QuantizeRow(const float* row, int64_t n, std::vector<int32_t>* q, float* scale,
                        int32_t* zp) {
  double rmin = 0, rmax = 0;
  for (int64_t i = 0; i < n; ++i) {
    rmin = std::min(rmin, static_cast<double>(row[i]));
    rmax = std::max(rmax, static_cast<double>(row[i]));
  }
  // TF keeps the scale as a float (its output parameter) and computes the zero point from that
  // float: with the double, a symmetric row's zero point is exactly -0.5 and rounds away from
  // TF's 0.
  const auto s = static_cast<float>((rmax - rmin) / 255.0);
  const auto inv = static_cast<float>(rmax - rmin != 0 ? 255.0 / (rmax - rmin) : 0.0);
  q->assign(static_cast<size_t>(n), 0);
  if (s == 0 || !std::isfinite(inv)) {
    *scale = 1.0f;
    *zp = 0;
    return;
  }
  const double sd = s;
  const double zmin = -128 - rmin / sd, zmax = 127 - rmax / sd;
  const double emin = 128 + std::abs(rmin / sd), emax = 127 + std::abs(rmax / sd);
  const double zd = emin < emax ? zmin : zmax;
  *zp = zd <= -128 ? -128 : zd >= 127 ? 127 : static_cast<int32_t>(std::round(zd));
  *scale = s;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = int64_t{ToInt32(std::floor(row[i] * inv + 0.5f))} + *zp;
    (*q)[i] = static_cast<int32_t>(std::clamp<int64_t>(v, -128, 127));
  }
}

}  // namespace kiln::exec
