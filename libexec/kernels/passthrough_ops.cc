// Ops that pass their input through unchanged or stand for a feed: PlaceholderV2,
// PlaceholderWithDefault, PreventGradient, EnsureShape. None of them copies: the output is the
// input tensor itself.
#include <string>

#include "kernels/array_util.h"

namespace kiln::exec {
namespace {

// ---- PlaceholderV2 ---------------------------------------------------------------------------

Status PreparePlaceholderV2(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(0));
  KILN_PREPARE_ASSIGN(ctx, DType dtype, ctx.attrs.GetType("dtype"));
  KILN_PREPARE_ASSIGN(ctx, PartialShape shape, ctx.attrs.GetShape("shape"));
  ctx.outputs = {TensorSpec{dtype, shape}};
  return OkStatus();
}

// A fed placeholder is replaced by an argument before anything runs; reaching the kernel means
// the graph needs a value nobody gave (TF: "You must feed a value for placeholder tensor").
Status ComputePlaceholderV2(const KernelContext& ctx) {
  return InvalidArgument("placeholder '", ctx.node_name(), "' was not fed");
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

Status ComputeForward(const KernelContext& ctx) {
  ctx.SetOutput(0, ctx.input(0));
  return OkStatus();
}

// ---- EnsureShape -----------------------------------------------------------------------------

using ShapeState = TypedOpState<PartialShape>;

// TF writes shapes in brackets with '?' for unknown dims: "[3,?]".
std::string BracketShape(const PartialShape& s) {
  if (s.unknown_rank()) return "<unknown>";
  std::string out = "[";
  for (int i = 0; i < s.rank(); ++i) {
    out += i ? "," : "";
    out += s.dim(i) < 0 ? "?" : std::to_string(s.dim(i));
  }
  return out + "]";
}

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

Status ComputeEnsureShape(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const PartialShape& want = ctx.state<ShapeState>().value;
  if (!want.IsCompatibleWith(x.shape())) {
    return ctx.Error("shape of tensor ", BracketShape(PartialShape(x.shape())),
                     " is not compatible with expected shape ", BracketShape(want));
  }
  ctx.SetOutput(0, x);
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"PlaceholderV2", "output", kOpNone, PreparePlaceholderV2},
    {"PlaceholderWithDefault", "output", kOpNone, PreparePlaceholderWithDefault},
    {"PreventGradient", "output", kOpNone, PreparePreventGradient},
    {"EnsureShape", "output", kOpNone, PrepareEnsureShape},
};

constexpr KernelEntry kCpu[] = {
    {"PlaceholderV2", ComputePlaceholderV2},
    {"PlaceholderWithDefault", ComputeForward},
    {"PreventGradient", ComputeForward},
    {"EnsureShape", ComputeEnsureShape},
};

}  // namespace

std::span<const OpDefinition> PassthroughOpDefs() { return kDefs; }
std::span<const KernelEntry> PassthroughCpuKernels() { return kCpu; }

}  // namespace kiln::exec
