#include "op_helpers.h"

#include "kiln/core/tensor.h"
#include "kiln/trace/op_builder.h"
#include "kiln/trace/ops.h"

namespace kiln::trace::internal {

Value BinaryOp(std::string_view op, std::string_view name, const Value& x, const Value& y) {
  return OpBuilder(op, name).Input(x).Input(y).Attr("T", x.dtype()).BuildOne();
}

Value UnaryOp(std::string_view op, std::string_view name, const Value& x) {
  return OpBuilder(op, name).Input(x).Attr("T", x.dtype()).BuildOne();
}

Value Int32Vector(const std::vector<int32_t>& v) {
  Tensor t(DType::kInt32, Shape{static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.flat<int32_t>()[i] = v[i];
  return Constant(t);
}

}  // namespace kiln::trace::internal
