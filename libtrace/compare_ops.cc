// Comparisons and logic (compare_ops.h).
#include "kiln/trace/compare_ops.h"

#include <string_view>

#include "host_scalar.h"
#include "kiln/trace/op_builder.h"
#include "op_helpers.h"

namespace kiln::trace {
namespace {

using internal::BinaryOp;
using internal::HostScalar;

// Logical ops take bools only: no T attr.
Value Logical(std::string_view op, const Value& x, const Value& y) {
  return OpBuilder(op, op).Input(x).Input(y).BuildOne();
}

}  // namespace

Value Less(const Value& x, const Value& y) { return BinaryOp("Less", "Less", x, y); }
Value LessEqual(const Value& x, const Value& y) { return BinaryOp("LessEqual", "LessEqual", x, y); }
Value Greater(const Value& x, const Value& y) { return BinaryOp("Greater", "Greater", x, y); }
Value GreaterEqual(const Value& x, const Value& y) {
  return BinaryOp("GreaterEqual", "GreaterEqual", x, y);
}
Value Equal(const Value& x, const Value& y) { return BinaryOp("Equal", "Equal", x, y); }
Value NotEqual(const Value& x, const Value& y) { return BinaryOp("NotEqual", "NotEqual", x, y); }
Value Equal(const Value& x, double y) { return Equal(x, HostScalar(x, y)); }
Value NotEqual(const Value& x, double y) { return NotEqual(x, HostScalar(x, y)); }

Value LogicalAnd(const Value& x, const Value& y) { return Logical("LogicalAnd", x, y); }
Value LogicalOr(const Value& x, const Value& y) { return Logical("LogicalOr", x, y); }
Value LogicalNot(const Value& x) { return OpBuilder("LogicalNot").Input(x).BuildOne(); }

Value operator<(const Value& x, const Value& y) { return Less(x, y); }
Value operator<=(const Value& x, const Value& y) { return LessEqual(x, y); }
Value operator>(const Value& x, const Value& y) { return Greater(x, y); }
Value operator>=(const Value& x, const Value& y) { return GreaterEqual(x, y); }
Value operator<(const Value& x, double y) { return Less(x, HostScalar(x, y)); }
Value operator<=(const Value& x, double y) { return LessEqual(x, HostScalar(x, y)); }
Value operator>(const Value& x, double y) { return Greater(x, HostScalar(x, y)); }
Value operator>=(const Value& x, double y) { return GreaterEqual(x, HostScalar(x, y)); }

}  // namespace kiln::trace
