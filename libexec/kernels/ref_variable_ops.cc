// TF1 reference variables: VariableV2, Assign, AssignAdd, AssignSub. A TF1 "ref" tensor is a
// resource handle here (the variable itself, as VarHandleOp gives): VariableV2 finds or creates
// the variable when the graph is prepared and the Assign ops write it and pass the handle on as
// their output_ref. Where a TF1 graph reads a ref as a value, the loader puts a ReadVariableOp
// (libexec/loader/tf1_graph.cc), so every other op sees plain tensors.
// The CPU kernels are in kernels/cpu/ref_variable_ops.cc.
#include "kernels/ref_variable_ops.h"

#include <memory>
#include <string>
#include <utility>

#include "kernels/type_lists.h"
#include "kernels/variable_util.h"

namespace kiln::exec {
namespace {

using ref_variable::AssignState;

using Handle = std::shared_ptr<ResourceBase>;

// ---- VariableV2 ------------------------------------------------------------------------------

Status PrepareVariableV2(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(0));
  KILN_PREPARE_ASSIGN(ctx, DType dtype, ctx.attrs.GetType("dtype"));
  KILN_PREPARE_ASSIGN(ctx, PartialShape shape, ctx.attrs.GetShape("shape"));
  KILN_PREPARE_ASSIGN(ctx, std::string container, ctx.attrs.GetString("container", ""));
  KILN_PREPARE_ASSIGN(ctx, std::string shared_name, ctx.attrs.GetString("shared_name", ""));
  if (!DTypeIsPod(dtype) && dtype != DType::kString)
    return ctx.Error("attr 'dtype': a variable cannot hold ", DTypeShortName(dtype));
  // A TF1 session keeps one variable per node name (or shared name).
  std::string name = shared_name.empty() ? std::string(ctx.node_name) : shared_name;
  if (!container.empty()) name = container + "/" + name;
  Handle r;
  if (ctx.resources != nullptr) {
    r = ctx.resources->LookupOrCreate(
        name, [&] { return std::make_shared<VariableResource>(name, dtype, shape); });
    VariableResource* var = AsVariable(r.get());
    if (var == nullptr) return ctx.Error("resource '", name, "' exists and is not a variable");
    KILN_PREPARE_CHECK(ctx, ExpectVariableDType(*var, dtype));
  } else {
    r = std::make_shared<VariableResource>(name, dtype, shape);
  }
  Tensor handle(DType::kResource, Shape());
  handle.scalar<Handle>() = std::move(r);
  ctx.outputs = {TensorSpec{DType::kResource, PartialShape::Scalar()}};
  ctx.state = std::make_shared<TypedOpState<Tensor>>(std::move(handle));
  return OkStatus();
}

// ---- Assign, AssignAdd, AssignSub ------------------------------------------------------------

Status PrepareRefAssign(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  auto st = std::make_shared<AssignState>();
  KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("T"));
  KILN_PREPARE_ASSIGN(ctx, bool locking, ctx.attrs.GetBool("use_locking", ctx.op == "Assign"));
  (void)locking;  // every write takes the variable's lock
  if (ctx.op == "Assign") {
    KILN_PREPARE_ASSIGN(ctx, st->validate_shape, ctx.attrs.GetBool("validate_shape", true));
  } else {
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->dtype, RealTypes::kDTypes));
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "ref", DType::kResource));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "value", st->dtype));
  if (VariableResource* var = ConstantVariableInput(ctx, 0)) {
    KILN_PREPARE_CHECK(ctx, ExpectVariableDType(*var, st->dtype));
    if (st->validate_shape && !var->shape().IsCompatibleWith(ctx.inputs[1].shape))
      return ctx.Error("input 'value' has shape ", ctx.inputs[1].shape.ToPythonString(),
                       ", variable '", var->name(), "' has shape ", var->shape().ToPythonString());
  }
  ctx.outputs = {TensorSpec{DType::kResource, PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"VariableV2", "ref", kOpStateful, PrepareVariableV2},
    {"Assign", "output_ref", kOpStateful, PrepareRefAssign},
    {"AssignAdd", "output_ref", kOpStateful, PrepareRefAssign},
    {"AssignSub", "output_ref", kOpStateful, PrepareRefAssign},
};

}  // namespace

std::span<const OpDefinition> RefVariableOpDefs() { return kDefs; }

}  // namespace kiln::exec
