// More op wrappers for authoring bodies: comparisons, logic, integer division, a few unary
// math ops and the array ops control flow and tensor arrays need. Like ops.h, each emits the
// TensorFlow op of the same meaning (node names as TensorFlow's Python wrappers give them)
// and works both while tracing and eagerly.
//
// A comparison gives a bool Value, not a C++ bool: `if (x > 0)` on a symbolic value is an
// error while tracing (see Value::operator bool); use Cond / WhileLoop (control_flow.h).
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/core/dtype.h"
#include "kiln/trace/value.h"

namespace kiln::trace {

Value Less(const Value& x, const Value& y);
Value LessEqual(const Value& x, const Value& y);
Value Greater(const Value& x, const Value& y);
Value GreaterEqual(const Value& x, const Value& y);
Value Equal(const Value& x, const Value& y);
Value NotEqual(const Value& x, const Value& y);
// A host number on one side takes the dtype of the value on the other.
Value Equal(const Value& x, double y);
Value NotEqual(const Value& x, double y);

Value LogicalAnd(const Value& x, const Value& y);
Value LogicalOr(const Value& x, const Value& y);
Value LogicalNot(const Value& x);

Value FloorMod(const Value& x, const Value& y);  // Python's %
Value FloorDiv(const Value& x, const Value& y);  // Python's //
Value Neg(const Value& x);
Value Abs(const Value& x);
Value Tanh(const Value& x);
Value Cast(const Value& x, DType dtype);

// Sum over `axes` (all axes when empty), as tf.reduce_sum.
Value Sum(const Value& x, const std::vector<int32_t>& axes = {}, bool keep_dims = false);
// tf.range: int32 when all three are int32.
Value Range(const Value& start, const Value& limit, const Value& delta);
// tf.shape (int32). (Not `Shape`: that is kiln::Shape.)
Value ShapeOf(const Value& x);
Value Transpose(const Value& x, const std::vector<int32_t>& perm);
// tf.gather: slices of `params` along `axis` at `indices`. `x[i]` for a scalar i is
// Gather(x, i).
Value Gather(const Value& params, const Value& indices, int32_t axis = 0);

Value operator<(const Value& x, const Value& y);
Value operator<=(const Value& x, const Value& y);
Value operator>(const Value& x, const Value& y);
Value operator>=(const Value& x, const Value& y);
Value operator<(const Value& x, double y);
Value operator<=(const Value& x, double y);
Value operator>(const Value& x, double y);
Value operator>=(const Value& x, double y);
Value operator%(const Value& x, const Value& y);
Value operator%(const Value& x, double y);
Value operator-(const Value& x);

}  // namespace kiln::trace
