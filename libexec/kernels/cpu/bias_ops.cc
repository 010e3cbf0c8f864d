// The CPU kernels of BiasAddGrad and BiasAddV1 (kernels/bias_ops.cc). Sums run per channel in
// one fixed order (so any thread count gives the same bits) and in float for half and
// bfloat16, as TensorFlow's kernel accumulates them.
#include <algorithm>

#include "kernels/cpu/elementwise.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

Status ComputeBiasAddGrad(const KernelContext& ctx) {
  const bool nchw = ctx.state<TypedOpState<bool>>().value;
  const Tensor& g = ctx.input(0);
  if (g.rank() < 2) {
    return ctx.Error("input 'out_backprop' must have rank >= 2, got shape ", g.shape().ToString());
  }
  const int channel_dim = nchw ? 1 : g.rank() - 1;
  const int64_t channels = g.dim(channel_dim);
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < channel_dim; ++i) outer *= g.dim(i);
  for (int i = channel_dim + 1; i < g.rank(); ++i) inner *= g.dim(i);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{channels}));
  return Dispatch<NumberTypes>(g.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    using A = Acc<C>;
    const C* in = ComputeData<T>(g);
    C* o = MutableComputeData<T>(out);
    if (inner == 1) {
      // [outer, channels]: blocks of channels per worker, rows summed in order.
      constexpr int64_t kBlock = 64;
      const int64_t blocks = (channels + kBlock - 1) / kBlock;
      ctx.threads().ParallelFor(
          blocks, std::max<int64_t>(1, 65536 / std::max<int64_t>(1, outer * kBlock)),
          [&](int64_t b, int64_t e) {
            for (int64_t blk = b; blk < e; ++blk) {
              const int64_t c0 = blk * kBlock, n = std::min(kBlock, channels - c0);
              A sum[kBlock] = {};
              for (int64_t r = 0; r < outer; ++r) {
                const C* row = in + r * channels + c0;
                for (int64_t j = 0; j < n; ++j) sum[j] += static_cast<A>(row[j]);
              }
              for (int64_t j = 0; j < n; ++j) o[c0 + j] = static_cast<C>(sum[j]);
            }
          });
    } else {
      ctx.threads().ParallelFor(channels,
                                std::max<int64_t>(1, 65536 / std::max<int64_t>(1, outer * inner)),
                                [&](int64_t b, int64_t e) {
                                  for (int64_t c = b; c < e; ++c) {
                                    A sum = A(0);
                                    for (int64_t r = 0; r < outer; ++r) {
                                      const C* run = in + (r * channels + c) * inner;
                                      for (int64_t j = 0; j < inner; ++j)
                                        sum += static_cast<A>(run[j]);
                                    }
                                    o[c] = static_cast<C>(sum);
                                  }
                                });
    }
    return OkStatus();
  });
}

Status ComputeBiasAddV1(const KernelContext& ctx) {
  const Tensor& value = ctx.input(0);
  const Tensor& bias = ctx.input(1);
  if (value.rank() < 2 || bias.rank() != 1 || bias.dim(0) != value.dim(value.rank() - 1)) {
    return ctx.Error("BiasAddV1 needs value of rank >= 2 and a bias with one element per entry ",
                     "of its last dimension, got ", value.shape().ToString(), " and ",
                     bias.shape().ToString());
  }
  const int64_t c = bias.dim(0), rows = c == 0 ? 0 : value.NumElements() / c;
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.ForwardInputOrAllocateOutput(0, 0, value.shape()));
  return Dispatch<NumberTypes>(value.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* v = ComputeData<T>(value);
    const C* b = ComputeData<T>(bias);
    C* o = MutableComputeData<T>(out);
    ctx.threads().ParallelFor(rows, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, c)),
                              [&](int64_t begin, int64_t end) {
                                for (int64_t r = begin; r < end; ++r)
                                  for (int64_t j = 0; j < c; ++j)
                                    o[r * c + j] = static_cast<C>(v[r * c + j] + b[j]);
                              });
    return OkStatus();
  });
}

constexpr KernelEntry kCpu[] = {
    {"BiasAddGrad", ComputeBiasAddGrad},
    {"BiasAddV1", ComputeBiasAddV1},
};

}  // namespace

std::span<const KernelEntry> BiasCpuKernels() { return kCpu; }

}  // namespace kiln::exec
