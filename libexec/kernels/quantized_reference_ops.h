// The state the reference quantized products' definitions (kernels/quantized_reference_ops.cc)
// build and their CPU kernels (kernels/cpu/quantized_reference_ops.cc) read.
#pragma once

#include <cstdint>

#include "kernels/window_util.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::quantized_reference {

struct ClassicState : OpState {
  bool transpose_a = false, transpose_b = false;
  WindowPadding padding = WindowPadding::kValid;
  int64_t stride = 1;
};

}  // namespace kiln::exec::quantized_reference
