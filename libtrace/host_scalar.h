// A host number (a C++ double in `x + 1.5`, `x % 15`, a random op's mean) as a scalar constant
// of a given dtype. Shared by the op wrappers; not public API.
#pragma once

#include "kiln/core/dtype.h"
#include "kiln/trace/value.h"

namespace kiln::trace::internal {

// A Const scalar of `dtype` holding `v`. `dtype` must be a floating-point or integer type, and
// for an integer type `v` must be a whole number in its range (TensorFlow refuses 1.5 for an
// int32 tensor too); otherwise an error value that says which.
Value HostScalar(DType dtype, double v);

// A Const scalar of `like`'s dtype; `like` itself when it holds an error.
Value HostScalar(const Value& like, double v);

}  // namespace kiln::trace::internal
