// Plain references of TensorFlow's resampling filters, shared by the resize and
// ScaleAndTranslate cases (cases_image.cc) and ScaleAndTranslateGrad's (cases_grad_image.cc):
// the cubic kernels and the filters of TF's sampling_kernels.h in double, with the span of
// input pixels each output index reads.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kiln::testing {

inline double Cubic(double d, double a) {
  d = std::abs(d);
  if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0;
}

// Per output index along one dim: (input index, weight) pairs.
using Taps = std::vector<std::vector<std::pair<int64_t, double>>>;

// The filters of TF's sampling_kernels.h, in double from their definitions.
inline double FilterWeight(const std::string& k, double x) {
  constexpr double kPi = 3.14159265358979323846;
  x = std::abs(x);
  if (k.rfind("lanczos", 0) == 0) {
    const double r = std::stod(k.substr(7));
    if (x > r) return 0;
    if (x <= 1e-3) return 1;
    return r * std::sin(kPi * x) * std::sin(kPi * x / r) / (kPi * kPi * x * x);
  }
  if (k == "gaussian") return x >= 1.5 ? 0 : std::exp(-x * x / (2 * 0.5 * 0.5));
  if (k == "box") return x < 0.5 ? 1 : x == 0.5 ? 0.5 : 0;
  if (k == "triangle") return x < 1 ? 1 - x : 0;
  if (k == "keyscubic") return Cubic(x, -0.5);
  // mitchellcubic: B = C = 1/3
  if (x >= 2) return 0;
  if (x >= 1) return ((-7.0 / 18 * x + 2) * x - 10.0 / 3) * x + 16.0 / 9;
  return (7.0 / 6 * x - 2) * x * x + 8.0 / 9;
}

inline double FilterRadius(const std::string& k) {
  if (k.rfind("lanczos", 0) == 0) return std::stod(k.substr(7));
  if (k == "gaussian") return 1.5;
  if (k == "keyscubic" || k == "mitchellcubic") return 2;
  return 1;
}

// Output index x samples the input at (x + 0.5) / scale - translate / scale; the filter (widened
// by 1 / scale when downsampling with antialias) weighs the input pixels whose centres lie within
// its radius, normalised to sum 1; samples outside [0, in] give nothing. Coordinates in float as
// TF computes them (a box filter's edge or a span's end can hinge on the last bit); weights in
// double.
inline Taps FilterTaps(const std::string& k, bool antialias, int64_t in, int64_t out, float scale,
                       float translate) {
  const float inv_scale = static_cast<float>(1.0 / scale);
  const float inv_translate = -inv_scale * translate;
  const float ks = antialias ? std::max(inv_scale, 1.0f) : 1.0f;
  const float reach = static_cast<float>(FilterRadius(k)) * ks;
  Taps t(out);
  for (int64_t x = 0; x < out; ++x) {
    const float sample = (static_cast<float>(x) + 0.5f) * inv_scale + inv_translate;
    if (sample < 0 || sample > static_cast<float>(in)) continue;
    const int64_t lo =
        std::clamp<int64_t>(static_cast<int64_t>(std::ceil(sample - reach - 0.5f)), 0, in - 1);
    const int64_t hi =
        std::clamp<int64_t>(static_cast<int64_t>(std::floor(sample + reach - 0.5f)), 0, in - 1);
    double sum = 0;
    for (int64_t i = lo; i <= hi; ++i) {
      const float pos = (static_cast<float>(i) + 0.5f - sample) * (1.0f / ks);
      const double w = FilterWeight(k, pos);
      t[x].push_back({i, w});
      sum += w;
    }
    for (auto& p : t[x]) p.second /= sum;
  }
  return t;
}

}  // namespace kiln::testing
