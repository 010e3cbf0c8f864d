// The CPU kernels of ExtractGlimpse and ExtractGlimpseV2 (kernels/glimpse_ops.cc): a
// size[0] x size[1] window of every image, placed by offsets[i] = (y, x). The offset becomes the
// window's top-left pixel in float as TF computes it (normalized scales by the image size,
// centered measures from the image centre; V1 always removes half the window, V2 only when
// normalized and centered) and is truncated toward zero; output pixel (y, x) is input pixel
// (y + top, x + left) where that lies in the image.
//
// The rest of a window that leaves the image is noise. "zero" gives zeros, exactly as TF.
// "uniform" draws from [min, max) of the whole image (all channels; NaN left out of the min and
// max, and an empty image gives NaN as in TF), "gaussian" a normal with each channel's mean and
// standard deviation, clamped to the channel's [min, max]. TF draws these from Eigen's unseeded
// generators (a new seed every call), so no run can be compared with it value by value; here
// the same distributions come from a Philox stream per node with a random seed (every node and
// every call differ, as in TF).
#include "kernels/glimpse_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/philox.h"

namespace kiln::exec {
namespace {

using glimpse::GlimpseState;
using glimpse::Noise;

// The window's top-left corner (x or y) in float from one offset, as Eigen's ExtractGlimpses.
float WindowStart(const GlimpseState& st, float v, int64_t image, int64_t window) {
  const auto half_image = static_cast<float>(image) / 2.0f;
  const auto half_window = static_cast<float>(window) / 2.0f;
  if (st.version == 1) {
    if (st.normalized) v *= static_cast<float>(image);
    if (st.centered) v = v / 2.0f + half_image;
    return v - half_window;
  }
  if (st.normalized) {
    v *= static_cast<float>(image);
    if (st.centered) v = v / 2.0f + half_image - half_window;
  } else if (st.centered) {
    v += half_image;
  }
  return v;
}

// Truncation toward zero; NaN and values no int64 holds (where TF's conversion gives the most
// negative int64) place the window wholly outside.
int64_t Truncate(float v) {
  constexpr float kFar = 4.0e18f;
  return v > -kFar && v < kFar ? static_cast<int64_t>(v) : std::numeric_limits<int64_t>::min() / 2;
}

// Fills `out` ([h, w, c] of one glimpse) with the noise of image `img` ([ih, iw, c]).
void FillNoise(const GlimpseState& st, const float* img, int64_t ih, int64_t iw, int64_t c,
               int64_t n, random::Philox* gen, float* out) {
  if (st.noise == Noise::kZero) {
    std::fill_n(out, n * c, 0.0f);
    return;
  }
  const int64_t pixels = ih * iw;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  // Eigen's min and max reductions: NaN never replaces the running value.
  const auto min_max = [&](int64_t first, int64_t stride, int64_t count, float* lo, float* hi) {
    *lo = kInf;
    *hi = -kInf;
    for (int64_t i = 0; i < count; ++i) {
      const float v = img[first + i * stride];
      if (v < *lo) *lo = v;
      if (v > *hi) *hi = v;
    }
  };
  std::vector<float> draws(n * c);
  if (st.noise == Noise::kUniform) {
    random::FillPhilox(*gen, random::UniformDist<float>(), draws.data(), n * c);
    float lo = 0, hi = 0;
    min_max(0, 1, pixels * c, &lo, &hi);
    const float range = hi - lo;
    for (int64_t i = 0; i < n * c; ++i) out[i] = lo + draws[i] * range;
    return;
  }
  random::FillPhilox(*gen, random::NormalDist<float>(), draws.data(), n * c);
  for (int64_t ch = 0; ch < c; ++ch) {
    double sum = 0;
    for (int64_t p = 0; p < pixels; ++p) sum += img[p * c + ch];
    const auto mean = static_cast<float>(sum / static_cast<double>(pixels));
    double sq = 0;
    for (int64_t p = 0; p < pixels; ++p) {
      const double dv = img[p * c + ch] - mean;
      sq += dv * dv;
    }
    const auto sigma = static_cast<float>(std::sqrt(sq / static_cast<double>(pixels)));
    float lo = 0, hi = 0;
    min_max(ch, c, pixels, &lo, &hi);
    for (int64_t i = 0; i < n; ++i) {
      // Eigen's cwiseMin then cwiseMax (std::min / std::max order): NaN stays NaN.
      const float v = mean + draws[ch * n + i] * sigma;
      out[i * c + ch] = std::max(std::min(v, hi), lo);
    }
  }
}

Status ComputeGlimpse(const KernelContext& ctx) {
  const auto& st = ctx.state<GlimpseState>();
  const Tensor& input = ctx.input(0);
  const Tensor& size = ctx.input(1);
  const Tensor& offsets = ctx.input(2);
  if (input.rank() != 4) {
    return ctx.Error("input must be 4-dimensional (batch_size, height, width, depth), got shape ",
                     input.shape().ToString());
  }
  if (size.rank() != 1 || size.NumElements() != 2) {
    return ctx.Error("input must be a vector of size 2 (height, width), got shape ",
                     size.shape().ToString());
  }
  const int64_t batch = input.dim(0), ih = input.dim(1), iw = input.dim(2), c = input.dim(3);
  const int64_t h = size.data<int32_t>()[0], w = size.data<int32_t>()[1];
  if (h < 0 || w < 0) return ctx.Error("Expected a non-negative size, got ", h < 0 ? h : w);
  if (offsets.rank() != 2)
    return ctx.Error("input must be a matrix, got shape ", offsets.shape().ToString());
  if (offsets.dim(0) != batch)
    return ctx.Error("first dimension should be batch, got shape ", offsets.shape().ToString());
  if (offsets.dim(1) != 2) {
    return ctx.Error("second dimension should be of size 2 (y,x), got shape ",
                     offsets.shape().ToString());
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{batch, h, w, c}));
  if (out->NumElements() == 0) return OkStatus();
  const float* in = input.data<float>();
  const float* off = offsets.data<float>();
  float* o = out->data<float>();
  const int64_t glimpse = h * w * c, image = ih * iw * c;
  // One stream per call; image i draws from its own stretch of it (4 draws a block).
  const int64_t blocks = glimpse / 4 + 1;
  const random::Philox gen = st.Reserve(batch * blocks);
  for (int64_t i = 0; i < batch; ++i) {
    const int64_t top = Truncate(WindowStart(st, off[2 * i], ih, h));
    const int64_t left = Truncate(WindowStart(st, off[2 * i + 1], iw, w));
    const float* img = in + i * image;
    float* dst = o + i * glimpse;
    random::Philox image_gen = gen;
    image_gen.Skip(static_cast<uint64_t>(i * blocks));
    // TF's partial overlap: the window reaches past the image (the right or bottom edge counts).
    if (top < 0 || left < 0 || top + h >= ih || left + w >= iw)
      FillNoise(st, img, ih, iw, c, h * w, &image_gen, dst);
    for (int64_t y = std::max<int64_t>(0, -top); y < h && top + y < ih; ++y) {
      const int64_t x0 = std::max<int64_t>(0, -left), x1 = std::min(w, iw - left);
      if (x0 >= x1) break;
      std::copy_n(img + ((top + y) * iw + left + x0) * c, (x1 - x0) * c, dst + (y * w + x0) * c);
    }
  }
  return OkStatus();
}

constexpr KernelEntry kCpu[] = {
    {"ExtractGlimpse", ComputeGlimpse, 0b110},
    {"ExtractGlimpseV2", ComputeGlimpse, 0b110},
};

}  // namespace

std::span<const KernelEntry> GlimpseCpuKernels() { return kCpu; }

}  // namespace kiln::exec
