// Norm's op states, shared by its definitions and its CPU kernels.
#pragma once

#include <cstdint>

#include "kiln/core/dtype.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::norm_ops {

struct BatchNormState : OpState {
  DType t = DType::kFloat;
  float epsilon = 1e-4f;
  float avg_factor = 1.0f;
  bool training = true;
  bool channels_first = false;
  int version = 3;
};

struct LrnState : OpState {
  int64_t radius = 5;
  float bias = 1, alpha = 1, beta = 0.5f;
};

}  // namespace kiln::exec::norm_ops
