// More element-wise math: FloorMod, FloorDiv, Pow (broadcasting), Rsqrt, Reciprocal,
// ZerosLike, OnesLike, AddN and Bucketize: definitions. The CPU kernels are in
// kernels/cpu/math_arith_ops.cc.
#include "kernels/math_arith_ops.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "kernels/elementwise.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using math_arith::AddNTypes;
using math_arith::BucketizeState;
using math_arith::BucketizeTypes;
using math_arith::OnesLikeTypes;
using math_arith::ZerosLikeTypes;

// ---- ZerosLike, OnesLike ---------------------------------------------------------------------

template <typename List>
Status PrepareFillLike(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, List::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", t));
  ctx.outputs = {TensorSpec{t, ctx.inputs[0].shape}};
  return OkStatus();
}

// ---- AddN ------------------------------------------------------------------------------------

Status PrepareAddN(PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, int64_t n, ctx.attrs.GetInt("N"));
  if (n < 1) return ctx.Error("attr 'N': expected at least 1, got ", n);
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, AddNTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(static_cast<int>(n)));
  PartialShape shape = ctx.inputs[0].shape;
  for (int i = 0; i < n; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, internal::StrCat("inputs:", i), t));
    Result<PartialShape> merged = shape.MergeWith(ctx.inputs[i].shape);
    if (!merged.ok()) {
      return ctx.Error("all inputs must have the same shape: input 0 has ",
                       ctx.inputs[0].shape.ToPythonString(), ", input ", i, " has ",
                       ctx.inputs[i].shape.ToPythonString());
    }
    shape = *merged;
  }
  ctx.outputs = {TensorSpec{t, shape}};
  return OkStatus();
}

// ---- Bucketize -------------------------------------------------------------------------------

Status PrepareBucketize(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, BucketizeTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  auto state = std::make_shared<BucketizeState>();
  KILN_PREPARE_ASSIGN(ctx, state->boundaries, ctx.attrs.GetFloatList("boundaries"));
  if (!std::is_sorted(state->boundaries.begin(), state->boundaries.end()))
    return ctx.Error("attr 'boundaries': expected sorted boundaries");
  ctx.outputs = {TensorSpec{DType::kInt32, ctx.inputs[0].shape}};
  ctx.state = std::move(state);
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"FloorMod", "z", kOpElementwise, PrepareBinarySame<RealTypes>},
    {"FloorDiv", "z", kOpElementwise, PrepareBinarySame<RealTypes>},
    {"Pow", "z", kOpElementwise, PrepareBinarySame<SignedNumberTypes>},
    {"Rsqrt", "y", kOpElementwise, PrepareUnarySame<FloatAndComplexTypes>},
    {"Reciprocal", "y", kOpElementwise, PrepareUnarySame<SignedNumberTypes>},
    {"Inv", "y", kOpElementwise, PrepareUnarySame<SignedNumberTypes>},  // Reciprocal's old name
    {"ZerosLike", "y", kOpElementwise, PrepareFillLike<ZerosLikeTypes>},
    {"OnesLike", "y", kOpElementwise, PrepareFillLike<OnesLikeTypes>},
    {"AddN", "sum", kOpElementwise, PrepareAddN},
    {"Bucketize", "output", kOpFreshOutputs, PrepareBucketize},
};

}  // namespace

std::span<const OpDefinition> MathArithOpDefs() { return kDefs; }

}  // namespace kiln::exec
