// The state of a TensorMap node: the key and value dtypes its definition
// (kernels/tensor_map_ops.cc) reads and its CPU kernel (kernels/cpu/tensor_map_ops.cc) checks.
#pragma once

#include "kiln/core/dtype.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::tensor_map_ops {

struct MapState : OpState {
  DType key_dtype = DType::kInvalid;
  DType value_dtype = DType::kInvalid;
};

}  // namespace kiln::exec::tensor_map_ops
