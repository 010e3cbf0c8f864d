// What the spatial-block ops' definitions (kernels/space_ops.cc), CPU kernels
// (kernels/cpu/space_ops.cc) and GPU kernels (kernels/cuda/space.cu) share: the block spec and
// the output dims it gives, the ops' states and the patch ops' geometry.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "kernels/array_util.h"

namespace kiln::exec::space {

// ---- SpaceToBatchND, BatchToSpaceND ----------------------------------------------------------

// block_shape [M] and the [M, 2] paddings (or crops) for an input of `rank` dims.
struct BlockSpec {
  std::vector<int64_t> block;
  std::vector<int64_t> pads;  // (before, after) per block dim
};

inline Result<BlockSpec> ReadBlockSpec(const Tensor& block_t, const Tensor& pads_t, int rank,
                                       std::string_view pads_name) {
  if (block_t.rank() != 1) {
    return InvalidArgument("block_shape must be 1-D, got shape ", block_t.shape().ToString());
  }
  const int64_t m = block_t.NumElements();
  if (pads_t.rank() != 2 || pads_t.dim(0) != m || pads_t.dim(1) != 2) {
    return InvalidArgument(pads_name, " should have shape [", m, ", 2] instead of ",
                           pads_t.shape().ToString());
  }
  if (m < 1 || rank < 1 + m) {
    return InvalidArgument("input rank should be >= ", 1 + m, " (1 + the ", m,
                           " block dims) instead of ", rank);
  }
  BlockSpec s{IndexValues(block_t), IndexValues(pads_t)};
  for (int64_t i = 0; i < m; ++i) {
    if (s.block[i] < 1) {
      return InvalidArgument("all values in block_shape must be positive, got value ", s.block[i],
                             " at index ", i);
    }
    if (s.pads[2 * i] < 0 || s.pads[2 * i + 1] < 0) {
      return InvalidArgument("all values in ", pads_name, " must be non-negative, got (",
                             s.pads[2 * i], ", ", s.pads[2 * i + 1], ") at index ", i);
    }
  }
  return s;
}

// The output dims of SpaceToBatchND / BatchToSpaceND for input dims `in` (-1 unknown).
inline Result<std::vector<int64_t>> BlockOutputDims(bool to_batch, std::span<const int64_t> in,
                                                    const BlockSpec& s) {
  std::vector<int64_t> out(in.begin(), in.end());
  int64_t prod = 1;
  for (int64_t b : s.block) prod *= b;
  const size_t m = s.block.size();
  if (to_batch) {
    out[0] = in[0] < 0 ? -1 : in[0] * prod;
    for (size_t i = 0; i < m; ++i) {
      if (in[1 + i] < 0) {
        out[1 + i] = -1;
        continue;
      }
      const int64_t padded = in[1 + i] + s.pads[2 * i] + s.pads[2 * i + 1];
      if (padded % s.block[i] != 0) {
        return InvalidArgument("padded_shape[", i, "]=", padded,
                               " is not divisible by block_shape[", i, "]=", s.block[i]);
      }
      out[1 + i] = padded / s.block[i];
    }
  } else {
    if (in[0] >= 0) {
      if (in[0] % prod != 0) {
        return InvalidArgument("input batch dimension (", in[0],
                               ") is not divisible by product of block sizes (", prod, ")");
      }
      out[0] = in[0] / prod;
    }
    for (size_t i = 0; i < m; ++i) {
      if (in[1 + i] < 0) {
        out[1 + i] = -1;
        continue;
      }
      const int64_t cropped = in[1 + i] * s.block[i] - s.pads[2 * i] - s.pads[2 * i + 1];
      if (cropped < 0) {
        return InvalidArgument("cropped size of dim ", 1 + i, " (", in[1 + i], " * ", s.block[i],
                               " - ", s.pads[2 * i], " - ", s.pads[2 * i + 1],
                               ") must be non-negative");
      }
      out[1 + i] = cropped;
    }
  }
  return out;
}

// SpaceToBatch / BatchToSpace (v1): 4-D NHWC input, one block_size for both spatial dims (attr)
// and [2, 2] paddings or crops; the ND kernel with block_shape [block_size, block_size].
struct BlockV1State : OpState {
  bool to_batch = false;
  int64_t block_size = 2;
};

// ---- SpaceToDepth, DepthToSpace --------------------------------------------------------------

using BlockState = TypedOpState<int64_t>;

// ---- ExtractImagePatches, ExtractVolumePatches ----------------------------------------------

// Windows over three spatial dims (planes, rows, cols); images are volumes one plane deep.
struct PatchState : OpState {
  int64_t k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, r[3] = {1, 1, 1};
  bool same = false;
  int rank = 4;  // the input's: 4 (images) or 5 (volumes)
};

// Output size and leading padding of one spatial dim, as TF's GetWindowedOutputSize.
inline void WindowedSize(int64_t in, int64_t k, int64_t s, int64_t r, bool same, int64_t* out,
                         int64_t* pad) {
  const int64_t eff = k + (k - 1) * (r - 1);
  if (same) {
    *out = (in + s - 1) / s;
    const int64_t total = std::max<int64_t>((*out - 1) * s + eff - in, 0);
    *pad = total / 2;
  } else {
    *out = in < eff ? 0 : (in - eff + s) / s;
    *pad = 0;
  }
}

// A patch op's input as a volume [n, planes, rows, cols, c], its output pixels o[3] and leading
// padding, and the output shape ([n, (planes,) rows, cols, taps * c]).
struct PatchGeom {
  int64_t n = 0, c = 0, in[3] = {1, 1, 1}, o[3] = {0, 0, 0}, pad[3] = {0, 0, 0}, taps = 1;
  Shape out;
};
inline Result<PatchGeom> PatchGeomOf(const Tensor& x, const PatchState& st) {
  const int rank = st.rank;
  if (x.rank() != rank) return InvalidArgument("input must have rank ", rank, ", got ", x.rank());
  PatchGeom g;
  g.n = x.dim(0);
  g.c = x.dim(rank - 1);
  g.in[0] = rank == 5 ? x.dim(1) : 1;
  g.in[1] = x.dim(rank - 3);
  g.in[2] = x.dim(rank - 2);
  for (int d = 0; d < 3; ++d)
    WindowedSize(g.in[d], st.k[d], st.s[d], st.r[d], st.same, &g.o[d], &g.pad[d]);
  g.taps = st.k[0] * st.k[1] * st.k[2];
  std::vector<int64_t> out_dims = {g.n};
  for (int d = 3 - (rank - 2); d < 3; ++d) out_dims.push_back(g.o[d]);
  out_dims.push_back(g.taps * g.c);
  KILN_ASSIGN_OR_RETURN(g.out, Shape::FromDims(out_dims));
  return g;
}

}  // namespace kiln::exec::space
