// Const (and HostConst), Placeholder, identities, ToBool and NoOp: definitions. The CPU kernels
// are in kernels/cpu/basic_ops.cc.
#include <vector>

#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

// ---- Const -----------------------------------------------------------------------------------

using ConstState = TypedOpState<Tensor>;

Status PrepareConst(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(0));
  KILN_PREPARE_ASSIGN(ctx, DType dtype, ctx.attrs.GetType("dtype"));
  KILN_PREPARE_ASSIGN(ctx, Tensor value, ctx.attrs.GetTensor("value"));
  if (value.dtype() != dtype) {
    return ctx.Error("attr 'value' holds a ", DTypeShortName(value.dtype()),
                     " tensor but attr 'dtype' is ", DTypeShortName(dtype));
  }
  ctx.outputs = {TensorSpec{dtype, value.shape()}};
  ctx.state = std::make_shared<ConstState>(std::move(value));
  return OkStatus();
}

// HostConst is Const pinned to host memory (TF places it so on a GPU); here both are
// constants known at prepare time.
Status PrepareHostConst(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(PrepareConst(ctx));
  ctx.constant_outputs = {static_cast<const ConstState&>(*ctx.state).value};
  return OkStatus();
}

// ---- Placeholder -----------------------------------------------------------------------------

Status PreparePlaceholder(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(0));
  KILN_PREPARE_ASSIGN(ctx, DType dtype, ctx.attrs.GetType("dtype"));
  KILN_PREPARE_ASSIGN(ctx, PartialShape shape,
                      ctx.attrs.GetShape("shape", PartialShape::UnknownRank()));
  ctx.outputs = {TensorSpec{dtype, shape}};
  return OkStatus();
}

// ---- Identity, StopGradient, Snapshot --------------------------------------------------------

Status PrepareIdentity(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  ctx.outputs = {ctx.inputs[0]};
  return OkStatus();
}

// ---- IdentityN -------------------------------------------------------------------------------

Status PrepareIdentityN(PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, std::vector<DType> types, ctx.attrs.GetTypeList("T"));
  if (types.empty()) return ctx.Error("attr 'T': expected at least one type");
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(static_cast<int>(types.size())));
  for (size_t i = 0; i < types.size(); ++i) {
    KILN_RETURN_IF_ERROR(
        ExpectInputDType(ctx, static_cast<int>(i), internal::StrCat("input:", i), types[i]));
  }
  ctx.outputs = ctx.inputs;
  return OkStatus();
}

// ---- ToBool ----------------------------------------------------------------------------------

// TF's ToBool (what a TF1 cond on a tensor predicate calls): a scalar is true when it is
// non-zero (a string when non-empty); a tensor of higher rank when it has elements.
Status PrepareToBool(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  if (!HoldsData(t)) return ctx.Error("attr 'T': ", DTypeShortName(t), " has no truth value");
  ctx.outputs = {TensorSpec{DType::kBool, PartialShape::Scalar()}};
  return OkStatus();
}

// ---- NoOp ------------------------------------------------------------------------------------

Status PrepareNoOp(PrepareContext& ctx) { return ctx.ExpectInputs(0); }

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"Const", "output", kOpNone, PrepareConst},
    {"HostConst", "output", kOpNone, PrepareHostConst},
    {"GuaranteeConst", "output", kOpNone, PrepareIdentity},
    {"DeepCopy", "y", kOpFreshOutputs, PrepareIdentity},
    {"ToBool", "output", kOpFreshOutputs, PrepareToBool},
    {"Placeholder", "output", kOpNone, PreparePlaceholder},
    {"Identity", "output", kOpNone, PrepareIdentity},
    {"IdentityN", "output", kOpNone, PrepareIdentityN},
    {"NoOp", "", kOpNone, PrepareNoOp},
    {"StopGradient", "output", kOpNone, PrepareIdentity},
    {"Snapshot", "output", kOpNone, PrepareIdentity},
};

}  // namespace

std::span<const OpDefinition> BasicOpDefs() { return kDefs; }

}  // namespace kiln::exec
