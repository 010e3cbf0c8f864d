// Resource variables: VarHandleOp finds or creates the variable when the graph is prepared;
// the other ops reach it through the handle tensor (a scalar holding the shared_ptr). Also the
// mutexes of tf.CriticalSection (MutexV2, MutexLock, ConsumeMutexLock; see their section).
// The CPU kernels are in kernels/cpu/resource_ops.cc.
#include "kernels/resource_ops.h"

#include <memory>
#include <string>
#include <utility>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"
#include "kiln/exec/resources.h"

namespace kiln::exec {
namespace {

using resource_ops::CheckVariableDType;
using resource_ops::CountUpToState;
using resource_ops::Handle;
using resource_ops::HandleState;
using resource_ops::MutexResource;
using resource_ops::VariableOf;

// The variable behind input 0 when the handle is known at prepare time, else nullptr.
VariableResource* ConstantVariable(const PrepareContext& ctx) {
  if (ctx.constant_inputs.empty() || ctx.constant_inputs[0] == nullptr) return nullptr;
  auto var = VariableOf(*ctx.constant_inputs[0]);
  return var.ok() ? *var : nullptr;
}

// ---- VarHandleOp -----------------------------------------------------------------------------

Status PrepareVarHandleOp(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(0));
  KILN_PREPARE_ASSIGN(ctx, DType dtype, ctx.attrs.GetType("dtype"));
  KILN_PREPARE_ASSIGN(ctx, PartialShape shape, ctx.attrs.GetShape("shape"));
  KILN_PREPARE_ASSIGN(ctx, std::string shared_name, ctx.attrs.GetString("shared_name", ""));
  const std::string name = shared_name.empty() ? std::string(ctx.node_name) : shared_name;
  Tensor handle;
  if (ctx.resources != nullptr) {
    Handle r = ctx.resources->LookupOrCreate(
        name, [&] { return std::make_shared<VariableResource>(name, dtype, shape); });
    auto* var = AsVariable(r.get());
    if (var == nullptr) return ctx.Error("resource '", name, "' exists and is not a variable");
    if (var->dtype() != dtype) {
      return ctx.Error("variable '", name, "' already exists with dtype ",
                       DTypeShortName(var->dtype()), ", the node declares ", DTypeShortName(dtype));
    }
    if (!var->shape().IsCompatibleWith(shape)) {
      return ctx.Error("variable '", name, "' already exists with shape ",
                       var->shape().ToPythonString(), ", the node declares ",
                       shape.ToPythonString());
    }
    handle = Tensor(DType::kResource, Shape());
    handle.scalar<Handle>() = std::move(r);
  }
  ctx.outputs = {TensorSpec{DType::kResource, PartialShape::Scalar()}};
  ctx.state = std::make_shared<HandleState>(std::move(handle));
  return OkStatus();
}

// ---- ReadVariableOp --------------------------------------------------------------------------

Status PrepareReadVariableOp(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType dtype, ctx.attrs.GetType("dtype"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "resource", DType::kResource));
  PartialShape shape = PartialShape::UnknownRank();
  Tensor frozen_value;
  if (VariableResource* var = ConstantVariable(ctx)) {
    KILN_PREPARE_CHECK(ctx, CheckVariableDType(*var, dtype, ctx.op));
    shape = var->shape();
    // Nothing writes a frozen variable: its value is a constant of the prepared graph (the
    // variable's own buffer, not a copy).
    if (var->frozen() && var->initialized()) {
      Result<Tensor> value = var->Read();
      if (value.ok()) {
        frozen_value = std::move(value).value();
        shape = PartialShape(frozen_value.shape());
      }
    }
  }
  ctx.outputs = {TensorSpec{dtype, shape}};
  if (frozen_value.IsInitialized()) ctx.constant_outputs = {std::move(frozen_value)};
  ctx.state = std::make_shared<TypedOpState<DType>>(dtype);
  return OkStatus();
}

// ---- VariableShape ---------------------------------------------------------------------------

// tf.shape of a resource variable: its current value's shape, as out_type (int32 or int64).
Status PrepareVariableShape(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", DType::kResource));
  KILN_PREPARE_ASSIGN(ctx, DType out, ctx.attrs.GetType("out_type", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "out_type", out, {DType::kInt32, DType::kInt64}));
  int64_t rank = -1;
  if (VariableResource* var = ConstantVariable(ctx); var != nullptr && !var->shape().unknown_rank())
    rank = var->shape().rank();
  ctx.outputs = {TensorSpec{out, rank < 0 ? UnknownDims(1) : PartialShape(Shape{rank})}};
  ctx.state = std::make_shared<TypedOpState<DType>>(out);
  return OkStatus();
}

// ---- AssignVariableOp, AssignAdd/SubVariableOp -----------------------------------------------

Status PrepareAssign(PrepareContext& ctx, bool arithmetic) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType dtype, ctx.attrs.GetType("dtype"));
  if (arithmetic)
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "dtype", dtype, NumberTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "resource", DType::kResource));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "value", dtype));
  if (VariableResource* var = ConstantVariable(ctx)) {
    KILN_PREPARE_CHECK(ctx, CheckVariableDType(*var, dtype, ctx.op));
    if (!var->shape().IsCompatibleWith(ctx.inputs[1].shape)) {
      return ctx.Error("input 'value' has shape ", ctx.inputs[1].shape.ToPythonString(),
                       ", not compatible with variable '", var->name(), "' of shape ",
                       var->shape().ToPythonString());
    }
  }
  ctx.state = std::make_shared<TypedOpState<DType>>(dtype);
  return OkStatus();
}
Status PrepareAssignVariableOp(PrepareContext& ctx) { return PrepareAssign(ctx, false); }
Status PrepareAssignArithmetic(PrepareContext& ctx) { return PrepareAssign(ctx, true); }

// ---- VarIsInitializedOp, DestroyResourceOp ---------------------------------------------------

Status PrepareVarIsInitializedOp(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "resource", DType::kResource));
  ctx.outputs = {TensorSpec{DType::kBool, PartialShape::Scalar()}};
  return OkStatus();
}

Status PrepareDestroyResourceOp(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, bool ignore, ctx.attrs.GetBool("ignore_lookup_error", true));
  (void)ignore;
  return ExpectInputDType(ctx, 0, "resource", DType::kResource);
}

// ---- ResourceCountUpTo -----------------------------------------------------------------------

// Increments a scalar int32/int64 variable and returns its value before, failing with TF's
// OutOfRange "Reached limit of L" (and changing nothing) once the value has reached `limit`.
Status PrepareCountUpTo(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "resource", DType::kResource));
  auto st = std::make_shared<CountUpToState>();
  KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->dtype, {DType::kInt32, DType::kInt64}));
  KILN_PREPARE_ASSIGN(ctx, st->limit, ctx.attrs.GetInt("limit"));
  ctx.outputs = {TensorSpec{st->dtype, PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- MutexV2, MutexLock, ConsumeMutexLock ----------------------------------------------------

// Mutexes (TF's mutex_ops.cc), what tf.CriticalSection emits: MutexV2 makes a mutex resource
// (shared by container and shared_name, as TF's ResourceHandleOp: an empty shared_name is the
// name "" of its container), MutexLock acquires it and returns a variant holding the lock,
// ConsumeMutexLock releases it. The lock is also released when the variant dies (TF releases
// only then; its ConsumeMutexLock just checks that nothing else holds the variant, and the
// executor drops the variant after its last use).
//
// A second MutexLock blocks until the lock is released, as TF's does; a call's deadline ends the
// wait. kiln runs the nodes of one call in order on one thread, so a lock that this thread holds
// can never be released while it waits: that MutexLock fails (TF would hang). The executor
// schedules a ready MutexLock only when nothing else is ready (prepared_function.cc), so a
// graph whose other critical sections TF's executor would let finish first never gets there.

// ---- MutexV2 ---------------------------------------------------------------------------------

Status PrepareMutexV2(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(0));
  KILN_PREPARE_ASSIGN(ctx, std::string container, ctx.attrs.GetString("container", ""));
  KILN_PREPARE_ASSIGN(ctx, std::string shared_name, ctx.attrs.GetString("shared_name", ""));
  const std::string name = container.empty() ? shared_name : container + "/" + shared_name;
  Handle r;
  if (ctx.resources != nullptr) {
    // Keyed by type too, as TF's resource manager is: a variable may share the name.
    r = ctx.resources->LookupOrCreate("Mutex:" + name,
                                      [&] { return std::make_shared<MutexResource>(name); });
    if (r == nullptr || r->TypeTag() != &MutexResource::kTypeTag)
      return ctx.Error("resource '", name, "' exists and is not a mutex");
  } else {
    r = std::make_shared<MutexResource>(name);  // no model: the node's own
  }
  Tensor handle(DType::kResource, Shape());
  handle.scalar<Handle>() = std::move(r);
  ctx.outputs = {TensorSpec{DType::kResource, PartialShape::Scalar()}};
  ctx.state = std::make_shared<TypedOpState<Tensor>>(std::move(handle));
  return OkStatus();
}

// ---- MutexLock, ConsumeMutexLock -------------------------------------------------------------

Status PrepareMutexLock(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "mutex", DType::kResource));
  ctx.outputs = {TensorSpec{DType::kVariant, PartialShape::Scalar()}};
  return OkStatus();
}

Status PrepareConsume(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "mutex_lock", DType::kVariant));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "mutex_lock", 0));
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"VarHandleOp", "resource", kOpStateful, PrepareVarHandleOp},
    {"ReadVariableOp", "value", kOpStateful, PrepareReadVariableOp},
    {"AssignVariableOp", "", kOpStateful, PrepareAssignVariableOp},
    {"AssignAddVariableOp", "", kOpStateful, PrepareAssignArithmetic},
    {"AssignSubVariableOp", "", kOpStateful, PrepareAssignArithmetic},
    {"VarIsInitializedOp", "is_initialized", kOpStateful, PrepareVarIsInitializedOp},
    {"VariableShape", "output", kOpStateful, PrepareVariableShape},
    {"DestroyResourceOp", "", kOpStateful, PrepareDestroyResourceOp},
    {"ResourceCountUpTo", "output", kOpStateful, PrepareCountUpTo},
    {"MutexV2", "resource", kOpStateful, PrepareMutexV2},
    {"MutexLock", "mutex_lock", kOpStateful, PrepareMutexLock},
    {"ConsumeMutexLock", "", kOpStateful, PrepareConsume},
};

}  // namespace

std::span<const OpDefinition> ResourceOpDefs() { return kDefs; }

}  // namespace kiln::exec
