// Optimizers (Keras's SGD, Adam, AdamW, RMSprop): each a Module whose variables are its step
// count, its learning rate and one set of slot variables per trained variable, so they are
// saved in the checkpoint with the model and a restored bundle resumes training where it
// stopped. Updates are TensorFlow's ResourceApply* ops, so a traced train step runs in
// TensorFlow too:
//
//   Adam adam({.learning_rate = 1e-3});
//   model.AddModule("optimizer", ...);          // or keep it beside the model
//   GradientTape tape;
//   Value loss = ...;
//   KILN_ASSIGN_OR_RETURN(Values grads, tape.Gradient(loss, vars));
//   KILN_RETURN_IF_ERROR(adam.ApplyGradients(grads, vars));
//
// Slots are created on the first ApplyGradients (outside a trace, or in a function's first
// trace) and named after the variable ("kernel_momentum", "kernel_velocity"; a numeric suffix
// keeps two variables of one local name apart).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/trace/module.h"
#include "kiln/trace/value.h"
#include "kiln/trace/variable.h"

namespace kiln::modules {

struct OptimizerOptions {
  float learning_rate = 0.01F;
  // Each gradient rescaled to at most this L2 norm (Keras's clipnorm); 0: off.
  float clipnorm = 0;
  // All gradients rescaled together to at most this global norm (global_clipnorm); 0: off.
  float global_clipnorm = 0;
};

class Optimizer : public trace::Module {
 public:
  Optimizer(std::string name, OptimizerOptions options);

  // One update of each variable by its gradient (an empty gradient leaves the variable as it
  // is, as Keras does for a None gradient). Increments the step count.
  Status ApplyGradients(const trace::Values& grads, const std::vector<trace::Variable>& vars);

  const trace::Variable& iterations() const { return iterations_; }
  const trace::Variable& learning_rate() const { return learning_rate_; }
  const OptimizerOptions& options() const { return options_; }

 protected:
  // The slot variables one variable needs (names, created as zeros like it).
  virtual std::vector<std::string> SlotNames() const = 0;
  // Emits the update of `var` by `grad`. `slots` in SlotNames() order; `lr` the learning
  // rate, `step` the 1-based step count as a float of the variable's dtype.
  virtual Status Update(const trace::Variable& var, const trace::Value& grad,
                        const std::vector<trace::Variable>& slots, const trace::Value& lr,
                        const trace::Value& step) = 0;

 private:
  Result<const std::vector<trace::Variable>*> SlotsFor(const trace::Variable& var);

  OptimizerOptions options_;
  trace::Variable iterations_;
  trace::Variable learning_rate_;
  std::unordered_map<const void*, std::vector<trace::Variable>> slots_;  // by resource
  std::unordered_map<std::string, int> slot_names_used_;
};

struct SgdOptions {
  OptimizerOptions base;
  float momentum = 0;
  bool nesterov = false;
};

// Keras's SGD: var -= lr * g; with momentum: m = momentum * m - lr * g; var += m (Nesterov:
// var += momentum * m - lr * g). ResourceApplyGradientDescent / ResourceApplyKerasMomentum.
class Sgd : public Optimizer {
 public:
  explicit Sgd(SgdOptions options = {});
  std::string type_name() const override { return "SGD"; }

 protected:
  std::vector<std::string> SlotNames() const override;
  Status Update(const trace::Variable& var, const trace::Value& grad,
                const std::vector<trace::Variable>& slots, const trace::Value& lr,
                const trace::Value& step) override;

 private:
  SgdOptions sgd_;
};

struct AdamOptions {
  OptimizerOptions base{.learning_rate = 0.001F};
  float beta_1 = 0.9F;
  float beta_2 = 0.999F;
  float epsilon = 1e-7F;
  // AdamW's decoupled weight decay: var -= lr * weight_decay * var before the Adam step.
  float weight_decay = 0;
};

// Keras's Adam (ResourceApplyAdam, with beta powers from the step count) and AdamW.
class Adam : public Optimizer {
 public:
  explicit Adam(AdamOptions options = {});
  std::string type_name() const override { return adam_.weight_decay > 0 ? "AdamW" : "Adam"; }

 protected:
  std::vector<std::string> SlotNames() const override;
  Status Update(const trace::Variable& var, const trace::Value& grad,
                const std::vector<trace::Variable>& slots, const trace::Value& lr,
                const trace::Value& step) override;

 private:
  AdamOptions adam_;
};

// AdamW: Adam with weight decay (Keras's default 0.004).
AdamOptions AdamWOptions(float learning_rate = 0.001F, float weight_decay = 0.004F);

struct RmsPropOptions {
  OptimizerOptions base{.learning_rate = 0.001F};
  float rho = 0.9F;
  float momentum = 0;
  float epsilon = 1e-7F;
};

// RMSprop as TensorFlow's ResourceApplyRMSProp: ms = rho * ms + (1 - rho) * g^2;
// mom = momentum * mom + lr * g / sqrt(ms + epsilon); var -= mom.
class RmsProp : public Optimizer {
 public:
  explicit RmsProp(RmsPropOptions options = {});
  std::string type_name() const override { return "RMSprop"; }

 protected:
  std::vector<std::string> SlotNames() const override;
  Status Update(const trace::Variable& var, const trace::Value& grad,
                const std::vector<trace::Variable>& slots, const trace::Value& lr,
                const trace::Value& step) override;

 private:
  RmsPropOptions rms_;
};

// g * clip / max(||g||, clip) (tf.clip_by_norm).
trace::Value ClipByNorm(const trace::Value& g, float clip);
// Every gradient scaled by clip / max(global norm, clip) (tf.clip_by_global_norm); empty
// gradients stay empty.
trace::Values ClipByGlobalNorm(const trace::Values& grads, float clip);

}  // namespace kiln::modules
