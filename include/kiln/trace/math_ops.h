// Element-wise math beyond the arithmetic of ops.h: floor division and modulo (Python's // and
// %), Neg, Abs, Tanh, Cast, and the Sum reduction. Like every op wrapper, each emits the
// TensorFlow op of the same meaning (node names as TensorFlow's Python wrappers give them) and
// works both while tracing and eagerly.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/core/dtype.h"
#include "kiln/trace/value.h"

namespace kiln::trace {

Value FloorMod(const Value& x, const Value& y);  // Python's %
Value FloorDiv(const Value& x, const Value& y);  // Python's //
Value Neg(const Value& x);
Value Abs(const Value& x);
Value Tanh(const Value& x);
Value Cast(const Value& x, DType dtype);

// Sum over `axes` (all axes when empty), as tf.reduce_sum.
Value Sum(const Value& x, const std::vector<int32_t>& axes = {}, bool keep_dims = false);

Value operator%(const Value& x, const Value& y);
// A host number on one side takes the dtype of the value on the other.
Value operator%(const Value& x, double y);
Value operator-(const Value& x);

}  // namespace kiln::trace
