// Element-wise binary math with numpy broadcasting (Div, TruncateDiv, Mod, bit ops, the *NoNan
// and x*y-style ops, Atan2, SquaredDifference, the special functions of two arguments,
// NextAfter), ApproximateEqual and Betainc (three arguments, shapes equal or scalar), the
// activation and unary-math gradients (Relu, Relu6, Elu, Selu, Softplus, Softsign, LeakyRelu,
// Sigmoid, Tanh, Reciprocal/Inv, Sqrt, Rsqrt: same sizes, no broadcasting, as TF) and
// ClipByValue: definitions. The CPU kernels are in kernels/cpu/math_binary_ops.cc.
#include "kernels/math_binary_ops.h"

#include <memory>
#include <string_view>
#include <utility>

#include "kernels/elementwise.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using math_binary::AlphaState;
using math_binary::ModTypes;
using math_binary::SpecialTypes;
using math_binary::SquaredDifferenceTypes;

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

// ---- LeakyReluGrad -----------------------------------------------------------------------------

Status PrepareLeakyReluGrad(PrepareContext& ctx) {
  Status same = PrepareSameSize<RealTypes, true>(ctx, "gradients", "features", DType::kFloat);
  if (!same.ok()) return same;
  auto state = std::make_shared<AlphaState>();
  KILN_PREPARE_ASSIGN(ctx, state->alpha, ctx.attrs.GetFloat("alpha", 0.2f));
  ctx.state = std::move(state);
  return OkStatus();
}

// ---- ClipByValue -----------------------------------------------------------------------------

bool ScalarOrSame(const PartialShape& bound, const PartialShape& t) {
  return bound.rank() == 0 || bound.IsCompatibleWith(t);
}

Status PrepareClipByValue(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, NumberTypes::kDTypes));
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

}  // namespace

std::span<const OpDefinition> MathBinaryOpDefs() { return kDefs; }

}  // namespace kiln::exec
