// Losses: L2Loss (sum(t^2) / 2), and the softmax cross-entropy losses with their backprop (TF's
// fused training ops):
//   SoftmaxCrossEntropyWithLogits(features, labels): both broadcast to [batch, classes];
//   SparseSoftmaxCrossEntropyWithLogits(features [batch, classes], labels [batch] of class ids).
// Per row, with shifted = logits - max(logits) and lse = log(sum(exp(shifted))):
//   loss = sum(labels * (lse - shifted)), backprop = exp(shifted) / sum(exp(shifted)) - labels.
// Definitions; the CPU kernels are in kernels/cpu/loss_ops.cc.
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

// The shape two inputs broadcast to when it is 2-D, else an error naming both.
Result<PartialShape> LossShape(const PrepareContext& ctx) {
  Result<PartialShape> s = BroadcastPartialShapes(ctx.inputs[0].shape, ctx.inputs[1].shape);
  if (!s.ok() || (!s->unknown_rank() && s->rank() != 2)) {
    return ctx.Error("features ", ctx.inputs[0].shape.ToPythonString(), " and labels ",
                     ctx.inputs[1].shape.ToPythonString(),
                     " must be 2-D or broadcast to a 2-D shape [batch, classes]");
  }
  return s;
}

Status PrepareSoftmaxXent(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, FloatTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "features", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "labels", t));
  KILN_ASSIGN_OR_RETURN(PartialShape s, LossShape(ctx));
  const PartialShape batch = s.unknown_rank() ? PartialShape{-1} : PartialShape{s.dim(0)};
  ctx.outputs = {TensorSpec{t, batch}, TensorSpec{t, s.unknown_rank() ? PartialShape{-1, -1} : s}};
  return OkStatus();
}

Status PrepareSparseSoftmaxXent(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, FloatTypes::kDTypes));
  KILN_PREPARE_ASSIGN(ctx, DType tlabels, ctx.attrs.GetType("Tlabels", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tlabels", tlabels, {DType::kInt32, DType::kInt64}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "features", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "labels", tlabels));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "features", 2));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "labels", 1));
  const PartialShape& f = ctx.inputs[0].shape;
  const PartialShape& l = ctx.inputs[1].shape;
  PartialShape batch = f.unknown_rank() ? PartialShape{-1} : PartialShape{f.dim(0)};
  if (!l.unknown_rank()) {
    Result<PartialShape> merged = batch.MergeWith(l);
    if (!merged.ok()) {
      return ctx.Error("features ", f.ToPythonString(), " and labels ", l.ToPythonString(),
                       " must have the same first dim");
    }
    batch = *merged;
  }
  if (!f.unknown_rank() && f.dim(1) == 0) {
    return ctx.Error("features ", f.ToPythonString(), " must have at least one class");
  }
  ctx.outputs = {TensorSpec{t, batch},
                 TensorSpec{t, PartialShape{batch.dim(0), f.unknown_rank() ? -1 : f.dim(1)}}};
  return OkStatus();
}

// L2Loss: sum(t^2) / 2 as a scalar (tf.nn.l2_loss); float accumulation for half types.
Status PrepareL2Loss(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, FloatTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "t", t));
  ctx.outputs = {TensorSpec{t, PartialShape::Scalar()}};
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"SoftmaxCrossEntropyWithLogits", "loss,backprop", kOpFreshOutputs, PrepareSoftmaxXent},
    {"SparseSoftmaxCrossEntropyWithLogits", "loss,backprop", kOpFreshOutputs,
     PrepareSparseSoftmaxXent},
    {"L2Loss", "output", kOpFreshOutputs, PrepareL2Loss},
};

}  // namespace

std::span<const OpDefinition> LossOpDefs() { return kDefs; }

}  // namespace kiln::exec
