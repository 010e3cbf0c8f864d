// One row times a weight matrix: vmath's vector loop over the weights (row_product.h).
#include "kernels/cpu/row_product.h"

#include <algorithm>
#include <cstddef>

#include "kernels/cpu/vector_math.h"

namespace kiln::exec {

Status RowTimesMatrix(const KernelContext& ctx, const float* x, const float* w, int64_t k,
                      int64_t n, const float* bias, bool add, float* out) {
  float* product = out;
  if (add) {
    KILN_ASSIGN_OR_RETURN(void* buf, ctx.AllocateTemp(static_cast<size_t>(n) * sizeof(float)));
    product = static_cast<float*>(buf);
  }
  // 128 columns: a whole register block of GemvAccumulate at every ISA level.
  constexpr int64_t kCols = 128;
  const int64_t blocks = (n + kCols - 1) / kCols;
  ctx.threads().ParallelFor(blocks, std::max<int64_t>(1, 65536 / std::max<int64_t>(1, k * kCols)),
                            [&](int64_t first, int64_t last) {
                              const int64_t c0 = first * kCols, c1 = std::min(n, last * kCols);
                              std::fill(product + c0, product + c1, 0.0f);
                              vmath::GemvAccumulate(x, w + c0, n, k, c1 - c0, product + c0);
                              for (int64_t c = c0; c < c1; ++c) {
                                float v = product[c];
                                if (bias != nullptr) v += bias[c];
                                if (add) v += out[c];
                                out[c] = v;
                              }
                            });
  return OkStatus();
}

}  // namespace kiln::exec
