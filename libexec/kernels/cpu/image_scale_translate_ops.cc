// The CPU kernels of the ops in kernels/image_scale_translate_ops.cc.
//
// ScaleAndTranslate: separable resampling with a named filter kernel, what tf.image.resize runs
// for antialias=True and for the lanczos3/lanczos5/gaussian/mitchellcubic methods
// (tensorflow/core/kernels/image/scale_and_translate_op.cc, sampling_kernels.h). Each output
// coordinate x samples the input at (x + 0.5) / scale - translation / scale; when downsampling
// with antialias the kernel is widened by 1 / scale. Per output index the weights over its
// span of input pixels are normalised to sum 1; a sample outside the input gets weight 0. The
// float arithmetic follows TF's (including where TF computes in double) so the weights match,
// and the two passes run in TF's order (rows into an [out_h, in_w] float buffer, then columns)
// with TF's fixed span width, so sums accumulate identically. The output is always float.
// ScaleAndTranslateGrad (float only, as TF registers it) is its adjoint in TF's form: spans per
// input index built from the forward's weights, run through the same two passes.
//
// ImageProjectiveTransformV2/V3: what Keras's RandomRotation, RandomZoom and RandomTranslation
// (and tf.raw_ops users) put in a graph (tensorflow/core/kernels/image/image_ops.{h,cc}). A
// transform row [a0, a1, a2, b0, b1, b2, c0, c1] maps output pixel (x, y) to the input point
// ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k), k = c0 x + c1 y + 1; fill_mode maps points
// outside the input back in (REFLECT, WRAP, NEAREST) or leaves them (CONSTANT), and the point is
// read by NEAREST (std::round) or BILINEAR interpolation, in float, where each pixel read outside
// the input is fill_value (so a CONSTANT point just outside still takes its nearest pixel, or
// blends with the fill value, as TF 2.21 does); the result is converted to the image's type as
// TF converts it.
#include "kernels/image_scale_translate_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

using image_scale_translate::FillMode;
using image_scale_translate::Filter;
using image_scale_translate::ScaleTranslateState;
using image_scale_translate::TransformState;
using image_scale_translate::TransformTypes;

float Lanczos(float radius, float x) {
  constexpr float kPi = 3.14159265359f;
  x = std::abs(x);
  if (x > radius) return 0.0f;
  if (x <= 1e-3f) return 1.0f;  // the limit of sin(x) / x at 0
  return radius * std::sin(kPi * x) * std::sin(kPi * x / radius) / (kPi * kPi * x * x);
}

float Radius(Filter f) {
  switch (f) {
    case Filter::kLanczos1:
    case Filter::kBox:
    case Filter::kTriangle:
      return 1.0f;
    case Filter::kLanczos3:
      return 3.0f;
    case Filter::kLanczos5:
      return 5.0f;
    case Filter::kGaussian:
      return 1.5f;
    case Filter::kKeys:
    case Filter::kMitchell:
      return 2.0f;
  }
  return 1.0f;
}

float Weight(Filter f, float x) {
  x = std::abs(x);
  switch (f) {
    case Filter::kLanczos1:
      return Lanczos(1.0f, x);
    case Filter::kLanczos3:
      return Lanczos(3.0f, x);
    case Filter::kLanczos5:
      return Lanczos(5.0f, x);
    case Filter::kGaussian: {
      // sigma = radius / 3; TF evaluates the exponent in double.
      constexpr float kRadius = 1.5f;
      const float sigma = kRadius / 3.0f;
      if (x >= kRadius) return 0.0f;
      return static_cast<float>(std::exp(-x * x / (2.0 * sigma * sigma)));
    }
    case Filter::kBox:
      return x < 0.5f ? 1.0f : x == 0.5f ? 0.5f : 0.0f;
    case Filter::kTriangle:
      return x < 1.0f ? 1.0f - x : 0.0f;
    case Filter::kKeys:
      if (x >= 2.0f) return 0.0f;
      if (x >= 1.0f) return ((-0.5f * x + 2.5f) * x - 4.0f) * x + 2.0f;
      return ((1.5f * x - 2.5f) * x) * x + 1.0f;
    case Filter::kMitchell:
      if (x >= 2.0f) return 0.0f;
      if (x >= 1.0f) {
        return (((-7.0f / 18.0f) * x + 2.0f) * x - 10.0f / 3.0f) * x + 16.0f / 9.0f;
      }
      return (((7.0f / 6.0f) * x - 2.0f) * x) * x + 8.0f / 9.0f;
  }
  return 0.0f;
}

// The weights of one dimension: output index x reads inputs [start[x], start[x] + size) (clipped
// to the input) with weights[x * size + j]; unused tail weights are 0.
struct Spans {
  int64_t size = 0;
  std::vector<int64_t> start;
  std::vector<float> weights;
};

Status ComputeSpans(const KernelContext& ctx, Filter f, bool antialias, int64_t out, int64_t in,
                    float scale, float translate, Spans* s) {
  const float radius = Radius(f);
  const float inv_scale = static_cast<float>(1.0 / static_cast<double>(scale));
  const float inv_translate = -inv_scale * translate;
  // Downsampling with antialias low-pass filters: the kernel widens by 1 / scale.
  const float kernel_scale = antialias ? std::max(inv_scale, 1.0f) : 1.0f;
  const double span_f = std::ceil(static_cast<double>(radius * kernel_scale));
  if (!(span_f < static_cast<double>(std::numeric_limits<int32_t>::max()) / 2)) {
    return ctx.Error("input 'scale' is too small: the filter span does not fit in int32");
  }
  s->size = std::min<int64_t>(2 * static_cast<int64_t>(span_f) + 1, in);
  const int64_t table[] = {out, s->size};
  KILN_RETURN_IF_ERROR_CTX(CheckElementCount(table, "filter weights"), "node '", ctx.node_name(),
                           "'");
  s->start.assign(out, 0);
  s->weights.assign(out * s->size, 0.0f);
  const float one_over_kernel_scale = 1.0f / kernel_scale;
  std::vector<float> tmp;
  for (int64_t x = 0; x < out; ++x) {
    const float sample = (static_cast<float>(x) + 0.5f) * inv_scale + inv_translate;
    // Outside the input (or NaN from a NaN translation): an empty span, output 0.
    if (!(sample >= 0 && sample <= static_cast<float>(in))) continue;
    const float reach = radius * kernel_scale;
    const int64_t lo =
        std::clamp<int64_t>(static_cast<int64_t>(std::ceil(sample - reach - 0.5f)), 0, in - 1);
    const int64_t hi =
        std::clamp<int64_t>(static_cast<int64_t>(std::floor(sample + reach - 0.5f)), 0, in - 1) + 1;
    if (hi - lo > s->size) {
      return ctx.Error("internal: filter span ", hi - lo, " exceeds ", s->size);
    }
    float total = 0.0f;
    tmp.clear();
    for (int64_t src = lo; src < hi; ++src) {
      const float pos = static_cast<float>(src) + 0.5f - sample;
      const float w = Weight(f, std::abs(pos * one_over_kernel_scale));
      total += w;
      tmp.push_back(w);
    }
    if (std::abs(total) >= 1000.0f * std::numeric_limits<float>::min()) {
      const float inv_total = 1.0f / total;
      float* dst = s->weights.data() + x * s->size;
      for (size_t j = 0; j < tmp.size(); ++j) dst[j] = tmp[j] * inv_total;
    }
    s->start[x] = lo;
  }
  return OkStatus();
}

// Reads a float[2] input (scale, translation) as (row, col).
Status ReadPair(const KernelContext& ctx, int i, const char* name, float* row, float* col) {
  const Tensor& t = ctx.input(i);
  if (t.rank() != 1 || t.NumElements() != 2) {
    return ctx.Error("input '", name, "' must have 2 elements, got shape ", t.shape().ToString());
  }
  *row = t.data<float>()[0];
  *col = t.data<float>()[1];
  return OkStatus();
}

// TF's GatherSpans: each row of the [rows.start.size(), in_w] intermediate is the weighted sum of
// its span of `img`'s rows ([batch, in_h, in_w, ch]), then each output pixel that of its span of
// intermediate pixels; every span in full (zero weights too) and in order, as TF sums.
template <typename C>
void GatherSpans(const KernelContext& ctx, const Spans& rows, const Spans& cols, const C* img,
                 int64_t batch, int64_t in_h, int64_t in_w, int64_t ch, float* mid, float* out) {
  const auto out_h = static_cast<int64_t>(rows.start.size());
  const auto out_w = static_cast<int64_t>(cols.start.size());
  const int64_t in_row = in_w * ch, out_row = out_w * ch;
  ctx.threads().ParallelFor(batch * out_h, 1, [&](int64_t begin, int64_t end) {
    for (int64_t by = begin; by < end; ++by) {
      const int64_t b = by / out_h, y = by % out_h;
      float* dst = mid + by * in_row;
      std::fill(dst, dst + in_row, 0.0f);
      const int64_t start = rows.start[y];
      const int64_t n = std::min(start + rows.size, in_h) - start;
      const float* wts = rows.weights.data() + y * rows.size;
      for (int64_t j = 0; j < n; ++j) {
        const C* src = img + (b * in_h + start + j) * in_row;
        const float w = wts[j];
        for (int64_t k = 0; k < in_row; ++k) dst[k] += w * static_cast<float>(src[k]);
      }
    }
  });
  ctx.threads().ParallelFor(batch * out_h, 1, [&](int64_t begin, int64_t end) {
    for (int64_t by = begin; by < end; ++by) {
      const float* src_row = mid + by * in_row;
      float* dst_row = out + by * out_row;
      for (int64_t x = 0; x < out_w; ++x) {
        float* px = dst_row + x * ch;
        std::fill(px, px + ch, 0.0f);
        const int64_t start = cols.start[x];
        const int64_t n = std::min(start + cols.size, in_w) - start;
        const float* wts = cols.weights.data() + x * cols.size;
        for (int64_t j = 0; j < n; ++j) {
          const float* src = src_row + (start + j) * ch;
          const float w = wts[j];
          for (int64_t c = 0; c < ch; ++c) px[c] += w * src[c];
        }
      }
    }
  });
}

Status ComputeScaleAndTranslate(const KernelContext& ctx) {
  const auto& st = ctx.state<ScaleTranslateState>();
  const Tensor& images = ctx.input(0);
  const Tensor& size = ctx.input(1);
  if (images.rank() != 4) {
    return ctx.Error("input 'images' must be 4-dimensional, got shape ", images.shape().ToString());
  }
  if (size.rank() != 1 || size.NumElements() != 2) {
    return ctx.Error("input 'size' must have 2 elements, got shape ", size.shape().ToString());
  }
  const int64_t batch = images.dim(0), in_h = images.dim(1), in_w = images.dim(2);
  const int64_t ch = images.dim(3);
  const int64_t out_h = size.data<int32_t>()[0], out_w = size.data<int32_t>()[1];
  if (out_h <= 0 || out_w <= 0) {
    return ctx.Error("input 'size' must hold two positive values, got [", out_h, ", ", out_w, "]");
  }
  if (ch <= 0) return ctx.Error("input 'images' must have at least one channel");
  if (in_h <= 0 || in_w <= 0) {
    return ctx.Error("input 'images' must have a non-zero height and width, got shape ",
                     images.shape().ToString());
  }
  if (in_h > std::numeric_limits<int32_t>::max() || in_w > std::numeric_limits<int32_t>::max()) {
    return ctx.Error("input sizes must be between 0 and max int32");
  }
  float row_scale = 0, col_scale = 0, row_tr = 0, col_tr = 0;
  KILN_RETURN_IF_ERROR(ReadPair(ctx, 2, "scale", &row_scale, &col_scale));
  KILN_RETURN_IF_ERROR(ReadPair(ctx, 3, "translation", &row_tr, &col_tr));
  if (!(row_scale > 0 && col_scale > 0)) {
    return ctx.Error("input 'scale' must be greater than zero, got [", row_scale, ", ", col_scale,
                     "]");
  }
  const int64_t out_dims[] = {batch, out_h, out_w, ch};
  KILN_RETURN_IF_ERROR_CTX(CheckElementCount(out_dims, "output shape"), "node '", ctx.node_name(),
                           "'");
  const int64_t mid_dims[] = {batch, out_h, in_w, ch};
  KILN_RETURN_IF_ERROR_CTX(CheckElementCount(mid_dims, "intermediate shape"), "node '",
                           ctx.node_name(), "'");
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{batch, out_h, out_w, ch}));
  if (out->NumElements() == 0) return OkStatus();
  Spans rows, cols;
  KILN_RETURN_IF_ERROR(
      ComputeSpans(ctx, st.filter, st.antialias, out_h, in_h, row_scale, row_tr, &rows));
  KILN_RETURN_IF_ERROR(
      ComputeSpans(ctx, st.filter, st.antialias, out_w, in_w, col_scale, col_tr, &cols));
  KILN_ASSIGN_OR_RETURN(void* mid,
                        ctx.AllocateTemp(static_cast<size_t>(batch * out_h * in_w * ch) * 4));
  return Dispatch<RealTypes>(st.t, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    GatherSpans(ctx, rows, cols, ComputeData<T>(images), batch, in_h, in_w, ch,
                static_cast<float*>(mid), out->data<float>());
    return OkStatus();
  });
}

// ScaleAndTranslateGrad(grads, original_image, scale, translation): the forward's adjoint, as
// TF computes it: per dim, each input index gathers the forward outputs whose spans reach it
// (its nonzero weights, from the first such output on: a span of its own), and the two passes
// run over grads with those spans. The output is grads' batch and channels at the original
// image's height and width.

// TF's ComputeGradSpansCore: the spans of the adjoint from the forward's, `in` indices wide.
Spans GradSpans(const Spans& fwd, int64_t in) {
  struct Part {
    int64_t index;
    float weight;
  };
  std::vector<std::vector<Part>> parts(in);
  const auto out = static_cast<int64_t>(fwd.start.size());
  for (int64_t x = 0; x < out; ++x) {
    for (int64_t j = 0; j < fwd.size; ++j) {
      const float w = fwd.weights[x * fwd.size + j];
      const int64_t i = fwd.start[x] + j;
      // Outputs come in increasing order, so each list is sorted.
      if (w != 0.0f && i < in) parts[i].push_back({x, w});
    }
  }
  Spans g;
  for (const auto& p : parts)
    if (!p.empty()) g.size = std::max(g.size, p.back().index - p.front().index + 1);
  g.start.assign(in, 0);
  g.weights.assign(in * g.size, 0.0f);
  for (int64_t i = 0; i < in; ++i) {
    if (parts[i].empty()) continue;
    g.start[i] = parts[i].front().index;
    for (const Part& p : parts[i]) g.weights[i * g.size + p.index - g.start[i]] += p.weight;
  }
  return g;
}

Status ComputeScaleAndTranslateGrad(const KernelContext& ctx) {
  const auto& st = ctx.state<ScaleTranslateState>();
  const Tensor& grads = ctx.input(0);
  const Tensor& orig = ctx.input(1);
  if (grads.rank() != 4)
    return ctx.Error("input_grad must be 4-dimensional, got shape ", grads.shape().ToString());
  if (orig.rank() != 4) {
    return ctx.Error("original_image must be 4-dimensional, got shape ", orig.shape().ToString());
  }
  const int64_t batch = grads.dim(0), out_h = grads.dim(1), out_w = grads.dim(2);
  const int64_t ch = grads.dim(3), in_h = orig.dim(1), in_w = orig.dim(2);
  if (in_h > std::numeric_limits<int32_t>::max() || in_w > std::numeric_limits<int32_t>::max())
    return ctx.Error("original sizes must be between 0 and max int32");
  float row_scale = 0, col_scale = 0, row_tr = 0, col_tr = 0;
  KILN_RETURN_IF_ERROR(ReadPair(ctx, 2, "scale", &row_scale, &col_scale));
  if (!(row_scale > 0 && col_scale > 0)) {
    return ctx.Error("input 'scale' must be greater than zero, got [", row_scale, ", ", col_scale,
                     "]");
  }
  KILN_RETURN_IF_ERROR(ReadPair(ctx, 3, "translation", &row_tr, &col_tr));
  const int64_t mid_dims[] = {batch, in_h, out_w, ch};
  KILN_RETURN_IF_ERROR_CTX(CheckElementCount(mid_dims, "intermediate shape"), "node '",
                           ctx.node_name(), "'");
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{batch, in_h, in_w, ch}));
  if (out->NumElements() == 0) return OkStatus();
  Spans rows, cols;
  KILN_RETURN_IF_ERROR(
      ComputeSpans(ctx, st.filter, st.antialias, out_h, in_h, row_scale, row_tr, &rows));
  KILN_RETURN_IF_ERROR(
      ComputeSpans(ctx, st.filter, st.antialias, out_w, in_w, col_scale, col_tr, &cols));
  KILN_ASSIGN_OR_RETURN(void* mid,
                        ctx.AllocateTemp(static_cast<size_t>(batch * in_h * out_w * ch) * 4));
  GatherSpans(ctx, GradSpans(rows, in_h), GradSpans(cols, in_w), grads.data<float>(), batch, out_h,
              out_w, ch, static_cast<float*>(mid), out->data<float>());
  return OkStatus();
}

// ---- ImageProjectiveTransformV2/V3 ------------------------------------------------------------

// An input coordinate outside [0, len - 1] mapped back in, as TF's MapCoordinate (after scipy's
// ndimage): reflect [abcd] to dcba|abcd|dcba, wrap to abcd|abcd|abcd, clamp to the edge; the
// constant mode leaves it (the read gives the fill value).
float MapCoordinate(FillMode mode, float in, int64_t len) {
  // TF truncates the quotients to an integer type, undefined for huge or non-finite points;
  // std::trunc gives the same for all others and stays defined.
  const auto n = static_cast<float>(len);
  const float last = n - 1;
  // Eigen's clamp, as TF's: NaN stays NaN (and an empty axis is no undefined std::clamp).
  auto clamp = [last](float v) { return v < 0 ? 0.0f : (v > last ? last : v); };
  switch (mode) {
    case FillMode::kConstant:
      return in;
    case FillMode::kNearest:
      return clamp(in);
    case FillMode::kReflect:
      if (len <= 1) return in < 0 || in > last ? 0.0f : clamp(in);
      if (in < 0) {
        if (in < 2 * n) in = 2 * n * std::trunc(-in / (2 * n)) + in;
        in = in < -n ? in + 2 * n : -in - 1;
      } else if (in > last) {
        in -= 2 * n * std::trunc(in / (2 * n));
        if (in >= n) in = 2 * n - in - 1;
      }
      return clamp(in);
    case FillMode::kWrap:
      if (len <= 1) return in < 0 || in > last ? 0.0f : clamp(in);
      if (in < 0) {
        in += n * (std::trunc(-in / (n - 1)) + 1);
      } else if (in > last) {
        in -= n * std::trunc(in / (n - 1));
      }
      return clamp(in);
  }
  return in;
}

// float to the image's type as TF's T(float) converts it (integers truncate toward zero); values
// an integer type cannot hold saturate here rather than being undefined.
template <typename C>
C FromFloat(float v) {
  if constexpr (std::is_integral_v<C>) {
    if (std::isnan(v)) return C(0);
    const double d = std::trunc(static_cast<double>(v));
    if (d <= static_cast<double>(std::numeric_limits<C>::lowest()))
      return std::numeric_limits<C>::lowest();
    if (d >= static_cast<double>(std::numeric_limits<C>::max()))
      return std::numeric_limits<C>::max();
    return static_cast<C>(d);
  } else {
    return static_cast<C>(v);
  }
}

// A whole-number coordinate as an index; NaN and values beyond any image map to -2, outside
// (and so is the next index, which bilinear reads), instead of an undefined conversion.
int64_t PixelIndex(float v) { return v >= -2.0f && v < 9.0e15f ? static_cast<int64_t>(v) : -2; }

Status ComputeProjectiveTransform(const KernelContext& ctx) {
  const auto& st = ctx.state<TransformState>();
  const Tensor& images = ctx.input(0);
  const Tensor& transforms = ctx.input(1);
  const Tensor& shape = ctx.input(2);
  if (images.rank() != 4)
    return ctx.Error("input 'images' must have rank 4, got shape ", images.shape().ToString());
  const int64_t batch = images.dim(0), in_h = images.dim(1), in_w = images.dim(2);
  const int64_t ch = images.dim(3);
  if (transforms.rank() != 2 || transforms.dim(1) != 8 ||
      (transforms.dim(0) != batch && transforms.dim(0) != 1))
    return ctx.Error("input 'transforms' must be [num_images, 8] or [1, 8] for ", batch,
                     " images, got shape ", transforms.shape().ToString());
  if (shape.rank() != 1 || shape.NumElements() != 2)
    return ctx.Error("input 'output_shape' must have 2 elements, got shape ",
                     shape.shape().ToString());
  const int64_t out_h = shape.data<int32_t>()[0], out_w = shape.data<int32_t>()[1];
  if (out_h <= 0 || out_w <= 0)
    return ctx.Error("input 'output_shape' must hold two positive values, got [", out_h, ", ",
                     out_w, "]");
  float fill = 0.0f;
  if (ctx.num_inputs() == 4) {
    if (ctx.input(3).NumElements() != 1)
      return ctx.Error("input 'fill_value' must be a scalar, got shape ",
                       ctx.input(3).shape().ToString());
    fill = ctx.input(3).data<float>()[0];
  }
  const int64_t out_dims[] = {batch, out_h, out_w, ch};
  KILN_RETURN_IF_ERROR_CTX(CheckElementCount(out_dims, "output shape"), "node '", ctx.node_name(),
                           "'");
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{batch, out_h, out_w, ch}));
  if (out->NumElements() == 0) return OkStatus();
  const float* tr = transforms.data<float>();
  const bool one_transform = transforms.dim(0) == 1;
  return Dispatch<TransformTypes>(st.t, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* img = ComputeData<T>(images);
    C* o = MutableComputeData<T>(out);
    const C fill_t = FromFloat<C>(fill);
    ctx.threads().ParallelFor(
        batch * out_h, std::max<int64_t>(1, 4096 / (out_w * ch)), [&](int64_t begin, int64_t end) {
          for (int64_t by = begin; by < end; ++by) {
            const int64_t b = by / out_h, oy = by % out_h;
            const float* m = tr + (one_transform ? 0 : b * 8);
            const C* src = img + b * in_h * in_w * ch;
            // Pixel (y, x) of this image, or the fill value outside it.
            auto read = [&](int64_t y, int64_t x, int64_t c) {
              return y >= 0 && y < in_h && x >= 0 && x < in_w ? src[(y * in_w + x) * ch + c]
                                                              : fill_t;
            };
            for (int64_t ox = 0; ox < out_w; ++ox) {
              C* px = o + (by * out_w + ox) * ch;
              const float fx = static_cast<float>(ox), fy = static_cast<float>(oy);
              const float k = m[6] * fx + m[7] * fy + 1.f;
              if (k == 0) {  // a point at infinity: outside the input
                std::fill(px, px + ch, fill_t);
                continue;
              }
              // The constant mode leaves points outside; the reads outside give the fill value.
              const float x = MapCoordinate(st.fill, (m[0] * fx + m[1] * fy + m[2]) / k, in_w);
              const float y = MapCoordinate(st.fill, (m[3] * fx + m[4] * fy + m[5]) / k, in_h);
              if (!st.bilinear) {
                const int64_t yi = PixelIndex(std::round(y)), xi = PixelIndex(std::round(x));
                for (int64_t c = 0; c < ch; ++c) px[c] = read(yi, xi, c);
                continue;
              }
              const float y0 = std::floor(y), x0 = std::floor(x);
              const float y1 = y0 + 1, x1 = x0 + 1;
              const int64_t yi = PixelIndex(y0), xi = PixelIndex(x0);
              for (int64_t c = 0; c < ch; ++c) {
                const float top = (x1 - x) * static_cast<float>(read(yi, xi, c)) +
                                  (x - x0) * static_cast<float>(read(yi, xi + 1, c));
                const float bottom = (x1 - x) * static_cast<float>(read(yi + 1, xi, c)) +
                                     (x - x0) * static_cast<float>(read(yi + 1, xi + 1, c));
                px[c] = FromFloat<C>((y1 - y) * top + (y - y0) * bottom);
              }
            }
          }
        });
    return OkStatus();
  });
}

constexpr KernelEntry kCpu[] = {
    {"ImageProjectiveTransformV2", ComputeProjectiveTransform, 0b100},
    {"ImageProjectiveTransformV3", ComputeProjectiveTransform, 0b1100},
    {"ScaleAndTranslate", ComputeScaleAndTranslate},
    {"ScaleAndTranslateGrad", ComputeScaleAndTranslateGrad, 0b1100},
};

}  // namespace

std::span<const KernelEntry> ImageScaleTranslateCpuKernels() { return kCpu; }

}  // namespace kiln::exec
