// Variable: handle to a resource variable; reads and assignments are ops (traced or eager).
#include "kiln/trace/variable.h"

#include "graph.h"
#include "kiln/trace/op_builder.h"
#include "tape.h"
#include "trace_extras.h"

namespace kiln::trace {
namespace {

const std::string& EmptyString() {
  static const std::string* const s = new std::string();
  return *s;
}

}  // namespace

namespace {

// Variables may be created only on a function's first trace (and outside traces). Records the
// error in the trace otherwise.
bool CheckCreationAllowed(internal::VariableState* state) {
  internal::Graph* graph = internal::Graph::Current();
  if (graph == nullptr) return true;
  if (!graph->allow_variable_creation()) {
    state->status = FailedPrecondition(
        "variable '", state->name, "' was created while tracing '", graph->function_name(),
        "' again: a traced function may create variables only on its first trace (a first "
        "trace that creates variables is run a second time, as tf.function does, to check that "
        "later traces would not create them again). Create it outside the function (e.g. in the "
        "module's constructor), or create it only when it does not exist yet "
        "(`if (!v.valid()) v = Variable::Create(...)`)");
    graph->RecordError(state->status);
    return false;
  }
  if (internal::TraceExtras* extras = internal::CurrentTraceExtras()) ++extras->variables_created;
  return true;
}

Status CheckVariableDType(const std::string& name, DType dtype) {
  if (dtype == DType::kInvalid) {
    return InvalidArgument("variable '", name, "': the initial value is empty");
  }
  if (!HoldsData(dtype)) {
    return InvalidArgument("variable '", name, "': dtype ", DTypeShortName(dtype),
                           " cannot be a variable");
  }
  return OkStatus();
}

}  // namespace

Variable Variable::Create(std::string name, const Tensor& initial, VariableOptions options) {
  auto state = std::make_shared<internal::VariableState>();
  state->name = std::move(name);
  state->trainable = options.trainable;
  if (!CheckCreationAllowed(state.get())) return Variable(std::move(state));
  state->status =
      CheckVariableDType(state->name, initial.IsInitialized() ? initial.dtype() : DType::kInvalid);
  if (state->status.ok()) {
    state->resource = std::make_shared<exec::VariableResource>(state->name, initial.dtype(),
                                                               PartialShape(initial.shape()));
    state->status = state->resource->Assign(initial);
    if (!state->status.ok()) state->resource = nullptr;
  }
  internal::Graph* graph = internal::Graph::Current();
  if (!state->status.ok() && graph != nullptr) graph->RecordError(state->status);
  return Variable(std::move(state));
}

Variable Variable::Create(std::string name, const Value& initial, VariableOptions options) {
  if (!initial.is_symbolic()) {
    Result<Tensor> tensor = initial.tensor();
    if (tensor.ok()) return Create(std::move(name), *tensor, options);
    auto state = std::make_shared<internal::VariableState>();
    state->name = std::move(name);
    state->status = tensor.status().WithContext("variable '" + state->name + "': initial value");
    if (internal::Graph* graph = internal::Graph::Current()) graph->RecordError(state->status);
    return Variable(std::move(state));
  }
  auto state = std::make_shared<internal::VariableState>();
  state->name = std::move(name);
  state->trainable = options.trainable;
  internal::Graph* graph = internal::Graph::Current();
  if (graph == nullptr) {
    state->status = FailedPrecondition("variable '", state->name,
                                       "': the initial value is a symbolic value of a trace that "
                                       "has ended; create the variable inside that trace");
    return Variable(std::move(state));
  }
  if (!CheckCreationAllowed(state.get())) return Variable(std::move(state));
  state->status = CheckVariableDType(state->name, initial.dtype());
  if (state->status.ok()) {
    // No value yet: the trace's own AssignVariableOp gives it one when its graph first runs.
    state->resource =
        std::make_shared<exec::VariableResource>(state->name, initial.dtype(), initial.shape());
    if (internal::TraceExtras* extras = internal::CurrentTraceExtras()) {
      ++extras->variables_initialized_by_graph;
    }
  }
  Variable variable(state);
  if (state->status.ok()) {
    Value assigned = variable.Assign(initial);
    if (!assigned.ok()) {
      state->status = assigned.status();
      state->resource = nullptr;
    }
  }
  if (!state->status.ok()) graph->RecordError(state->status);
  return variable;
}

Variable Variable::Invalid(Status why) {
  auto state = std::make_shared<internal::VariableState>();
  state->status =
      why.ok() ? FailedPrecondition("Variable::Invalid was given an OK status") : std::move(why);
  return Variable(std::move(state));
}

bool Variable::valid() const { return state_ != nullptr && state_->status.ok(); }

Status Variable::status() const {
  if (state_ == nullptr) return FailedPrecondition("invalid Variable handle (default-constructed)");
  return state_->status;
}

const std::string& Variable::name() const { return state_ ? state_->name : EmptyString(); }

DType Variable::dtype() const { return valid() ? state_->resource->dtype() : DType::kInvalid; }

const PartialShape& Variable::shape() const {
  static const PartialShape* const unknown = new PartialShape();
  return valid() ? state_->resource->shape() : *unknown;
}

bool Variable::trainable() const { return state_ != nullptr && state_->trainable; }

const std::shared_ptr<exec::VariableResource>& Variable::resource() const {
  static const std::shared_ptr<exec::VariableResource>* const none =
      new std::shared_ptr<exec::VariableResource>();
  return valid() ? state_->resource : *none;
}

namespace {

// The resource operand: the captured argument while tracing, else a resource tensor.
Value HandleOf(const std::shared_ptr<internal::VariableState>& state) {
  if (internal::Graph* g = internal::Graph::Current()) return g->CaptureVariable(state);
  Tensor t(DType::kResource, Shape());
  t.scalar<std::shared_ptr<ResourceBase>>() = state->resource;
  return Value(std::move(t));
}

}  // namespace

Value Variable::Handle() const {
  if (!valid()) return Value::Error(status());
  return HandleOf(state_);
}

Value Variable::Read() const {
  if (!valid()) return Value::Error(status());
  Value v = OpBuilder("ReadVariableOp").Input(HandleOf(state_)).Attr("dtype", dtype()).BuildOne();
  // The op cannot see the variable's shape through the handle; we can.
  if (v.is_symbolic()) internal::ValueAccess::RefineShape(&v, shape());
  internal::RecordVariableRead(state_, v);
  return v;
}

Value Variable::Assign(const Value& value) const {
  if (!valid()) return Value::Error(status());
  Status s = OpBuilder("AssignVariableOp")
                 .Input(HandleOf(state_))
                 .Input(value)
                 .Attr("dtype", dtype())
                 .BuildNoOutput();
  if (!s.ok()) return Value::Error(s.WithContext("assigning variable '" + name() + "'"));
  return Read();
}

Value Variable::AssignAdd(const Value& delta) const {
  if (!valid()) return Value::Error(status());
  Status s = OpBuilder("AssignAddVariableOp")
                 .Input(HandleOf(state_))
                 .Input(delta)
                 .Attr("dtype", dtype())
                 .BuildNoOutput();
  if (!s.ok()) return Value::Error(s.WithContext("assign_add to variable '" + name() + "'"));
  return Read();
}

Result<Tensor> Variable::value() const {
  KILN_RETURN_IF_ERROR(status());
  return state_->resource->Read();
}

Status Variable::SetValue(const Tensor& value) const {
  KILN_RETURN_IF_ERROR(status());
  return state_->resource->Assign(value);
}

std::string Variable::DebugString() const {
  if (!valid()) return "<Variable '" + name() + "' invalid: " + status().message() + ">";
  std::string s = "<Variable '" + name() + "' shape=" + shape().ToPythonString() +
                  " dtype=" + DTypeShortName(dtype());
  Result<Tensor> v = value();
  if (v.ok()) s += ", numpy=" + v->SummarizeValue();
  return s + ">";
}

}  // namespace kiln::trace
