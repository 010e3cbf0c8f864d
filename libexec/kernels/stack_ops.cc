// TF1 stacks (what a tf.compat.v1.while_loop's gradient saves its forward values in): StackV2
// makes a new stack each time it runs and hands out a resource handle; StackPushV2 pushes (and
// passes the value on), StackPopV2 pops, StackCloseV2 closes. The TF 1 forms Stack, StackPush,
// StackPop and StackClose take the stack as a reference (Ref(string)), here the same handle.
// Pushes and pops are ordered by the graph's edges, as in TF; a stack is mutable state shared by
// every op holding its handle, so the ops are stateful.
// The CPU kernels, and the stack itself, are in kernels/cpu/stack_ops.cc.
#include "kernels/stack_ops.h"

#include <memory>
#include <string>

#include "kernels/array_util.h"

namespace kiln::exec {
namespace {

using stack_ops::StackState;

// ---- StackV2, Stack --------------------------------------------------------------------------

Status PrepareStack(PrepareContext& ctx) {
  const bool v2 = ctx.op == "StackV2";
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(v2 ? 1 : 0));
  if (v2) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "max_size", DType::kInt32));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "max_size", 0));
  }
  auto st = std::make_shared<StackState>();
  KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("elem_type"));
  KILN_PREPARE_ASSIGN(ctx, st->name, ctx.attrs.GetString("stack_name", ""));
  if (st->name.empty()) st->name = std::string(ctx.node_name);
  ctx.outputs = {TensorSpec{DType::kResource, PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- StackPushV2, StackPush ------------------------------------------------------------------

Status PreparePush(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "handle", DType::kResource));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 1, "elem"));
  ctx.outputs = {ctx.inputs[1]};
  ctx.state = std::make_shared<TypedOpState<DType>>(t);
  return OkStatus();
}

// ---- StackPopV2, StackPop --------------------------------------------------------------------

Status PreparePop(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "handle", DType::kResource));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("elem_type"));
  ctx.outputs = {TensorSpec{t, PartialShape::UnknownRank()}};
  ctx.state = std::make_shared<TypedOpState<DType>>(t);
  return OkStatus();
}

// ---- StackCloseV2, StackClose ----------------------------------------------------------------

Status PrepareClose(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  return ExpectInputDType(ctx, 0, "handle", DType::kResource);
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"StackV2", "handle", kOpStateful | kOpFreshOutputs, PrepareStack},
    {"StackPushV2", "output", kOpStateful, PreparePush},
    {"StackPopV2", "elem", kOpStateful, PreparePop},
    {"StackCloseV2", "", kOpStateful, PrepareClose},
    {"Stack", "handle", kOpStateful | kOpFreshOutputs, PrepareStack},
    {"StackPush", "output", kOpStateful, PreparePush},
    {"StackPop", "elem", kOpStateful, PreparePop},
    {"StackClose", "", kOpStateful, PrepareClose},
};

}  // namespace

std::span<const OpDefinition> StackOpDefs() { return kDefs; }

}  // namespace kiln::exec
