// The states the quantized image ops' definitions build (kernels/quantized_image_ops.cc) and
// their CPU kernels read (kernels/cpu/quantized_image_ops.cc).
#pragma once

#include "kernels/window_util.h"
#include "kiln/core/dtype.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::quantized_image {

struct PoolState : OpState {
  WindowSpec window;
};

struct ResizeState : OpState {
  DType type = DType::kQUInt8;
  bool align_corners = false, half_pixel_centers = false;
};

struct BatchNormState : OpState {
  float epsilon = 0;
  bool scale_after = false;
};

struct InstanceNormState : OpState {
  bool range_given = false;
  float given_min = 0, given_max = 0, epsilon = 1e-5f, min_separation = 1e-3f;
};

}  // namespace kiln::exec::quantized_image
