// Op wrappers: TensorFlow op names and attrs, node names as TensorFlow's Python API gives them.
#include "kiln/trace/ops.h"

#include <vector>

#include "kiln/trace/op_builder.h"

namespace kiln::trace {
namespace {

Value Binary(std::string_view op, std::string_view name, const Value& x, const Value& y) {
  return OpBuilder(op, name).Input(x).Input(y).Attr("T", x.dtype()).BuildOne();
}

Value Unary(std::string_view op, const Value& x) {
  return OpBuilder(op).Input(x).Attr("T", x.dtype()).BuildOne();
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

}  // namespace

Value Constant(const Tensor& value) {
  return OpBuilder("Const").Attr("dtype", value.dtype()).Attr("value", value).BuildOne();
}

Value Identity(const Value& x) { return Unary("Identity", x); }
// TF's AddV2 takes no strings; string concatenation is Add, as TensorFlow emits it.
Value Add(const Value& x, const Value& y) {
  return Binary(x.dtype() == DType::kString ? "Add" : "AddV2", "add", x, y);
}
Value Sub(const Value& x, const Value& y) { return Binary("Sub", "sub", x, y); }
Value Mul(const Value& x, const Value& y) { return Binary("Mul", "mul", x, y); }
Value Div(const Value& x, const Value& y) { return Binary("RealDiv", "truediv", x, y); }

Value MatMul(const Value& a, const Value& b, bool transpose_a, bool transpose_b) {
  OpBuilder op("MatMul");
  op.Input(a).Input(b).Attr("T", a.dtype());
  if (transpose_a) op.Attr("transpose_a", true);  // defaults (false) are left out
  if (transpose_b) op.Attr("transpose_b", true);
  return op.BuildOne();
}

Value BiasAdd(const Value& value, const Value& bias) {
  return OpBuilder("BiasAdd").Input(value).Input(bias).Attr("T", value.dtype()).BuildOne();
}

Value Relu(const Value& features) { return Unary("Relu", features); }
Value Softmax(const Value& logits) { return Unary("Softmax", logits); }

Value operator+(const Value& x, const Value& y) { return Add(x, y); }
Value operator-(const Value& x, const Value& y) { return Sub(x, y); }
Value operator*(const Value& x, const Value& y) { return Mul(x, y); }
Value operator/(const Value& x, const Value& y) { return Div(x, y); }
Value operator+(const Value& x, double y) { return Add(x, HostScalar(x, y)); }
Value operator-(const Value& x, double y) { return Sub(x, HostScalar(x, y)); }
Value operator*(const Value& x, double y) { return Mul(x, HostScalar(x, y)); }
Value operator/(const Value& x, double y) { return Div(x, HostScalar(x, y)); }

Value StringFormat(std::initializer_list<Value> inputs, std::string_view format, int summarize) {
  std::vector<DType> types;
  for (const Value& v : inputs) {
    if (!v.ok()) return OpBuilder("StringFormat").Input(v).BuildOne();  // passes the error on
    types.push_back(v.dtype());
  }
  std::string tmpl(format);
  if (format.empty()) {
    for (size_t i = 0; i < types.size(); ++i) tmpl += i == 0 ? "{}" : " {}";
  }
  OpBuilder op("StringFormat");
  op.Inputs(std::span<const Value>(inputs.begin(), inputs.size()))
      .Attr("T", std::span<const DType>(types))
      .Attr("template", tmpl)
      .Attr("placeholder", "{}");
  if (summarize != 3) op.Attr("summarize", summarize);
  return op.BuildOne();
}

Status Print(std::initializer_list<Value> values, const PrintOptions& options) {
  Value text = StringFormat(values, {}, options.summarize);
  OpBuilder op("PrintV2");
  op.Input(text);
  if (options.output_stream != "stderr") op.Attr("output_stream", options.output_stream);
  if (options.end != "\n") op.Attr("end", options.end);
  return op.BuildNoOutput();
}

}  // namespace kiln::trace
