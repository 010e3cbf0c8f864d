// What the quantized arithmetic ops' definitions (kernels/quantized_ops.cc) and CPU kernels
// (kernels/cpu/quantized_ops.cc) share: their dtypes and QuantizedConcat's state.
#pragma once

#include "kernels/quantized_util.h"
#include "kiln/core/dtype.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::quantized {

using QType = QuantizedTypes;

struct ConcatState : OpState {
  DType type = DType::kQUInt8;
  int n = 0;
  bool v2 = false;  // values, axis, mins, maxes (V2) or concat_dim, values, mins, maxes
};

}  // namespace kiln::exec::quantized
