// Comparison, logic, integer-division and array op wrappers (math_ops.h).
#include "kiln/trace/math_ops.h"

#include <string_view>

#include "kiln/core/tensor.h"
#include "kiln/trace/op_builder.h"
#include "kiln/trace/ops.h"

namespace kiln::trace {
namespace {

Value Binary(std::string_view op, std::string_view name, const Value& x, const Value& y) {
  return OpBuilder(op, name).Input(x).Input(y).Attr("T", x.dtype()).BuildOne();
}

Value Unary(std::string_view op, std::string_view name, const Value& x) {
  return OpBuilder(op, name).Input(x).Attr("T", x.dtype()).BuildOne();
}

Value Logical(std::string_view op, std::string_view name, const Value& x, const Value& y) {
  return OpBuilder(op, name).Input(x).Input(y).BuildOne();
}

// A host number as a scalar of `like`'s dtype.
Value HostScalar(const Value& like, double v) {
  if (!like.ok()) return like;
  switch (like.dtype()) {
    case DType::kFloat:
      return Constant(Tensor::Scalar<float>(static_cast<float>(v)));
    case DType::kDouble:
      return Constant(Tensor::Scalar<double>(v));
    case DType::kInt32:
      return Constant(Tensor::Scalar<int32_t>(static_cast<int32_t>(v)));
    case DType::kInt64:
      return Constant(Tensor::Scalar<int64_t>(static_cast<int64_t>(v)));
    default:
      return Value::Error(InvalidArgument("cannot combine a host number with a ",
                                          DTypeShortName(like.dtype()), " value"));
  }
}

Value IntVector(const std::vector<int32_t>& v) {
  Tensor t(DType::kInt32, Shape{static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.flat<int32_t>()[i] = v[i];
  return Constant(t);
}

}  // namespace

Value Less(const Value& x, const Value& y) { return Binary("Less", "Less", x, y); }
Value LessEqual(const Value& x, const Value& y) { return Binary("LessEqual", "LessEqual", x, y); }
Value Greater(const Value& x, const Value& y) { return Binary("Greater", "Greater", x, y); }
Value GreaterEqual(const Value& x, const Value& y) {
  return Binary("GreaterEqual", "GreaterEqual", x, y);
}
Value Equal(const Value& x, const Value& y) { return Binary("Equal", "Equal", x, y); }
Value NotEqual(const Value& x, const Value& y) { return Binary("NotEqual", "NotEqual", x, y); }
Value Equal(const Value& x, double y) { return Equal(x, HostScalar(x, y)); }
Value NotEqual(const Value& x, double y) { return NotEqual(x, HostScalar(x, y)); }

Value LogicalAnd(const Value& x, const Value& y) {
  return Logical("LogicalAnd", "LogicalAnd", x, y);
}
Value LogicalOr(const Value& x, const Value& y) { return Logical("LogicalOr", "LogicalOr", x, y); }
Value LogicalNot(const Value& x) { return OpBuilder("LogicalNot").Input(x).BuildOne(); }

Value FloorMod(const Value& x, const Value& y) { return Binary("FloorMod", "mod", x, y); }
Value FloorDiv(const Value& x, const Value& y) { return Binary("FloorDiv", "floordiv", x, y); }
Value Neg(const Value& x) { return Unary("Neg", "Neg", x); }
Value Abs(const Value& x) { return Unary("Abs", "Abs", x); }
Value Tanh(const Value& x) { return Unary("Tanh", "Tanh", x); }

Value Cast(const Value& x, DType dtype) {
  return OpBuilder("Cast").Input(x).Attr("SrcT", x.dtype()).Attr("DstT", dtype).BuildOne();
}

Value Sum(const Value& x, const std::vector<int32_t>& axes, bool keep_dims) {
  std::vector<int32_t> all = axes;
  if (all.empty() && x.ok()) {
    if (x.shape().unknown_rank()) {
      // The axes are Range(0, Rank(x)) as tf.reduce_sum builds them.
      Value rank = OpBuilder("Rank").Input(x).Attr("T", x.dtype()).BuildOne();
      Value axes_v = Range(Scalar<int32_t>(0), rank, Scalar<int32_t>(1));
      OpBuilder op("Sum");
      op.Input(x).Input(axes_v).Attr("T", x.dtype()).Attr("Tidx", DType::kInt32);
      if (keep_dims) op.Attr("keep_dims", true);
      return op.BuildOne();
    }
    for (int i = 0; i < x.shape().rank(); ++i) all.push_back(i);
  }
  OpBuilder op("Sum");
  op.Input(x).Input(IntVector(all)).Attr("T", x.dtype()).Attr("Tidx", DType::kInt32);
  if (keep_dims) op.Attr("keep_dims", true);
  return op.BuildOne();
}

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
      .Input(IntVector(perm))
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

Value operator<(const Value& x, const Value& y) { return Less(x, y); }
Value operator<=(const Value& x, const Value& y) { return LessEqual(x, y); }
Value operator>(const Value& x, const Value& y) { return Greater(x, y); }
Value operator>=(const Value& x, const Value& y) { return GreaterEqual(x, y); }
Value operator<(const Value& x, double y) { return Less(x, HostScalar(x, y)); }
Value operator<=(const Value& x, double y) { return LessEqual(x, HostScalar(x, y)); }
Value operator>(const Value& x, double y) { return Greater(x, HostScalar(x, y)); }
Value operator>=(const Value& x, double y) { return GreaterEqual(x, HostScalar(x, y)); }
Value operator%(const Value& x, const Value& y) { return FloorMod(x, y); }
Value operator%(const Value& x, double y) { return FloorMod(x, HostScalar(x, y)); }
Value operator-(const Value& x) { return Neg(x); }

}  // namespace kiln::trace
