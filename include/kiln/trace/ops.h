// The core op wrappers for authoring bodies: constants, arithmetic (+ - * /), the layers' ops
// (MatMul, BiasAdd, Relu, Softmax), and printing (StringFormat, Print). Each emits the
// TensorFlow op of the same meaning (node names as TensorFlow's Python wrappers give them:
// AddV2 is "add", RealDiv "truediv"), and works both while tracing and eagerly (see
// op_builder.h). More ops by topic: math_ops.h, compare_ops.h, array_ops.h, string_ops.h,
// random.h.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

#include "kiln/core/tensor.h"
#include "kiln/trace/value.h"

namespace kiln::trace {

// A constant. While tracing it becomes a Const node (host values are frozen into the graph).
Value Constant(const Tensor& value);
template <typename T>
Value Scalar(T value) {
  return Constant(Tensor::Scalar<T>(value));
}

Value Identity(const Value& x);
Value Add(const Value& x, const Value& y);  // AddV2
Value Sub(const Value& x, const Value& y);
Value Mul(const Value& x, const Value& y);
Value Div(const Value& x, const Value& y);  // RealDiv
Value MatMul(const Value& a, const Value& b, bool transpose_a = false, bool transpose_b = false);
Value BiasAdd(const Value& value, const Value& bias);
Value Relu(const Value& features);
Value Softmax(const Value& logits);

Value operator+(const Value& x, const Value& y);
Value operator-(const Value& x, const Value& y);
Value operator*(const Value& x, const Value& y);
Value operator/(const Value& x, const Value& y);
// A host number on one side takes the dtype of the value on the other (float or double).
Value operator+(const Value& x, double y);
Value operator-(const Value& x, double y);
Value operator*(const Value& x, double y);
Value operator/(const Value& x, double y);

// StringFormat: `format` with "{}" replaced by each input's value (as TensorFlow prints it,
// `summarize` elements per dimension at each end). An empty format joins the inputs with
// spaces, as tf.print does.
Value StringFormat(std::initializer_list<Value> inputs, std::string_view format = {},
                   int summarize = 3);

struct PrintOptions {
  std::string output_stream = "stderr";  // tf.print's default; "stdout", "log(info)", ...
  std::string end = "\n";
  int summarize = 3;
};

// One item of Print: a value, printed as TensorFlow prints tensors (string tensors quoted), or
// host text, printed as it is: tf.print inlines Python strings into the format the same way,
// so Print({"loss:", loss}) prints `loss: 0.25` as tf.print("loss:", loss) does.
class PrintItem {
 public:
  PrintItem(Value value) : value_(std::move(value)) {}     // NOLINT(google-explicit-constructor)
  PrintItem(Tensor tensor) : value_(std::move(tensor)) {}  // NOLINT(google-explicit-constructor)
  PrintItem(const char* text)
      : text_(text), is_text_(true) {}  // NOLINT(google-explicit-constructor)
  PrintItem(std::string text)           // NOLINT(google-explicit-constructor)
      : text_(std::move(text)), is_text_(true) {}
  PrintItem(std::string_view text)  // NOLINT(google-explicit-constructor)
      : text_(text), is_text_(true) {}

  bool is_text() const { return is_text_; }
  const std::string& text() const { return text_; }
  const Value& value() const { return value_; }

 private:
  Value value_;
  std::string text_;
  bool is_text_ = false;
};

// tf.print: StringFormat + PrintV2, the items separated by spaces. While tracing it is a
// stateful graph op that prints on every call of the function, not only when the body is
// traced.
[[nodiscard]] Status Print(std::initializer_list<PrintItem> items,
                           const PrintOptions& options = {});

}  // namespace kiln::trace
