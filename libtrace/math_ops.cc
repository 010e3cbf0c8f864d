// Floor division and modulo, unary math, Cast and Sum (math_ops.h).
#include "kiln/trace/math_ops.h"

#include "host_scalar.h"
#include "kiln/trace/array_ops.h"
#include "kiln/trace/op_builder.h"
#include "kiln/trace/ops.h"
#include "op_helpers.h"

namespace kiln::trace {

using internal::BinaryOp;
using internal::HostScalar;
using internal::UnaryOp;

Value FloorMod(const Value& x, const Value& y) { return BinaryOp("FloorMod", "mod", x, y); }
Value FloorDiv(const Value& x, const Value& y) { return BinaryOp("FloorDiv", "floordiv", x, y); }
Value Neg(const Value& x) { return UnaryOp("Neg", "Neg", x); }
Value Abs(const Value& x) { return UnaryOp("Abs", "Abs", x); }
Value Tanh(const Value& x) { return UnaryOp("Tanh", "Tanh", x); }

Value Cast(const Value& x, DType dtype) {
  return OpBuilder("Cast").Input(x).Attr("SrcT", x.dtype()).Attr("DstT", dtype).BuildOne();
}

Value Square(const Value& x) { return UnaryOp("Square", "Square", x); }
Value Sqrt(const Value& x) { return UnaryOp("Sqrt", "Sqrt", x); }
Value Exp(const Value& x) { return UnaryOp("Exp", "Exp", x); }
Value Log(const Value& x) { return UnaryOp("Log", "Log", x); }
Value Sigmoid(const Value& x) { return UnaryOp("Sigmoid", "Sigmoid", x); }
Value Maximum(const Value& x, const Value& y) { return BinaryOp("Maximum", "Maximum", x, y); }
Value Minimum(const Value& x, const Value& y) { return BinaryOp("Minimum", "Minimum", x, y); }
Value Pow(const Value& x, const Value& y) { return BinaryOp("Pow", "pow", x, y); }

Value CheckNumerics(const Value& x, std::string_view message) {
  return OpBuilder("CheckNumerics")
      .Input(x)
      .Attr("T", x.dtype())
      .Attr("message", message)
      .BuildOne();
}

namespace {

// A reduction over `axes` (all axes when empty).
Value Reduce(std::string_view op, const Value& x, const std::vector<int32_t>& axes,
             bool keep_dims) {
  std::vector<int32_t> all = axes;
  if (all.empty() && x.ok()) {
    if (x.shape().unknown_rank()) {
      // The axes are Range(0, Rank(x)) as tf.reduce_sum builds them.
      Value rank = OpBuilder("Rank").Input(x).Attr("T", x.dtype()).BuildOne();
      Value axes_v = Range(Scalar<int32_t>(0), rank, Scalar<int32_t>(1));
      OpBuilder b(op);
      b.Input(x).Input(axes_v).Attr("T", x.dtype()).Attr("Tidx", DType::kInt32);
      if (keep_dims) b.Attr("keep_dims", true);
      return b.BuildOne();
    }
    for (int i = 0; i < x.shape().rank(); ++i) all.push_back(i);
  }
  OpBuilder b(op);
  b.Input(x).Input(internal::Int32Vector(all)).Attr("T", x.dtype()).Attr("Tidx", DType::kInt32);
  if (keep_dims) b.Attr("keep_dims", true);
  return b.BuildOne();
}

}  // namespace

Value Mean(const Value& x, const std::vector<int32_t>& axes, bool keep_dims) {
  return Reduce("Mean", x, axes, keep_dims);
}

Value Sum(const Value& x, const std::vector<int32_t>& axes, bool keep_dims) {
  return Reduce("Sum", x, axes, keep_dims);
}

Value operator%(const Value& x, const Value& y) { return FloorMod(x, y); }
Value operator%(const Value& x, double y) { return FloorMod(x, HostScalar(x, y)); }
Value operator-(const Value& x) { return Neg(x); }

}  // namespace kiln::trace
