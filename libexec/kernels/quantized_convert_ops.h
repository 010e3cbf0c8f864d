// What the quantized conversions' definitions (kernels/quantized_convert_ops.cc) and CPU kernels
// (kernels/cpu/quantized_convert_ops.cc) share: their dtypes and the state a definition builds.
#pragma once

#include "kernels/quantized_util.h"
#include "kiln/core/dtype.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::quantized_convert {

using QType = QuantizedTypes;

struct QuantizeState : OpState {
  DType type = DType::kQUInt8;
  int mode = 0;
  bool half_to_even = false, narrow_range = false;
  int axis = -1;
  float ensure_minimum_range = 0.01f;
};

struct DequantizeState : OpState {
  DType type = DType::kQUInt8, out = DType::kFloat;
  int mode = 0;
  bool narrow_range = false;
  int axis = -1;
};

struct RequantizeState : OpState {
  DType out = DType::kQUInt8;
};

struct RangePerChannelState : OpState {
  float clip = 0;
};

}  // namespace kiln::exec::quantized_convert
