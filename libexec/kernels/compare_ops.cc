// Comparisons (bool results, numpy broadcasting), logical ops, and Select / SelectV2:
// definitions. The CPU kernels are in kernels/cpu/compare_ops.cc.
#include "kernels/compare_ops.h"

#include <memory>
#include <span>
#include <utility>

#include "kernels/elementwise.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using compare::CompareState;
using compare::EqualityTypes;
using compare::SelectTypes;

// ---- comparisons -----------------------------------------------------------------------------

Status PrepareCompareImpl(PrepareContext& ctx, bool equality) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(
      ctx, "T", t, equality ? std::span<const DType>(EqualityTypes::kDTypes) : RealTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "y", t));
  auto state = std::make_shared<CompareState>();
  if (equality) {
    KILN_PREPARE_ASSIGN(ctx, state->incompatible_shape_error,
                        ctx.attrs.GetBool("incompatible_shape_error", true));
  }
  const PartialShape& a = ctx.inputs[0].shape;
  const PartialShape& b = ctx.inputs[1].shape;
  Result<PartialShape> shape = BroadcastPartialShapes(a, b);
  if (!shape.ok()) {
    if (state->incompatible_shape_error) return ctx.Error(shape.status().message());
    shape = PartialShape::Scalar();  // known to be incompatible: the op gives one bool
  } else if (!state->incompatible_shape_error && !(a.IsFullyDefined() && b.IsFullyDefined())) {
    shape = PartialShape::UnknownRank();  // may turn out incompatible, and then a scalar
  }
  ctx.outputs = {TensorSpec{DType::kBool, *shape}};
  ctx.state = std::move(state);
  return OkStatus();
}
Status PrepareCompare(PrepareContext& ctx) { return PrepareCompareImpl(ctx, false); }
Status PrepareEquality(PrepareContext& ctx) { return PrepareCompareImpl(ctx, true); }

// ---- logical ---------------------------------------------------------------------------------

Status PrepareLogicalBinary(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", DType::kBool));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "y", DType::kBool));
  KILN_PREPARE_ASSIGN(ctx, PartialShape shape,
                      BroadcastPartialShapes(ctx.inputs[0].shape, ctx.inputs[1].shape));
  ctx.outputs = {TensorSpec{DType::kBool, shape}};
  return OkStatus();
}

Status PrepareLogicalNot(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", DType::kBool));
  ctx.outputs = {TensorSpec{DType::kBool, ctx.inputs[0].shape}};
  return OkStatus();
}

// ---- Select, SelectV2 -----------------------------------------------------------------------

Status PrepareSelectCommon(PrepareContext& ctx, DType* t) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, *t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", *t, SelectTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "condition", DType::kBool));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "t", *t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "e", *t));
  return OkStatus();
}

// TF1 Select: t and e have one shape; condition is a scalar, has that shape, or is a vector
// whose length is t's first dim (it then picks whole rows).
Status PrepareSelect(PrepareContext& ctx) {
  DType t;
  KILN_RETURN_IF_ERROR(PrepareSelectCommon(ctx, &t));
  const PartialShape& cond = ctx.inputs[0].shape;
  Result<PartialShape> value = ctx.inputs[1].shape.MergeWith(ctx.inputs[2].shape);
  if (!value.ok()) {
    return ctx.Error("inputs 't' and 'e' must have the same shape, got ",
                     ctx.inputs[1].shape.ToPythonString(), " and ",
                     ctx.inputs[2].shape.ToPythonString());
  }
  if (!cond.unknown_rank() && cond.rank() > 0 && !value->unknown_rank()) {
    bool ok = cond.IsCompatibleWith(*value);
    if (!ok && cond.rank() == 1 && value->rank() >= 1) {
      ok = cond.dim(0) < 0 || value->dim(0) < 0 || cond.dim(0) == value->dim(0);
    }
    if (!ok) {
      return ctx.Error("input 'condition' ", cond.ToPythonString(),
                       " must be a scalar, have the shape of 't' ", value->ToPythonString(),
                       ", or be a vector of its first dimension");
    }
  }
  ctx.outputs = {TensorSpec{t, *value}};
  return OkStatus();
}

Status PrepareSelectV2(PrepareContext& ctx) {
  DType t;
  KILN_RETURN_IF_ERROR(PrepareSelectCommon(ctx, &t));
  KILN_PREPARE_ASSIGN(ctx, PartialShape te,
                      BroadcastPartialShapes(ctx.inputs[1].shape, ctx.inputs[2].shape));
  KILN_PREPARE_ASSIGN(ctx, PartialShape shape, BroadcastPartialShapes(ctx.inputs[0].shape, te));
  ctx.outputs = {TensorSpec{t, shape}};
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"Less", "z", kOpFreshOutputs, PrepareCompare},
    {"LessEqual", "z", kOpFreshOutputs, PrepareCompare},
    {"Greater", "z", kOpFreshOutputs, PrepareCompare},
    {"GreaterEqual", "z", kOpFreshOutputs, PrepareCompare},
    {"Equal", "z", kOpFreshOutputs, PrepareEquality},
    {"NotEqual", "z", kOpFreshOutputs, PrepareEquality},
    {"LogicalAnd", "z", kOpElementwise, PrepareLogicalBinary},
    {"LogicalOr", "z", kOpElementwise, PrepareLogicalBinary},
    {"LogicalNot", "y", kOpElementwise, PrepareLogicalNot},
    {"Select", "output", kOpFreshOutputs, PrepareSelect},
    {"SelectV2", "output", kOpFreshOutputs, PrepareSelectV2},
};

}  // namespace

std::span<const OpDefinition> CompareOpDefs() { return kDefs; }

}  // namespace kiln::exec
