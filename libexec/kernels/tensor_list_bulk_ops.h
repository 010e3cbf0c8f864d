// The state of the bulk TensorList nodes: what their definitions
// (kernels/tensor_list_bulk_ops.cc) read and their CPU kernels
// (kernels/cpu/tensor_list_bulk_ops.cc) check against.
#pragma once

#include "kernels/kernel_util.h"
#include "kiln/core/dtype.h"
#include "kiln/core/shape.h"

namespace kiln::exec::tensor_list_bulk {

using DTypeState = TypedOpState<DType>;

// TensorListConcat (v1): the element_dtype and the element_shape attr.
struct ConcatV1State : DTypeState {
  ConcatV1State(DType t, const PartialShape& s) : DTypeState(t), element_shape(s) {}
  PartialShape element_shape;
};

}  // namespace kiln::exec::tensor_list_bulk
