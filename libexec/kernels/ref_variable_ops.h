// The state of a TF1 Assign/AssignAdd/AssignSub node: what its definition
// (kernels/ref_variable_ops.cc) reads and its CPU kernel (kernels/cpu/ref_variable_ops.cc) writes
// the variable with.
#pragma once

#include "kiln/core/dtype.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::ref_variable {

struct AssignState : OpState {
  DType dtype = DType::kInvalid;
  bool validate_shape = true;
};

}  // namespace kiln::exec::ref_variable
