// Array ops: ranges, shapes, transposition, gathering and element-wise selection (tf.range,
// tf.shape, tf.transpose, tf.gather, tf.where). Like every op wrapper, each emits the TensorFlow
// op of the same meaning and works both while tracing and eagerly.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/trace/value.h"

namespace kiln::trace {

// tf.range: int32 when all three are int32.
Value Range(const Value& start, const Value& limit, const Value& delta);
// tf.shape (int32). (Not `Shape`: that is kiln::Shape.)
Value ShapeOf(const Value& x);
Value Transpose(const Value& x, const std::vector<int32_t>& perm);
// tf.gather: slices of `params` along `axis` at `indices`. `x[i]` for a scalar i is
// Gather(x, i).
Value Gather(const Value& params, const Value& indices, int32_t axis = 0);
// tf.where(cond, x, y): SelectV2, element-wise with broadcasting.
Value Where(const Value& condition, const Value& x, const Value& y);

}  // namespace kiln::trace
