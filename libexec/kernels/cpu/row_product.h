// One row times a weight matrix on the CPU: a Dense layer at batch 1, and a 1x1 convolution of
// one pixel (a squeeze-and-excite block's). oneDNN's call overhead is most of the time of such a
// product, and its convolutions of one pixel take a slow path (gemm-based, up to 80 us for a
// 144x576 product at batch 1 with a per-channel post-op); a vector loop over the weights in
// place takes a few microseconds.
#pragma once

#include <cstdint>

#include "kiln/core/status.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec {

// out[n] = x[k] * w[k, n] (row-major, row stride n) + bias (when not null) + out's values on
// entry (when `add`), in column blocks across ctx's threads. The caller applies any activation
// after.
Status RowTimesMatrix(const KernelContext& ctx, const float* x, const float* w, int64_t k,
                      int64_t n, const float* bias, bool add, float* out);

}  // namespace kiln::exec
