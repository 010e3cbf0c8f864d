// The state and type lists the ragged ops' definitions and CPU kernels (ragged_ops.cc) share.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec::ragged {

// RaggedRange.
using RangeTypes = TypeList<float, double, int32_t, int64_t>;

// RaggedGather.
struct GatherState : OpState {
  int params_ragged_rank = 1;
};

// RaggedTensorToTensor.
enum class Partition { kFirstDimSize, kValueRowIds, kRowSplits };

struct ToTensorState : OpState {
  std::vector<Partition> types;
};

}  // namespace kiln::exec::ragged
