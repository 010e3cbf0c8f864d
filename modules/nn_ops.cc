#include "nn_ops.h"

#include "kiln/trace/op_builder.h"
#include "kiln/trace/ops.h"

namespace kiln::modules::internal {
namespace {

using trace::OpBuilder;
using trace::Value;

std::string_view PaddingAttr(Padding p) { return p == Padding::kSame ? "SAME" : "VALID"; }

// NHWC attr lists: [1, h, w, 1].
std::vector<int64_t> Nhwc(const std::vector<int64_t>& hw) { return {1, hw[0], hw[1], 1}; }

bool AllOnes(const std::vector<int64_t>& v) {
  for (int64_t i : v) {
    if (i != 1) return false;
  }
  return true;
}

}  // namespace

std::string DimsString(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i > 0 ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

Value Int32Vector(const std::vector<int64_t>& values) {
  Tensor t(DType::kInt32, Shape{static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) {
    t.flat<int32_t>()[i] = static_cast<int32_t>(values[i]);
  }
  return trace::Constant(t);
}

Value ExpandDims(const Value& x, int axis) {
  return OpBuilder("ExpandDims")
      .Input(x)
      .Input(trace::Scalar<int32_t>(axis))
      .Attr("T", x.dtype())
      .BuildOne();
}

Value Squeeze(const Value& x, const std::vector<int64_t>& axes) {
  return OpBuilder("Squeeze").Input(x).Attr("T", x.dtype()).Attr("squeeze_dims", axes).BuildOne();
}

Value Reshape(const Value& x, const std::vector<int64_t>& shape) {
  return OpBuilder("Reshape").Input(x).Input(Int32Vector(shape)).Attr("T", x.dtype()).BuildOne();
}

Value Pack(const std::vector<Value>& values) {
  const DType t = values.empty() ? DType::kInt32 : values[0].dtype();
  return OpBuilder("Pack")
      .Inputs(values)
      .Attr("N", static_cast<int64_t>(values.size()))
      .Attr("T", t)
      .BuildOne();
}

Value Stack(const std::vector<Value>& values, int64_t axis) {
  const DType t = values.empty() ? DType::kFloat : values[0].dtype();
  return OpBuilder("Pack")
      .Inputs(values)
      .Attr("N", static_cast<int64_t>(values.size()))
      .Attr("T", t)
      .Attr("axis", axis)
      .BuildOne();
}

std::vector<Value> Unstack(const Value& x, int64_t axis, int64_t num) {
  return OpBuilder("Unpack")
      .Input(x)
      .Attr("num", num)
      .Attr("T", x.dtype())
      .Attr("axis", axis)
      .Build();
}

Value Concat(const std::vector<Value>& values, int64_t axis) {
  const DType t = values.empty() ? DType::kFloat : values[0].dtype();
  return OpBuilder("ConcatV2")
      .Inputs(values)
      .Input(trace::Scalar(static_cast<int32_t>(axis)))
      .Attr("N", static_cast<int64_t>(values.size()))
      .Attr("T", t)
      .Attr("Tidx", DType::kInt32)
      .BuildOne();
}

std::vector<Value> Split(const Value& x, int64_t axis, int64_t n) {
  return OpBuilder("Split")
      .Input(trace::Scalar(static_cast<int32_t>(axis)))
      .Input(x)
      .Attr("num_split", n)
      .Attr("T", x.dtype())
      .Build();
}

Value Conv2D(const Value& x, const Value& filter, const std::vector<int64_t>& strides,
             const std::vector<int64_t>& dilations, Padding padding) {
  OpBuilder op("Conv2D");
  op.Input(x).Input(filter).Attr("T", x.dtype()).Attr("strides", Nhwc(strides));
  op.Attr("padding", PaddingAttr(padding));
  if (!AllOnes(dilations)) op.Attr("dilations", Nhwc(dilations));
  return op.BuildOne();
}

Value DepthwiseConv2D(const Value& x, const Value& filter, const std::vector<int64_t>& strides,
                      const std::vector<int64_t>& dilations, Padding padding) {
  OpBuilder op("DepthwiseConv2dNative", "depthwise");
  op.Input(x).Input(filter).Attr("T", x.dtype()).Attr("strides", Nhwc(strides));
  op.Attr("padding", PaddingAttr(padding));
  if (!AllOnes(dilations)) op.Attr("dilations", Nhwc(dilations));
  return op.BuildOne();
}

Value Conv2DTranspose(const Value& x, const Value& filter, const Value& output_shape,
                      const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations,
                      Padding padding) {
  OpBuilder op("Conv2DBackpropInput", "conv2d_transpose");
  op.Input(output_shape).Input(filter).Input(x).Attr("T", x.dtype());
  op.Attr("strides", Nhwc(strides)).Attr("padding", PaddingAttr(padding));
  if (!AllOnes(dilations)) op.Attr("dilations", Nhwc(dilations));
  return op.BuildOne();
}

Value Pool(bool max, const Value& x, const std::vector<int64_t>& pool_size,
           const std::vector<int64_t>& strides, Padding padding) {
  OpBuilder op(max ? "MaxPool" : "AvgPool");
  op.Input(x);
  // MaxPool's T defaults to float (left out, as TensorFlow's stripped graphs do); AvgPool's
  // has no default.
  if (!max || x.dtype() != DType::kFloat) op.Attr("T", x.dtype());
  op.Attr("ksize", Nhwc(pool_size)).Attr("strides", Nhwc(strides));
  op.Attr("padding", PaddingAttr(padding));
  return op.BuildOne();
}

Value BatchMatMul(const Value& x, const Value& y, bool adj_y) {
  OpBuilder b("BatchMatMulV2");
  b.Input(x).Input(y).Attr("T", x.dtype());
  if (adj_y) b.Attr("adj_y", true);
  return b.BuildOne();
}

Value Reduce(std::string_view op, const Value& x, const std::vector<int64_t>& axes,
             bool keep_dims) {
  OpBuilder b(op);
  b.Input(x).Input(Int32Vector(axes)).Attr("T", x.dtype()).Attr("Tidx", DType::kInt32);
  if (keep_dims) b.Attr("keep_dims", true);
  return b.BuildOne();
}

Value Unary(std::string_view op, const Value& x) {
  return OpBuilder(op).Input(x).Attr("T", x.dtype()).BuildOne();
}

Value SquaredDifference(const Value& x, const Value& y) {
  return OpBuilder("SquaredDifference").Input(x).Input(y).Attr("T", x.dtype()).BuildOne();
}

}  // namespace kiln::modules::internal
