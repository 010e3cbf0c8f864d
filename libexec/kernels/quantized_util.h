// TensorFlow's quantized-tensor arithmetic (quantization_utils.h): a tensor of qint8, quint8,
// qint16, quint16 or qint32 means floats in [min, max], the range spread over the type's whole
// integer range. The conversions here are TF's scalar ones, in the same double arithmetic, so
// a kernel built on them gives TF's integers. Also the input and attr checks the quantized kernel
// files share.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"
#include "kiln/core/dtype.h"

namespace kiln::exec {

using QuantizedTypes = TypeList<QInt8, QUInt8, QInt16, QUInt16, QInt32>;
using Quantized8Types = TypeList<QInt8, QUInt8>;

// The integer a quantized type stores, and its range.
template <typename Q>
struct QuantTraits {
  using Int = decltype(Q::value);
  static constexpr int kBits = static_cast<int>(sizeof(Int)) * 8;
  static constexpr bool kSigned = std::is_signed_v<Int>;
  static constexpr int64_t kLowest = kSigned ? -(int64_t{1} << (kBits - 1)) : 0;
  static constexpr int64_t kHighest =
      kSigned ? (int64_t{1} << (kBits - 1)) - 1 : (int64_t{1} << kBits) - 1;
};

// The float step between two neighbouring levels of [min, max].
template <typename Q>
float FloatForOneQuantizedLevel(float range_min, float range_max) {
  return (range_max - range_min) /
         static_cast<float>(QuantTraits<Q>::kHighest - QuantTraits<Q>::kLowest);
}

// The range of a product of a (in [min_a, max_a]) and b, stored in C: one level of C is one
// level of a times one level of b.
template <typename A, typename B, typename C>
void QuantizationRangeForMultiplication(float min_a, float max_a, float min_b, float max_b,
                                        float* min_c, float* max_c) {
  const float level =
      FloatForOneQuantizedLevel<A>(min_a, max_a) * FloatForOneQuantizedLevel<B>(min_b, max_b);
  *min_c = level * static_cast<float>(QuantTraits<C>::kLowest);
  *max_c = level * static_cast<float>(QuantTraits<C>::kHighest);
}

// A quantized element as TF's arithmetic reads it: QInt32 converts only through float, so
// values past 2^24 lose their low bits (TF's Eigen::QInt32 has operator float alone).
template <typename Q>
double QuantizedValue(Q q) {
  if constexpr (std::is_same_v<Q, QInt32>) {
    return static_cast<float>(q.value);
  } else {
    return q.value;
  }
}

// Denormal floats flushed to zero, as TF's CPU kernels run (FTZ/DAZ set).
inline float FlushDenormal(float v) {
  return std::abs(v) < std::numeric_limits<float>::min() ? std::copysign(0.0f, v) : v;
}

// The scalar conversions (quantization_utils.h's FloatToQuantized, QuantizedToFloat): the
// float range stretched by 2^n / (2^n - 1), in double.
template <typename Q>
int64_t FloatToQuantizedUnclamped(float input, float range_min, float range_max) {
  constexpr int64_t lowest = QuantTraits<Q>::kLowest;
  if (range_min == range_max) return lowest;
  const int64_t steps = int64_t{1} << QuantTraits<Q>::kBits;
  const double range_adjust = static_cast<double>(steps) / (static_cast<double>(steps) - 1.0);
  const double range = static_cast<double>(range_max - range_min) * range_adjust;
  const double range_scale = static_cast<double>(steps) / range;
  const auto quantized =
      static_cast<int64_t>(std::round(input * range_scale) - std::round(range_min * range_scale));
  return quantized + lowest;
}

template <typename Q>
Q FloatToQuantized(float input, float range_min, float range_max) {
  const int64_t q = std::clamp(FloatToQuantizedUnclamped<Q>(input, range_min, range_max),
                               QuantTraits<Q>::kLowest, QuantTraits<Q>::kHighest);
  return Q{static_cast<typename QuantTraits<Q>::Int>(q)};
}

template <typename Q>
float QuantizedToFloat(Q input, float range_min, float range_max) {
  if (range_min == range_max) return range_min;
  const int64_t steps = int64_t{1} << QuantTraits<Q>::kBits;
  const double range_adjust = static_cast<double>(steps) / (static_cast<double>(steps) - 1.0);
  const double range = static_cast<double>(range_max - range_min) * range_adjust;
  const double range_scale = range / static_cast<double>(steps);
  const double offset = QuantizedValue(input) - static_cast<double>(QuantTraits<Q>::kLowest);
  // As TF: the scale rounded to float first, so the minimum lands on a level of the float grid.
  const auto scale_f = static_cast<float>(range_scale);
  const double range_min_rounded = std::round(range_min / scale_f) * scale_f;
  return static_cast<float>(range_min_rounded + offset * range_scale);
}

template <typename In, typename Out>
Out RequantizeInNewRange(In input, float min_in, float max_in, float min_out, float max_out) {
  return FloatToQuantized<Out>(QuantizedToFloat<In>(input, min_in, max_in), min_out, max_out);
}

// The tensor-wide forms TF's kernels call through Eigen ("...UsingEigen"): float arithmetic on
// a (2^n - 1)-step grid, rounding half away from zero. They differ from the scalar ones by a
// level on many inputs, and each kernel uses the one TF's does.
template <typename Q>
struct EigenDequantizer {
  float range_scale, offset;
  EigenDequantizer(float range_min, float range_max) {
    const double steps = std::ldexp(1.0, QuantTraits<Q>::kBits) - 1.0;
    range_scale = static_cast<float>(static_cast<double>(range_max - range_min) / steps);
    const float min_rounded =
        range_max == range_min ? range_min : std::round(range_min / range_scale) * range_scale;
    offset = min_rounded - static_cast<float>(QuantTraits<Q>::kLowest) * range_scale;
  }
  float operator()(Q q) const {
    return offset + static_cast<float>(QuantizedValue(q)) * range_scale;
  }
};

template <typename Q>
struct EigenQuantizer {
  float range_scale = 0, min_scaled_minus_lowest = 0, lower = 0, upper = 0;
  EigenQuantizer(float range_min, float range_max) {
    const double steps = std::ldexp(1.0, QuantTraits<Q>::kBits) - 1.0;
    range_scale = range_max == range_min
                      ? 0.0f
                      : static_cast<float>(steps / static_cast<double>(range_max - range_min));
    const float min_scaled = std::round(range_min * range_scale);
    min_scaled_minus_lowest = min_scaled - static_cast<float>(QuantTraits<Q>::kLowest);
    lower = std::max(static_cast<float>(QuantTraits<Q>::kLowest), -2147483648.0f);
    upper = std::min(static_cast<float>(QuantTraits<Q>::kHighest), 2147483520.0f);
  }
  Q operator()(float x) const {
    float v = std::round(x * range_scale) - min_scaled_minus_lowest;
    v = std::min(std::max(v, lower), upper);
    return Q{static_cast<typename QuantTraits<Q>::Int>(static_cast<int32_t>(v))};
  }
};

// Reads a scalar float input (a range bound), as TF's kernels read `flat<float>()(0)`.
inline float ScalarFloat(const Tensor& t) { return t.NumElements() > 0 ? t.data<float>()[0] : 0; }

// The outputs of most quantized ops: the tensor and its float range.
inline constexpr char kQOut[] = "output,output_min,output_max";

// Fails unless input i is a scalar (rank 0).
inline Status ExpectScalarInput(const KernelContext& ctx, int i, std::string_view name) {
  if (ctx.input(i).rank() != 0)
    return ctx.Error("`", name, "` must be rank 0 but is rank ", ctx.input(i).rank());
  return OkStatus();
}

// Fails unless input i holds one element, whatever its rank.
inline Status ExpectOneElementInput(const KernelContext& ctx, int i, std::string_view name) {
  if (ctx.input(i).NumElements() != 1)
    return ctx.Error(name, " must have 1 element, got shape ", ctx.input(i).shape().ToString());
  return OkStatus();
}

// The height and width entries of a 4-entry NHWC attr (strides, dilations) whose batch and
// depth entries must be 1.
inline Status ReadSpatialList(const PrepareContext& ctx, std::string_view name,
                              const std::vector<int64_t>& v, std::array<int64_t, 2>* out) {
  if (v.size() != 4)
    return ctx.Error("attr '", name, "' must have 4 entries (NHWC), got ", v.size());
  if (v[0] != 1 || v[3] != 1)
    return ctx.Error("attr '", name, "': batch and depth entries must be 1");
  if (v[1] < 1 || v[2] < 1) return ctx.Error("attr '", name, "' entries must be positive");
  *out = {v[1], v[2]};
  return OkStatus();
}

}  // namespace kiln::exec
