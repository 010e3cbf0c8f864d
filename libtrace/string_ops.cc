// tf.strings.join (string_ops.h).
#include "kiln/trace/string_ops.h"

#include <span>

#include "kiln/trace/op_builder.h"

namespace kiln::trace {

Value StringJoin(std::initializer_list<Value> inputs, std::string_view separator) {
  OpBuilder b("StringJoin");
  b.Inputs(std::span<const Value>(inputs.begin(), inputs.size()))
      .Attr("N", static_cast<int64_t>(inputs.size()));
  if (!separator.empty()) b.Attr("separator", separator);
  return b.BuildOne();
}

}  // namespace kiln::trace
