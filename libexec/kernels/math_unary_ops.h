// MathUnary's type list and op state, shared by its definitions and its CPU kernels.
#pragma once

#include "kernels/type_lists.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::math_unary {

// Round and Sign also take TF's signed integer types.
using FloatAndSignedIntTypes = SignedRealTypes;

struct LeakyReluState : OpState {
  float alpha = 0.2f;
};

}  // namespace kiln::exec::math_unary
