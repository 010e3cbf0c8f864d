// _KilnAttention: scaled dot-product attention as one op,
//   out[b, t, n, :] = sum_s softmax_s(scale * q[b, t, n, :] . k[b, s, n, :] + bias[b, n, t, s])
//                     * v[b, s, n, :]
// with q [batch, target, heads, dim], k [batch, source, heads, dim], v [batch, source, heads,
// value dim] (or all rank 3, without the heads dim: one head), and an optional float32 bias
// (has_bias) that broadcasts to [batch, heads, target, source] (a padding or causal mask's adder).
// The softmax is computed in float32 whatever T is, as Keras's mixed precision keeps it. kiln's
// fusion makes it from Keras's MultiHeadAttention core on loads with an accelerator
// (graph/fusion_attention.cc), so the scores never leave the kernel: definition. The CPU kernel is
// in kernels/cpu/attention_ops.cc, the GPU's in kernels/cuda/nn.cu.
#include "kernels/attention_ops.h"

#include <memory>
#include <span>
#include <utility>
#include <vector>

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
  const PartialShape& q = ctx.inputs[0].shape;
  const PartialShape& v = ctx.inputs[2].shape;
  int rank = -1;
  for (int i = 0; i < 3; ++i) {
    const PartialShape& s = ctx.inputs[i].shape;
    if (s.unknown_rank()) continue;
    if ((s.rank() != 3 && s.rank() != 4) || (rank >= 0 && s.rank() != rank))
      return ctx.Error("query, key and value must all have rank 4 or all rank 3, got ",
                       ctx.inputs[0].shape.ToPythonString(), ", ",
                       ctx.inputs[1].shape.ToPythonString(), " and ",
                       ctx.inputs[2].shape.ToPythonString());
    rank = s.rank();
  }
  PartialShape out;  // unknown rank until one input's is known
  if (rank > 0) {
    std::vector<int64_t> dims(static_cast<size_t>(rank), -1);
    if (!q.unknown_rank())
      for (int d = 0; d + 1 < rank; ++d) dims[d] = q.dim(d);
    if (!v.unknown_rank()) dims[rank - 1] = v.dim(rank - 1);
    KILN_PREPARE_ASSIGN(ctx, out, PartialShape::FromDims(dims));
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
