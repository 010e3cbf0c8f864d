// The filters, fill modes, dtypes and prepared state of ScaleAndTranslate(Grad) and
// ImageProjectiveTransformV2/V3, shared by their definitions (kernels/image_scale_translate_ops.cc)
// and CPU kernels (kernels/cpu/image_scale_translate_ops.cc).
#pragma once

#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec::image_scale_translate {

enum class Filter { kLanczos1, kLanczos3, kLanczos5, kGaussian, kBox, kTriangle, kKeys, kMitchell };

struct ScaleTranslateState : OpState {
  DType t = DType::kFloat;
  Filter filter = Filter::kLanczos3;
  bool antialias = true;
};

using TransformTypes = TypeList<uint8_t, int32_t, int64_t, Half, BFloat16, float, double>;

enum class FillMode { kReflect, kWrap, kConstant, kNearest };

struct TransformState : OpState {
  DType t = DType::kFloat;
  bool bilinear = false;
  FillMode fill = FillMode::kConstant;
};

}  // namespace kiln::exec::image_scale_translate
