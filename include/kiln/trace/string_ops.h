// String ops beyond the concatenation `+` of ops.h and the formatting of Print: tf.strings.join.
// Traced or eager, like every op wrapper (see op_builder.h).
#pragma once

#include <initializer_list>
#include <string_view>

#include "kiln/trace/value.h"

namespace kiln::trace {

// tf.strings.join: StringJoin of string tensors (broadcast scalars) with `separator`.
Value StringJoin(std::initializer_list<Value> inputs, std::string_view separator = {});

}  // namespace kiln::trace
