// Element-wise unary math: trigonometric and hyperbolic functions, special functions, rounding,
// predicates (IsNan...), bit inversion, the activations Selu/Softplus/Softsign/LeakyRelu,
// ComplexAbs and CheckNumerics.
#include <complex>
#include <string>

#include "kernels/cpu/elementwise.h"
#include "kernels/kernel_util.h"
#include "kernels/math_functors.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

// Round and Sign also take TF's signed integer types.
using FloatAndSignedIntTypes = SignedRealTypes;

template <typename List>
Status PrepareActivation(PrepareContext& ctx) {
  return PrepareUnary(ctx, List::kDTypes, "features");
}

// ---- LeakyRelu -------------------------------------------------------------------------------

struct LeakyReluState : OpState {
  float alpha = 0.2f;
};

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

// x where x > 0, else alpha * x (alpha may be above 1 or negative, so no max()); integers take
// alpha truncated, as TF's kernel for them.
Status ComputeLeakyRelu(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const float alpha = ctx.state<LeakyReluState>().alpha;
  return Dispatch<RealTypes>(x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const int64_t n = x.NumElements();
    const C* in = ComputeData<T>(x);
    KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.ForwardInputOrAllocateOutput(0, 0, x.shape()));
    C* o = MutableComputeData<T>(out);
    const C a = fn::AttrAs<C>(alpha);
    ctx.threads().ParallelFor(n, 32768, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) o[i] = in[i] > C(0) ? in[i] : fn::LeakyScale(in[i], a);
    });
    return OkStatus();
  });
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

Status ComputeComplexAbs(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  return Dispatch<TypeList<float, double>>(out->dtype(), [&](auto tag) {
    using R = typename decltype(tag)::type;
    const std::complex<R>* in = x.data<std::complex<R>>();
    R* o = out->data<R>();
    ctx.threads().ParallelFor(x.NumElements(), 8192, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) o[i] = std::abs(in[i]);
    });
    return OkStatus();
  });
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

// Passes its input on, or fails with TF's message when it holds NaN or Inf.
Status ComputeCheckNumerics(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  bool nan = false, inf = false;
  KILN_RETURN_IF_ERROR(Dispatch<FloatTypes>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const ComputeType<T>* p = ComputeData<T>(x);
    for (int64_t i = 0, n = x.NumElements(); i < n && !(nan && inf); ++i) {
      nan |= Eigen::numext::isnan(p[i]);
      inf |= Eigen::numext::isinf(p[i]);
    }
    return OkStatus();
  }));
  if (nan || inf) {
    return ctx.Error(ctx.state<TypedOpState<std::string>>().value, " : Tensor had ",
                     nan && inf ? "Inf and NaN" : (nan ? "NaN" : "Inf"), " values");
  }
  ctx.SetOutput(0, x);
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

constexpr KernelEntry kCpu[] = {
    {"Sin", ComputeUnary<fn::Sin, FloatAndComplexTypes>},
    {"Cos", ComputeUnary<fn::Cos, FloatAndComplexTypes>},
    {"Tan", ComputeUnary<fn::Tan, FloatAndComplexTypes>},
    {"Asin", ComputeUnary<fn::Asin, FloatAndComplexTypes>},
    {"Acos", ComputeUnary<fn::Acos, FloatAndComplexTypes>},
    {"Atan", ComputeUnary<fn::Atan, FloatAndComplexTypes>},
    {"Sinh", ComputeUnary<fn::Sinh, FloatAndComplexTypes>},
    {"Cosh", ComputeUnary<fn::Cosh, FloatAndComplexTypes>},
    {"Asinh", ComputeUnary<fn::Asinh, FloatAndComplexTypes>},
    {"Acosh", ComputeUnary<fn::Acosh, FloatAndComplexTypes>},
    {"Atanh", ComputeUnary<fn::Atanh, FloatAndComplexTypes>},
    {"Expm1", ComputeUnary<fn::Expm1, FloatAndComplexTypes>},
    {"Log1p", ComputeUnary<fn::Log1p, FloatAndComplexTypes>},
    {"Erf", ComputeUnary<fn::Erf, FloatTypes>},
    {"Erfc", ComputeUnary<fn::Erfc, FloatTypes>},
    {"Lgamma", ComputeUnary<fn::Lgamma, FloatTypes>},
    {"Digamma", ComputeUnary<fn::Digamma, FloatTypes>},
    {"Ndtri", ComputeUnary<fn::Ndtri, FloatTypes>},
    {"Erfinv", ComputeUnary<fn::Erfinv, FloatTypes>},
    {"BesselI0", ComputeUnary<fn::BesselI0, FloatTypes>},
    {"BesselI0e", ComputeUnary<fn::BesselI0e, FloatTypes>},
    {"BesselI1", ComputeUnary<fn::BesselI1, FloatTypes>},
    {"BesselI1e", ComputeUnary<fn::BesselI1e, FloatTypes>},
    {"BesselJ0", ComputeUnary<fn::BesselJ0, FloatTypes>},
    {"BesselJ1", ComputeUnary<fn::BesselJ1, FloatTypes>},
    {"BesselK0", ComputeUnary<fn::BesselK0, FloatTypes>},
    {"BesselK0e", ComputeUnary<fn::BesselK0e, FloatTypes>},
    {"BesselK1", ComputeUnary<fn::BesselK1, FloatTypes>},
    {"BesselK1e", ComputeUnary<fn::BesselK1e, FloatTypes>},
    {"BesselY0", ComputeUnary<fn::BesselY0, FloatTypes>},
    {"BesselY1", ComputeUnary<fn::BesselY1, FloatTypes>},
    {"Floor", ComputeUnary<fn::Floor, FloatTypes>},
    {"Ceil", ComputeUnary<fn::Ceil, FloatTypes>},
    {"Rint", ComputeUnary<fn::Rint, FloatTypes>},
    {"Round", ComputeUnary<fn::Round, FloatAndSignedIntTypes>},
    {"Sign", ComputeUnary<fn::Sign, SignedNumberTypes>},
    {"IsNan", ComputeUnary<fn::IsNan, FloatTypes>},
    {"IsInf", ComputeUnary<fn::IsInf, FloatTypes>},
    {"IsFinite", ComputeUnary<fn::IsFinite, FloatTypes>},
    {"Invert", ComputeUnary<fn::Invert, IntTypes>},
    {"PopulationCount", ComputeUnary<fn::PopulationCount, IntTypes>},
    {"Selu", ComputeUnary<fn::Selu, FloatTypes>},
    {"Softplus", ComputeUnary<fn::Softplus, FloatTypes>},
    {"Softsign", ComputeUnary<fn::Softsign, FloatTypes>},
    {"LeakyRelu", ComputeLeakyRelu},
    {"ComplexAbs", ComputeComplexAbs},
    {"CheckNumerics", ComputeCheckNumerics},
};

}  // namespace

std::span<const OpDefinition> MathUnaryOpDefs() { return kDefs; }
std::span<const KernelEntry> MathUnaryCpuKernels() { return kCpu; }

}  // namespace kiln::exec
