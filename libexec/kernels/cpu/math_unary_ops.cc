// The CPU kernels of the ops in kernels/math_unary_ops.cc.
#include "kernels/math_unary_ops.h"

#include <complex>
#include <string>
#include <type_traits>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/vector_math.h"
#include "kernels/kernel_util.h"
#include "kernels/math_functors.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using math_unary::FloatAndSignedIntTypes;
using math_unary::LeakyReluState;

// ---- LeakyRelu -------------------------------------------------------------------------------

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
      if constexpr (std::is_same_v<C, float>) {  // the common case, vectorised per ISA
        vmath::LeakyRelu(in + begin, a, o + begin, end - begin);
      } else {
        for (int64_t i = begin; i < end; ++i)
          o[i] = in[i] > C(0) ? in[i] : fn::LeakyScale(in[i], a);
      }
    });
    return OkStatus();
  });
}

// ---- ComplexAbs ------------------------------------------------------------------------------

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

// ---- tables ----------------------------------------------------------------------------------

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

std::span<const KernelEntry> MathUnaryCpuKernels() { return kCpu; }

}  // namespace kiln::exec
