// _MklLayerNorm: layer normalization over the last dim, y = (x - mean) / sqrt(var + epsilon) *
// scale + offset, with the mean and the (biased) variance of each row of the last dim. It is
// TensorFlow's own fused op (its oneDNN remapper makes it from Keras's LayerNormalization); kiln's
// fusion makes it from the same pattern (graph/fusion.cc), so a layer norm is one pass over
// the rows instead of ten element-wise ops: definition. The CPU kernel is in
// kernels/cpu/layer_norm_ops.cc.
#include "kernels/layer_norm_ops.h"

#include <memory>
#include <span>
#include <utility>

#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using layer_norm::LayerNormState;

Status PrepareLayerNorm(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, FloatTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "scale", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "offset", t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "scale", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "offset", 1));
  auto state = std::make_shared<LayerNormState>();
  KILN_PREPARE_ASSIGN(ctx, state->epsilon, ctx.attrs.GetFloat("epsilon", 0.001f));
  const PartialShape& x = ctx.inputs[0].shape;
  if (x.rank() == 0)
    return ctx.Error("input 'x': expected rank >= 1, got shape ", x.ToPythonString());
  ctx.outputs = {TensorSpec{t, x}};
  ctx.state = std::move(state);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"_MklLayerNorm", "y", kOpFreshOutputs, PrepareLayerNorm},
};

}  // namespace

std::span<const OpDefinition> LayerNormOpDefs() { return kDefs; }

}  // namespace kiln::exec
