// The integer products' kinds and op state, shared by their definitions and their CPU kernel
// (kernels/int8_product_ops.cc).
#pragma once

#include "kernels/epilogue.h"
#include "kernels/fake_quant.h"
#include "kernels/window_util.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::int8_product {

enum class Kind { kConv, kDepthwise, kMatMul };

struct Int8State : OpState {
  Kind kind = Kind::kConv;
  WindowSpec window;  // convolutions
  bool transpose_b = false;
  Epilogue epilogue;
  Nudged range{};
  float zero = 0;
  bool signed_levels = false;  // [-127, 127] (narrow symmetric) rather than [0, 255]
  // Attr input_levels: input 0 is already the range's levels (uint8, or int8 when signed), the
  // output of a product chained to this one (graph/fusion_int8.cc), not floats.
  bool input_levels = false;
  // Attrs out_fq_min, out_fq_max, out_fq_narrow_range: the output is the levels of that 8-bit
  // FakeQuant range as bytes (what every reader's input takes), not floats.
  bool output_levels = false;
  Nudged out_range{};
  bool out_signed = false;
};

// The dtype of levels held as bytes: int8 for the narrow signed range, else uint8.
inline DType LevelsType(bool signed_levels) { return signed_levels ? DType::kInt8 : DType::kUInt8; }

}  // namespace kiln::exec::int8_product
