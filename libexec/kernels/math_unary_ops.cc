// Element-wise unary math: trigonometric and hyperbolic functions, special functions, rounding,
// predicates (IsNan...), bit inversion, the activations Selu/Softplus/Softsign/LeakyRelu,
// ComplexAbs and CheckNumerics: definitions. The CPU kernels are in
// kernels/cpu/math_unary_ops.cc.
#include "kernels/math_unary_ops.h"

#include <memory>
#include <string>
#include <utility>

#include "kernels/elementwise.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using math_unary::FloatAndSignedIntTypes;
using math_unary::LeakyReluState;

template <typename List>
Status PrepareActivation(PrepareContext& ctx) {
  return PrepareUnary(ctx, List::kDTypes, "features");
}

// ---- LeakyRelu -------------------------------------------------------------------------------

Status PrepareLeakyRelu(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, RealTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "features", t));
  auto state = std::make_shared<LeakyReluState>();
  KILN_PREPARE_ASSIGN(ctx, state->alpha, ctx.attrs.GetFloat("alpha", 0.2f));
  ctx.outputs = {TensorSpec{t, ctx.inputs[0].shape}};
  ctx.state = std::move(state);
  return OkStatus();
}

// ---- ComplexAbs ------------------------------------------------------------------------------

Status PrepareComplexAbs(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T", DType::kComplex64));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, {DType::kComplex64, DType::kComplex128}));
  KILN_PREPARE_ASSIGN(ctx, DType tout, ctx.attrs.GetType("Tout", DType::kFloat));
  const DType want = t == DType::kComplex64 ? DType::kFloat : DType::kDouble;
  if (tout != want) {
    return ctx.Error("attr 'Tout': ", DTypeShortName(tout), " does not fit T=", DTypeShortName(t),
                     ", expected ", DTypeShortName(want));
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", t));
  ctx.outputs = {TensorSpec{tout, ctx.inputs[0].shape}};
  return OkStatus();
}

// ---- CheckNumerics ---------------------------------------------------------------------------

Status PrepareCheckNumerics(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, FloatTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "tensor", t));
  KILN_PREPARE_ASSIGN(ctx, std::string message, ctx.attrs.GetString("message"));
  ctx.outputs = {TensorSpec{t, ctx.inputs[0].shape}};
  ctx.state = std::make_shared<TypedOpState<std::string>>(std::move(message));
  return OkStatus();
}

// ---- PopulationCount -------------------------------------------------------------------------

Status PreparePopulationCount(PrepareContext& ctx) {
  return PrepareUnary(ctx, IntTypes::kDTypes, "x", DType::kUInt8);
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"Sin", "y", kOpElementwise, PrepareUnarySame<FloatAndComplexTypes>},
    {"Cos", "y", kOpElementwise, PrepareUnarySame<FloatAndComplexTypes>},
    {"Tan", "y", kOpElementwise, PrepareUnarySame<FloatAndComplexTypes>},
    {"Asin", "y", kOpElementwise, PrepareUnarySame<FloatAndComplexTypes>},
    {"Acos", "y", kOpElementwise, PrepareUnarySame<FloatAndComplexTypes>},
    {"Atan", "y", kOpElementwise, PrepareUnarySame<FloatAndComplexTypes>},
    {"Sinh", "y", kOpElementwise, PrepareUnarySame<FloatAndComplexTypes>},
    {"Cosh", "y", kOpElementwise, PrepareUnarySame<FloatAndComplexTypes>},
    {"Asinh", "y", kOpElementwise, PrepareUnarySame<FloatAndComplexTypes>},
    {"Acosh", "y", kOpElementwise, PrepareUnarySame<FloatAndComplexTypes>},
    {"Atanh", "y", kOpElementwise, PrepareUnarySame<FloatAndComplexTypes>},
    {"Expm1", "y", kOpElementwise, PrepareUnarySame<FloatAndComplexTypes>},
    {"Log1p", "y", kOpElementwise, PrepareUnarySame<FloatAndComplexTypes>},
    {"Erf", "y", kOpElementwise, PrepareUnarySame<FloatTypes>},
    {"Erfc", "y", kOpElementwise, PrepareUnarySame<FloatTypes>},
    {"Lgamma", "y", kOpElementwise, PrepareUnarySame<FloatTypes>},
    {"Digamma", "y", kOpElementwise, PrepareUnarySame<FloatTypes>},
    {"Ndtri", "y", kOpElementwise, PrepareUnarySame<FloatTypes>},
    {"Erfinv", "y", kOpElementwise, PrepareUnarySame<FloatTypes>},
    {"BesselI0", "y", kOpElementwise, PrepareUnarySame<FloatTypes>},
    {"BesselI0e", "y", kOpElementwise, PrepareUnarySame<FloatTypes>},
    {"BesselI1", "y", kOpElementwise, PrepareUnarySame<FloatTypes>},
    {"BesselI1e", "y", kOpElementwise, PrepareUnarySame<FloatTypes>},
    {"BesselJ0", "y", kOpElementwise, PrepareUnarySame<FloatTypes>},
    {"BesselJ1", "y", kOpElementwise, PrepareUnarySame<FloatTypes>},
    {"BesselK0", "y", kOpElementwise, PrepareUnarySame<FloatTypes>},
    {"BesselK0e", "y", kOpElementwise, PrepareUnarySame<FloatTypes>},
    {"BesselK1", "y", kOpElementwise, PrepareUnarySame<FloatTypes>},
    {"BesselK1e", "y", kOpElementwise, PrepareUnarySame<FloatTypes>},
    {"BesselY0", "y", kOpElementwise, PrepareUnarySame<FloatTypes>},
    {"BesselY1", "y", kOpElementwise, PrepareUnarySame<FloatTypes>},
    {"Floor", "y", kOpElementwise, PrepareUnarySame<FloatTypes>},
    {"Ceil", "y", kOpElementwise, PrepareUnarySame<FloatTypes>},
    {"Rint", "y", kOpElementwise, PrepareUnarySame<FloatTypes>},
    {"Round", "y", kOpElementwise, PrepareUnarySame<FloatAndSignedIntTypes>},
    {"Sign", "y", kOpElementwise, PrepareUnarySame<SignedNumberTypes>},
    {"IsNan", "y", kOpFreshOutputs, PrepareUnaryPredicate<FloatTypes>},
    {"IsInf", "y", kOpFreshOutputs, PrepareUnaryPredicate<FloatTypes>},
    {"IsFinite", "y", kOpFreshOutputs, PrepareUnaryPredicate<FloatTypes>},
    {"Invert", "y", kOpElementwise, PrepareUnarySame<IntTypes>},
    {"PopulationCount", "y", kOpFreshOutputs, PreparePopulationCount},
    {"Selu", "activations", kOpElementwise, PrepareActivation<FloatTypes>},
    {"Softplus", "activations", kOpElementwise, PrepareActivation<FloatTypes>},
    {"Softsign", "activations", kOpElementwise, PrepareActivation<FloatTypes>},
    {"LeakyRelu", "activations", kOpElementwise, PrepareLeakyRelu},
    {"ComplexAbs", "y", kOpFreshOutputs, PrepareComplexAbs},
    // Stateful in TF's OpDef (never folded or pruned); passes its input on.
    {"CheckNumerics", "output", kOpStateful, PrepareCheckNumerics},
};

}  // namespace

std::span<const OpDefinition> MathUnaryOpDefs() { return kDefs; }

}  // namespace kiln::exec
