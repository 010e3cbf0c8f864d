// The CPU kernel of _KilnAttention (kernels/attention_ops.cc): a row of scores per (batch, head,
// target) in float32 (float64 for float64), the softmax with its maximum subtracted, then the
// weighted sum of the values. It is the reference the GPU kernel is tested against and what a
// fused node runs where the GPU does not take it; on the CPU alone the fusion is not made.
#include "kernels/attention_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

Status ComputeAttention(const KernelContext& ctx) {
  const auto& st = ctx.state<attention::AttentionState>();
  const Tensor& q = ctx.input(0);
  const Tensor& k = ctx.input(1);
  const Tensor& v = ctx.input(2);
  const Tensor* bias = st.has_bias ? &ctx.input(3) : nullptr;
  const Result<attention::AttentionGeom> geom = attention::GeomOf(q, k, v, bias);
  if (!geom.ok()) return ctx.Error(geom.status().message());
  const attention::AttentionGeom g = *geom;
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, attention::OutputShape(g)));
  if (out->NumElements() == 0) return OkStatus();
  const float* bias_data = bias != nullptr ? bias->data<float>() : nullptr;
  return Dispatch<FloatTypes>(q.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const C* qd = ComputeData<T>(q);
    const C* kd = ComputeData<T>(k);
    const C* vd = ComputeData<T>(v);
    C* od = MutableComputeData<T>(out);
    const int64_t rows = g.b * g.n * g.t;
    ctx.threads().ParallelFor(
        rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, g.s * (g.h + g.hv))),
        [&](int64_t begin, int64_t end) {
          std::vector<A> p(static_cast<size_t>(g.s));
          std::vector<A> acc(static_cast<size_t>(g.hv));
          for (int64_t r = begin; r < end; ++r) {
            const int64_t t = r % g.t, n = (r / g.t) % g.n, b = r / (g.t * g.n);
            const C* qr = qd + ((b * g.t + t) * g.n + n) * g.h;
            A top = -std::numeric_limits<A>::infinity();
            for (int64_t s = 0; s < g.s; ++s) {
              const C* kr = kd + ((b * g.s + s) * g.n + n) * g.h;
              A dot = 0;
              for (int64_t i = 0; i < g.h; ++i)
                dot += static_cast<A>(qr[i]) * static_cast<A>(kr[i]);
              A score = dot * static_cast<A>(st.scale);
              if (bias_data != nullptr)
                score += bias_data[b * g.bias_strides[0] + n * g.bias_strides[1] +
                                   t * g.bias_strides[2] + s * g.bias_strides[3]];
              p[s] = score;
              top = std::max(top, score);
            }
            A sum = 0;
            for (int64_t s = 0; s < g.s; ++s) {
              p[s] = std::exp(p[s] - top);
              sum += p[s];
            }
            std::fill(acc.begin(), acc.end(), A(0));
            for (int64_t s = 0; s < g.s; ++s) {
              const C* vr = vd + ((b * g.s + s) * g.n + n) * g.hv;
              for (int64_t i = 0; i < g.hv; ++i) acc[i] += p[s] * static_cast<A>(vr[i]);
            }
            C* o = od + ((b * g.t + t) * g.n + n) * g.hv;
            // No source positions: an empty sum, 0 (as the unfused einsum gives).
            for (int64_t i = 0; i < g.hv; ++i)
              o[i] = static_cast<C>(g.s == 0 ? A(0) : acc[i] / sum);
          }
        });
    return OkStatus();
  });
}

constexpr KernelEntry kCpu[] = {
    {"_KilnAttention", ComputeAttention},
};

}  // namespace

std::span<const KernelEntry> AttentionCpuKernels() { return kCpu; }

}  // namespace kiln::exec
