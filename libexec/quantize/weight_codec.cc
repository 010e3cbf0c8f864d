#include "quantize/weight_codec.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <vector>

namespace kiln::exec::quantize {
namespace {

Status CheckFinite(std::span<const float> w) {
  for (size_t i = 0; i < w.size(); ++i)
    if (!std::isfinite(w[i]))
      return FailedPrecondition("it holds a non-finite value (", w[i], " at flat index ", i, ")");
  return OkStatus();
}

// The error measures of a decoded weight against the original.
void MeasureError(std::span<const float> w, const std::vector<float>& decoded, EncodedWeight* e) {
  double diff2 = 0, norm2 = 0, max_abs = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    const double d = static_cast<double>(w[i]) - decoded[i];
    diff2 += d * d;
    norm2 += static_cast<double>(w[i]) * w[i];
    max_abs = std::max(max_abs, std::abs(d));
  }
  e->relative_error = norm2 > 0 ? std::sqrt(diff2 / norm2) : 0;
  e->max_abs_error = max_abs;
}

}  // namespace

Result<EncodedWeight> EncodeInt8(const Tensor& weight, int axis) {
  if (weight.dtype() != DType::kFloat)
    return InvalidArgument("int8 weights are made from float32, not ",
                           DTypeShortName(weight.dtype()));
  if (axis >= weight.rank())
    return InvalidArgument("axis ", axis, " of a rank-", weight.rank(), " weight");
  const std::span<const float> w = weight.flat<float>();
  KILN_RETURN_IF_ERROR(CheckFinite(w));
  // The weight as [outer, channels, inner] around the axis (channels 1 per tensor).
  int64_t outer = 1, channels = 1, inner = 1;
  for (int d = 0; d < weight.rank(); ++d) {
    if (axis < 0 || d > axis)
      inner *= weight.dim(d);
    else if (d < axis)
      outer *= weight.dim(d);
    else
      channels = weight.dim(d);
  }
  std::vector<float> max_abs(static_cast<size_t>(channels), 0.f);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t i = 0; i < inner; ++i)
        max_abs[c] = std::max(max_abs[c], std::abs(w[(o * channels + c) * inner + i]));
  EncodedWeight e;
  Shape scale_shape;
  if (axis >= 0) {
    scale_shape.AddDim(channels);
    for (int d = axis + 1; d < weight.rank(); ++d) scale_shape.AddDim(1);
  }
  e.scale = Tensor(DType::kFloat, scale_shape);
  float* scale = e.scale.data<float>();
  for (int64_t c = 0; c < channels; ++c) scale[c] = max_abs[c] > 0 ? max_abs[c] / 127.f : 1.f;
  const auto [lo, hi] = std::minmax_element(scale, scale + channels);
  e.min_scale = *lo;
  e.max_scale = *hi;
  e.stored = Tensor(DType::kInt8, weight.shape());
  int8_t* q = e.stored.data<int8_t>();
  std::vector<float> decoded(w.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t k = (o * channels + c) * inner + i;
        const float v = std::clamp(std::round(w[k] / scale[c]), -127.f, 127.f);
        q[k] = static_cast<int8_t>(v);
        decoded[k] = v * scale[c];
      }
  MeasureError(w, decoded, &e);
  return e;
}

Result<EncodedWeight> EncodeHalf(const Tensor& weight, DType to) {
  if (weight.dtype() != DType::kFloat)
    return InvalidArgument("half-precision weights are made from float32, not ",
                           DTypeShortName(weight.dtype()));
  if (to != DType::kHalf && to != DType::kBFloat16)
    return InvalidArgument("EncodeHalf makes float16 or bfloat16, not ", DTypeShortName(to));
  const std::span<const float> w = weight.flat<float>();
  KILN_RETURN_IF_ERROR(CheckFinite(w));
  EncodedWeight e;
  e.stored = Tensor(to, weight.shape());
  std::vector<float> decoded(w.size());
  auto* bits = static_cast<uint16_t*>(e.stored.raw_data());
  for (size_t i = 0; i < w.size(); ++i) {
    if (to == DType::kHalf) {
      if (std::abs(w[i]) > 65504.f)
        return FailedPrecondition("it holds ", w[i], " (flat index ", i,
                                  "), beyond float16's range of 65504");
      const Eigen::half h(w[i]);
      bits[i] = Eigen::numext::bit_cast<uint16_t>(h);
      decoded[i] = static_cast<float>(h);
    } else {
      const Eigen::bfloat16 b(w[i]);
      bits[i] = Eigen::numext::bit_cast<uint16_t>(b);
      decoded[i] = static_cast<float>(b);
    }
  }
  MeasureError(w, decoded, &e);
  return e;
}

}  // namespace kiln::exec::quantize
