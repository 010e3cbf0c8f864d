// What the reversal ops' definitions (kernels/reverse_ops.cc) and CPU kernels
// (kernels/cpu/reverse_ops.cc) share: the reversed-dims reader and ReverseSequence's state and
// checks.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/array_util.h"

namespace kiln::exec::reverse {

// ---- ReverseV2 ---------------------------------------------------------------------------------

// Which dims of a rank-`rank` tensor the axis values name; each at most once.
inline Result<std::vector<bool>> ReversedDims(const std::vector<int64_t>& axes, int rank) {
  std::vector<bool> rev(rank, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < -rank || axes[i] >= rank) {
      return InvalidArgument("'axis'[", i, "] = ", axes[i], " is out of valid range [", -rank, ", ",
                             rank, ")");
    }
    const int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (rev[a]) return InvalidArgument("axis ", a, " specified more than once");
    rev[a] = true;
  }
  return rev;
}

// ---- ReverseSequence ---------------------------------------------------------------------------

struct SequenceState : OpState {
  int64_t seq_dim = 0;
  int64_t batch_dim = 0;
};

inline Status CheckSequenceDims(int64_t seq_dim, int64_t batch_dim, int rank) {
  if (seq_dim < 0 || seq_dim >= rank) {
    return InvalidArgument("attr 'seq_dim' = ", seq_dim, " is out of range [0, ", rank, ")");
  }
  if (batch_dim < 0 || batch_dim >= rank) {
    return InvalidArgument("attr 'batch_dim' = ", batch_dim, " is out of range [0, ", rank, ")");
  }
  if (seq_dim == batch_dim) {
    return InvalidArgument("attrs 'batch_dim' and 'seq_dim' are both ", seq_dim,
                           "; they must differ");
  }
  return OkStatus();
}

}  // namespace kiln::exec::reverse
