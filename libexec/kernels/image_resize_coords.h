// TensorFlow's resize coordinate conventions (tensorflow/core/util/image_resizer_state.h and the
// resize kernels), shared by the CPU resize kernels (kernels/cpu/image_resize_ops.cc), their
// gradients (kernels/cpu/image_grad_ops.cc) and the GPU's (kernels/cuda/image.cu: the KILN_HD
// functions): the scale is in/out, or (in - 1) / (out - 1) with align_corners;
// half_pixel_centers maps x to (x + 0.5) * scale - 0.5 (nearest neighbour drops the -0.5); all
// in float, as TF, so rounding at pixel boundaries picks the same source pixels.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/host_device.h"

namespace kiln::exec {

inline float ResizeScale(int64_t in, int64_t out, bool align_corners) {
  // A 1-pixel side aligns nothing: TF takes in / out there (area resizing divides by the scale).
  return (align_corners && in > 1 && out > 1)
             ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
             : static_cast<float>(in) / static_cast<float>(out);
}

KILN_HD inline float LegacyScale(int64_t x, float scale) { return static_cast<float>(x) * scale; }
KILN_HD inline float HalfPixelScale(int64_t x, float scale) {
  return (static_cast<float>(x) + 0.5f) * scale - 0.5f;
}

// The input coordinate (as float) of output coordinate x for bilinear and bicubic.
KILN_HD inline float SourceCoord(int64_t x, float scale, bool half_pixel) {
  return half_pixel ? HalfPixelScale(x, scale) : LegacyScale(x, scale);
}

inline int64_t Bound(int64_t v, int64_t limit) {
  return std::min(limit - 1, std::max<int64_t>(0, v));
}

KILN_HD inline int64_t NearestIndex(int64_t x, float scale, int64_t in, bool align,
                                    bool half_pixel) {
  const float src = half_pixel ? (static_cast<float>(x) + 0.5f) * scale : LegacyScale(x, scale);
  int64_t i = std::min(
      align ? static_cast<int64_t>(std::round(src)) : static_cast<int64_t>(std::floor(src)),
      in - 1);
  if (half_pixel) i = std::max<int64_t>(0, i);
  return i;
}

struct Lerp {
  int64_t lower, upper;
  float lerp;
};

// The two source pixels of output coordinate i and the weight of the upper one.
KILN_HD inline Lerp BilinearLerp(int64_t i, int64_t in, float scale, bool half_pixel) {
  const float src = SourceCoord(i, scale, half_pixel);
  const float fl = std::floor(src);
  Lerp w;
  w.lower = std::max<int64_t>(static_cast<int64_t>(fl), 0);
  w.upper = std::min<int64_t>(static_cast<int64_t>(std::ceil(src)), in - 1);
  w.lerp = src - fl;
  return w;
}

inline std::vector<Lerp> BilinearWeights(int64_t out, int64_t in, float scale, bool half_pixel) {
  std::vector<Lerp> w(out);
  for (int64_t i = 0; i < out; ++i) w[i] = BilinearLerp(i, in, scale, half_pixel);
  return w;
}

// Along x on the top and bottom rows, then along y (TF's order).
KILN_HD inline float BilinearMix(float tl, float tr, float bl, float br, float x_lerp,
                                 float y_lerp) {
  const float top = tl + (tr - tl) * x_lerp;
  const float bottom = bl + (br - bl) * x_lerp;
  return top + (bottom - top) * y_lerp;
}

constexpr int64_t kTableSize = 1 << 10;

// TF's table: entry 2i is the cubic weight at distance i/1024, 2i+1 at 1 + i/1024.
inline const float* CubicTable(bool keys) {
  auto build = [](double a) {
    std::vector<float> t((kTableSize + 1) * 2);
    for (int64_t i = 0; i <= kTableSize; ++i) {
      float x = static_cast<float>(i * 1.0 / kTableSize);
      t[i * 2] = static_cast<float>(((a + 2) * x - (a + 3)) * x * x + 1);
      x += 1.0f;
      t[i * 2 + 1] = static_cast<float>(((a * x - 5 * a) * x + 8 * a) * x - 4 * a);
    }
    return t;
  };
  static const std::vector<float> keys_table = build(-0.5);
  static const std::vector<float> legacy_table = build(-0.75);
  return keys ? keys_table.data() : legacy_table.data();
}

struct Cubic {
  int64_t index[4];
  float weight[4];
};

inline Cubic CubicWeights(float scale, int64_t out_loc, int64_t limit, bool half_pixel) {
  const float src = SourceCoord(out_loc, scale, half_pixel);
  const int64_t in_loc = static_cast<int64_t>(std::floor(src));
  const float delta = src - static_cast<float>(in_loc);
  const int64_t offset = std::lrint(delta * kTableSize);
  const float* table = CubicTable(half_pixel);
  Cubic c;
  const float raw[4] = {table[offset * 2 + 1], table[offset * 2], table[(kTableSize - offset) * 2],
                        table[(kTableSize - offset) * 2 + 1]};
  for (int k = 0; k < 4; ++k) {
    c.index[k] = Bound(in_loc - 1 + k, limit);
    // With half-pixel centers, samples outside the image weigh 0 and the rest are renormalised.
    c.weight[k] = half_pixel ? (c.index[k] == in_loc - 1 + k ? raw[k] : 0.0f) : raw[k];
  }
  if (half_pixel) {
    const float sum = c.weight[0] + c.weight[1] + c.weight[2] + c.weight[3];
    if (std::abs(sum) >= 1000.0f * std::numeric_limits<float>::min()) {
      const float inv = 1.0f / sum;
      for (float& w : c.weight) w *= inv;
    }
  }
  return c;
}

}  // namespace kiln::exec
