// The state, type lists and helpers the counting ops' definitions and CPU kernels share.
#pragma once

#include <cstdint>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"
#include "kiln/core/status.h"
#include "kiln/core/tensor.h"

namespace kiln::exec::count {

// TF's OpDefs: the weights (and counts) are int32, int64, float32 or float64.
// Bin weights: every number type, as TF registers (half precision adds in its own type, as TF's
// kernel does).
using BinTypes = NumberTypes;
using HistogramTypes = RealTypes;

inline int64_t ScalarIndex(const Tensor& t) {
  return t.dtype() == DType::kInt32 ? t.scalar<int32_t>() : t.scalar<int64_t>();
}

// Bincount, DenseBincount, RaggedBincount.
struct BincountState : OpState {
  bool binary_output = false;
};

// Unique, UniqueV2, UniqueWithCounts(V2).
struct UniqueState : OpState {
  DType out_idx = DType::kInt32;
  bool with_counts = false;
};

// The axis of UniqueV2 (empty: the input must be a vector), canonical; -1 for "flat".
inline Result<int> UniqueAxis(const Tensor& axis, int rank) {
  if (axis.NumElements() > 1) {
    return InvalidArgument("input 'axis' must have at most 1 element, got shape ",
                           axis.shape().ToString());
  }
  if (axis.NumElements() == 0) return -1;
  const int64_t a = IndexValues(axis)[0];
  if (a < -rank || a >= rank) {
    return InvalidArgument("input 'axis' is ", a, ", expected a value in [", -rank, ", ", rank,
                           ")");
  }
  return static_cast<int>(a < 0 ? a + rank : a);
}

// ListDiff.
using ListDiffTypes = TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t,
                               uint8_t, uint16_t, uint32_t, uint64_t, bool>;

}  // namespace kiln::exec::count
