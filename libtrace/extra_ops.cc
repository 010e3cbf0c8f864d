// tf.where and tf.strings.join.
#include "kiln/trace/extra_ops.h"

#include "kiln/trace/op_builder.h"

namespace kiln::trace {

Value Where(const Value& condition, const Value& x, const Value& y) {
  return OpBuilder("SelectV2").Input(condition).Input(x).Input(y).Attr("T", x.dtype()).BuildOne();
}

Value StringJoin(std::initializer_list<Value> inputs, std::string_view separator) {
  OpBuilder b("StringJoin");
  b.Inputs(std::span<const Value>(inputs.begin(), inputs.size()))
      .Attr("N", static_cast<int64_t>(inputs.size()));
  if (!separator.empty()) b.Attr("separator", separator);
  return b.BuildOne();
}

}  // namespace kiln::trace
