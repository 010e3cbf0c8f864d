// Optimizers: step count, learning rate and slots as module variables; updates as TensorFlow's
// ResourceApply* ops.
#include "kiln/modules/optimizers.h"

#include <utility>

#include "kiln/trace/math_ops.h"
#include "kiln/trace/op_builder.h"
#include "kiln/trace/ops.h"

namespace kiln::modules {

using trace::OpBuilder;
using trace::Value;
using trace::Values;
using trace::Variable;

namespace {

Value ScalarOf(DType dtype, double v) { return trace::Cast(trace::Scalar(v), dtype); }

Value L2Norm(const Value& g) { return trace::Sqrt(trace::Sum(trace::Square(g))); }

}  // namespace

Optimizer::Optimizer(std::string name, OptimizerOptions options)
    : trace::Module(std::move(name)),
      options_(options),
      iterations_(AddVariable("iteration", Tensor::Scalar(int64_t{0}), {.trainable = false})),
      learning_rate_(AddVariable("learning_rate", Tensor::Scalar(options.learning_rate),
                                 {.trainable = false})) {}

Result<const std::vector<Variable>*> Optimizer::SlotsFor(const Variable& var) {
  auto it = slots_.find(var.resource().get());
  if (it != slots_.end()) return &it->second;
  KILN_ASSIGN_OR_RETURN(Shape shape, var.shape().ToShape());
  Tensor zeros(var.dtype(), shape);
  // Two variables of one local name ("kernel" in two layers) get kernel_momentum and
  // kernel_1_momentum.
  const int n = slot_names_used_[var.name()]++;
  const std::string base = n == 0 ? var.name() : var.name() + "_" + std::to_string(n);
  std::vector<Variable> slots;
  for (const std::string& slot : SlotNames()) {
    Variable s = AddVariable(base + "_" + slot, zeros, {.trainable = false});
    KILN_RETURN_IF_ERROR_CTX(s.status(), "creating the '", slot, "' slot of variable '", var.name(),
                             "'");
    slots.push_back(s);
  }
  return &slots_.emplace(var.resource().get(), std::move(slots)).first->second;
}

Status Optimizer::ApplyGradients(const Values& grads, const std::vector<Variable>& vars) {
  if (grads.size() != vars.size()) {
    return InvalidArgument(type_name(), ".ApplyGradients: ", grads.size(), " gradients for ",
                           vars.size(), " variables");
  }
  Values gs = grads;
  for (size_t i = 0; i < gs.size(); ++i) {
    KILN_RETURN_IF_ERROR_CTX(vars[i].status(), type_name(), ".ApplyGradients: variable ", i);
    if (gs[i].empty()) continue;
    KILN_RETURN_IF_ERROR_CTX(gs[i].status(), type_name(), ".ApplyGradients: the gradient of '",
                             vars[i].name(), "'");
    if (gs[i].dtype() != vars[i].dtype() || !gs[i].shape().IsCompatibleWith(vars[i].shape())) {
      return InvalidArgument(type_name(), ".ApplyGradients: the gradient of variable '",
                             vars[i].name(), "' is ", DTypeShortName(gs[i].dtype()), " ",
                             gs[i].shape().ToPythonString(), " but the variable is ",
                             DTypeShortName(vars[i].dtype()), " ",
                             vars[i].shape().ToPythonString());
    }
    if (options_.clipnorm > 0) gs[i] = ClipByNorm(gs[i], options_.clipnorm);
  }
  if (options_.global_clipnorm > 0) gs = ClipByGlobalNorm(gs, options_.global_clipnorm);

  const Value lr = learning_rate_.Read();
  const Value step = trace::Add(iterations_.Read(), trace::Scalar(int64_t{1}));
  for (size_t i = 0; i < gs.size(); ++i) {
    if (gs[i].empty()) continue;
    KILN_ASSIGN_OR_RETURN(const std::vector<Variable>* slots, SlotsFor(vars[i]));
    const DType t = vars[i].dtype();
    KILN_RETURN_IF_ERROR_CTX(
        Update(vars[i], gs[i], *slots, trace::Cast(lr, t), trace::Cast(step, t)), type_name(),
        " update of variable '", vars[i].name(), "'");
  }
  return iterations_.AssignAdd(trace::Scalar(int64_t{1})).status();
}

// ---- SGD ----------------------------------------------------------------------------------

Sgd::Sgd(SgdOptions options) : Optimizer("SGD", options.base), sgd_(options) {}

std::vector<std::string> Sgd::SlotNames() const {
  if (sgd_.momentum == 0) return {};
  return {"momentum"};
}

Status Sgd::Update(const Variable& var, const Value& grad, const std::vector<Variable>& slots,
                   const Value& lr, const Value& /*step*/) {
  if (sgd_.momentum == 0) {
    return OpBuilder("ResourceApplyGradientDescent")
        .Input(var.Handle())
        .Input(lr)
        .Input(grad)
        .Attr("T", var.dtype())
        .BuildNoOutput();
  }
  OpBuilder b("ResourceApplyKerasMomentum");
  b.Input(var.Handle())
      .Input(slots[0].Handle())
      .Input(lr)
      .Input(grad)
      .Input(ScalarOf(var.dtype(), sgd_.momentum))
      .Attr("T", var.dtype());
  if (sgd_.nesterov) b.Attr("use_nesterov", true);
  return b.BuildNoOutput();
}

// ---- Adam / AdamW -------------------------------------------------------------------------

Adam::Adam(AdamOptions options)
    : Optimizer(options.weight_decay > 0 ? "AdamW" : "Adam", options.base), adam_(options) {}

AdamOptions AdamWOptions(float learning_rate, float weight_decay) {
  AdamOptions o;
  o.base.learning_rate = learning_rate;
  o.weight_decay = weight_decay;
  return o;
}

std::vector<std::string> Adam::SlotNames() const { return {"momentum", "velocity"}; }

Status Adam::Update(const Variable& var, const Value& grad, const std::vector<Variable>& slots,
                    const Value& lr, const Value& step) {
  const DType t = var.dtype();
  if (adam_.weight_decay > 0) {
    // Decoupled weight decay (Keras's AdamW): var -= var * weight_decay * lr.
    Value decay = trace::Mul(trace::Mul(var.Read(), ScalarOf(t, adam_.weight_decay)), lr);
    Status s = OpBuilder("AssignSubVariableOp")
                   .Input(var.Handle())
                   .Input(decay)
                   .Attr("dtype", t)
                   .BuildNoOutput();
    KILN_RETURN_IF_ERROR(s);
  }
  auto power = [&](float beta) {
    return OpBuilder("Pow").Input(ScalarOf(t, beta)).Input(step).Attr("T", t).BuildOne();
  };
  return OpBuilder("ResourceApplyAdam")
      .Input(var.Handle())
      .Input(slots[0].Handle())
      .Input(slots[1].Handle())
      .Input(power(adam_.beta_1))
      .Input(power(adam_.beta_2))
      .Input(lr)
      .Input(ScalarOf(t, adam_.beta_1))
      .Input(ScalarOf(t, adam_.beta_2))
      .Input(ScalarOf(t, adam_.epsilon))
      .Input(grad)
      .Attr("T", t)
      .BuildNoOutput();
}

// ---- RMSprop ------------------------------------------------------------------------------

RmsProp::RmsProp(RmsPropOptions options) : Optimizer("RMSprop", options.base), rms_(options) {}

std::vector<std::string> RmsProp::SlotNames() const { return {"velocity", "momentum"}; }

Status RmsProp::Update(const Variable& var, const Value& grad, const std::vector<Variable>& slots,
                       const Value& lr, const Value& /*step*/) {
  const DType t = var.dtype();
  return OpBuilder("ResourceApplyRMSProp")
      .Input(var.Handle())
      .Input(slots[0].Handle())
      .Input(slots[1].Handle())
      .Input(lr)
      .Input(ScalarOf(t, rms_.rho))
      .Input(ScalarOf(t, rms_.momentum))
      .Input(ScalarOf(t, rms_.epsilon))
      .Input(grad)
      .Attr("T", t)
      .BuildNoOutput();
}

// ---- clipping -----------------------------------------------------------------------------

Value ClipByNorm(const Value& g, float clip) {
  const Value c = ScalarOf(g.dtype(), clip);
  return trace::Div(trace::Mul(g, c), trace::Maximum(L2Norm(g), c));
}

Values ClipByGlobalNorm(const Values& grads, float clip) {
  Value sum_sq;
  for (const Value& g : grads) {
    if (g.empty()) continue;
    Value s = trace::Sum(trace::Square(g));
    sum_sq = sum_sq.empty() ? s : trace::Add(sum_sq, s);
  }
  if (sum_sq.empty()) return grads;
  const Value c = ScalarOf(sum_sq.dtype(), clip);
  const Value scale = trace::Div(c, trace::Maximum(trace::Sqrt(sum_sq), c));
  Values out;
  for (const Value& g : grads) {
    out.push_back(g.empty() ? g : trace::Mul(g, trace::Cast(scale, g.dtype())));
  }
  return out;
}

}  // namespace kiln::modules
