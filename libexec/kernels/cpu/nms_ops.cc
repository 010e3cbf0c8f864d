// The CPU kernels of the non-maximum suppression ops (kernels/nms_ops.cc). The selection follows
// TensorFlow's CPU kernel step by step (non_max_suppression_op.cc): the same candidate priority
// queue (higher score first, lower index on ties), the same IoU in float from boxes given as any
// two opposite corners, the same suppress-once bookkeeping for soft NMS, and for the combined op
// the same per-class queue and final sort, so equal scores resolve as TF's do. Half boxes and
// scores compute in Eigen::half where TF does.
#include "kernels/nms_ops.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using nms::CombinedState;
using nms::NmsState;
using nms::PerBatchSize;

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

std::span<const KernelEntry> NmsCpuKernels() { return kCpu; }

}  // namespace kiln::exec
