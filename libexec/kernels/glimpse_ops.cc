// ExtractGlimpse and ExtractGlimpseV2 (tensorflow/core/kernels/image/attention_ops.cc over
// Eigen's ExtractGlimpses, eigen_attention.h): a size[0] x size[1] window of every image, placed
// by offsets[i] = (y, x). The offset becomes the window's top-left pixel in float as TF computes
// it (normalized scales by the image size, centered measures from the image centre; V1 always
// removes half the window, V2 only when normalized and centered) and is truncated toward zero;
// output pixel (y, x) is input pixel (y + top, x + left) where that lies in the image.
//
// The rest of a window that leaves the image is noise. "zero" gives zeros, exactly as TF.
// "uniform" draws from [min, max) of the whole image (all channels; NaN left out of the min and
// max, and an empty image gives NaN as in TF), "gaussian" a normal with each channel's mean and
// standard deviation, clamped to the channel's [min, max]. TF draws these from Eigen's unseeded
// generators (a new seed every call), so no run can be compared with it value by value; here
// the same distributions come from a Philox stream per node with a random seed (every node and
// every call differ, as in TF). The noise attrs read as TF's: noise "" picks uniform when
// uniform_noise is true, else gaussian; a non-empty noise wins (so uniform_noise=false with the
// default noise "uniform" is uniform noise); uniform_noise=true with "gaussian" or "zero" is an
// error.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/philox.h"
#include "kernels/type_lists.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

enum class Noise { kUniform, kGaussian, kZero };

struct GlimpseState : OpState {
  int version = 2;
  bool normalized = true, centered = true;
  Noise noise = Noise::kUniform;
  mutable std::mutex mu;
  mutable random::Philox generator;  // guarded by mu

  // A stream of `blocks` Philox blocks; the node's own moves past them.
  random::Philox Reserve(int64_t blocks) const {
    std::lock_guard<std::mutex> lock(mu);
    random::Philox local = generator;
    generator.Skip(static_cast<uint64_t>(blocks));
    return local;
  }
};

Status PrepareGlimpse(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  auto st = std::make_shared<GlimpseState>();
  st->version = ctx.op == "ExtractGlimpse" ? 1 : 2;
  KILN_PREPARE_ASSIGN(ctx, st->normalized, ctx.attrs.GetBool("normalized", true));
  KILN_PREPARE_ASSIGN(ctx, st->centered, ctx.attrs.GetBool("centered", true));
  KILN_PREPARE_ASSIGN(ctx, bool uniform_noise, ctx.attrs.GetBool("uniform_noise", true));
  KILN_PREPARE_ASSIGN(ctx, std::string noise, ctx.attrs.GetString("noise", "uniform"));
  if (uniform_noise && !noise.empty() && noise != "uniform")
    return ctx.Error("The uniform_noise and noise could not be specified at the same time");
  if (noise.empty()) {
    st->noise = uniform_noise ? Noise::kUniform : Noise::kGaussian;
  } else if (noise == "uniform") {
    st->noise = Noise::kUniform;
  } else if (noise == "gaussian") {
    st->noise = Noise::kGaussian;
  } else if (noise == "zero") {
    st->noise = Noise::kZero;
  } else {
    return ctx.Error("The noise could only be uniform, gaussian, or zero, got ", noise);
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "size", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "offsets", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "input", 4));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "size", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "offsets", 2));
  const std::vector<int64_t> in = DimsOrUnknown(ctx.inputs[0].shape, 4);
  int64_t h = -1, w = -1;
  if (const Tensor* size = ConstantInput(ctx, 1)) {
    const std::vector<int64_t> v = IndexValues(*size);
    if (v.size() != 2)
      return ctx.Error("input must be a vector of size 2 (height, width), got ", DimsString(v));
    for (int64_t d : v)
      if (d < 0) return ctx.Error("Expected a non-negative size, got ", d);
    h = v[0];
    w = v[1];
  }
  ctx.outputs = {TensorSpec{DType::kFloat, PartialShape{in[0], h, w, in[3]}}};
  std::random_device rd;  // unseeded, as TF's Eigen generators
  st->generator = random::Philox((uint64_t{rd()} << 32) | rd(), (uint64_t{rd()} << 32) | rd());
  ctx.state = std::move(st);
  return OkStatus();
}

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

constexpr OpDefinition kDefs[] = {
    {"ExtractGlimpse", "glimpse", kOpFreshOutputs, PrepareGlimpse},
    {"ExtractGlimpseV2", "glimpse", kOpFreshOutputs, PrepareGlimpse},
};

constexpr KernelEntry kCpu[] = {
    {"ExtractGlimpse", ComputeGlimpse, 0b110},
    {"ExtractGlimpseV2", ComputeGlimpse, 0b110},
};

}  // namespace

std::span<const OpDefinition> GlimpseOpDefs() { return kDefs; }
std::span<const KernelEntry> GlimpseCpuKernels() { return kCpu; }

}  // namespace kiln::exec
