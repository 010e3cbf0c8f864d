// Small builders the op wrappers share (ops.cc, math_ops.cc, compare_ops.cc, ...). Not public
// API.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "kiln/trace/value.h"

namespace kiln::trace::internal {

// Op `op` on (x, y) with attr T = x's dtype; `name` is the node name ({}: the op's name).
Value BinaryOp(std::string_view op, std::string_view name, const Value& x, const Value& y);
// Op `op` on x with attr T = x's dtype.
Value UnaryOp(std::string_view op, std::string_view name, const Value& x);
// A rank-1 int32 constant (axes, permutations).
Value Int32Vector(const std::vector<int32_t>& v);

}  // namespace kiln::trace::internal
