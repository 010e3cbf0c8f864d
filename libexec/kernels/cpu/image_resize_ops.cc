// The CPU kernels of ResizeBilinear, ResizeNearestNeighbor, ResizeBicubic, ResizeArea and
// CropAndResize (kernels/image_resize_ops.cc), with TensorFlow's coordinate conventions reproduced
// exactly (tensorflow/core/util/image_resizer_state.h and the CPU kernels): the scale is in/out,
// or (in - 1) / (out - 1) with align_corners; half_pixel_centers maps x to (x + 0.5) * scale - 0.5
// (nearest neighbour drops the -0.5 and floors); all coordinate math is float, as in TF, so
// rounding at pixel boundaries picks the same source pixels. Bicubic uses TF's 1025-entry
// coefficient table (Keys a = -0.5 with half-pixel centers and renormalised border weights,
// a = -0.75 otherwise). Area averages the covered source cells with TF's fractional weights.
#include "kernels/image_resize_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/image_resize_coords.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

using image_resize::CropState;
using image_resize::CropTypes;
using image_resize::MakeResizeGeom;
using image_resize::Resize;
using image_resize::ResizeGeom;
using image_resize::ResizeState;
using image_resize::ResizeTypes;

template <typename C>
inline float F(C v) {
  return static_cast<float>(v);
}

// ---- bicubic ---------------------------------------------------------------------------------

inline float Interpolate4(const float* w, float v0, float v1, float v2, float v3) {
  return v0 * w[0] + v1 * w[1] + v2 * w[2] + v3 * w[3];
}

// ---- area ------------------------------------------------------------------------------------

struct AreaSpan {
  int64_t start, end;
  float start_scale, end_minus_one_scale;
};

// The weight of source cell v in the output cell [in0, in1) (TF's start/end scale rule).
inline float AreaWeight(int64_t v, float in0, float in1, float scale) {
  return static_cast<float>(v) < in0
             ? (static_cast<float>(v + 1) > in1 ? scale : static_cast<float>(v + 1) - in0)
             : (static_cast<float>(v + 1) > in1 ? in1 - static_cast<float>(v) : 1.0f);
}

AreaSpan AreaSpanOf(int64_t x, float scale) {
  const float in0 = static_cast<float>(x) * scale;
  const float in1 = static_cast<float>(x + 1) * scale;
  AreaSpan s;
  s.start = static_cast<int64_t>(std::floor(in0));
  s.start_scale = AreaWeight(s.start, in0, in1, scale);
  s.end = static_cast<int64_t>(std::ceil(in1));
  s.end_minus_one_scale = AreaWeight(s.end - 1, in0, in1, scale);
  return s;
}

// ---- compute ---------------------------------------------------------------------------------

template <typename C>
void ResizeImages(const KernelContext& ctx, const ResizeState& st, const ResizeGeom& g, const C* in,
                  void* out_raw) {
  const int64_t rows = g.batch * g.out_h;
  const int64_t row_in = g.in_w * g.c, img_in = g.in_h * row_in, row_out = g.out_w * g.c;
  const int64_t cost = std::max<int64_t>(1, row_out * (st.kind == Resize::kBicubic ? 16 : 4));
  const int64_t min_rows = std::max<int64_t>(1, 16384 / cost);
  switch (st.kind) {
    case Resize::kNearest: {
      C* out = static_cast<C*>(out_raw);
      std::vector<int64_t> xs(g.out_w);
      for (int64_t x = 0; x < g.out_w; ++x)
        xs[x] = NearestIndex(x, g.scale_w, g.in_w, st.align_corners, st.half_pixel_centers);
      ctx.threads().ParallelFor(rows, min_rows, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const int64_t n = r / g.out_h, y = r % g.out_h;
          const int64_t iy =
              NearestIndex(y, g.scale_h, g.in_h, st.align_corners, st.half_pixel_centers);
          const C* src = in + n * img_in + iy * row_in;
          C* dst = out + r * row_out;
          for (int64_t x = 0; x < g.out_w; ++x)
            std::copy(src + xs[x] * g.c, src + (xs[x] + 1) * g.c, dst + x * g.c);
        }
      });
      return;
    }
    case Resize::kBilinear: {
      float* out = static_cast<float*>(out_raw);
      const std::vector<Lerp> ys =
          BilinearWeights(g.out_h, g.in_h, g.scale_h, st.half_pixel_centers);
      const std::vector<Lerp> xs =
          BilinearWeights(g.out_w, g.in_w, g.scale_w, st.half_pixel_centers);
      ctx.threads().ParallelFor(rows, min_rows, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const int64_t n = r / g.out_h;
          const Lerp& y = ys[r % g.out_h];
          const C* top = in + n * img_in + y.lower * row_in;
          const C* bottom = in + n * img_in + y.upper * row_in;
          float* dst = out + r * row_out;
          for (int64_t x = 0; x < g.out_w; ++x) {
            const Lerp& xl = xs[x];
            for (int64_t c = 0; c < g.c; ++c) {
              dst[x * g.c + c] = BilinearMix(F(top[xl.lower * g.c + c]), F(top[xl.upper * g.c + c]),
                                             F(bottom[xl.lower * g.c + c]),
                                             F(bottom[xl.upper * g.c + c]), xl.lerp, y.lerp);
            }
          }
        }
      });
      return;
    }
    case Resize::kBicubic: {
      float* out = static_cast<float*>(out_raw);
      std::vector<Cubic> xs(g.out_w);
      for (int64_t x = 0; x < g.out_w; ++x)
        xs[x] = CubicWeights(g.scale_w, x, g.in_w, st.half_pixel_centers);
      ctx.threads().ParallelFor(rows, min_rows, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const int64_t n = r / g.out_h;
          const Cubic yc = CubicWeights(g.scale_h, r % g.out_h, g.in_h, st.half_pixel_centers);
          const C* p[4];
          for (int k = 0; k < 4; ++k) p[k] = in + n * img_in + yc.index[k] * row_in;
          float* dst = out + r * row_out;
          for (int64_t x = 0; x < g.out_w; ++x) {
            const Cubic& xc = xs[x];
            for (int64_t c = 0; c < g.c; ++c) {
              // Along y at each of the four columns, then along x (TF's order).
              float col[4];
              for (int k = 0; k < 4; ++k) {
                const int64_t i = xc.index[k] * g.c + c;
                col[k] = Interpolate4(yc.weight, F(p[0][i]), F(p[1][i]), F(p[2][i]), F(p[3][i]));
              }
              dst[x * g.c + c] = Interpolate4(xc.weight, col[0], col[1], col[2], col[3]);
            }
          }
        }
      });
      return;
    }
    case Resize::kArea: {
      float* out = static_cast<float*>(out_raw);
      std::vector<AreaSpan> xs(g.out_w);
      for (int64_t x = 0; x < g.out_w; ++x) xs[x] = AreaSpanOf(x, g.scale_w);
      const float scale = static_cast<float>(1.0 / (g.scale_h * g.scale_w));
      ctx.threads().ParallelFor(rows, min_rows, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const int64_t n = r / g.out_h, y = r % g.out_h;
          const float in_y = static_cast<float>(y) * g.scale_h;
          const float in_y1 = static_cast<float>(y + 1) * g.scale_h;
          const int64_t y0 = static_cast<int64_t>(std::floor(in_y));
          const int64_t y1 = static_cast<int64_t>(std::ceil(in_y1));
          float* dst = out + r * row_out;
          for (int64_t x = 0; x < g.out_w; ++x) {
            const AreaSpan& s = xs[x];
            for (int64_t c = 0; c < g.c; ++c) {
              float sum = 0;
              for (int64_t i = y0; i < y1; ++i) {
                const float scale_y = AreaWeight(i, in_y, in_y1, g.scale_h);
                const C* row = in + n * img_in + Bound(i, g.in_h) * row_in;
                float sum_y = F(row[Bound(s.start, g.in_w) * g.c + c]) * s.start_scale;
                if (s.start + 1 != s.end) {
                  for (int64_t xx = s.start + 1; xx < s.end - 1; ++xx)
                    sum_y += F(row[Bound(xx, g.in_w) * g.c + c]);
                  sum_y += F(row[Bound(s.end - 1, g.in_w) * g.c + c]) * s.end_minus_one_scale;
                }
                sum += sum_y * scale_y;
              }
              dst[x * g.c + c] = sum * scale;
            }
          }
        }
      });
      return;
    }
  }
}

template <typename List>
Status ComputeResize(const KernelContext& ctx) {
  const auto& st = ctx.state<ResizeState>();
  ResizeGeom g;
  KILN_RETURN_IF_ERROR(MakeResizeGeom(ctx, st, &g));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{g.batch, g.out_h, g.out_w, g.c}));
  if (out->NumElements() == 0) return OkStatus();
  return Dispatch<List>(st.t, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    ResizeImages<ComputeType<T>>(ctx, st, g, ComputeData<T>(ctx.input(0)), out->raw_data());
    return OkStatus();
  });
}

// ---- CropAndResize ---------------------------------------------------------------------------

Status ComputeCropAndResize(const KernelContext& ctx) {
  const auto& st = ctx.state<CropState>();
  const Tensor& image = ctx.input(0);
  const Tensor& boxes = ctx.input(1);
  const Tensor& box_ind = ctx.input(2);
  const Tensor& size = ctx.input(3);
  if (image.rank() != 4) {
    return ctx.Error("input 'image' must be 4-dimensional, got shape ", image.shape().ToString());
  }
  const int64_t batch = image.dim(0), in_h = image.dim(1), in_w = image.dim(2), ch = image.dim(3);
  if (in_h <= 0 || in_w <= 0) return ctx.Error("image dimensions must be positive");
  if (boxes.rank() != 2 || boxes.dim(1) != 4) {
    return ctx.Error("input 'boxes' must have shape (num_boxes, 4), got ",
                     boxes.shape().ToString());
  }
  const int64_t n = boxes.dim(0);
  if (box_ind.rank() != 1 || box_ind.dim(0) != n) {
    return ctx.Error("input 'box_ind' must have shape (", n, ",), got ",
                     box_ind.shape().ToString());
  }
  if (size.rank() != 1 || size.NumElements() != 2) {
    return ctx.Error("input 'crop_size' must have 2 elements, got shape ", size.shape().ToString());
  }
  const int64_t ch_h = size.data<int32_t>()[0], ch_w = size.data<int32_t>()[1];
  if (ch_h <= 0 || ch_w <= 0) return ctx.Error("crop dimensions must be positive");
  const int32_t* ind = box_ind.data<int32_t>();
  for (int64_t b = 0; b < n; ++b) {
    if (ind[b] < 0 || ind[b] >= batch) {
      return ctx.Error("box_ind has values outside [0, batch_size): box_ind[", b, "] = ", ind[b],
                       ", batch_size ", batch);
    }
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{n, ch_h, ch_w, ch}));
  const float* bx = boxes.data<float>();
  float* o = out->data<float>();
  return Dispatch<CropTypes>(st.t, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* img = ComputeData<T>(image);
    ctx.threads().ParallelFor(n, 1, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        const float y1 = bx[b * 4], x1 = bx[b * 4 + 1], y2 = bx[b * 4 + 2], x2 = bx[b * 4 + 3];
        const C* src = img + static_cast<int64_t>(ind[b]) * in_h * in_w * ch;
        const float hs =
            ch_h > 1 ? (y2 - y1) * static_cast<float>(in_h - 1) / static_cast<float>(ch_h - 1)
                     : 0.0f;
        const float ws =
            ch_w > 1 ? (x2 - x1) * static_cast<float>(in_w - 1) / static_cast<float>(ch_w - 1)
                     : 0.0f;
        for (int64_t y = 0; y < ch_h; ++y) {
          const float in_y =
              ch_h > 1 ? y1 * static_cast<float>(in_h - 1) + static_cast<float>(y) * hs
                       : static_cast<float>(0.5 * (y1 + y2) * static_cast<double>(in_h - 1));
          float* row = o + ((b * ch_h + y) * ch_w) * ch;
          // Outside the image (NaN coordinates too): the extrapolation value.
          if (!(in_y >= 0 && in_y <= static_cast<float>(in_h - 1))) {
            std::fill(row, row + ch_w * ch, st.extrapolation);
            continue;
          }
          for (int64_t x = 0; x < ch_w; ++x) {
            const float in_x =
                ch_w > 1 ? x1 * static_cast<float>(in_w - 1) + static_cast<float>(x) * ws
                         : static_cast<float>(0.5 * (x1 + x2) * static_cast<double>(in_w - 1));
            float* px = row + x * ch;
            if (!(in_x >= 0 && in_x <= static_cast<float>(in_w - 1))) {
              std::fill(px, px + ch, st.extrapolation);
              continue;
            }
            if (st.nearest) {
              const int64_t yi = static_cast<int64_t>(std::round(in_y));
              const int64_t xi = static_cast<int64_t>(std::round(in_x));
              const C* p = src + (yi * in_w + xi) * ch;
              for (int64_t c = 0; c < ch; ++c) px[c] = F(p[c]);
            } else {
              const int64_t top = static_cast<int64_t>(std::floor(in_y));
              const int64_t bottom = static_cast<int64_t>(std::ceil(in_y));
              const int64_t left = static_cast<int64_t>(std::floor(in_x));
              const int64_t right = static_cast<int64_t>(std::ceil(in_x));
              const float y_lerp = in_y - static_cast<float>(top);
              const float x_lerp = in_x - static_cast<float>(left);
              const C* tl = src + (top * in_w + left) * ch;
              const C* tr = src + (top * in_w + right) * ch;
              const C* bl = src + (bottom * in_w + left) * ch;
              const C* br = src + (bottom * in_w + right) * ch;
              for (int64_t c = 0; c < ch; ++c)
                px[c] = BilinearMix(F(tl[c]), F(tr[c]), F(bl[c]), F(br[c]), x_lerp, y_lerp);
            }
          }
        }
      }
    });
    return OkStatus();
  });
}

constexpr KernelEntry kCpu[] = {
    {"ResizeBilinear", ComputeResize<ResizeTypes>},
    {"ResizeNearestNeighbor", ComputeResize<ResizeTypes>},
    {"ResizeBicubic", ComputeResize<ResizeTypes>},
    {"ResizeArea", ComputeResize<ResizeTypes>},
    {"CropAndResize", ComputeCropAndResize},
};

}  // namespace

std::span<const KernelEntry> ImageResizeCpuKernels() { return kCpu; }

}  // namespace kiln::exec
