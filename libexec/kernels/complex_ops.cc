// Complex numbers taken apart and put together: Real, Imag, Angle (complex64 -> float32,
// complex128 -> float64, attr Tout) and Complex (real and imaginary parts, broadcast, to
// complex64 / complex128), Conj: definitions. ComplexAbs lives with the unary math
// (math_unary_ops.cc). The CPU kernels are in kernels/cpu/complex_ops.cc.
#include "kernels/complex_ops.h"

#include "kernels/elementwise.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using complex_ops::ComplexOf;
using complex_ops::PartOf;

// ---- Real, Imag, Angle -----------------------------------------------------------------------

Status PreparePart(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T", DType::kComplex64));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, {DType::kComplex64, DType::kComplex128}));
  KILN_PREPARE_ASSIGN(ctx, DType tout, ctx.attrs.GetType("Tout", DType::kFloat));
  if (tout != PartOf(t)) {
    return ctx.Error("attr 'Tout': ", DTypeShortName(tout), " does not fit T=", DTypeShortName(t),
                     ", expected ", DTypeShortName(PartOf(t)));
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  ctx.outputs = {TensorSpec{tout, ctx.inputs[0].shape}};
  return OkStatus();
}

// ---- Complex ---------------------------------------------------------------------------------

Status PrepareComplex(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, {DType::kFloat, DType::kDouble}));
  KILN_PREPARE_ASSIGN(ctx, DType tout, ctx.attrs.GetType("Tout", DType::kComplex64));
  if (tout != ComplexOf(t)) {
    return ctx.Error("attr 'Tout': ", DTypeShortName(tout), " does not fit T=", DTypeShortName(t),
                     ", expected ", DTypeShortName(ComplexOf(t)));
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "real", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "imag", t));
  KILN_PREPARE_ASSIGN(ctx, PartialShape shape,
                      BroadcastPartialShapes(ctx.inputs[0].shape, ctx.inputs[1].shape));
  ctx.outputs = {TensorSpec{tout, shape}};
  return OkStatus();
}

// ---- Conj ------------------------------------------------------------------------------------

Status PrepareConj(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T", DType::kComplex64));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, {DType::kComplex64, DType::kComplex128}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  ctx.outputs = {ctx.inputs[0]};
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"Real", "output", kOpFreshOutputs, PreparePart},
    {"Imag", "output", kOpFreshOutputs, PreparePart},
    {"Angle", "output", kOpFreshOutputs, PreparePart},
    {"Complex", "out", kOpFreshOutputs, PrepareComplex},
    {"Conj", "output", kOpFreshOutputs | kOpInPlace, PrepareConj},
};

}  // namespace

std::span<const OpDefinition> ComplexOpDefs() { return kDefs; }

}  // namespace kiln::exec
