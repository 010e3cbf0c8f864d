// GradientTape: reverse-mode automatic differentiation (tf.GradientTape's counterpart).
//
// While a tape lives it records the ops applied to the values it watches (and to everything
// computed from them); Gradient() then walks the record backwards from a scalar target and
// emits, for each recorded op, the ops of its gradient function (TensorFlow's gradient
// semantics and op names: ReluGrad, Conv2DBackpropFilter, BiasAddGrad, BroadcastGradientArgs,
// ...). The tape works eagerly (the gradient ops run at once) and inside a traced body (the
// gradient ops are recorded into the same graph, so a traced train step exports and runs in
// TensorFlow too):
//
//   GradientTape tape;                       // watches the trainable variables it sees read
//   Value loss = Mean(Square(model(x) - y));
//   KILN_ASSIGN_OR_RETURN(Values grads, tape.Gradient(loss, model.trainable_variables()));
//
// Recording follows the thread and the trace: a tape records the ops built on its own thread
// in the graph that was current when it was made (none: eager ops). Traced control flow is
// recorded as one If / While op whose gradient replays the traced branch or body: again an If,
// or a recomputing While with TensorList accumulators and a backward While (docs/training.md).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/trace/value.h"
#include "kiln/trace/variable.h"

namespace kiln::trace {

namespace internal {
class TapeState;
}  // namespace internal

// What the gradient of a source the target does not depend on is (tf.UnconnectedGradients).
enum class UnconnectedGradients {
  kNone,  // an empty Value (Value::empty())
  kZero,  // zeros of the source's shape and dtype
};

struct GradientTapeOptions {
  // A persistent tape may compute several gradients; otherwise Gradient() may be called once.
  bool persistent = false;
  // Watch every trainable variable read while the tape records (TensorFlow's default).
  bool watch_accessed_variables = true;
};

struct GradientOptions {
  UnconnectedGradients unconnected = UnconnectedGradients::kNone;
  // The gradient flowing into the target (tape.gradient's output_gradients). Required for a
  // target that is not a scalar; default: one.
  Value output_gradient;
};

class GradientTape {
 public:
  explicit GradientTape(GradientTapeOptions options = {});
  ~GradientTape();
  GradientTape(const GradientTape&) = delete;
  GradientTape& operator=(const GradientTape&) = delete;

  // Records what is computed from `x` / from reads of `v` from now on.
  void Watch(const Value& x);
  void Watch(const Variable& v);
  // Variables watched so far (explicitly or by being read), in order.
  std::vector<Variable> watched_variables() const;

  // d target / d source for each source. Errors: a target that is not a floating-point scalar
  // (without GradientOptions::output_gradient), a source not on the tape (a tensor never
  // watched nor computed while recording, a variable not read nor watched), an op between them
  // that has no gradient function, a second call on a non-persistent tape.
  Result<Values> Gradient(const Value& target, const Values& sources,
                          const GradientOptions& options = {});
  Result<Values> Gradient(const Value& target, const std::vector<Variable>& sources,
                          const GradientOptions& options = {});

  // Forgets everything recorded so far (tape.reset()).
  void Reset();

  // Pauses the tape while it lives (tape.stop_recording()).
  class StopRecording {
   public:
    explicit StopRecording(GradientTape& tape);
    ~StopRecording();
    StopRecording(const StopRecording&) = delete;
    StopRecording& operator=(const StopRecording&) = delete;

   private:
    internal::TapeState* state_;
    bool was_recording_;
  };

 private:
  std::unique_ptr<internal::TapeState> state_;
};

// The ops that have a gradient function, sorted (ops that are registered as not differentiable,
// such as Shape or Equal, are left out: nothing flows through them).
std::vector<std::string> OpsWithGradient();

// tf.stop_gradient: the value itself, through which no gradient flows (a StopGradient op).
Value StopGradient(const Value& x);

}  // namespace kiln::trace
