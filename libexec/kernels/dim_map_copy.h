// A copy where each output coordinate picks its input coordinate through a per-dim table:
// out[o_0, ..., o_n] = in[map_0[o_0], ..., map_n[o_n]]. MirrorPad (reflections) and Roll
// (rotations) are such copies; strided copies (array_util.h's CopyPlan) cover the affine ones.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/array_util.h"

namespace kiln::exec {

// Per output dim, the input element offset (input coordinate times the input stride) of every
// output coordinate; maps[d].size() is the output's dim d.
using DimOffsets = std::vector<std::vector<int64_t>>;

// Output `out_index` of `shape` (in's dtype), filled from `in` through `maps` (one per dim of
// `shape`, in.rank() == shape.rank()). Offsets must lie inside `in`.
inline Status CopyByDimMaps(const KernelContext& ctx, int out_index, const Tensor& in,
                            const Shape& shape, const DimOffsets& maps) {
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(out_index, in.dtype(), shape));
  const int64_t n = shape.num_elements();
  if (n == 0) return OkStatus();
  const int rank = shape.rank();
  if (rank == 0) {
    return DispatchStorage(in.dtype(), [&](auto tag) {
      using U = typename decltype(tag)::type;
      Elems<U>(*out)[0] = Elems<U>(in)[0];
      return OkStatus();
    });
  }
  const int64_t inner = shape.dim(rank - 1);
  const int64_t rows = n / inner;
  const int64_t* inner_map = maps[rank - 1].data();
  return DispatchStorage(in.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U* src = Elems<U>(in);
    U* dst = Elems<U>(*out);
    ctx.threads().ParallelFor(rows, std::max<int64_t>(1, 65536 / inner),
                              [&](int64_t begin, int64_t end) {
                                // The outer coordinates of row `begin`, then an odometer.
                                std::array<int64_t, kMaxRank> idx{};
                                int64_t r = begin;
                                for (int d = rank - 2; d >= 0; --d) {
                                  idx[d] = r % shape.dim(d);
                                  r /= shape.dim(d);
                                }
                                for (int64_t row = begin; row < end; ++row) {
                                  int64_t base = 0;
                                  for (int d = 0; d < rank - 1; ++d) base += maps[d][idx[d]];
                                  const U* from = src + base;
                                  U* to = dst + row * inner;
                                  for (int64_t j = 0; j < inner; ++j) to[j] = from[inner_map[j]];
                                  for (int d = rank - 2; d >= 0; --d) {
                                    if (++idx[d] < shape.dim(d)) break;
                                    idx[d] = 0;
                                  }
                                }
                              });
    return OkStatus();
  });
}

}  // namespace kiln::exec
