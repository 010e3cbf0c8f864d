#include "kiln/modules/activations.h"

#include <string>

#include "kiln/trace/math_ops.h"
#include "kiln/trace/op_builder.h"
#include "kiln/trace/ops.h"
#include "nn_ops.h"

namespace kiln::modules {
namespace {

using internal::Unary;

struct ActivationEntry {
  Activation activation;
  std::string_view name;
};

constexpr ActivationEntry kActivations[] = {
    {Activation::kNone, "linear"},     {Activation::kRelu, "relu"},
    {Activation::kSoftmax, "softmax"}, {Activation::kSigmoid, "sigmoid"},
    {Activation::kTanh, "tanh"},       {Activation::kGelu, "gelu"},
    {Activation::kElu, "elu"},         {Activation::kSelu, "selu"},
    {Activation::kSwish, "swish"},
};

}  // namespace

std::string_view ActivationName(Activation a) {
  for (const ActivationEntry& e : kActivations) {
    if (e.activation == a) return e.name;
  }
  return "linear";
}

Result<Activation> ActivationFromName(std::string_view name) {
  if (name == "none" || name.empty()) return Activation::kNone;
  if (name == "silu") return Activation::kSwish;
  std::string known;
  for (const ActivationEntry& e : kActivations) {
    if (e.name == name) return e.activation;
    known += (known.empty() ? "" : ", ") + std::string(e.name);
  }
  return InvalidArgument("unknown activation '", name, "' (expected one of ", known, ")");
}

trace::Value ApplyActivation(Activation a, const trace::Value& x) {
  if (!x.ok()) return x;
  switch (a) {
    case Activation::kNone:
      return x;
    case Activation::kRelu:
      return trace::Relu(x);
    case Activation::kSoftmax:
      return trace::Softmax(x);
    case Activation::kSigmoid:
      return Unary("Sigmoid", x);
    case Activation::kTanh:
      return trace::Tanh(x);
    case Activation::kGelu: {
      // tf.nn.gelu(approximate=False): 0.5 * x * (1 + erf(x / sqrt(2))).
      trace::NameScope scope("Gelu");
      return (x * 0.5) * (Unary("Erf", x / 1.4142135623730951) + 1.0);
    }
    case Activation::kElu:
      return Unary("Elu", x);
    case Activation::kSelu:
      return Unary("Selu", x);
    case Activation::kSwish:
      return x * Unary("Sigmoid", x);
  }
  return x;
}

}  // namespace kiln::modules
