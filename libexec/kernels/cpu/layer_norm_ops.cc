// The CPU kernel of _MklLayerNorm (kernels/layer_norm_ops.cc). Half precision and bfloat16
// compute in float; the statistics accumulate in float (double for double) per row, in one
// fixed order (16 interleaved partial sums).
#include "kernels/layer_norm_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <type_traits>

#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using layer_norm::LayerNormState;

// The sum of f(j) over j < n in kLanes interleaved partial sums, added up in a fixed order:
// independent chains the compiler vectorises (one running sum waits an add's latency per
// element).
template <typename A, typename F>
A LaneSum(int64_t n, F&& f) {
  constexpr int kLanes = 16;
  A part[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int k = 0; k < kLanes; ++k) part[k] += f(j + k);
  A sum = 0;
  for (int k = 0; k < kLanes; ++k) sum += part[k];
  for (; j < n; ++j) sum += f(j);
  return sum;
}

template <typename T>
void NormalizeRows(const T* x, const T* scale, const T* offset, T* y, int64_t rows, int64_t n,
                   float epsilon) {
  using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
  auto at = [](T v) { return static_cast<A>(v); };
  for (int64_t r = 0; r < rows; ++r) {
    const T* in = x + r * n;
    T* out = y + r * n;
    const A mean = LaneSum<A>(n, [&](int64_t j) { return at(in[j]); }) / static_cast<A>(n);
    const A squares = LaneSum<A>(n, [&](int64_t j) {
      const A d = at(in[j]) - mean;
      return d * d;
    });
    const A inv = A(1) / std::sqrt(squares / static_cast<A>(n) + static_cast<A>(epsilon));
    for (int64_t j = 0; j < n; ++j)
      out[j] = static_cast<T>((at(in[j]) - mean) * inv * at(scale[j]) + at(offset[j]));
  }
}

Status ComputeLayerNorm(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& scale = ctx.input(1);
  const Tensor& offset = ctx.input(2);
  if (x.rank() < 1) return ctx.Error("input 'x' must have rank >= 1, got a scalar");
  const int64_t n = x.dim(x.rank() - 1);
  if (scale.NumElements() != n || offset.NumElements() != n)
    return ctx.Error("scale and offset need ", n, " values (the last dim of x ",
                     x.shape().ToString(), "), got ", scale.NumElements(), " and ",
                     offset.NumElements());
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x.shape()));
  if (x.NumElements() == 0) return OkStatus();
  const int64_t rows = x.NumElements() / n;
  const float epsilon = ctx.state<LayerNormState>().epsilon;
  return Dispatch<FloatTypes>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* in = ComputeData<T>(x);
    const C* s = ComputeData<T>(scale);
    const C* o = ComputeData<T>(offset);
    C* out = MutableComputeData<T>(y);
    ctx.threads().ParallelFor(
        rows, std::max<int64_t>(1, 16384 / n), [&](int64_t begin, int64_t end) {
          NormalizeRows(in + begin * n, s, o, out + begin * n, end - begin, n, epsilon);
        });
    return OkStatus();
  });
}

constexpr KernelEntry kCpu[] = {
    {"_MklLayerNorm", ComputeLayerNorm},
};

}  // namespace

std::span<const KernelEntry> LayerNormCpuKernels() { return kCpu; }

}  // namespace kiln::exec
