// Op wrappers the seed samples need beyond ops.h and math_ops.h: tf.where and
// tf.strings.join. Traced or eager, like every op wrapper (see op_builder.h).
#pragma once

#include <initializer_list>
#include <string_view>

#include "kiln/trace/value.h"

namespace kiln::trace {

// tf.where(cond, x, y): SelectV2, element-wise with broadcasting.
Value Where(const Value& condition, const Value& x, const Value& y);

// tf.strings.join: StringJoin of string tensors (broadcast scalars) with `separator`.
Value StringJoin(std::initializer_list<Value> inputs, std::string_view separator = {});

}  // namespace kiln::trace
