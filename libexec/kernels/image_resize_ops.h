// The dtypes, prepared state and checked sizes of the image resizes and CropAndResize, shared by
// their definitions (kernels/image_resize_ops.cc), CPU kernels (kernels/cpu/image_resize_ops.cc)
// and GPU kernels (kernels/cuda/image.cu).
#pragma once

#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec::image_resize {

using ResizeTypes = TypeList<int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t,
                             uint64_t, Half, float, double, BFloat16>;
using CropTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t, int8_t, int16_t, int32_t, int64_t,
                           Half, float, double>;

enum class Resize { kBilinear, kNearest, kBicubic, kArea };

struct ResizeState : OpState {
  Resize kind = Resize::kBilinear;
  DType t = DType::kFloat;
  bool align_corners = false;
  bool half_pixel_centers = false;
};

// The checked sizes of one resize call: images (input 0) and size (input 1, host memory).
struct ResizeGeom {
  int64_t batch = 0, in_h = 0, in_w = 0, c = 0, out_h = 0, out_w = 0;
  float scale_h = 0, scale_w = 0;
};
Status MakeResizeGeom(const KernelContext& ctx, const ResizeState& st, ResizeGeom* g);

struct CropState : OpState {
  DType t = DType::kFloat;
  bool nearest = false;
  float extrapolation = 0;
};

}  // namespace kiln::exec::image_resize
