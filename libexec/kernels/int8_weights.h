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
// innermost index) or i / (n / channels). Each channel's scale is max|w| / 127 (1 for a zero
// channel) and its levels round(w / scale); true when every weight is within 1/1000 of a scale
// of its level (a product of int8 levels and a scale, to float rounding), else false. `out`
// null: only the answer (the fusion's question; the kernel keeps the levels).
inline bool QuantizeOnGrid(const float* w, int64_t n, int64_t channels, bool outer,
                           Int8Weights* out) {
  if (channels <= 0 || n % channels != 0) return false;
  const int64_t inner = outer ? n / channels : 1;
  const auto channel = [&](int64_t i) { return outer ? i / inner : i % channels; };
  std::vector<float> scales(channels, 0.f);
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(w[i])) return false;
    scales[channel(i)] = std::max(scales[channel(i)], std::abs(w[i]));
  }
  for (float& s : scales) s = s > 0 ? s / 127.f : 1.f;
  if (out != nullptr) out->levels.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    const float s = scales[channel(i)];
    const float q = std::nearbyint(w[i] / s);
    if (std::abs(q * s - w[i]) > 1e-3f * s || std::abs(q) > 127) return false;
    if (out != nullptr) out->levels[i] = static_cast<int8_t>(q);
  }
  if (out != nullptr) out->scales = std::move(scales);
  return true;
}

}  // namespace kiln::exec
