// Weights that are int8 levels: what `savedmodel-cli quantize` stores (int8, one scale per
// output channel) after the load has multiplied them back into float32 (and folded a batch
// norm's per-channel scale into them). The prepare-time fusion asks whether a product's weights
// are such (graph/fusion_int8.cc); the integer kernels take their levels and scales back
// (cpu/int8_product_ops.cc), so the integer product is the float one's to within float rounding.
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

// Element i of `n` belongs to output channel i % channels (`outer` false: the channel is the
// innermost index) or i / (n / channels). Each channel's scale is max|w| / L for the largest
// level count L <= 127 that puts every weight within 1/1000 of a scale of a level (127 for
// weights quantized per channel; less where the quantizer's channels were coarser than this
// product's, as Keras's EinsumDense kernel [d, heads, dim] scaled per dim and read as a
// [d, heads * dim] matrix), 1 for a zero channel; true when every channel has one, else false.
// `out` null: only the answer (the fusion's question; the kernel keeps the levels).
inline bool QuantizeOnGrid(const float* w, int64_t n, int64_t channels, bool outer,
                           Int8Weights* out) {
  if (channels <= 0 || n % channels != 0) return false;
  const int64_t per = n / channels;
  // Element j of channel c.
  const auto at = [&](int64_t c, int64_t j) { return outer ? c * per + j : j * channels + c; };
  const auto fits = [&](int64_t c, float s) {
    for (int64_t j = 0; j < per; ++j) {
      const float v = w[at(c, j)], q = std::nearbyint(v / s);
      if (std::abs(q * s - v) > 1e-3f * s || std::abs(q) > 127) return false;
    }
    return true;
  };
  // max|w| / 127 per channel first, in one pass over the weights in their order.
  std::vector<float> max(channels, 0.f), scales(channels);
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(w[i])) return false;
    const int64_t c = outer ? i / per : i % channels;
    max[c] = std::max(max[c], std::abs(w[i]));
  }
  for (int64_t c = 0; c < channels; ++c) scales[c] = max[c] > 0 ? max[c] / 127.f : 1.f;
  std::vector<char> off(channels, 0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = outer ? i / per : i % channels;
    const float q = std::nearbyint(w[i] / scales[c]);
    off[c] |= static_cast<char>(std::abs(q * scales[c] - w[i]) > 1e-3f * scales[c]);
  }
  // Channels off that grid: fewer levels.
  for (int64_t c = 0; c < channels; ++c) {
    if (!off[c]) continue;
    int levels = 126;
    while (levels > 0 && !fits(c, max[c] / static_cast<float>(levels))) --levels;
    if (levels == 0) return false;
    scales[c] = max[c] / static_cast<float>(levels);
  }
  if (out != nullptr) {
    out->levels.resize(n);
    for (int64_t i = 0; i < n; ++i)
      out->levels[i] =
          static_cast<int8_t>(std::nearbyint(w[i] / scales[outer ? i / per : i % channels]));
    out->scales = std::move(scales);
  }
  return true;
}

}  // namespace kiln::exec
