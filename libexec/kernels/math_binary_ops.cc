// Element-wise binary math with numpy broadcasting (Div, TruncateDiv, Mod, bit ops, the *NoNan
// and x*y-style ops, Atan2, SquaredDifference, the special functions of two arguments,
// NextAfter), ApproximateEqual and Betainc (three arguments, shapes equal or scalar), the
// activation and unary-math gradients (Relu, Relu6, Elu, Selu, Softplus, Softsign, LeakyRelu,
// Sigmoid, Tanh, Reciprocal/Inv, Sqrt, Rsqrt: same sizes, no broadcasting, as TF) and
// ClipByValue.
#include <cmath>
#include <memory>
#include <string>

#include "kernels/cpu/elementwise.h"
#include "kernels/kernel_util.h"
#include "kernels/math_functors.h"

namespace kiln::exec {
namespace {

// TF's CPU registrations: Mod/TruncateMod take float32/64 and int32/64 (half and bfloat16, which
// the OpDef allows, compute in float); SquaredDifference adds int32/64 to the floats.
using ModTypes = TypeList<float, double, Half, BFloat16, int32_t, int64_t>;
using SquaredDifferenceTypes = TypeList<float, double, Half, BFloat16, int32_t, int64_t,
                                        std::complex<float>, std::complex<double>>;
// Igamma, Igammac (and their gradients), Zeta, Polygamma and NextAfter: TF registers float and
// double only.
using SpecialTypes = TypeList<float, double>;

// ---- gradients: two inputs of one shape -------------------------------------------------------

// Inputs `a` and `b` of dtype T (in List) and the same shape; the output has it too. TF's
// ReluGrad wants equal shapes, SigmoidGrad/TanhGrad equal element counts (shape of input 0).
// `t_default`: T's OpDef default, kInvalid when T has none (LeakyReluGrad's is float32).
template <typename List, bool kSameShape>
Status PrepareSameSize(PrepareContext& ctx, std::string_view a, std::string_view b,
                       DType t_default = DType::kInvalid) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(
      ctx, DType t,
      t_default == DType::kInvalid ? ctx.attrs.GetType("T") : ctx.attrs.GetType("T", t_default));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, List::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, a, t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, b, t));
  const PartialShape& sa = ctx.inputs[0].shape;
  const PartialShape& sb = ctx.inputs[1].shape;
  PartialShape out = sa;
  if (kSameShape) {
    Result<PartialShape> merged = sa.MergeWith(sb);
    if (!merged.ok()) {
      return ctx.Error("inputs '", a, "' and '", b, "' must have the same shape, got ",
                       sa.ToPythonString(), " and ", sb.ToPythonString());
    }
    out = *merged;
  } else if (sa.IsFullyDefined() && sb.IsFullyDefined() &&
             sa.ToShape()->num_elements() != sb.ToShape()->num_elements()) {
    return ctx.Error("inputs '", a, "' and '", b, "' must have the same number of elements, got ",
                     sa.ToPythonString(), " and ", sb.ToPythonString());
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

template <typename List>
Status PrepareReluGrad(PrepareContext& ctx) {
  return PrepareSameSize<List, true>(ctx, "gradients", "features");
}
template <typename List>
Status PrepareActivationGrad(PrepareContext& ctx) {
  return PrepareSameSize<List, false>(ctx, "y", "dy");
}

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

template <typename List>
Status PrepareFeatureGrad(PrepareContext& ctx) {
  return PrepareSameSize<List, true>(ctx, "gradients", "features");
}
template <typename List>
Status PrepareOutputGrad(PrepareContext& ctx) {
  return PrepareSameSize<List, true>(ctx, "gradients", "outputs");
}

// NextAfter: x1 and x2 broadcast; T defaults to float32 in its OpDef (so TF leaves it out).
Status PrepareNextAfter(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, SpecialTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x1", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "x2", t));
  KILN_PREPARE_ASSIGN(ctx, PartialShape shape,
                      BroadcastPartialShapes(ctx.inputs[0].shape, ctx.inputs[1].shape));
  ctx.outputs = {TensorSpec{t, shape}};
  return OkStatus();
}

// ---- ApproximateEqual --------------------------------------------------------------------------

// |x - y| < tolerance over two tensors of one shape (TF's CPU kernel: float32 and float64).
Status PrepareApproximateEqual(PrepareContext& ctx) {
  Status same = PrepareSameSize<SpecialTypes, true>(ctx, "x", "y");
  if (!same.ok()) return same;
  KILN_PREPARE_ASSIGN(ctx, float tolerance, ctx.attrs.GetFloat("tolerance", 1e-5f));
  ctx.outputs[0].dtype = DType::kBool;
  ctx.state = std::make_shared<TypedOpState<float>>(tolerance);
  return OkStatus();
}

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
Status PrepareBetainc(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, SpecialTypes::kDTypes));
  PartialShape shape = PartialShape::Scalar();
  for (int i = 0; i < 3; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, i == 0 ? "a" : (i == 1 ? "b" : "x"), t));
    const PartialShape& s = ctx.inputs[i].shape;
    if (s.rank() == 0) continue;
    if (shape.rank() == 0) {
      shape = s;
      continue;
    }
    Result<PartialShape> merged = shape.MergeWith(s);
    if (!merged.ok())
      return ctx.Error("inputs a, b and x must have one shape or be scalars, got ",
                       ctx.inputs[0].shape.ToPythonString(), ", ",
                       ctx.inputs[1].shape.ToPythonString(), " and ",
                       ctx.inputs[2].shape.ToPythonString());
    shape = *merged;
  }
  ctx.outputs = {TensorSpec{t, shape}};
  return OkStatus();
}

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

struct AlphaState : OpState {
  float alpha = 0.2f;
};

Status PrepareLeakyReluGrad(PrepareContext& ctx) {
  Status same = PrepareSameSize<RealTypes, true>(ctx, "gradients", "features", DType::kFloat);
  if (!same.ok()) return same;
  auto state = std::make_shared<AlphaState>();
  KILN_PREPARE_ASSIGN(ctx, state->alpha, ctx.attrs.GetFloat("alpha", 0.2f));
  ctx.state = std::move(state);
  return OkStatus();
}

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

bool ScalarOrSame(const PartialShape& bound, const PartialShape& t) {
  return bound.rank() == 0 || bound.IsCompatibleWith(t);
}

Status PrepareClipByValue(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, RealTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "t", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "clip_value_min", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "clip_value_max", t));
  const PartialShape& x = ctx.inputs[0].shape;
  for (int i = 1; i <= 2; ++i) {
    if (!ScalarOrSame(ctx.inputs[i].shape, x)) {
      return ctx.Error("input '", i == 1 ? "clip_value_min" : "clip_value_max",
                       "' must be a scalar or have the shape of 't' ", x.ToPythonString(), ", got ",
                       ctx.inputs[i].shape.ToPythonString());
    }
  }
  ctx.outputs = {TensorSpec{t, x}};
  return OkStatus();
}

// max(min(t, hi), lo) as TF computes it: with lo > hi every element becomes lo.
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
  return Dispatch<RealTypes>(x.dtype(), [&](auto tag) -> Status {
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
        const C h = ph[i * sh], l = pl[i * sl];
        const C v = h < in[i] ? h : in[i];
        o[i] = v < l ? l : v;
      }
    });
    return OkStatus();
  });
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"Div", "z", kOpElementwise, PrepareBinarySame<NumberTypes>},
    {"TruncateDiv", "z", kOpElementwise, PrepareBinarySame<RealTypes>},
    {"Mod", "z", kOpElementwise, PrepareBinarySame<ModTypes>},
    {"TruncateMod", "z", kOpElementwise, PrepareBinarySame<ModTypes>},
    {"DivNoNan", "z", kOpElementwise, PrepareBinarySame<FloatAndComplexTypes>},
    {"MulNoNan", "z", kOpElementwise, PrepareBinarySame<FloatAndComplexTypes>},
    {"Xdivy", "z", kOpElementwise, PrepareBinarySame<FloatAndComplexTypes>},
    {"Xlogy", "z", kOpElementwise, PrepareBinarySame<FloatAndComplexTypes>},
    {"Xlog1py", "z", kOpElementwise, PrepareBinarySame<FloatAndComplexTypes>},
    {"Igamma", "z", kOpElementwise, PrepareBinarySame<SpecialTypes>},
    {"Igammac", "z", kOpElementwise, PrepareBinarySame<SpecialTypes>},
    {"IgammaGradA", "z", kOpElementwise, PrepareBinarySame<SpecialTypes>},
    {"RandomGammaGrad", "output", kOpElementwise, PrepareBinarySame<SpecialTypes>},
    {"Zeta", "z", kOpElementwise, PrepareBinarySame<SpecialTypes>},
    {"Polygamma", "z", kOpElementwise, PrepareBinarySame<SpecialTypes>},
    {"NextAfter", "output", kOpElementwise, PrepareNextAfter},
    {"ApproximateEqual", "z", kOpFreshOutputs, PrepareApproximateEqual},
    {"Betainc", "z", kOpFreshOutputs, PrepareBetainc},
    {"Atan2", "z", kOpElementwise, PrepareBinarySame<FloatTypes>},
    {"SquaredDifference", "z", kOpElementwise, PrepareBinarySame<SquaredDifferenceTypes>},
    {"BitwiseAnd", "z", kOpElementwise, PrepareBinarySame<IntTypes>},
    {"BitwiseOr", "z", kOpElementwise, PrepareBinarySame<IntTypes>},
    {"BitwiseXor", "z", kOpElementwise, PrepareBinarySame<IntTypes>},
    {"LeftShift", "z", kOpElementwise, PrepareBinarySame<IntTypes>},
    {"RightShift", "z", kOpElementwise, PrepareBinarySame<IntTypes>},
    {"ReluGrad", "backprops", kOpElementwise, PrepareReluGrad<RealTypes>},
    {"Relu6Grad", "backprops", kOpElementwise, PrepareReluGrad<RealTypes>},
    {"SigmoidGrad", "z", kOpElementwise, PrepareActivationGrad<FloatAndComplexTypes>},
    {"TanhGrad", "z", kOpElementwise, PrepareActivationGrad<FloatAndComplexTypes>},
    {"EluGrad", "backprops", kOpElementwise, PrepareOutputGrad<FloatTypes>},
    {"SeluGrad", "backprops", kOpElementwise, PrepareOutputGrad<FloatTypes>},
    {"SoftplusGrad", "backprops", kOpElementwise, PrepareFeatureGrad<FloatTypes>},
    {"SoftsignGrad", "backprops", kOpElementwise, PrepareFeatureGrad<FloatTypes>},
    {"LeakyReluGrad", "backprops", kOpElementwise, PrepareLeakyReluGrad},
    {"ReciprocalGrad", "z", kOpElementwise, PrepareActivationGrad<FloatAndComplexTypes>},
    {"InvGrad", "z", kOpElementwise, PrepareActivationGrad<FloatAndComplexTypes>},
    {"SqrtGrad", "z", kOpElementwise, PrepareActivationGrad<FloatAndComplexTypes>},
    {"RsqrtGrad", "z", kOpElementwise, PrepareActivationGrad<FloatAndComplexTypes>},
    {"ClipByValue", "output", kOpElementwise, PrepareClipByValue},
};

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

std::span<const OpDefinition> MathBinaryOpDefs() { return kDefs; }
std::span<const KernelEntry> MathBinaryCpuKernels() { return kCpu; }

}  // namespace kiln::exec
