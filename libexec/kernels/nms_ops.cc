// Non-maximum suppression: NonMaxSuppression (v1: the IoU threshold an attr) and V2..V5
// (greedy, hard or V5's soft Gaussian suppression), NonMaxSuppressionWithOverlaps (a given
// overlap matrix in place of IoU) and CombinedNonMaxSuppression (per class, then the best over all
// classes). The selection follows TensorFlow's CPU kernel step by step (non_max_suppression_op.cc):
// the same candidate priority queue (higher score first, lower index on ties), the same IoU in
// float from boxes given as any two opposite corners, the same suppress-once bookkeeping for soft
// NMS, and for the combined op the same per-class queue and final sort, so equal scores resolve as
// TF's do. Half boxes and scores compute in Eigen::half where TF does.
#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>
#include <string>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using NmsTypes = TypeList<float, Half>;

// IoU of boxes i and j (rows of 4 coordinates), in float.
template <typename C>
float Iou(const C* boxes, int64_t i, int64_t j) {
  auto at = [&](int64_t r, int k) { return static_cast<float>(boxes[r * 4 + k]); };
  const float ymin_i = std::min(at(i, 0), at(i, 2)), xmin_i = std::min(at(i, 1), at(i, 3));
  const float ymax_i = std::max(at(i, 0), at(i, 2)), xmax_i = std::max(at(i, 1), at(i, 3));
  const float ymin_j = std::min(at(j, 0), at(j, 2)), xmin_j = std::min(at(j, 1), at(j, 3));
  const float ymax_j = std::max(at(j, 0), at(j, 2)), xmax_j = std::max(at(j, 1), at(j, 3));
  const float area_i = (ymax_i - ymin_i) * (xmax_i - xmin_i);
  const float area_j = (ymax_j - ymin_j) * (xmax_j - xmin_j);
  if (area_i <= 0 || area_j <= 0) return 0.0f;
  const float iy0 = std::max(ymin_i, ymin_j), ix0 = std::max(xmin_i, xmin_j);
  const float iy1 = std::min(ymax_i, ymax_j), ix1 = std::min(xmax_i, xmax_j);
  const float inter = std::max(iy1 - iy0, 0.0f) * std::max(ix1 - ix0, 0.0f);
  return inter / (area_i + area_j - inter);
}

// ---- NonMaxSuppressionV2..V5 ------------------------------------------------------------------

struct NmsState : OpState {
  int version = 3;  // 1..5; 0: WithOverlaps
  DType t = DType::kFloat;
  DType t_threshold = DType::kFloat;
  bool pad = false;
  float iou_attr = 0.5f;  // v1's iou_threshold
};

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

// A scalar threshold input of dtype t_threshold as the compute type C.
template <typename C>
C ThresholdAs(const Tensor& t) {
  if (t.dtype() == DType::kHalf) {
    return static_cast<C>(*reinterpret_cast<const Eigen::half*>(t.raw_data()));
  }
  return static_cast<C>(t.data<float>()[0]);
}

template <typename C>
Status RunNms(const KernelContext& ctx, const NmsState& st, int64_t num_boxes) {
  const int32_t output_size = ctx.input(2).data<int32_t>()[0];
  if (output_size < 0) return ctx.Error("max_output_size must be non-negative, got ", output_size);
  // C is float or Eigen::half, the compute type of the boxes' and scores' dtype.
  const C* boxes = static_cast<const C*>(ctx.input(0).raw_data());
  const C* scores = static_cast<const C*>(ctx.input(1).raw_data());
  const C iou_threshold =
      st.version == 1 ? static_cast<C>(st.iou_attr) : ThresholdAs<C>(ctx.input(3));
  if (st.version != 0 && !(iou_threshold >= C(0.0f) && iou_threshold <= C(1.0f))) {
    return ctx.Error("iou_threshold must be in [0, 1], got ", static_cast<float>(iou_threshold));
  }
  // WithOverlaps: the given matrix says how much two boxes overlap.
  auto similarity = [&](int64_t i, int64_t j) {
    return st.version == 0 ? static_cast<float>(boxes[i * num_boxes + j]) : Iou(boxes, i, j);
  };
  const C score_threshold = st.version >= 3 || st.version == 0 ? ThresholdAs<C>(ctx.input(4))
                                                               : std::numeric_limits<C>::lowest();
  C sigma = C(0.0f);
  if (st.version == 5) {
    sigma = ThresholdAs<C>(ctx.input(5));
    if (!(sigma >= C(0.0f))) {
      return ctx.Error("soft_nms_sigma must be >= 0, got ", static_cast<float>(sigma));
    }
  }
  struct Candidate {
    int box_index;
    C score;
    int suppress_begin_index;
  };
  auto cmp = [](const Candidate& a, const Candidate& b) {
    return (a.score == b.score && a.box_index > b.box_index) || a.score < b.score;
  };
  std::priority_queue<Candidate, std::deque<Candidate>, decltype(cmp)> queue(cmp);
  for (int64_t i = 0; i < num_boxes; ++i) {
    if (scores[i] > score_threshold) queue.push(Candidate{static_cast<int>(i), scores[i], 0});
  }
  const bool soft = sigma > C(0.0f);
  const C scale = soft ? C(C(-0.5f) / sigma) : C(0.0f);
  auto weight_of = [&](C sim) {
    const C w = static_cast<C>(std::exp(static_cast<float>(C(C(scale * sim) * sim))));
    return soft || sim <= iou_threshold ? w : C(0.0f);
  };
  std::vector<int32_t> selected;
  std::vector<C> selected_scores;
  while (static_cast<int64_t>(selected.size()) < output_size && !queue.empty()) {
    Candidate next = queue.top();
    const C original = next.score;
    queue.pop();
    bool hard = false;
    for (int j = static_cast<int>(selected.size()) - 1; j >= next.suppress_begin_index; --j) {
      const float sim = similarity(next.box_index, selected[j]);
      next.score = static_cast<C>(next.score * weight_of(static_cast<C>(sim)));
      if (!soft && static_cast<C>(sim) > iou_threshold) {
        hard = true;
        break;
      }
      if (next.score <= score_threshold) break;
    }
    next.suppress_begin_index = static_cast<int>(selected.size());
    if (hard) continue;
    if (next.score == original) {
      selected.push_back(next.box_index);
      selected_scores.push_back(next.score);
      continue;
    }
    if (next.score > score_threshold) queue.push(next);
  }
  const int32_t valid = static_cast<int32_t>(selected.size());
  if (st.pad) {
    selected.resize(output_size, 0);
    selected_scores.resize(output_size, C(0.0f));
  }
  const Shape shape{static_cast<int64_t>(selected.size())};
  KILN_ASSIGN_OR_RETURN(Tensor * idx, ctx.AllocateOutput(0, shape));
  std::copy(selected.begin(), selected.end(), idx->data<int32_t>());
  int next_out = 1;
  if (st.version == 5) {
    KILN_ASSIGN_OR_RETURN(Tensor * sc, ctx.AllocateOutput(next_out++, shape));
    std::copy(selected_scores.begin(), selected_scores.end(), static_cast<C*>(sc->raw_data()));
  }
  if (st.version >= 4) {
    KILN_ASSIGN_OR_RETURN(Tensor * v, ctx.AllocateOutput(next_out, Shape{}));
    v->data<int32_t>()[0] = valid;
  }
  return OkStatus();
}

Status ComputeNms(const KernelContext& ctx) {
  const auto& st = ctx.state<NmsState>();
  const Tensor& boxes = ctx.input(0);
  const Tensor& scores = ctx.input(1);
  if (st.version == 0 && (boxes.rank() != 2 || boxes.dim(0) != boxes.dim(1))) {
    return ctx.Error("input 'overlaps' must be a square matrix, got ", boxes.shape().ToString());
  }
  if (st.version != 0 && (boxes.rank() != 2 || boxes.dim(1) != 4)) {
    return ctx.Error("input 'boxes' must have shape (num_boxes, 4), got ",
                     boxes.shape().ToString());
  }
  if (boxes.dim(0) > std::numeric_limits<int32_t>::max()) {
    return ctx.Error("too many boxes: ", boxes.dim(0));
  }
  if (scores.rank() != 1 || scores.dim(0) != boxes.dim(0)) {
    return ctx.Error("input 'scores' must have shape (", boxes.dim(0), ",), got ",
                     scores.shape().ToString());
  }
  for (int i = 2; i < ctx.num_inputs(); ++i) {
    if (ctx.input(i).rank() != 0) {
      return ctx.Error("input ", i, " must be a scalar, got shape ",
                       ctx.input(i).shape().ToString());
    }
  }
  if (st.t == DType::kHalf) return RunNms<Eigen::half>(ctx, st, boxes.dim(0));
  return RunNms<float>(ctx, st, boxes.dim(0));
}

// ---- CombinedNonMaxSuppression -----------------------------------------------------------------

struct CombinedState : OpState {
  bool pad_per_class = false;
  bool clip_boxes = true;
};

// The per-batch output size: max_total_size, or with pad_per_class the smaller of it and
// max_output_size_per_class * num_classes.
int64_t PerBatchSize(int64_t per_class, int64_t total, int64_t classes, bool pad_per_class) {
  if (!pad_per_class) return total;
  const int64_t max_total =
      std::min<int64_t>(std::numeric_limits<int32_t>::max(), per_class * classes);
  return std::min(total, max_total);
}

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

struct ResultCandidate {
  int box_index;
  float score;
  int class_idx;
  float box[4];
};

Status ComputeCombinedNms(const KernelContext& ctx) {
  const auto& st = ctx.state<CombinedState>();
  const Tensor& boxes = ctx.input(0);
  const Tensor& scores = ctx.input(1);
  if (boxes.rank() != 4 || scores.rank() != 3) {
    return ctx.Error("boxes must be 4-D (batch, num_boxes, q, 4) and scores 3-D (batch, ",
                     "num_boxes, num_classes), got ", boxes.shape().ToString(), " and ",
                     scores.shape().ToString());
  }
  const int64_t batches = boxes.dim(0), num_boxes = boxes.dim(1), q = boxes.dim(2);
  const int64_t classes = scores.dim(2);
  if (q != 1 && q != classes) {
    return ctx.Error("the third dimension of boxes must be 1 or num_classes (", classes, "), got ",
                     boxes.shape().ToString());
  }
  if (boxes.dim(3) != 4)
    return ctx.Error("boxes must have 4 columns, got ", boxes.shape().ToString());
  if (scores.dim(1) != num_boxes || scores.dim(0) != batches) {
    return ctx.Error("scores ", scores.shape().ToString(), " do not fit boxes ",
                     boxes.shape().ToString());
  }
  if (num_boxes > std::numeric_limits<int32_t>::max() ||
      classes > std::numeric_limits<int32_t>::max()) {
    return ctx.Error("too many boxes or classes");
  }
  for (int i = 2; i < 6; ++i) {
    if (ctx.input(i).rank() != 0) {
      return ctx.Error("input ", i, " must be a scalar, got shape ",
                       ctx.input(i).shape().ToString());
    }
  }
  const int64_t per_class = ctx.input(2).data<int32_t>()[0];
  const int64_t total = ctx.input(3).data<int32_t>()[0];
  const float iou_threshold = ctx.input(4).data<float>()[0];
  const float score_threshold = ctx.input(5).data<float>()[0];
  if (per_class <= 0)
    return ctx.Error("max_output_size_per_class must be positive, got ", per_class);
  if (total <= 0) return ctx.Error("max_total_size must be > 0, got ", total);
  if (!(iou_threshold >= 0 && iou_threshold <= 1)) {
    return ctx.Error("iou_threshold must be in [0, 1], got ", iou_threshold);
  }
  const int64_t size_per_class = std::min(per_class, num_boxes);
  if (size_per_class * classes > std::numeric_limits<int32_t>::max()) {
    return ctx.Error("size_per_class * num_classes causes overflow");
  }
  const int64_t per_batch = PerBatchSize(per_class, total, classes, st.pad_per_class);
  KILN_ASSIGN_OR_RETURN(Tensor * out_boxes, ctx.AllocateOutput(0, Shape{batches, per_batch, 4}));
  KILN_ASSIGN_OR_RETURN(Tensor * out_scores, ctx.AllocateOutput(1, Shape{batches, per_batch}));
  KILN_ASSIGN_OR_RETURN(Tensor * out_classes, ctx.AllocateOutput(2, Shape{batches, per_batch}));
  KILN_ASSIGN_OR_RETURN(Tensor * out_valid, ctx.AllocateOutput(3, Shape{batches}));
  const float* bx = boxes.data<float>();
  const float* sc = scores.data<float>();
  ctx.threads().ParallelFor(batches, 1, [&](int64_t begin, int64_t end) {
    std::vector<ResultCandidate> results;
    for (int64_t b = begin; b < end; ++b) {
      const float* bb = bx + b * num_boxes * q * 4;
      const float* sb = sc + b * num_boxes * classes;
      results.assign(
          size_per_class * classes,
          ResultCandidate{-1, -std::numeric_limits<float>::infinity(), -1, {0, 0, 0, 0}});
      for (int64_t c = 0; c < classes; ++c) {
        struct Candidate {
          int box_index;
          float score;
        };
        auto cmp = [](const Candidate& x, const Candidate& y) { return x.score < y.score; };
        std::priority_queue<Candidate, std::vector<Candidate>, decltype(cmp)> queue(cmp);
        for (int64_t i = 0; i < num_boxes; ++i) {
          const float s = sb[i * classes + c];
          if (s > score_threshold) queue.push(Candidate{static_cast<int>(i), s});
        }
        const int64_t cls_box = q > 1 ? c : 0;
        std::vector<int> selected;
        while (static_cast<int64_t>(selected.size()) < size_per_class && !queue.empty()) {
          const Candidate next = queue.top();
          queue.pop();
          bool select = true;
          for (int j = static_cast<int>(selected.size()) - 1; j >= 0; --j) {
            if (Iou(bb, next.box_index * q + cls_box, selected[j] * q + cls_box) > iou_threshold) {
              select = false;
              break;
            }
          }
          if (!select) continue;
          const float* box = bb + (next.box_index * q + cls_box) * 4;
          results[selected.size() + size_per_class * c] = ResultCandidate{
              next.box_index, next.score, static_cast<int>(c), {box[0], box[1], box[2], box[3]}};
          selected.push_back(next.box_index);
        }
      }
      std::sort(
          results.begin(), results.end(),
          [](const ResultCandidate& x, const ResultCandidate& y) { return y.score < x.score; });
      const int64_t found =
          std::count_if(results.begin(), results.end(),
                        [](const ResultCandidate& r) { return r.box_index > -1; });
      const int64_t detections = std::min(found, st.pad_per_class ? per_batch : total);
      float* ob = out_boxes->data<float>() + b * per_batch * 4;
      float* os = out_scores->data<float>() + b * per_batch;
      float* oc = out_classes->data<float>() + b * per_batch;
      std::fill(ob, ob + per_batch * 4, 0.0f);
      std::fill(os, os + per_batch, 0.0f);
      std::fill(oc, oc + per_batch, 0.0f);
      for (int64_t k = 0; k < detections; ++k) {
        const ResultCandidate& r = results[k];
        for (int m = 0; m < 4; ++m)
          ob[k * 4 + m] = st.clip_boxes ? std::max(std::min(r.box[m], 1.0f), 0.0f) : r.box[m];
        os[k] = r.score;
        oc[k] = static_cast<float>(r.class_idx);
      }
      out_valid->data<int32_t>()[b] = static_cast<int32_t>(detections);
    }
  });
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

constexpr KernelEntry kCpu[] = {
    {"NonMaxSuppression", ComputeNms},
    {"NonMaxSuppressionWithOverlaps", ComputeNms},
    {"NonMaxSuppressionV2", ComputeNms},
    {"NonMaxSuppressionV3", ComputeNms},
    {"NonMaxSuppressionV4", ComputeNms},
    {"NonMaxSuppressionV5", ComputeNms},
    {"CombinedNonMaxSuppression", ComputeCombinedNms},
};

}  // namespace

std::span<const OpDefinition> NmsOpDefs() { return kDefs; }
std::span<const KernelEntry> NmsCpuKernels() { return kCpu; }

}  // namespace kiln::exec
