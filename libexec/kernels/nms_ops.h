// The prepared state of the non-max suppression ops and the combined op's output size, shared by
// their definitions (kernels/nms_ops.cc) and CPU kernels (kernels/cpu/nms_ops.cc).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "kernels/kernel_util.h"

namespace kiln::exec::nms {

struct NmsState : OpState {
  int version = 3;  // 1..5; 0: WithOverlaps
  DType t = DType::kFloat;
  DType t_threshold = DType::kFloat;
  bool pad = false;
  float iou_attr = 0.5f;  // v1's iou_threshold
};

struct CombinedState : OpState {
  bool pad_per_class = false;
  bool clip_boxes = true;
};

// The per-batch output size: max_total_size, or with pad_per_class the smaller of it and
// max_output_size_per_class * num_classes.
inline int64_t PerBatchSize(int64_t per_class, int64_t total, int64_t classes, bool pad_per_class) {
  if (!pad_per_class) return total;
  const int64_t max_total =
      std::min<int64_t>(std::numeric_limits<int32_t>::max(), per_class * classes);
  return std::min(total, max_total);
}

}  // namespace kiln::exec::nms
