// The state the fake quantisation ops' definitions (kernels/quantize_ops.cc) build and their CPU
// kernels (kernels/cpu/quantize_ops.cc) read.
#pragma once

#include "kernels/fake_quant.h"
#include "kiln/core/dtype.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::quantize_ops {

struct FakeQuantState : OpState {
  QuantRange range;
  float min = -6, max = 6;  // Args only
};

struct QdqState : OpState {
  DType dtype = DType::kFloat;
  bool signed_input = true, range_given = false, narrow_range = false, half_up = false;
  int num_bits = 8;  // V2/V4; V3 reads its input
  int axis = -1;
  bool bits_input = false;  // V3
};

}  // namespace kiln::exec::quantize_ops
