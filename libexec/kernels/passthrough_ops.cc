// Ops that pass their input through unchanged or stand for a feed: PlaceholderV2,
// PlaceholderWithDefault, PreventGradient, EnsureShape. The CPU kernels are in
// kernels/cpu/passthrough_ops.cc.
#include "kernels/passthrough_ops.h"

#include <string>

#include "kernels/array_util.h"

namespace kiln::exec {
namespace {

using passthrough::BracketShape;
using passthrough::ShapeState;

// ---- PlaceholderV2 ---------------------------------------------------------------------------

Status PreparePlaceholderV2(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(0));
  KILN_PREPARE_ASSIGN(ctx, DType dtype, ctx.attrs.GetType("dtype"));
  KILN_PREPARE_ASSIGN(ctx, PartialShape shape, ctx.attrs.GetShape("shape"));
  ctx.outputs = {TensorSpec{dtype, shape}};
  return OkStatus();
}

// ---- PlaceholderWithDefault ----------------------------------------------------------------

// When fed, the loader replaces the node by the fed argument; otherwise the output is its input.
// The input must fit attr 'shape' (which may be less specific, so that feeds of other shapes
// are allowed).
Status PreparePlaceholderWithDefault(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType dtype, ctx.attrs.GetType("dtype"));
  KILN_PREPARE_ASSIGN(ctx, PartialShape shape, ctx.attrs.GetShape("shape"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", dtype));
  auto merged = ctx.inputs[0].shape.MergeWith(shape);
  if (!merged.ok()) {
    return ctx.Error("input 'input' of shape ", ctx.inputs[0].shape.ToPythonString(),
                     " is not compatible with attr 'shape' ", shape.ToPythonString());
  }
  ctx.outputs = {TensorSpec{dtype, *merged}};
  return OkStatus();
}

// ---- PreventGradient -------------------------------------------------------------------------

Status PreparePreventGradient(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  KILN_PREPARE_ASSIGN(ctx, std::string message, ctx.attrs.GetString("message", ""));
  (void)message;  // only gradient construction reads it
  ctx.outputs = {TensorSpec{t, ctx.inputs[0].shape}};
  return OkStatus();
}

// ---- EnsureShape -----------------------------------------------------------------------------

Status PrepareEnsureShape(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  KILN_PREPARE_ASSIGN(ctx, PartialShape shape, ctx.attrs.GetShape("shape"));
  auto merged = ctx.inputs[0].shape.MergeWith(shape);
  if (!merged.ok()) {
    return ctx.Error("input of shape ", BracketShape(ctx.inputs[0].shape),
                     " is not compatible with the expected shape ", BracketShape(shape),
                     " (attr 'shape')");
  }
  ctx.outputs = {TensorSpec{t, *merged}};
  ctx.state = std::make_shared<ShapeState>(shape);
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"PlaceholderV2", "output", kOpNone, PreparePlaceholderV2},
    {"PlaceholderWithDefault", "output", kOpNone, PreparePlaceholderWithDefault},
    {"PreventGradient", "output", kOpNone, PreparePreventGradient},
    {"EnsureShape", "output", kOpNone, PrepareEnsureShape},
};

}  // namespace

std::span<const OpDefinition> PassthroughOpDefs() { return kDefs; }

}  // namespace kiln::exec
