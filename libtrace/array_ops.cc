// Range, Shape, Transpose, GatherV2, SelectV2 (array_ops.h).
#include "kiln/trace/array_ops.h"

#include "kiln/trace/op_builder.h"
#include "kiln/trace/ops.h"
#include "op_helpers.h"

namespace kiln::trace {

Value Range(const Value& start, const Value& limit, const Value& delta) {
  return OpBuilder("Range")
      .Input(start)
      .Input(limit)
      .Input(delta)
      .Attr("Tidx", start.dtype())
      .BuildOne();
}

Value ShapeOf(const Value& x) {
  return OpBuilder("Shape").Input(x).Attr("T", x.dtype()).BuildOne();
}

Value Transpose(const Value& x, const std::vector<int32_t>& perm) {
  return OpBuilder("Transpose")
      .Input(x)
      .Input(internal::Int32Vector(perm))
      .Attr("T", x.dtype())
      .Attr("Tperm", DType::kInt32)
      .BuildOne();
}

Value Gather(const Value& params, const Value& indices, int32_t axis) {
  return OpBuilder("GatherV2")
      .Input(params)
      .Input(indices)
      .Input(Scalar<int32_t>(axis))
      .Attr("Tparams", params.dtype())
      .Attr("Tindices", indices.dtype())
      .Attr("Taxis", DType::kInt32)
      .BuildOne();
}

Value Where(const Value& condition, const Value& x, const Value& y) {
  return OpBuilder("SelectV2").Input(condition).Input(x).Input(y).Attr("T", x.dtype()).BuildOne();
}

}  // namespace kiln::trace
