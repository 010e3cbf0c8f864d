// Non-maximum suppression: NonMaxSuppression (v1: the IoU threshold an attr) and V2..V5
// (greedy, hard or V5's soft Gaussian suppression), NonMaxSuppressionWithOverlaps (a given
// overlap matrix in place of IoU) and CombinedNonMaxSuppression (per class, then the best over all
// classes): definitions. The CPU kernels are in kernels/cpu/nms_ops.cc.
#include "kernels/nms_ops.h"

#include <algorithm>
#include <cstdint>
#include <memory>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using nms::CombinedState;
using nms::NmsState;
using nms::PerBatchSize;

using NmsTypes = TypeList<float, Half>;

// ---- NonMaxSuppressionV2..V5 ------------------------------------------------------------------

template <int kVersion>
Status PrepareNms(PrepareContext& ctx) {
  constexpr int kInputs = kVersion == 1 ? 3 : kVersion == 2 ? 4 : kVersion == 5 ? 6 : 5;
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(kInputs));
  auto st = std::make_shared<NmsState>();
  st->version = kVersion;
  if (kVersion <= 1) {  // float only, no T attr
    st->t = DType::kFloat;
  } else {
    KILN_PREPARE_ASSIGN(ctx, st->t, ctx.attrs.GetType("T", DType::kFloat));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->t, NmsTypes::kDTypes));
  }
  if (kVersion == 1) {
    KILN_PREPARE_ASSIGN(ctx, st->iou_attr, ctx.attrs.GetFloat("iou_threshold", 0.5f));
  }
  if (kVersion <= 1 || kVersion == 5) {
    st->t_threshold = st->t;
  } else {
    KILN_PREPARE_ASSIGN(ctx, st->t_threshold, ctx.attrs.GetType("T_threshold", DType::kFloat));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T_threshold", st->t_threshold, NmsTypes::kDTypes));
  }
  if (kVersion >= 4) {
    KILN_PREPARE_ASSIGN(ctx, st->pad, ctx.attrs.GetBool("pad_to_max_output_size", false));
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, kVersion == 0 ? "overlaps" : "boxes", st->t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, kVersion == 0 ? "overlaps" : "boxes", 2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "scores", st->t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "scores", 1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "max_output_size", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "max_output_size", 0));
  static constexpr const char* kNames[] = {"iou_threshold", "score_threshold", "soft_nms_sigma"};
  for (int i = 3; i < kInputs; ++i) {
    const char* name = kVersion == 0 && i == 3 ? "overlap_threshold" : kNames[i - 3];
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, name, st->t_threshold));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, i, name, 0));
  }
  const PartialShape& boxes = ctx.inputs[0].shape;
  const PartialShape& scores = ctx.inputs[1].shape;
  if (!boxes.unknown_rank() && kVersion != 0) {
    if (boxes.dim(1) >= 0 && boxes.dim(1) != 4) {
      return ctx.Error("input 'boxes' must have shape (num_boxes, 4), got ",
                       boxes.ToPythonString());
    }
    if (!scores.unknown_rank() && boxes.dim(0) >= 0 && scores.dim(0) >= 0 &&
        boxes.dim(0) != scores.dim(0)) {
      return ctx.Error("inputs 'boxes' ", boxes.ToPythonString(), " and 'scores' ",
                       scores.ToPythonString(), " disagree on the number of boxes");
    }
  }
  int64_t n = -1;
  if (st->pad) {
    if (const Tensor* m = ConstantInput(ctx, 2)) n = std::max<int64_t>(m->data<int32_t>()[0], 0);
  }
  ctx.outputs = {TensorSpec{DType::kInt32, PartialShape{n}}};
  if (kVersion == 5) ctx.outputs.push_back(TensorSpec{st->t, PartialShape{n}});
  if (kVersion >= 4) ctx.outputs.push_back(TensorSpec{DType::kInt32, PartialShape::Scalar()});
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- CombinedNonMaxSuppression -----------------------------------------------------------------

Status PrepareCombinedNms(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(6));
  auto st = std::make_shared<CombinedState>();
  KILN_PREPARE_ASSIGN(ctx, st->pad_per_class, ctx.attrs.GetBool("pad_per_class", false));
  KILN_PREPARE_ASSIGN(ctx, st->clip_boxes, ctx.attrs.GetBool("clip_boxes", true));
  static constexpr const char* kNames[] = {
      "boxes",          "scores",        "max_output_size_per_class",
      "max_total_size", "iou_threshold", "score_threshold"};
  static constexpr DType kTypes[] = {DType::kFloat, DType::kFloat, DType::kInt32,
                                     DType::kInt32, DType::kFloat, DType::kFloat};
  static constexpr int kRanks[] = {4, 3, 0, 0, 0, 0};
  for (int i = 0; i < 6; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, kNames[i], kTypes[i]));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, i, kNames[i], kRanks[i]));
  }
  const PartialShape& boxes = ctx.inputs[0].shape;
  const PartialShape& scores = ctx.inputs[1].shape;
  int64_t batch = -1, classes = -1;
  if (!boxes.unknown_rank()) {
    batch = boxes.dim(0);
    if (boxes.dim(3) >= 0 && boxes.dim(3) != 4) {
      return ctx.Error("input 'boxes' must have shape (batch, num_boxes, q, 4), got ",
                       boxes.ToPythonString());
    }
  }
  if (!scores.unknown_rank()) {
    if (batch < 0) batch = scores.dim(0);
    classes = scores.dim(2);
  }
  int64_t per_batch = -1;
  const Tensor* per_class = ConstantInput(ctx, 2);
  const Tensor* total = ConstantInput(ctx, 3);
  if (total && (!st->pad_per_class || (per_class && classes >= 0))) {
    per_batch = PerBatchSize(per_class ? per_class->data<int32_t>()[0] : 0,
                             total->data<int32_t>()[0], classes, st->pad_per_class);
    if (per_batch < 0) per_batch = -1;
  }
  ctx.outputs = {TensorSpec{DType::kFloat, PartialShape{batch, per_batch, 4}},
                 TensorSpec{DType::kFloat, PartialShape{batch, per_batch}},
                 TensorSpec{DType::kFloat, PartialShape{batch, per_batch}},
                 TensorSpec{DType::kInt32, PartialShape{batch}}};
  ctx.state = std::move(st);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"NonMaxSuppression", "selected_indices", kOpFreshOutputs, PrepareNms<1>},
    {"NonMaxSuppressionWithOverlaps", "selected_indices", kOpFreshOutputs, PrepareNms<0>},
    {"NonMaxSuppressionV2", "selected_indices", kOpFreshOutputs, PrepareNms<2>},
    {"NonMaxSuppressionV3", "selected_indices", kOpFreshOutputs, PrepareNms<3>},
    {"NonMaxSuppressionV4", "selected_indices,valid_outputs", kOpFreshOutputs, PrepareNms<4>},
    {"NonMaxSuppressionV5", "selected_indices,selected_scores,valid_outputs", kOpFreshOutputs,
     PrepareNms<5>},
    {"CombinedNonMaxSuppression", "nmsed_boxes,nmsed_scores,nmsed_classes,valid_detections",
     kOpFreshOutputs, PrepareCombinedNms},
};

}  // namespace

std::span<const OpDefinition> NmsOpDefs() { return kDefs; }

}  // namespace kiln::exec
