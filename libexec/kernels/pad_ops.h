// What the padding ops' definitions (kernels/pad_ops.cc), CPU kernels (kernels/cpu/pad_ops.cc)
// and GPU kernels (kernels/cuda/pool.cu) share: the mirror mode (their state), the paddings
// reader, the mirror check and the mirrored index.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/host_device.h"

namespace kiln::exec::pad {

enum class Mirror { kNone, kReflect, kSymmetric };
using MirrorState = TypedOpState<Mirror>;

struct Pads {
  int64_t before = 0, after = 0;
};

// The (before, after) pairs of a paddings tensor for an input of `rank` dims.
inline Result<std::vector<Pads>> Paddings(const Tensor& p, int rank) {
  if (p.rank() != 2 || p.dim(0) != rank || p.dim(1) != 2) {
    return InvalidArgument("input 'paddings' must have shape [", rank,
                           ", 2] (the input's rank, 2), got ", p.shape().ToString());
  }
  const std::vector<int64_t> v = IndexValues(p);
  std::vector<Pads> pads(rank);
  for (size_t d = 0; d < pads.size(); ++d) {
    pads[d] = {v[2 * d], v[2 * d + 1]};
    if (pads[d].before < 0 || pads[d].after < 0) {
      return InvalidArgument("paddings must be non-negative: dim ", d, " has (", pads[d].before,
                             ", ", pads[d].after, ")");
    }
  }
  return pads;
}

// Checks the pads of a mirrored dim of size `dim` (REFLECT needs pads < dim, SYMMETRIC <= dim).
inline Status CheckMirror(Mirror mode, int d, int64_t dim, int64_t before, int64_t after) {
  const int64_t limit = mode == Mirror::kReflect ? dim - 1 : dim;
  if (before > limit || after > limit) {  // as TF: REFLECT refuses an empty dim
    return InvalidArgument("paddings (", before, ", ", after, ") of dim ", d, " (size ", dim,
                           ") must be ",
                           mode == Mirror::kReflect ? "less than the dimension size in REFLECT mode"
                                                    : "no greater than the dimension size in "
                                                      "SYMMETRIC mode");
  }
  return OkStatus();
}

// The input index along a mirrored dim of size `dim` of output index o, `before` padded in:
// REFLECT mirrors around the edge element (edge 0: it is not repeated), SYMMETRIC repeats it
// (edge 1). CheckMirror's limits keep the result inside [0, dim).
KILN_HD inline int64_t MirrorIndex(int64_t o, int64_t before, int64_t dim, int64_t edge) {
  int64_t i = o - before;
  if (i < 0) i = -i - edge;
  if (i >= dim) i = 2 * dim - 2 + edge - i;
  return i;
}

}  // namespace kiln::exec::pad
