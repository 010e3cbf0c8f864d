// _KilnAttention: scaled dot-product attention as one op,
//   out[b, t, n, :] = sum_s softmax_s(scale * q[b, t, n, :] . k[b, s, n, :] + bias[b, n, t, s])
//                     * v[b, s, n, :]
// with q [batch, target, heads, dim], k [batch, source, heads, dim], v [batch, source, heads,
// value dim], and an optional float32 bias (has_bias) that broadcasts to [batch, heads, target,
// source] (a padding or causal mask's adder). The softmax is computed in float32 whatever T is,
// as Keras's mixed precision keeps it. kiln's fusion makes it from Keras's MultiHeadAttention
// core on loads with an accelerator (graph/fusion_attention.cc), so the scores never leave the
// kernel: definition. The CPU kernel is in kernels/cpu/attention_ops.cc, the GPU's in
// kernels/cuda/nn.cu.
#include "kernels/attention_ops.h"

#include <memory>
#include <span>
#include <utility>

#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

Status PrepareAttention(PrepareContext& ctx) {
  auto state = std::make_shared<attention::AttentionState>();
  KILN_PREPARE_ASSIGN(ctx, state->scale, ctx.attrs.GetFloat("scale", 1.0f));
  KILN_PREPARE_ASSIGN(ctx, state->has_bias, ctx.attrs.GetBool("has_bias", false));
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(state->has_bias ? 4 : 3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, FloatTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "query", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "key", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "value", t));
  if (state->has_bias) KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "bias", DType::kFloat));
  const char* names[3] = {"query", "key", "value"};
  for (int i = 0; i < 3; ++i) KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, i, names[i], 4));
  const PartialShape& q = ctx.inputs[0].shape;
  const PartialShape& v = ctx.inputs[2].shape;
  PartialShape out = q;
  if (!q.unknown_rank()) {
    out = PartialShape({q.dim(0), q.dim(1), q.dim(2), v.unknown_rank() ? -1 : v.dim(3)});
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::move(state);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"_KilnAttention", "output", kOpFreshOutputs, PrepareAttention},
};

}  // namespace

std::span<const OpDefinition> AttentionOpDefs() { return kDefs; }

}  // namespace kiln::exec
