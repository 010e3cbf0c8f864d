// The CPU kernels of the ops in kernels/math_binary_ops.cc.
#include "kernels/math_binary_ops.h"

#include <cmath>
#include <complex>
#include <initializer_list>

#include "kernels/cpu/elementwise.h"
#include "kernels/kernel_util.h"
#include "kernels/math_functors.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using math_binary::AlphaState;
using math_binary::ModTypes;
using math_binary::SpecialTypes;
using math_binary::SquaredDifferenceTypes;

// ---- gradients: two inputs of one shape -------------------------------------------------------

// out[i] = f(a[i], b[i]) over the flat inputs; the output has input 0's shape.
template <template <typename> class Fn, typename List, bool kSameShape>
Status ComputeSameSize(const KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (kSameShape ? a.shape() != b.shape() : a.NumElements() != b.NumElements()) {
    return ctx.Error("inputs must have the same ", kSameShape ? "shape" : "number of elements",
                     ", got ", a.shape().ToString(), " and ", b.shape().ToString());
  }
  return Dispatch<List>(a.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* pa = ComputeData<T>(a);
    const C* pb = ComputeData<T>(b);
    KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.ForwardInputOrAllocateOutput(0, 0, a.shape()));
    C* o = MutableComputeData<T>(out);
    const Fn<C> f;
    ctx.threads().ParallelFor(a.NumElements(), 32768, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) o[i] = f(pa[i], pb[i]);
    });
    return OkStatus();
  });
}

// ---- ApproximateEqual --------------------------------------------------------------------------

Status ComputeApproximateEqual(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  if (x.shape() != y.shape())
    return ctx.Error("inputs must have the same shape, got ", x.shape().ToString(), " and ",
                     y.shape().ToString());
  const float tolerance = ctx.state<TypedOpState<float>>().value;
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  bool* o = out->data<bool>();
  return Dispatch<SpecialTypes>(x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* px = x.data<T>();
    const T* py = y.data<T>();
    const T tol = static_cast<T>(tolerance);
    for (int64_t i = 0; i < x.NumElements(); ++i) o[i] = std::abs(px[i] - py[i]) < tol;
    return OkStatus();
  });
}

// ---- Betainc ---------------------------------------------------------------------------------

// The regularized incomplete beta function I_x(a, b) (Eigen's, as TF's kernel): a, b and x of
// one shape, or scalars that stand for that shape.
Status ComputeBetainc(const KernelContext& ctx) {
  const Tensor* in[3] = {&ctx.input(0), &ctx.input(1), &ctx.input(2)};
  Shape shape;
  for (const Tensor* t : in) {
    if (t->rank() == 0) continue;
    if (shape.rank() > 0 && t->shape() != shape)
      return ctx.Error("inputs a, b and x must have one shape or be scalars, got ",
                       in[0]->shape().ToString(), ", ", in[1]->shape().ToString(), " and ",
                       in[2]->shape().ToString());
    shape = t->shape();
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, shape));
  return Dispatch<SpecialTypes>(in[0]->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* a = in[0]->data<T>();
    const T* b = in[1]->data<T>();
    const T* x = in[2]->data<T>();
    const int64_t sa = in[0]->rank() == 0 ? 0 : 1, sb = in[1]->rank() == 0 ? 0 : 1,
                  sx = in[2]->rank() == 0 ? 0 : 1;
    T* o = out->data<T>();
    ctx.threads().ParallelFor(out->NumElements(), 256, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        o[i] = Eigen::numext::betainc(a[i * sa], b[i * sb], x[i * sx]);
    });
    return OkStatus();
  });
}

// ---- LeakyReluGrad -----------------------------------------------------------------------------

// gradients where features > 0, else alpha * gradients.
Status ComputeLeakyReluGrad(const KernelContext& ctx) {
  const Tensor& g = ctx.input(0);
  const Tensor& f = ctx.input(1);
  if (g.shape() != f.shape())
    return ctx.Error("inputs must have the same shape, got ", g.shape().ToString(), " and ",
                     f.shape().ToString());
  const float alpha = ctx.state<AlphaState>().alpha;
  return Dispatch<RealTypes>(g.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* pg = ComputeData<T>(g);
    const C* pf = ComputeData<T>(f);
    KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.ForwardInputOrAllocateOutput(0, 0, g.shape()));
    C* o = MutableComputeData<T>(out);
    const C a = fn::AttrAs<C>(alpha);
    ctx.threads().ParallelFor(g.NumElements(), 32768, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) o[i] = pf[i] > C(0) ? pg[i] : fn::LeakyScale(pg[i], a);
    });
    return OkStatus();
  });
}

// ---- ClipByValue -----------------------------------------------------------------------------

// max(min(t, hi), lo) as TF computes it: with lo > hi every element becomes lo.
// min(v, h), then max with l, as TF's (l wins when l > h). Complex values clip their real and
// imaginary parts apart, as TF's Eigen min and max do.
template <typename C>
C Clip(C v, C l, C h) {
  return fn::Clip<C>()(v, l, h);
}
template <typename R>
std::complex<R> Clip(std::complex<R> v, std::complex<R> l, std::complex<R> h) {
  return {Clip(v.real(), l.real(), h.real()), Clip(v.imag(), l.imag(), h.imag())};
}

Status ComputeClipByValue(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& lo = ctx.input(1);
  const Tensor& hi = ctx.input(2);
  for (const Tensor* bound : {&lo, &hi}) {
    if (bound->rank() != 0 && bound->shape() != x.shape()) {
      return ctx.Error("clip_value_min and clip_value_max must be scalars or have the shape of t ",
                       x.shape().ToString(), ", got ", lo.shape().ToString(), " and ",
                       hi.shape().ToString());
    }
  }
  return Dispatch<NumberTypes>(x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* in = ComputeData<T>(x);
    const C* pl = ComputeData<T>(lo);
    const C* ph = ComputeData<T>(hi);
    // Stride 0 repeats a scalar bound.
    const int64_t sl = lo.rank() == 0 ? 0 : 1, sh = hi.rank() == 0 ? 0 : 1;
    KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.ForwardInputOrAllocateOutput(0, 0, x.shape()));
    C* o = MutableComputeData<T>(out);
    ctx.threads().ParallelFor(x.NumElements(), 32768, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        o[i] = Clip(in[i], pl[i * sl], ph[i * sh]);
      }
    });
    return OkStatus();
  });
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"Div", ComputeBinary<fn::Div, NumberTypes>},
    {"TruncateDiv", ComputeBinary<fn::TruncateDiv, RealTypes>},
    {"Mod", ComputeBinary<fn::TruncateMod, ModTypes>},
    {"TruncateMod", ComputeBinary<fn::TruncateMod, ModTypes>},
    {"DivNoNan", ComputeBinary<fn::DivNoNan, FloatAndComplexTypes>},
    {"MulNoNan", ComputeBinary<fn::MulNoNan, FloatAndComplexTypes>},
    {"Xdivy", ComputeBinary<fn::Xdivy, FloatAndComplexTypes>},
    {"Xlogy", ComputeBinary<fn::Xlogy, FloatAndComplexTypes>},
    {"Xlog1py", ComputeBinary<fn::Xlog1py, FloatAndComplexTypes>},
    {"Igamma", ComputeBinary<fn::Igamma, SpecialTypes>},
    {"Igammac", ComputeBinary<fn::Igammac, SpecialTypes>},
    {"IgammaGradA", ComputeBinary<fn::IgammaGradA, SpecialTypes>},
    {"RandomGammaGrad", ComputeBinary<fn::RandomGammaGrad, SpecialTypes>},
    {"Zeta", ComputeBinary<fn::Zeta, SpecialTypes>},
    {"Polygamma", ComputeBinary<fn::Polygamma, SpecialTypes>},
    {"NextAfter", ComputeBinary<fn::NextAfter, SpecialTypes>},
    {"ApproximateEqual", ComputeApproximateEqual},
    {"Betainc", ComputeBetainc},
    {"Atan2", ComputeBinary<fn::Atan2, FloatTypes>},
    {"SquaredDifference", ComputeBinary<fn::SquaredDifference, SquaredDifferenceTypes>},
    {"BitwiseAnd", ComputeBinary<fn::BitwiseAnd, IntTypes>},
    {"BitwiseOr", ComputeBinary<fn::BitwiseOr, IntTypes>},
    {"BitwiseXor", ComputeBinary<fn::BitwiseXor, IntTypes>},
    {"LeftShift", ComputeBinary<fn::LeftShift, IntTypes>},
    {"RightShift", ComputeBinary<fn::RightShift, IntTypes>},
    {"ReluGrad", ComputeSameSize<fn::ReluGrad, RealTypes, true>},
    {"Relu6Grad", ComputeSameSize<fn::Relu6Grad, RealTypes, true>},
    {"SigmoidGrad", ComputeSameSize<fn::SigmoidGrad, FloatAndComplexTypes, false>},
    {"TanhGrad", ComputeSameSize<fn::TanhGrad, FloatAndComplexTypes, false>},
    {"EluGrad", ComputeSameSize<fn::EluGrad, FloatTypes, true>},
    {"SeluGrad", ComputeSameSize<fn::SeluGrad, FloatTypes, true>},
    {"SoftplusGrad", ComputeSameSize<fn::SoftplusGrad, FloatTypes, true>},
    {"SoftsignGrad", ComputeSameSize<fn::SoftsignGrad, FloatTypes, true>},
    {"LeakyReluGrad", ComputeLeakyReluGrad},
    {"ReciprocalGrad", ComputeSameSize<fn::ReciprocalGrad, FloatAndComplexTypes, false>},
    {"InvGrad", ComputeSameSize<fn::ReciprocalGrad, FloatAndComplexTypes, false>},
    {"SqrtGrad", ComputeSameSize<fn::SqrtGrad, FloatAndComplexTypes, false>},
    {"RsqrtGrad", ComputeSameSize<fn::RsqrtGrad, FloatAndComplexTypes, false>},
    {"ClipByValue", ComputeClipByValue},
};

}  // namespace

std::span<const KernelEntry> MathBinaryCpuKernels() { return kCpu; }

}  // namespace kiln::exec
