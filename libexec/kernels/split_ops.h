// What Split and SplitV's definitions (kernels/split_ops.cc) and CPU kernels
// (kernels/cpu/split_ops.cc) share: the split axis, the op's state and SplitV's piece sizes.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/array_util.h"

namespace kiln::exec::split {

// The split axis: a scalar int32 input, accepted in [-rank, rank).
inline Result<int> SplitAxis(const Tensor& t, int rank) {
  if (t.NumElements() != 1) {
    return InvalidArgument("input 'split_dim' must be a scalar, got shape ", t.shape().ToString());
  }
  return CanonicalAxis(IndexValues(t)[0], rank, "split_dim");
}

// ---- Split, SplitV -----------------------------------------------------------------------------

struct SplitState : OpState {
  int value_input = 1;  // Split: (split_dim, value); SplitV: (value, size_splits, split_dim)
  int axis_input = 0;
};

// Piece sizes of SplitV with at most one -1, resolved against a dim of size `dim` (-1 unknown:
// the -1 piece stays unknown).
inline Result<std::vector<int64_t>> ResolveSplits(std::vector<int64_t> sizes, int64_t dim) {
  int unknown = -1;
  int64_t total = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      if (unknown >= 0) {
        return InvalidArgument("size_splits ", DimsString(sizes),
                               " has more than one -1 (at most one size can be inferred)");
      }
      unknown = static_cast<int>(i);
    } else if (sizes[i] < 0) {
      return InvalidArgument("size_splits ", DimsString(sizes), " has a negative size ", sizes[i]);
    } else {
      total += sizes[i];
    }
  }
  if (dim < 0) return sizes;
  if ((unknown < 0 && total != dim) || (unknown >= 0 && total > dim)) {
    return InvalidArgument("size_splits ", DimsString(sizes), " must ",
                           unknown < 0 ? "sum to" : "sum to at most",
                           " the split dimension's size ", dim, ", got ", total);
  }
  if (unknown >= 0) sizes[unknown] = dim - total;
  return sizes;
}

}  // namespace kiln::exec::split
