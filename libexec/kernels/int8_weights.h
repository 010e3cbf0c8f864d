// Weights that are int8 levels: what `savedmodel-cli quantize` stores (int8, one scale per
// output channel) after the load has multiplied them back into float32 (and folded a batch
// norm's per-channel scale into them). The prepare-time fusion finds their levels and scales
// (graph/fusion_int8.cc) and hands them to the integer kernels as int8 weights with attr
// weight_scales (cpu/int8_product_ops.cc), so the integer product is the float one's to within
// float rounding.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace kiln::exec {

struct Int8Weights {
  std::vector<int8_t> levels;  // the weights' layout
  std::vector<float> scales;   // one per output channel
};

// Round to nearest, ties to even, for |x| < 2^22 (levels are within 128): adding and taking
// away 1.5 * 2^23 leaves the integer part, inline where std::nearbyint is a libm call.
inline float NearestLevel(float x) {
  constexpr float kShift = 12582912.0f;
  return (x + kShift) - kShift;
}

// Calls f(i, c) for each element i of `n` in memory order, c its output channel: i % channels
// (`outer` false: the channel is the innermost index) or i / (n / channels).
template <typename F>
void ForEachInChannel(int64_t n, int64_t channels, bool outer, F&& f) {
  const int64_t per = n / channels;
  if (outer) {
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t j = 0; j < per; ++j) f(c * per + j, c);
  } else {
    for (int64_t i = 0; i < n; i += channels)
      for (int64_t c = 0; c < channels; ++c) f(i + c, c);
  }
}

// Element i of `n` belongs to output channel i % channels (`outer` false: the channel is the
// innermost index) or i / (n / channels). Each channel's scale is max|w| / L for the largest
// level count L <= 127 that puts every weight within 1/1000 of a scale of a level (127 for
// weights quantized per channel; less where the quantizer's channels were coarser than this
// product's, as Keras's EinsumDense kernel [d, heads, dim] scaled per dim and read as a
// [d, heads * dim] matrix), 1 for a zero channel; true when every channel has one, else false.
// `out` null: only the answer.
inline bool QuantizeOnGrid(const float* w, int64_t n, int64_t channels, bool outer,
                           Int8Weights* out) {
  if (channels <= 0 || n % channels != 0) return false;
  const int64_t per = n / channels;
  // Element j of channel c.
  const auto at = [&](int64_t c, int64_t j) { return outer ? c * per + j : j * channels + c; };
  const auto fits = [&](int64_t c, float s) {
    for (int64_t j = 0; j < per; ++j) {
      const float v = w[at(c, j)], q = NearestLevel(v / s);
      if (std::abs(q * s - v) > 1e-3f * s || std::abs(q) > 127) return false;
    }
    return true;
  };
  // max|w| / 127 per channel first, in one pass over the weights in their order.
  std::vector<float> max(channels, 0.f), scales(channels);
  bool finite = true;
  ForEachInChannel(n, channels, outer, [&](int64_t i, int64_t c) {
    finite &= std::isfinite(w[i]);
    max[c] = std::max(max[c], std::abs(w[i]));
  });
  if (!finite) return false;
  for (int64_t c = 0; c < channels; ++c) scales[c] = max[c] > 0 ? max[c] / 127.f : 1.f;
  // The levels on that grid (|level| <= 127 by the scale), and the channels off it.
  std::vector<char> off(channels, 0);
  std::vector<int8_t> levels(out != nullptr ? n : 0);
  ForEachInChannel(n, channels, outer, [&](int64_t i, int64_t c) {
    const float q = NearestLevel(w[i] / scales[c]);
    off[c] |= static_cast<char>(std::abs(q * scales[c] - w[i]) > 1e-3f * scales[c]);
    if (out != nullptr) levels[i] = static_cast<int8_t>(q);
  });
  // Channels off that grid: fewer levels.
  for (int64_t c = 0; c < channels; ++c) {
    if (!off[c]) continue;
    int count = 126;
    while (count > 0 && !fits(c, max[c] / static_cast<float>(count))) --count;
    if (count == 0) return false;
    scales[c] = max[c] / static_cast<float>(count);
    if (out != nullptr)
      for (int64_t j = 0; j < per; ++j)
        levels[at(c, j)] = static_cast<int8_t>(NearestLevel(w[at(c, j)] / scales[c]));
  }
  if (out != nullptr) {
    out->levels = std::move(levels);
    out->scales = std::move(scales);
  }
  return true;
}

}  // namespace kiln::exec
