// The CPU kernels of the image resize gradients (kernels/image_grad_ops.cc), the transposes of
// the forward kernels in kernels/cpu/image_resize_ops.cc with the same coordinate helpers
// (image_resize_coords.h). As TF's CPU kernels, every product is float; sums run in T's precision
// (float for half and bfloat16). Each image of the batch is summed in one order whatever the
// thread count.
#include "kernels/image_grad_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/image_resize_coords.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using image_grad::BicubicGradTypes;
using image_grad::BilinearGradTypes;
using image_grad::CropGradBoxesTypes;
using image_grad::CropGradImageTypes;
using image_grad::CropGradState;
using image_grad::GradKind;
using image_grad::GradState;
using image_grad::NearestGradTypes;

// The checked sizes: grads [batch, gh, gw, c] flow back into an image [batch, h, w, c].
struct GradGeom {
  int64_t batch = 0, h = 0, w = 0, c = 0, gh = 0, gw = 0;
  float scale_h = 0, scale_w = 0;
};

template <GradKind K>
Status MakeGradGeom(const KernelContext& ctx, const GradState& st, GradGeom* g) {
  const Tensor& grads = ctx.input(0);
  const Tensor& second = ctx.input(1);
  if (grads.rank() != 4) {
    return ctx.Error("input 'grads' must be 4-dimensional, got shape ", grads.shape().ToString());
  }
  g->batch = grads.dim(0);
  g->gh = grads.dim(1);
  g->gw = grads.dim(2);
  g->c = grads.dim(3);
  if (K == GradKind::kNearest) {
    if (second.rank() != 1 || second.NumElements() != 2) {
      return ctx.Error("input 'size' must have 2 elements, got shape ", second.shape().ToString());
    }
    g->h = second.data<int32_t>()[0];
    g->w = second.data<int32_t>()[1];
    if (g->h < 0 || g->w < 0) {
      return ctx.Error("input 'size' must hold non-negative values, got [", g->h, ", ", g->w, "]");
    }
    // Scales map grads (the resized image) back to the original.
    g->scale_h = ResizeScale(g->h, g->gh, st.align_corners);
    g->scale_w = ResizeScale(g->w, g->gw, st.align_corners);
    if ((g->h == 0 || g->w == 0) && g->gh * g->gw > 0 && g->batch * g->c > 0) {
      return ctx.Error("input 'size' [", g->h, ", ", g->w,
                       "] is empty but input 'grads' has shape ", grads.shape().ToString());
    }
  } else {
    if (second.rank() != 4) {
      return ctx.Error("input 'original_image' must be 4-dimensional, got shape ",
                       second.shape().ToString());
    }
    if (second.dim(0) != g->batch || second.dim(3) != g->c) {
      return ctx.Error("inputs 'grads' ", grads.shape().ToString(), " and 'original_image' ",
                       second.shape().ToString(),
                       " must have the same batch size and number of channels");
    }
    g->h = second.dim(1);
    g->w = second.dim(2);
    if ((g->h == 0 || g->w == 0) && g->gh * g->gw > 0 && g->batch * g->c > 0) {
      return ctx.Error("input 'original_image' ", second.shape().ToString(),
                       " has no pixels but input 'grads' has shape ", grads.shape().ToString());
    }
    g->scale_h = ResizeScale(g->h, g->gh, st.align_corners);
    g->scale_w = ResizeScale(g->w, g->gw, st.align_corners);
  }
  if (g->h > std::numeric_limits<int32_t>::max() || g->w > std::numeric_limits<int32_t>::max()) {
    return ctx.Error("original height and width must be below 2^31");
  }
  return OkStatus();
}

template <typename T>
using AccOf = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Adds each grads pixel, times its weight, into acc (one image per call).
template <GradKind K, typename C, typename A>
void ScatterImage(const GradState& st, const GradGeom& g, const C* grads, A* acc) {
  const int64_t c = g.c;
  if constexpr (K == GradKind::kNearest) {
    std::vector<int64_t> xs(g.gw);
    for (int64_t x = 0; x < g.gw; ++x)
      xs[x] = NearestIndex(x, g.scale_w, g.w, st.align_corners, st.half_pixel_centers);
    for (int64_t y = 0; y < g.gh; ++y) {
      const int64_t iy = NearestIndex(y, g.scale_h, g.h, st.align_corners, st.half_pixel_centers);
      for (int64_t x = 0; x < g.gw; ++x) {
        A* dst = acc + (iy * g.w + xs[x]) * c;
        const C* src = grads + (y * g.gw + x) * c;
        for (int64_t k = 0; k < c; ++k) dst[k] += static_cast<A>(src[k]);
      }
    }
  } else if constexpr (K == GradKind::kBilinear) {
    const std::vector<Lerp> ys = BilinearWeights(g.gh, g.h, g.scale_h, st.half_pixel_centers);
    const std::vector<Lerp> xs = BilinearWeights(g.gw, g.w, g.scale_w, st.half_pixel_centers);
    for (int64_t y = 0; y < g.gh; ++y) {
      const Lerp& yl = ys[y];
      const float iy = 1.0f - yl.lerp;
      A* top = acc + yl.lower * g.w * c;
      A* bottom = acc + yl.upper * g.w * c;
      for (int64_t x = 0; x < g.gw; ++x) {
        const Lerp& xl = xs[x];
        const float ix = 1.0f - xl.lerp;
        const C* src = grads + (y * g.gw + x) * c;
        for (int64_t k = 0; k < c; ++k) {
          const float v = src[k];
          top[xl.lower * c + k] += static_cast<A>(v * iy * ix);
          top[xl.upper * c + k] += static_cast<A>(v * iy * xl.lerp);
          bottom[xl.lower * c + k] += static_cast<A>(v * yl.lerp * ix);
          bottom[xl.upper * c + k] += static_cast<A>(v * yl.lerp * xl.lerp);
        }
      }
    }
  } else {
    std::vector<Cubic> xs(g.gw);
    for (int64_t x = 0; x < g.gw; ++x)
      xs[x] = CubicWeights(g.scale_w, x, g.w, st.half_pixel_centers);
    for (int64_t y = 0; y < g.gh; ++y) {
      const Cubic yc = CubicWeights(g.scale_h, y, g.h, st.half_pixel_centers);
      for (int64_t x = 0; x < g.gw; ++x) {
        const Cubic& xc = xs[x];
        const C* src = grads + (y * g.gw + x) * c;
        for (int64_t k = 0; k < c; ++k) {
          const float v = src[k];
          for (int i = 0; i < 4; ++i) {
            A* row = acc + yc.index[i] * g.w * c;
            for (int j = 0; j < 4; ++j)
              row[xc.index[j] * c + k] += static_cast<A>(v) * yc.weight[i] * xc.weight[j];
          }
        }
      }
    }
  }
}

template <GradKind K, typename List>
Status ComputeResizeGrad(const KernelContext& ctx) {
  const auto& st = ctx.state<GradState>();
  GradGeom g;
  KILN_RETURN_IF_ERROR(MakeGradGeom<K>(ctx, st, &g));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{g.batch, g.h, g.w, g.c}));
  const int64_t image = g.h * g.w * g.c;
  const int64_t grad_image = g.gh * g.gw * g.c;
  if (out->NumElements() == 0) return OkStatus();
  return Dispatch<List>(st.t, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    // Nearest adds in T itself (integers too); the others sum in float (double for double;
    // bicubic multiplies in double there too, as TF).
    using A = std::conditional_t<K == GradKind::kNearest, C, AccOf<T>>;
    const bool direct = std::is_same_v<A, C>;
    C* o = MutableComputeData<T>(out);
    A* acc = nullptr;
    if (!direct) {
      KILN_ASSIGN_OR_RETURN(void* mem, ctx.AllocateTemp(sizeof(A) * out->NumElements()));
      acc = static_cast<A*>(mem);
    }
    if constexpr (K == GradKind::kNearest) {
      const C* grads = ComputeData<T>(ctx.input(0));
      std::fill_n(o, out->NumElements(), C(0));
      ctx.threads().ParallelFor(g.batch, 1, [&](int64_t b, int64_t e) {
        for (int64_t n = b; n < e; ++n)
          ScatterImage<K, C, C>(st, g, grads + n * grad_image, o + n * image);
      });
    } else {
      const float* grads = ctx.input(0).data<float>();
      A* dst = direct ? reinterpret_cast<A*>(o) : acc;
      std::fill_n(dst, out->NumElements(), A(0));
      ctx.threads().ParallelFor(g.batch, 1, [&](int64_t b, int64_t e) {
        for (int64_t n = b; n < e; ++n)
          ScatterImage<K, float, A>(st, g, grads + n * grad_image, dst + n * image);
      });
      if (!direct) {
        for (int64_t i = 0; i < out->NumElements(); ++i) o[i] = static_cast<C>(acc[i]);
      }
    }
    return OkStatus();
  });
}

// ---- CropAndResize gradients -----------------------------------------------------------------

// The checked sizes shared by both gradients.
struct CropGeom {
  int64_t boxes = 0, crop_h = 0, crop_w = 0, depth = 0, batch = 0, h = 0, w = 0;
};

Status MakeCropGeom(const KernelContext& ctx, bool boxes_op, CropGeom* g) {
  const Tensor& grads = ctx.input(0);
  const Tensor& boxes = ctx.input(boxes_op ? 2 : 1);
  const Tensor& ind = ctx.input(boxes_op ? 3 : 2);
  if (grads.rank() != 4) {
    return ctx.Error("input 'grads' must be 4-dimensional, got shape ", grads.shape().ToString());
  }
  g->boxes = grads.dim(0);
  g->crop_h = grads.dim(1);
  g->crop_w = grads.dim(2);
  g->depth = grads.dim(3);
  if (g->crop_h <= 0 || g->crop_w <= 0) {
    return ctx.Error("input 'grads' must have a positive crop height and width, got shape ",
                     grads.shape().ToString());
  }
  if (boxes.rank() != 2 || boxes.dim(1) != 4 || boxes.dim(0) != g->boxes) {
    return ctx.Error("input 'boxes' must have shape (", g->boxes, ", 4) (a box per grads row), ",
                     "got ", boxes.shape().ToString());
  }
  if (ind.rank() != 1 || ind.dim(0) != g->boxes) {
    return ctx.Error("input 'box_ind' must have shape (", g->boxes, ",), got ",
                     ind.shape().ToString());
  }
  if (boxes_op) {
    const Tensor& image = ctx.input(1);
    if (image.rank() != 4) {
      return ctx.Error("input 'image' must be 4-dimensional, got shape ", image.shape().ToString());
    }
    g->batch = image.dim(0);
    g->h = image.dim(1);
    g->w = image.dim(2);
    if (image.dim(3) != g->depth) {
      return ctx.Error("inputs 'image' ", image.shape().ToString(), " and 'grads' ",
                       grads.shape().ToString(), " must have the same depth");
    }
  } else {
    const Tensor& size = ctx.input(3);
    if (size.rank() != 1 || size.NumElements() != 4) {
      return ctx.Error("input 'image_size' must have 4 elements, got shape ",
                       size.shape().ToString());
    }
    const int32_t* v = size.data<int32_t>();
    g->batch = v[0];
    g->h = v[1];
    g->w = v[2];
    if (g->batch < 0) return ctx.Error("input 'image_size' has a negative batch ", g->batch);
    if (v[3] != g->depth) {
      return ctx.Error("input 'image_size' depth ", v[3], " differs from the depth of 'grads' ",
                       g->depth);
    }
  }
  if (g->h <= 0 || g->w <= 0) {
    return ctx.Error("the image height and width must be positive, got ", g->h, " and ", g->w);
  }
  const int32_t* b = ind.data<int32_t>();
  for (int64_t i = 0; i < g->boxes; ++i) {
    if (b[i] < 0 || b[i] >= g->batch) {
      return ctx.Error("box_ind has values outside [0, batch_size): box_ind[", i, "] = ", b[i],
                       ", batch_size ", g->batch);
    }
  }
  return OkStatus();
}

// Source coordinate of crop row/column i (TF's float expressions); NaN counts as outside.
inline bool CropCoord(float lo, float hi, int64_t i, int64_t crop, int64_t size, float scale,
                      float* out) {
  const float v = crop > 1 ? lo * static_cast<float>(size - 1) + static_cast<float>(i) * scale
                           : static_cast<float>(0.5 * (lo + hi) * static_cast<double>(size - 1));
  *out = v;
  return v >= 0 && v <= static_cast<float>(size - 1);
}

Status ComputeCropGradImage(const KernelContext& ctx) {
  const auto& st = ctx.state<CropGradState>();
  CropGeom g;
  KILN_RETURN_IF_ERROR(MakeCropGeom(ctx, false, &g));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{g.batch, g.h, g.w, g.depth}));
  const float* grads = ctx.input(0).data<float>();
  const float* bx = ctx.input(1).data<float>();
  const int32_t* ind = ctx.input(2).data<int32_t>();
  // Boxes by image, in box order: each thread takes whole images, so sums run in one order.
  std::vector<std::vector<int64_t>> boxes_of(g.batch);
  for (int64_t b = 0; b < g.boxes; ++b) boxes_of[ind[b]].push_back(b);
  const int64_t image = g.h * g.w * g.depth;
  return Dispatch<CropGradImageTypes>(st.t, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    C* o = MutableComputeData<T>(out);
    std::fill_n(o, out->NumElements(), C(0));
    auto add = [](C* p, float v) { *p += static_cast<C>(v); };
    ctx.threads().ParallelFor(g.batch, 1, [&](int64_t n0, int64_t n1) {
      for (int64_t n = n0; n < n1; ++n) {
        C* img = o + n * image;
        for (int64_t b : boxes_of[n]) {
          const float y1 = bx[b * 4], x1 = bx[b * 4 + 1], y2 = bx[b * 4 + 2], x2 = bx[b * 4 + 3];
          const float hs = g.crop_h > 1 ? (y2 - y1) * static_cast<float>(g.h - 1) /
                                              static_cast<float>(g.crop_h - 1)
                                        : 0.0f;
          const float ws = g.crop_w > 1 ? (x2 - x1) * static_cast<float>(g.w - 1) /
                                              static_cast<float>(g.crop_w - 1)
                                        : 0.0f;
          for (int64_t y = 0; y < g.crop_h; ++y) {
            float in_y = 0;
            if (!CropCoord(y1, y2, y, g.crop_h, g.h, hs, &in_y)) continue;
            const int64_t top = static_cast<int64_t>(std::floor(in_y));
            const int64_t bottom = static_cast<int64_t>(std::ceil(in_y));
            const float ly = in_y - static_cast<float>(top);
            for (int64_t x = 0; x < g.crop_w; ++x) {
              float in_x = 0;
              if (!CropCoord(x1, x2, x, g.crop_w, g.w, ws, &in_x)) continue;
              const float* gr = grads + ((b * g.crop_h + y) * g.crop_w + x) * g.depth;
              if (st.nearest) {
                const int64_t cy = static_cast<int64_t>(std::round(in_y));
                const int64_t cx = static_cast<int64_t>(std::round(in_x));
                C* px = img + (cy * g.w + cx) * g.depth;
                for (int64_t d = 0; d < g.depth; ++d) add(px + d, gr[d]);
                continue;
              }
              const int64_t left = static_cast<int64_t>(std::floor(in_x));
              const int64_t right = static_cast<int64_t>(std::ceil(in_x));
              const float lx = in_x - static_cast<float>(left);
              C* tl = img + (top * g.w + left) * g.depth;
              C* tr = img + (top * g.w + right) * g.depth;
              C* bl = img + (bottom * g.w + left) * g.depth;
              C* br = img + (bottom * g.w + right) * g.depth;
              for (int64_t d = 0; d < g.depth; ++d) {
                const float dtop = (1 - ly) * gr[d];
                add(tl + d, (1 - lx) * dtop);
                add(tr + d, lx * dtop);
                const float dbottom = ly * gr[d];
                add(bl + d, (1 - lx) * dbottom);
                add(br + d, lx * dbottom);
              }
            }
          }
        }
      }
    });
    return OkStatus();
  });
}

Status ComputeCropGradBoxes(const KernelContext& ctx) {
  const auto& st = ctx.state<CropGradState>();
  CropGeom g;
  KILN_RETURN_IF_ERROR(MakeCropGeom(ctx, true, &g));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{g.boxes, 4}));
  const float* grads = ctx.input(0).data<float>();
  const float* bx = ctx.input(2).data<float>();
  const int32_t* ind = ctx.input(3).data<int32_t>();
  float* o = out->data<float>();
  std::fill_n(o, out->NumElements(), 0.0f);
  const int64_t image = g.h * g.w * g.depth;
  return Dispatch<CropGradBoxesTypes>(st.t, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const ComputeType<T>* images = ComputeData<T>(ctx.input(1));
    ctx.threads().ParallelFor(g.boxes, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const auto* img = images + ind[b] * image;
        const float y1 = bx[b * 4], x1 = bx[b * 4 + 1], y2 = bx[b * 4 + 2], x2 = bx[b * 4 + 3];
        const float hr =
            g.crop_h > 1 ? static_cast<float>(g.h - 1) / static_cast<float>(g.crop_h - 1) : 0.0f;
        const float wr =
            g.crop_w > 1 ? static_cast<float>(g.w - 1) / static_cast<float>(g.crop_w - 1) : 0.0f;
        const float hs = g.crop_h > 1 ? (y2 - y1) * hr : 0.0f;
        const float ws = g.crop_w > 1 ? (x2 - x1) * wr : 0.0f;
        float* box = o + b * 4;
        for (int64_t y = 0; y < g.crop_h; ++y) {
          float in_y = 0;
          if (!CropCoord(y1, y2, y, g.crop_h, g.h, hs, &in_y)) continue;
          const int64_t top = static_cast<int64_t>(std::floor(in_y));
          const int64_t bottom = static_cast<int64_t>(std::ceil(in_y));
          const float ly = in_y - static_cast<float>(top);
          for (int64_t x = 0; x < g.crop_w; ++x) {
            float in_x = 0;
            if (!CropCoord(x1, x2, x, g.crop_w, g.w, ws, &in_x)) continue;
            const int64_t left = static_cast<int64_t>(std::floor(in_x));
            const int64_t right = static_cast<int64_t>(std::ceil(in_x));
            const float lx = in_x - static_cast<float>(left);
            const float* gr = grads + ((b * g.crop_h + y) * g.crop_w + x) * g.depth;
            for (int64_t d = 0; d < g.depth; ++d) {
              const float tl = static_cast<float>(img[(top * g.w + left) * g.depth + d]);
              const float tr = static_cast<float>(img[(top * g.w + right) * g.depth + d]);
              const float bl = static_cast<float>(img[(bottom * g.w + left) * g.depth + d]);
              const float br = static_cast<float>(img[(bottom * g.w + right) * g.depth + d]);
              const float gy = ((1 - lx) * (bl - tl) + lx * (br - tr)) * gr[d];
              const float gx = ((1 - ly) * (tr - tl) + ly * (br - bl)) * gr[d];
              const float fy = static_cast<float>(y), fx = static_cast<float>(x);
              if (g.crop_h > 1) {
                box[0] += gy * (static_cast<float>(g.h - 1) - fy * hr);
                box[2] += gy * (fy * hr);
              } else {
                // TF adds a double here: the sum is rounded once, in double.
                box[0] = static_cast<float>(box[0] + gy * 0.5 * static_cast<double>(g.h - 1));
                box[2] = static_cast<float>(box[2] + gy * 0.5 * static_cast<double>(g.h - 1));
              }
              if (g.crop_w > 1) {
                box[1] += gx * (static_cast<float>(g.w - 1) - fx * wr);
                box[3] += gx * (fx * wr);
              } else {
                box[1] = static_cast<float>(box[1] + gx * 0.5 * static_cast<double>(g.w - 1));
                box[3] = static_cast<float>(box[3] + gx * 0.5 * static_cast<double>(g.w - 1));
              }
            }
          }
        }
      }
    });
    return OkStatus();
  });
}

constexpr KernelEntry kCpu[] = {
    {"ResizeBilinearGrad", ComputeResizeGrad<GradKind::kBilinear, BilinearGradTypes>},
    {"ResizeBicubicGrad", ComputeResizeGrad<GradKind::kBicubic, BicubicGradTypes>},
    {"ResizeNearestNeighborGrad", ComputeResizeGrad<GradKind::kNearest, NearestGradTypes>},
    {"CropAndResizeGradImage", ComputeCropGradImage},
    {"CropAndResizeGradBoxes", ComputeCropGradBoxes},
};

}  // namespace

std::span<const KernelEntry> ImageGradCpuKernels() { return kCpu; }

}  // namespace kiln::exec
