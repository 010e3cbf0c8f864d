// The 2-D geometry and the op states of kernels/conv_ops.cc's convolutions and pooling, and
// MaxPool's type list, shared by the definitions and the CPU kernels.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "kernels/epilogue.h"
#include "kernels/type_lists.h"
#include "kernels/window_util.h"
#include "kiln/core/dtype.h"
#include "kiln/core/status.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::conv {

// ---- geometry ----------------------------------------------------------------------------------

// The 2-D view of the window dims (window_util.h) the functors and oneDNN read, all sizes known.
struct ConvGeometry {
  int64_t batch = 0, in_c = 0, out_c = 0;
  WindowDim h, w;
};

// The geometry of NHWC `input` dims (-1 unknown) under `a`, with a window of k_h x k_w.
inline Status MakeGeometry(const WindowSpec& a, std::span<const int64_t> input, int64_t k_h,
                           int64_t k_w, ConvGeometry* g) {
  std::array<WindowDim, 3> dims;
  KILN_RETURN_IF_ERROR(MakeWindowDims(a, input, {1, k_h, k_w}, &dims));
  g->batch = input[0];
  g->in_c = input[3];
  g->h = dims[1];
  g->w = dims[2];
  return OkStatus();
}

// ---- Conv2D, DepthwiseConv2dNative and their fused forms ------------------------------------

struct ConvState : OpState {
  WindowSpec window;
  bool depthwise = false;
  DType dtype = DType::kFloat;
  Epilogue epilogue;
};

// ---- MaxPool, AvgPool ------------------------------------------------------------------------

struct PoolState : OpState {
  WindowSpec window;
  bool max = true;
};

// MaxPool's dtypes besides half precision (which the executor widens): TF's real types.
using MaxPoolTypes = TypeList<float, double, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
                              uint32_t, uint64_t>;

}  // namespace kiln::exec::conv
