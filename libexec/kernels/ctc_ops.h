// The states the CTC ops' definitions build (kernels/ctc_ops.cc) and their CPU kernels read
// (kernels/cpu/ctc_ops.cc).
#pragma once

#include <cstdint>

#include "kiln/core/dtype.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::ctc_ops {

struct CtcState : OpState {
  DType t = DType::kFloat;
  bool merge_repeated = false;
  int64_t blank_index = -1;
};

struct BeamState : OpState {
  DType t = DType::kFloat;
  int beam_width = 0;
  int top_paths = 0;
  bool merge_repeated = true;
};

struct CtcLossState : OpState {
  DType t = DType::kFloat;
  bool collapse = false, merge = true, ignore_longer = false;
};

}  // namespace kiln::exec::ctc_ops
