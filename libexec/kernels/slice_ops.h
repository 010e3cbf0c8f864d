// What the slice ops' definitions (kernels/slice_ops.cc) and CPU kernels
// (kernels/cpu/slice_ops.cc) share: the perm check, the strided-slice state and GatherV2's
// batch_dims rules.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/strided_slice.h"

namespace kiln::exec::slice {

// ---- Transpose -------------------------------------------------------------------------------

// Checks that `perm` is a permutation of [0, rank) once its entries in [-rank, 0) count from
// the end, as TF's kernel reads them (tf.transpose(x, [-1, 0, 1])); makes those non-negative.
inline Status CheckPerm(std::vector<int64_t>& perm, int rank) {
  if (static_cast<int>(perm.size()) != rank) {
    return InvalidArgument("perm ", DimsString(perm), " has ", perm.size(),
                           " entries but the input has rank ", rank);
  }
  const std::string given = DimsString(perm);
  std::vector<bool> seen(rank, false);
  for (int64_t& p : perm) {
    if (p < -rank || p >= rank) {
      return InvalidArgument("perm ", given, ": ", p, " is out of range [", -rank, ", ", rank, ")");
    }
    if (p < 0) p += rank;
    if (seen[p]) {
      return InvalidArgument("perm ", given, ": ", p, " appears more than once");
    }
    seen[p] = true;
  }
  return OkStatus();
}

// ---- StridedSlice ------------------------------------------------------------------------------

struct StridedSliceState : OpState {
  SliceMasks masks;
};

// ---- GatherV2 --------------------------------------------------------------------------------

// batch_dims in [-indices_rank, indices_rank], made non-negative; at most the axis, which must
// be a dim of params (TF's checks and messages).
inline Result<int> GatherBatchDims(int64_t batch_dims, int indices_rank, int axis) {
  if (batch_dims < -indices_rank || batch_dims > indices_rank) {
    return InvalidArgument("expected batch_dims in the range [", -indices_rank, ", ", indices_rank,
                           "], but got ", batch_dims);
  }
  const int b = static_cast<int>(batch_dims < 0 ? batch_dims + indices_rank : batch_dims);
  if (b > axis) {
    return InvalidArgument("batch_dims (", b, ") must be less than or equal to axis (", axis, ")");
  }
  return b;
}

// params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis + 1:]; -1 unknown.
inline std::vector<int64_t> GatherDims(std::span<const int64_t> params,
                                       std::span<const int64_t> indices, int axis, int batch_dims) {
  std::vector<int64_t> dims(params.begin(), params.begin() + axis);
  dims.insert(dims.end(), indices.begin() + batch_dims, indices.end());
  dims.insert(dims.end(), params.begin() + axis + 1, params.end());
  return dims;
}

using BatchDimsState = TypedOpState<int64_t>;

}  // namespace kiln::exec::slice
