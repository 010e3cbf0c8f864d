// The state of a TensorList node: the element dtype and attrs its definition
// (kernels/tensor_list_ops.cc) reads and its CPU kernel (kernels/cpu/tensor_list_ops.cc) checks.
#pragma once

#include <cstdint>

#include "kiln/core/dtype.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::tensor_list_ops {

struct ListState : OpState {
  DType element_dtype = DType::kInvalid;
  int64_t num_elements = -1;  // TensorListStack
  bool resize = false;        // TensorListSetItem
};

}  // namespace kiln::exec::tensor_list_ops
