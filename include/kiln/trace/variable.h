// Variable: a handle to a resource variable (kiln::exec::VariableResource) plus what a module
// needs to know about it. Handles are cheap to copy and compare by identity: copies refer to
// the same variable. A traced function that reads or assigns a variable captures it by
// reference (a trailing DT_RESOURCE argument of the function), so assignments inside the
// function change the variable for everyone.
//
// A variable's identity in a saved bundle is its path in the module tree ("dense_1/kernel"),
// which the module it is added to provides (Module::AddVariable).
#pragma once

#include <memory>
#include <string>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/exec/resources.h"
#include "kiln/trace/value.h"

namespace kiln::trace {

namespace internal {
struct VariableState;
struct VariableAccess;
}  // namespace internal

struct VariableOptions {
  bool trainable = true;
};

class Variable {
 public:
  // An invalid handle (status() says why).
  Variable() = default;

  // A variable holding a copy of `initial` (dtype and shape fixed from it). Creating one
  // while a function is traced is allowed only on that function's first trace; afterwards
  // the variable would be created anew on every trace.
  static Variable Create(std::string name, const Tensor& initial, VariableOptions options = {});
  // The same from a value. A symbolic one (computed from the traced function's arguments, or
  // from variables created before it) makes the variable on the function's first trace and
  // gives it that value on the function's first call, as tf.Variable(2.0 * x) inside a
  // tf.function does: the first call runs the trace that assigns it, later calls the one that
  // only uses it. Until that call the variable has no value.
  static Variable Create(std::string name, const Value& initial, VariableOptions options = {});

  // An invalid handle whose status() (and every use) is `why`, which must be an error (else a
  // FailedPrecondition saying so): what an accessor gives for a variable that does not exist
  // yet, such as a layer's kernel before the layer is built.
  static Variable Invalid(Status why);

  bool valid() const;
  // OK for a valid variable, else why it is not (e.g. a duplicate name in its module).
  Status status() const;

  // The local name it was created with ("kernel"). Its path comes from its module.
  const std::string& name() const;
  DType dtype() const;
  const PartialShape& shape() const;
  // Its own flag; Module::trainable_variables() also honours the modules' flags.
  bool trainable() const;
  const std::shared_ptr<exec::VariableResource>& resource() const;

  // The resource operand for ops that take the variable itself (ResourceApplyAdam, ...): the
  // captured argument while tracing, else a resource tensor.
  Value Handle() const;
  // Ops (traced or eager, see op_builder.h). Assign and AssignAdd return the new value.
  Value Read() const;
  Value Assign(const Value& value) const;
  Value AssignAdd(const Value& delta) const;

  // Host access, outside any graph: the current value / replace it.
  Result<Tensor> value() const;
  Status SetValue(const Tensor& value) const;

  // Python-like repr: "<Variable 'x' shape=() dtype=float32, numpy=56>".
  std::string DebugString() const;

  bool operator==(const Variable& o) const { return state_ == o.state_; }
  bool operator!=(const Variable& o) const { return state_ != o.state_; }

 private:
  friend struct internal::VariableAccess;
  explicit Variable(std::shared_ptr<internal::VariableState> state) : state_(std::move(state)) {}
  std::shared_ptr<internal::VariableState> state_;
};

}  // namespace kiln::trace
