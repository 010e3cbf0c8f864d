// The dtypes and prepared state of the image resizes and CropAndResize, shared by their
// definitions (kernels/image_resize_ops.cc) and CPU kernels (kernels/cpu/image_resize_ops.cc).
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

struct CropState : OpState {
  DType t = DType::kFloat;
  bool nearest = false;
  float extrapolation = 0;
};

}  // namespace kiln::exec::image_resize
