// What the uniform quantization ops' definitions (kernels/uniform_quantized_ops.cc) and CPU
// kernels (kernels/cpu/uniform_quantized_ops.cc) share: their dtypes and the state a definition
// builds.
#pragma once

#include "kernels/type_lists.h"
#include "kernels/uniform_quantized_util.h"
#include "kiln/core/dtype.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::uniform_quantized {

using UniformTypes = TypeList<QInt8, QUInt8, QInt32>;

struct UniformState : OpState {
  DType in = DType::kFloat, out = DType::kFloat;
  UniformSpec spec, out_spec;
};

struct AddState : OpState {
  UniformSpec lhs, rhs, out;
};

struct DotState : OpState {
  UniformSpec lhs, rhs, out;
  bool hybrid = false;
};

}  // namespace kiln::exec::uniform_quantized
