// Activations by Keras's names, applied as TensorFlow ops. One list (kActivations in
// activations.cc) maps each to its name; ApplyActivation's switch has a case for each, so a new
// enumerator that is not handled fails to compile (-Wswitch, -Werror).
#pragma once

#include <string_view>

#include "kiln/core/status.h"
#include "kiln/trace/value.h"

namespace kiln::modules {

// The values are part of a traced function's key when passed as host arguments: append only.
enum class Activation { kNone, kRelu, kSoftmax, kSigmoid, kTanh, kGelu, kElu, kSelu, kSwish };

// "linear", "relu", "softmax", "sigmoid", "tanh", "gelu", "elu", "selu", "swish" (Keras's
// names).
std::string_view ActivationName(Activation a);
// Accepts the names above, "none" (linear) and "silu" (swish).
Result<Activation> ActivationFromName(std::string_view name);

// The activation's ops on x, as Keras 3 emits them with the TensorFlow backend: Relu, Softmax
// (last axis), Sigmoid, Tanh, Elu, Selu; gelu = 0.5 x (1 + erf(x / sqrt 2)) (Keras's default,
// not the tanh approximation); swish = x * sigmoid(x).
trace::Value ApplyActivation(Activation a, const trace::Value& x);

}  // namespace kiln::modules
