// Element-wise arithmetic with numpy broadcasting, unary math, and Cast: definitions. The CPU
// kernels are in kernels/cpu/math_ops.cc.
#include "kernels/math_ops.h"

#include <memory>

#include "kernels/elementwise.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using math::AddTypes;
using math::CastTypes;

// ---- Cast ------------------------------------------------------------------------------------

Status PrepareCast(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType src, ctx.attrs.GetType("SrcT"));
  KILN_PREPARE_ASSIGN(ctx, DType dst, ctx.attrs.GetType("DstT"));
  if (src != dst) {
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "SrcT", src, CastTypes::kDTypes));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "DstT", dst, CastTypes::kDTypes));
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", src));
  KILN_PREPARE_ASSIGN(ctx, bool truncate, ctx.attrs.GetBool("Truncate", false));
  ctx.outputs = {TensorSpec{dst, ctx.inputs[0].shape}};
  ctx.state = std::make_shared<math::CastState>(dst, truncate && math::CastTruncates(src, dst));
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"Add", "z", kOpElementwise, PrepareBinarySame<AddTypes>},
    {"AddV2", "z", kOpElementwise, PrepareBinarySame<AddTypes>},
    {"Sub", "z", kOpElementwise, PrepareBinarySame<NumberTypes>},
    {"Mul", "z", kOpElementwise, PrepareBinarySame<NumberTypes>},
    {"RealDiv", "z", kOpElementwise, PrepareBinarySame<NumberTypes>},
    {"Maximum", "z", kOpElementwise, PrepareBinarySame<RealTypes>},
    {"Minimum", "z", kOpElementwise, PrepareBinarySame<RealTypes>},
    {"Neg", "y", kOpElementwise, PrepareUnarySame<SignedNumberTypes>},
    {"Abs", "y", kOpElementwise, PrepareUnarySame<SignedRealTypes>},
    {"Square", "y", kOpElementwise, PrepareUnarySame<NumberTypes>},
    {"Sqrt", "y", kOpElementwise, PrepareUnarySame<FloatAndComplexTypes>},
    {"Exp", "y", kOpElementwise, PrepareUnarySame<FloatAndComplexTypes>},
    {"Log", "y", kOpElementwise, PrepareUnarySame<FloatAndComplexTypes>},
    {"Tanh", "y", kOpElementwise, PrepareUnarySame<FloatAndComplexTypes>},
    {"Sigmoid", "y", kOpElementwise, PrepareUnarySame<FloatAndComplexTypes>},
    {"Cast", "y", kOpNone, PrepareCast},
};

}  // namespace

std::span<const OpDefinition> MathOpDefs() { return kDefs; }

}  // namespace kiln::exec
