// _KilnAttention's state and shapes, shared by its definition (kernels/attention_ops.cc), its CPU
// kernel (kernels/cpu/attention_ops.cc) and its GPU kernel (kernels/cuda/nn.cu).
#pragma once

#include <cstdint>

#include "kernels/kernel_util.h"

namespace kiln::exec::attention {

struct AttentionState : OpState {
  float scale = 1.0f;
  bool has_bias = false;
};

// q [b, t, n, h], k [b, s, n, h], v [b, s, n, hv] -> out [b, t, n, hv] (rank 3 without the
// heads dim: one head, as Keras's Attention layer writes it); the bias's strides per
// [b, n, t, s] (0 along a dim it broadcasts over).
struct AttentionGeom {
  int rank = 4;
  int64_t b = 0, t = 0, s = 0, n = 1, h = 0, hv = 0;
  int64_t bias_strides[4] = {0, 0, 0, 0};
};

inline Shape OutputShape(const AttentionGeom& g) {
  return g.rank == 3 ? Shape{g.b, g.t, g.hv} : Shape{g.b, g.t, g.n, g.hv};
}

inline Result<AttentionGeom> GeomOf(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor* bias) {
  const int rank = q.rank();
  if ((rank != 3 && rank != 4) || k.rank() != rank || v.rank() != rank)
    return InvalidArgument(
        "query, key and value must have rank 4 ([batch, length, heads, dim]) "
        "or 3 ([batch, length, dim]), got ",
        q.shape().ToString(), ", ", k.shape().ToString(), " and ", v.shape().ToString());
  AttentionGeom g;
  g.rank = rank;
  g.b = q.dim(0);
  g.t = q.dim(1);
  g.n = rank == 4 ? q.dim(2) : 1;
  g.h = q.dim(rank - 1);
  g.s = k.dim(1);
  g.hv = v.dim(rank - 1);
  const bool heads_fit = rank == 3 || (k.dim(2) == g.n && v.dim(2) == g.n);
  if (k.dim(0) != g.b || k.dim(rank - 1) != g.h || v.dim(0) != g.b || v.dim(1) != g.s || !heads_fit)
    return InvalidArgument("key ", k.shape().ToString(), " and value ", v.shape().ToString(),
                           " do not fit query ", q.shape().ToString(),
                           " (key [batch, source, heads, dim], value [batch, source, heads, "
                           "value dim])");
  if (bias != nullptr) {
    const int64_t full[4] = {g.b, g.n, g.t, g.s};
    const int r = bias->rank();
    if (r > 4)
      return InvalidArgument("the attention bias ", bias->shape().ToString(),
                             " has more than 4 dims");
    int64_t stride = 1;
    for (int d = 3; d >= 0; --d) {
      const int bd = d - (4 - r);
      const int64_t size = bd >= 0 ? bias->dim(bd) : 1;
      if (size != 1 && size != full[d])
        return InvalidArgument("the attention bias ", bias->shape().ToString(),
                               " does not broadcast to [batch, heads, target, source] = (", g.b,
                               ", ", g.n, ", ", g.t, ", ", g.s, ")");
      g.bias_strides[d] = size == 1 ? 0 : stride;
      stride *= size;
    }
  }
  return g;
}

}  // namespace kiln::exec::attention
