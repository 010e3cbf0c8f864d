// Prepare-time checks shared by the image resize definitions (image_resize_ops.cc,
// image_scale_translate_ops.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {

// The NHWC output shape of resizing input 0 ("images") to input 1 ("size", int32[2]): the
// images' batch and channels with the size's height and width (-1 where not known at prepare
// time). Refuses images with no channels or an empty height or width, and a constant size
// that is not two positive values.
inline Result<PartialShape> ResizedImageShape(PrepareContext& ctx) {
  std::vector<int64_t> in(4, -1);
  const PartialShape& s = ctx.inputs[0].shape;
  if (!s.unknown_rank()) in.assign(s.dims().begin(), s.dims().end());
  if (in[3] == 0) return ctx.Error("input 'images' must have at least one channel");
  if (in[1] == 0 || in[2] == 0) {
    return ctx.Error("input 'images' must have a non-zero height and width, got shape ",
                     s.ToPythonString());
  }
  int64_t h = -1, w = -1;
  if (const Tensor* size = ConstantInput(ctx, 1)) {
    std::vector<int64_t> v = IndexValues(*size);
    if (v.size() != 2 || v[0] <= 0 || v[1] <= 0) {
      return ctx.Error("input 'size' must hold two positive values, got ", DimsString(v));
    }
    h = v[0];
    w = v[1];
  }
  return PartialShape{in[0], h, w, in[3]};
}

}  // namespace kiln::exec
