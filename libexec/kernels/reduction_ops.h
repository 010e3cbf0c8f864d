// Reduction's helpers and op state, shared by its definitions and its CPU kernels.
#pragma once

#include <array>
#include <cstdint>

#include "kiln/core/shape.h"
#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::reduction {

// Which dims of a rank-`rank` input the axes (an int32 or int64 tensor) name; negative axes
// count from the end.
inline Result<std::array<bool, kMaxRank>> ReducedDims(const Tensor& axes, int rank) {
  std::array<bool, kMaxRank> reduced{};
  for (int64_t i = 0; i < axes.NumElements(); ++i) {
    const int64_t a =
        axes.dtype() == DType::kInt32 ? axes.data<int32_t>()[i] : axes.data<int64_t>()[i];
    if (a < -rank || a >= rank) {
      return InvalidArgument("invalid reduction dimension ", a, " for input with ", rank,
                             " dimensions");
    }
    int64_t d = a < 0 ? a + rank : a;
    if (reduced[d]) return InvalidArgument("axes contain the dimension ", d, " twice");
    reduced[d] = true;
  }
  return reduced;
}

struct ReduceState : OpState {
  bool keep_dims = false;
};

inline int64_t ScalarIndex(const Tensor& t) {
  return t.dtype() == DType::kInt32 ? t.scalar<int32_t>() : t.scalar<int64_t>();
}

}  // namespace kiln::exec::reduction
