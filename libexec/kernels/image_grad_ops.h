// The dtypes and prepared state of the image resize gradients, shared by their definitions
// (kernels/image_grad_ops.cc) and CPU kernels (kernels/cpu/image_grad_ops.cc).
#pragma once

#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec::image_grad {

using BilinearGradTypes = TypeList<float, double, Half, BFloat16>;
using BicubicGradTypes = TypeList<float, double>;
using NearestGradTypes = TypeList<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, uint64_t,
                                  int64_t, Half, BFloat16, float, double>;

enum class GradKind { kBilinear, kBicubic, kNearest };

struct GradState : OpState {
  DType t = DType::kFloat;
  bool align_corners = false;
  bool half_pixel_centers = false;
};

using CropGradImageTypes = TypeList<Half, float, double>;
using CropGradBoxesTypes = RealTypes;

struct CropGradState : OpState {
  DType t = DType::kFloat;
  bool nearest = false;
};

}  // namespace kiln::exec::image_grad
