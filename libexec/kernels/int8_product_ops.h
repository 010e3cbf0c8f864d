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
};

}  // namespace kiln::exec::int8_product
