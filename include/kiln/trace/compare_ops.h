// Comparisons and logic: Less ... NotEqual and the operators < <= > >=, LogicalAnd/Or/Not.
// Like every op wrapper, each emits the TensorFlow op of the same meaning and works both while
// tracing and eagerly.
//
// A comparison gives a bool Value, not a C++ bool: `if (x > 0)` on a symbolic value is an
// error while tracing (see Value::operator bool); use Cond / WhileLoop (control_flow.h).
#pragma once

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

Value operator<(const Value& x, const Value& y);
Value operator<=(const Value& x, const Value& y);
Value operator>(const Value& x, const Value& y);
Value operator>=(const Value& x, const Value& y);
Value operator<(const Value& x, double y);
Value operator<=(const Value& x, double y);
Value operator>(const Value& x, double y);
Value operator>=(const Value& x, double y);

}  // namespace kiln::trace
