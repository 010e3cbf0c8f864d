// Element-wise math beyond the arithmetic of ops.h: floor division and modulo (Python's // and
// %), unary math, Maximum/Minimum/Pow, Cast, the Sum and Mean reductions and CheckNumerics. Like
// every op wrapper, each emits the TensorFlow op of the same meaning (node names as TensorFlow's
// Python wrappers give them) and works both while tracing and eagerly.
#pragma once

#include <cstdint>
#include <string_view>
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
Value Square(const Value& x);
Value Sqrt(const Value& x);
Value Exp(const Value& x);
Value Log(const Value& x);
Value Sigmoid(const Value& x);
Value Maximum(const Value& x, const Value& y);
Value Minimum(const Value& x, const Value& y);
Value Pow(const Value& x, const Value& y);

// Mean over `axes` (all axes when empty), as tf.reduce_mean.
Value Mean(const Value& x, const std::vector<int32_t>& axes = {}, bool keep_dims = false);

// x itself, or a run-time InvalidArgument naming `message` when x holds a NaN or an infinity
// (tf.debugging.check_numerics; opt-in, e.g. on a loss).
Value CheckNumerics(const Value& x, std::string_view message);

// Sum over `axes` (all axes when empty), as tf.reduce_sum.
Value Sum(const Value& x, const std::vector<int32_t>& axes = {}, bool keep_dims = false);

Value operator%(const Value& x, const Value& y);
// A host number on one side takes the dtype of the value on the other.
Value operator%(const Value& x, double y);
Value operator-(const Value& x);

}  // namespace kiln::trace
