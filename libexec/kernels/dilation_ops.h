// Dilation2D's op state and output size, shared by its definitions and its CPU kernels.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/window_util.h"
#include "kiln/core/dtype.h"
#include "kiln/core/status.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::dilation {

enum class Dil { kForward, kInput, kFilter };

struct DilationState : OpState {
  DType t = DType::kFloat;
  WindowPadding padding = WindowPadding::kValid;
  int64_t stride_r = 1, stride_c = 1, rate_r = 1, rate_c = 1;
};

// The output's dims [rows, cols] of an input and filter of known spatial sizes (-1 unknown).
inline Status DilationDims(const DilationState& st, int64_t in_r, int64_t in_c, int64_t f_r,
                           int64_t f_c, WindowDim* rows, WindowDim* cols) {
  *rows = WindowDim{in_r, std::max<int64_t>(f_r, 1), st.stride_r, st.rate_r};
  *cols = WindowDim{in_c, std::max<int64_t>(f_c, 1), st.stride_c, st.rate_c};
  if (f_r < 0) rows->in = -1;
  if (f_c < 0) cols->in = -1;
  KILN_RETURN_IF_ERROR(ComputeWindowDim(st.padding, rows));
  return ComputeWindowDim(st.padding, cols);
}

}  // namespace kiln::exec::dilation
