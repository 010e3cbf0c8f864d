// Small op builders the gradient functions share. Each emits TensorFlow's op (so a traced
// gradient exports and runs in TensorFlow) and, where shapes are known while tracing, uses
// constants instead of Shape ops so the planner sees static shapes.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "kiln/core/dtype.h"
#include "kiln/trace/value.h"

namespace kiln::trace::internal {

Value Op1(std::string_view op, const Value& x);                  // attr T = x's dtype
Value Op2(std::string_view op, const Value& x, const Value& y);  // attr T = x's dtype
Value AddN(const Values& xs);
Value ZerosLike(const Value& x);
Value OnesLike(const Value& x);
Value Int32s(std::span<const int64_t> v);  // rank-1 int32 constant
// x's shape: a constant when fully known, else a Shape op (int32).
Value ShapeValue(const Value& x);
Value ReshapeTo(const Value& x, const Value& shape);
// Reshape to `like`'s shape (no op when the shapes are known and equal).
Value ReshapeLike(const Value& x, const Value& like);
Value SumAxes(const Value& x, const Value& axes, bool keep_dims = false);
Value BroadcastToShape(const Value& x, const Value& shape);
Value CastTo(const Value& x, DType dtype);
Value SelectV2(const Value& cond, const Value& x, const Value& y);

// The gradient `g` of a broadcasting binary op's output, summed back to `x`'s shape (TF's
// BroadcastGradientArgs + Sum + Reshape; static axes when both shapes are known).
Value ReduceToShapeOf(const Value& g, const Value& x, const Value& other);

// Axes of a reduction given as a Value: the constant's entries normalised to [0, rank), or
// false when they are not known while tracing.
bool ConstantAxes(const Value& axes, int rank, std::vector<int64_t>* out);

}  // namespace kiln::trace::internal
