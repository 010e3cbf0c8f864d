// Op wrappers: TensorFlow op names and attrs, node names as TensorFlow's Python API gives them.
#include "kiln/trace/ops.h"

#include <algorithm>
#include <vector>

#include "host_scalar.h"
#include "kiln/trace/op_builder.h"
#include "op_helpers.h"

namespace kiln::trace {

using internal::BinaryOp;
using internal::HostScalar;

Value Constant(const Tensor& value) {
  return OpBuilder("Const").Attr("dtype", value.dtype()).Attr("value", value).BuildOne();
}

Value Identity(const Value& x) { return internal::UnaryOp("Identity", {}, x); }
// TF's AddV2 takes no strings; string concatenation is Add, as TensorFlow emits it.
Value Add(const Value& x, const Value& y) {
  return BinaryOp(x.dtype() == DType::kString ? "Add" : "AddV2", "add", x, y);
}
Value Sub(const Value& x, const Value& y) { return BinaryOp("Sub", "sub", x, y); }
Value Mul(const Value& x, const Value& y) { return BinaryOp("Mul", "mul", x, y); }
Value Div(const Value& x, const Value& y) { return BinaryOp("RealDiv", "truediv", x, y); }

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

Value Relu(const Value& features) { return internal::UnaryOp("Relu", {}, features); }
Value Softmax(const Value& logits) { return internal::UnaryOp("Softmax", {}, logits); }

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

Status Print(std::initializer_list<PrintItem> items, const PrintOptions& options) {
  // Host text goes into the template; tensors become placeholders. The placeholder must not
  // occur in the text (tf.print picks one the same way).
  std::string placeholder = "{}";
  for (int digit = 0;; digit = (digit + 1) % 10) {
    const bool clash = std::any_of(items.begin(), items.end(), [&](const PrintItem& item) {
      return item.is_text() && item.text().find(placeholder) != std::string::npos;
    });
    if (!clash) break;
    placeholder += static_cast<char>('0' + digit);
  }
  std::string tmpl;
  std::vector<Value> values;
  std::vector<DType> types;
  bool first = true;
  for (const PrintItem& item : items) {
    if (!first) tmpl += ' ';
    first = false;
    if (item.is_text()) {
      tmpl += item.text();
      continue;
    }
    const Value& v = item.value();
    if (!v.ok()) return OpBuilder("PrintV2").Input(v).BuildNoOutput();  // passes the error on
    tmpl += placeholder;
    values.push_back(v);
    types.push_back(v.dtype());
  }
  OpBuilder format("StringFormat");
  format.Inputs(std::span<const Value>(values))
      .Attr("T", std::span<const DType>(types))
      .Attr("template", tmpl)
      .Attr("placeholder", placeholder);
  if (options.summarize != 3) format.Attr("summarize", options.summarize);
  Value text = format.BuildOne();
  OpBuilder op("PrintV2");
  op.Input(text);
  if (options.output_stream != "stderr") op.Attr("output_stream", options.output_stream);
  if (options.end != "\n") op.Attr("end", options.end);
  return op.BuildNoOutput();
}

}  // namespace kiln::trace
