// The CPU kernels of RGBToHSV, HSVToRGB, AdjustHue, AdjustSaturation and AdjustContrastv2
// (kernels/image_color_ops.cc). Each follows its TensorFlow CPU kernel's own formulas, which differ
// between ops: RGBToHSV/HSVToRGB (colorspace_op.h) compute in the input type with the
// piecewise-linear hue ramps; AdjustHue works in a hue/value-range form; AdjustSaturation has its
// own sector-based HSV conversion; AdjustContrastv2 takes per-image channel means with TF's
// halving summation and gives mean + factor * (x - mean). Half (and bfloat16 where allowed)
// compute in float for the adjust ops.
#include "kernels/image_color_ops.h"

#include <algorithm>
#include <cmath>

#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using image_color::AdjustTypes;
using image_color::ColorspaceTypes;

// ---- RGBToHSV, HSVToRGB --------------------------------------------------------------------

Status CheckRgb(const KernelContext& ctx, int min_rank, bool three) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < min_rank) {
    return ctx.Error("input 'images' must be at least ", min_rank, "-D, got shape ",
                     x.shape().ToString());
  }
  if (three && x.dim(x.rank() - 1) != 3) {
    return ctx.Error("input 'images' must have 3 channels in its last dimension, got shape ",
                     x.shape().ToString());
  }
  if (ctx.num_inputs() > 1 && ctx.input(1).rank() != 0) {
    return ctx.Error("the adjustment factor must be a scalar, got shape ",
                     ctx.input(1).shape().ToString());
  }
  return OkStatus();
}

template <bool kToHsv>
Status ComputeColorspace(const KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(CheckRgb(ctx, 1, true));
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  const int64_t pixels = x.NumElements() / 3;
  return Dispatch<ColorspaceTypes>(x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* in = ComputeData<T>(x);
    C* o = MutableComputeData<T>(out);
    const C zero(0), one(1), two(2), three(3), four(4), six(6);
    ctx.threads().ParallelFor(pixels, 4096, [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) {
        const C* px = in + 3 * p;
        C* q = o + 3 * p;
        if constexpr (kToHsv) {
          const C r = px[0], g = px[1], bl = px[2];
          const C v = std::max(std::max(r, g), bl);
          const C range = v - std::min(std::min(r, g), bl);
          const C s = v > zero ? C(range / v) : zero;
          const C norm = C(one / range) * C(one / six);
          C h = r == v   ? C(norm * C(g - bl))
                : g == v ? C(C(norm * C(bl - r)) + C(two / six))
                         : C(C(norm * C(r - g)) + C(four / six));
          if (!(range > zero)) h = zero;
          if (h < zero) h = h + one;
          q[0] = h;
          q[1] = s;
          q[2] = v;
        } else {
          const C h = px[0], s = px[1], v = px[2];
          const C dh = h * six;
          auto clamp01 = [&](C a) { return std::min(std::max(a, zero), one); };
          using std::abs;
          const C dr = clamp01(C(abs(C(dh - three)) - one));
          const C dg = clamp01(C(two - abs(C(dh - two))));
          const C db = clamp01(C(two - abs(C(dh - four))));
          const C one_s = one - s;
          q[0] = C(C(one_s + C(s * dr)) * v);
          q[1] = C(C(one_s + C(s * dg)) * v);
          q[2] = C(C(one_s + C(s * db)) * v);
        }
      }
    });
    return OkStatus();
  });
}

// ---- AdjustHue --------------------------------------------------------------------------------

// RGB to hue in [0, 6) with the value range (TF's rgb_to_hv_range).
inline void RgbToHvRange(float r, float g, float b, float* h, float* v_min, float* v_max) {
  float v_mid;
  int cat;
  if (r < g) {
    if (b < r) {
      *v_max = g, v_mid = r, *v_min = b, cat = 1;
    } else if (b > g) {
      *v_max = b, v_mid = g, *v_min = r, cat = 3;
    } else {
      *v_max = g, v_mid = b, *v_min = r, cat = 2;
    }
  } else {
    if (b < g) {
      *v_max = r, v_mid = g, *v_min = b, cat = 0;
    } else if (b > r) {
      *v_max = b, v_mid = r, *v_min = g, cat = 4;
    } else {
      *v_max = r, v_mid = b, *v_min = g, cat = 5;
    }
  }
  if (*v_max == *v_min) {
    *h = 0;
    return;
  }
  const float ratio = (v_mid - *v_min) / (*v_max - *v_min);
  *h = static_cast<float>(cat) + ((cat & 1) == 0 ? ratio : 1 - ratio);
}

inline void HvRangeToRgb(float h, float v_min, float v_max, float* rgb) {
  const int cat = static_cast<int>(h);
  float ratio = h - static_cast<float>(cat);
  if ((cat & 1) != 0) ratio = 1 - ratio;
  const float v_mid = v_min + ratio * (v_max - v_min);
  switch (cat) {
    case 0:
      rgb[0] = v_max, rgb[1] = v_mid, rgb[2] = v_min;
      break;
    case 1:
      rgb[0] = v_mid, rgb[1] = v_max, rgb[2] = v_min;
      break;
    case 2:
      rgb[0] = v_min, rgb[1] = v_max, rgb[2] = v_mid;
      break;
    case 3:
      rgb[0] = v_min, rgb[1] = v_mid, rgb[2] = v_max;
      break;
    case 4:
      rgb[0] = v_mid, rgb[1] = v_min, rgb[2] = v_max;
      break;
    default:
      rgb[0] = v_max, rgb[1] = v_min, rgb[2] = v_mid;
  }
}

// ---- AdjustSaturation -------------------------------------------------------------------------

// TF's adjust_saturation rgb_to_hsv / hsv_to_rgb (double constants where TF has them).
inline void SatRgbToHsv(float r, float g, float b, float* h, float* s, float* v) {
  const float vv = std::max(r, std::max(g, b));
  const float range = vv - std::min(r, std::min(g, b));
  *s = vv > 0 ? range / vv : 0;
  const float norm = 1.0f / (6.0f * range);
  float hh;
  if (r == vv) {
    hh = norm * (g - b);
  } else if (g == vv) {
    hh = static_cast<float>(norm * (b - r) + 2.0 / 6.0);
  } else {
    hh = static_cast<float>(norm * (r - g) + 4.0 / 6.0);
  }
  if (range <= 0.0) hh = 0;
  if (hh < 0.0) hh = hh + 1;
  *v = vv;
  *h = hh;
}

inline void SatHsvToRgb(float h, float s, float v, float* rgb) {
  const float c = s * v;
  const float m = v - c;
  const float dh = h * 6;
  const int cat = static_cast<int>(dh);
  float fmodu = dh;
  while (fmodu <= 0) fmodu += 2.0f;
  while (fmodu >= 2.0f) fmodu -= 2.0f;
  const float x = c * (1 - std::abs(fmodu - 1));
  float rr = 0, gg = 0, bb = 0;
  switch (cat) {
    case 0:
      rr = c, gg = x;
      break;
    case 1:
      rr = x, gg = c;
      break;
    case 2:
      gg = c, bb = x;
      break;
    case 3:
      gg = x, bb = c;
      break;
    case 4:
      rr = x, bb = c;
      break;
    case 5:
      rr = c, bb = x;
      break;
    default:
      break;
  }
  rgb[0] = rr + m;
  rgb[1] = gg + m;
  rgb[2] = bb + m;
}

enum class Adjust { kHue, kSaturation };

template <Adjust kKind>
Status ComputeAdjustHsv(const KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(CheckRgb(ctx, 3, true));
  const Tensor& x = ctx.input(0);
  const float factor = ctx.input(1).data<float>()[0];
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  const int64_t pixels = x.NumElements() / 3;
  return Dispatch<AdjustTypes>(x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* in = ComputeData<T>(x);
    C* o = MutableComputeData<T>(out);
    ctx.threads().ParallelFor(pixels, 2048, [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) {
        const float r = static_cast<float>(in[3 * p]), g = static_cast<float>(in[3 * p + 1]),
                    bl = static_cast<float>(in[3 * p + 2]);
        float rgb[3];
        if constexpr (kKind == Adjust::kHue) {
          float h, v_min, v_max;
          RgbToHvRange(r, g, bl, &h, &v_min, &v_max);
          h += factor * 6;
          while (h < 0) h += 6;
          while (h >= 6) h -= 6;
          HvRangeToRgb(h, v_min, v_max, rgb);
        } else {
          float h, s, v;
          SatRgbToHsv(r, g, bl, &h, &s, &v);
          s = std::min(1.0f, std::max(0.0f, s * factor));
          SatHsvToRgb(h, s, v, rgb);
        }
        for (int k = 0; k < 3; ++k) o[3 * p + k] = static_cast<C>(rgb[k]);
      }
    });
    return OkStatus();
  });
}

// ---- AdjustContrastv2 -------------------------------------------------------------------------

Status ComputeAdjustContrast(const KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(CheckRgb(ctx, 3, false));
  const Tensor& x = ctx.input(0);
  const float factor = ctx.input(1).data<float>()[0];
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  if (x.NumElements() == 0) return OkStatus();
  const int r = x.rank();
  const int64_t h = x.dim(r - 3), w = x.dim(r - 2), c = x.dim(r - 1);
  const int64_t image = h * w, plane = image * c, batch = x.NumElements() / plane;
  KILN_ASSIGN_OR_RETURN(void* mem, ctx.AllocateTemp(sizeof(float) * plane * batch));
  float* scratch = static_cast<float*>(mem);
  return Dispatch<AdjustTypes>(x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* in = ComputeData<T>(x);
    C* o = MutableComputeData<T>(out);
    ctx.threads().ParallelFor(batch, 1, [&](int64_t begin, int64_t end) {
      for (int64_t n = begin; n < end; ++n) {
        const C* src = in + n * plane;
        float* sum = scratch + n * plane;
        // TF's summation: fold the plane in halves until one row of channels is left.
        int64_t remaining = image;
        bool first = true;
        do {
          const int64_t right = remaining / 2, left = remaining - right;
          if (first) {
            for (int64_t i = 0; i < right * c; ++i)
              sum[i] = static_cast<float>(src[left * c + i]) + static_cast<float>(src[i]);
            if (left > right) {
              for (int64_t i = 0; i < c; ++i)
                sum[right * c + i] = static_cast<float>(src[right * c + i]);
            }
          } else {
            for (int64_t i = 0; i < right * c; ++i) sum[i] += sum[left * c + i];
          }
          remaining = left;
          first = false;
        } while (remaining > 1);
        const float scaling = 1.0f / static_cast<float>(image);
        for (int64_t k = 0; k < c; ++k) sum[k] *= scaling;
        C* dst = o + n * plane;
        for (int64_t i = 0; i < plane; ++i) {
          const float mean = sum[i % c];
          dst[i] = static_cast<C>(mean + factor * (static_cast<float>(src[i]) - mean));
        }
      }
    });
    return OkStatus();
  });
}

constexpr KernelEntry kCpu[] = {
    {"RGBToHSV", ComputeColorspace<true>},
    {"HSVToRGB", ComputeColorspace<false>},
    {"AdjustHue", ComputeAdjustHsv<Adjust::kHue>},
    {"AdjustSaturation", ComputeAdjustHsv<Adjust::kSaturation>},
    {"AdjustContrastv2", ComputeAdjustContrast},
};

}  // namespace

std::span<const KernelEntry> ImageColorCpuKernels() { return kCpu; }

}  // namespace kiln::exec
