// The state of a StackV2 (Stack) node: what its definition (kernels/stack_ops.cc) reads and its
// CPU kernel (kernels/cpu/stack_ops.cc) makes each stack with.
#pragma once

#include <string>

#include "kiln/core/dtype.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::stack_ops {

struct StackState : OpState {
  DType dtype = DType::kInvalid;
  std::string name;
};

}  // namespace kiln::exec::stack_ops
