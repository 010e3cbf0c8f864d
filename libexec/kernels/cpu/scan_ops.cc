// The CPU kernels of the ops in kernels/scan_ops.cc.
#include "kernels/scan_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/kernel_util.h"
#include "kernels/math_functors.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using scan::ScanState;

// ---- Cumsum, Cumprod -------------------------------------------------------------------------

template <typename C>
struct SumOp {
  using Acc = fn::Wide<C>;
  static Acc Identity() { return Acc(0); }
  static Acc Step(Acc a, C v) { return fn::Add<Acc>()(a, Acc(v)); }
};
template <typename C>
struct ProdOp {
  using Acc = fn::Wide<C>;
  static Acc Identity() { return Acc(1); }
  static Acc Step(Acc a, C v) { return fn::Mul<Acc>()(a, Acc(v)); }
};

// log(exp(a) + exp(b)) as TF's LogSumExp reducer: max + log1p(exp(min - max)), the identity
// (-inf) passing through.
template <typename C>
struct LogSumExpOp {
  using Acc = fn::Wide<C>;
  static Acc Identity() { return -std::numeric_limits<Acc>::infinity(); }
  static Acc Step(Acc a, C v) {
    const Acc b(v), lo = std::min(a, b), hi = std::max(a, b);
    if (hi < std::numeric_limits<Acc>::lowest()) return hi;
    return std::log1p(std::exp(lo - hi)) + hi;
  }
};

// The input as [outer, n, inner], scanned along n. Units of work are (outer row, block of up to
// kChunk inner columns); each keeps its running values for its columns, so the innermost loop
// runs over contiguous columns.
template <template <typename> class Op, typename List = RealTypes>
Status ComputeScan(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Result<scan::ScanGeom> g = scan::ScanGeomOf(x, ctx.input(1));
  if (!g.ok()) return ctx.Error(g.status().message());
  const int64_t outer = g->outer, n = g->n, inner = g->inner;
  const auto& st = ctx.state<ScanState>();
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.ForwardInputOrAllocateOutput(0, 0, x.shape()));
  if (x.NumElements() == 0) return OkStatus();
  return Dispatch<List>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    using O = Op<C>;
    using Acc = typename O::Acc;
    constexpr int64_t kChunk = 256;
    const C* in = ComputeData<T>(x);
    C* o = MutableComputeData<T>(out);
    const int64_t blocks = (inner + kChunk - 1) / kChunk;
    ctx.threads().ParallelFor(outer * blocks,
                              std::max<int64_t>(1, 32768 / std::max<int64_t>(1, n * kChunk)),
                              [&](int64_t begin, int64_t end) {
                                Acc acc[kChunk];
                                for (int64_t u = begin; u < end; ++u) {
                                  const int64_t row = u / blocks, c0 = (u % blocks) * kChunk;
                                  const int64_t m = std::min(kChunk, inner - c0);
                                  for (int64_t j = 0; j < m; ++j) acc[j] = O::Identity();
                                  for (int64_t step = 0; step < n; ++step) {
                                    const int64_t k = st.reverse ? n - 1 - step : step;
                                    const int64_t base = (row * n + k) * inner + c0;
                                    // Each element is read before its position is written: in place
                                    // is safe.
                                    for (int64_t j = 0; j < m; ++j) {
                                      const C v = in[base + j];
                                      if (st.exclusive) {
                                        o[base + j] = static_cast<C>(acc[j]);
                                        acc[j] = O::Step(acc[j], v);
                                      } else {
                                        acc[j] = O::Step(acc[j], v);
                                        o[base + j] = static_cast<C>(acc[j]);
                                      }
                                    }
                                  }
                                }
                              });
    return OkStatus();
  });
}

// ---- LinSpace --------------------------------------------------------------------------------

// start + i * (stop - start) / (num - 1), the last value exactly stop (as TF).
Status ComputeLinSpace(const KernelContext& ctx) {
  const Tensor& start_t = ctx.input(0);
  const Tensor& stop_t = ctx.input(1);
  const Tensor& num_t = ctx.input(2);
  if (start_t.rank() != 0 || stop_t.rank() != 0 || num_t.rank() != 0) {
    return ctx.Error("inputs 'start', 'stop' and 'num' must be scalars, got shapes ",
                     start_t.shape().ToString(), ", ", stop_t.shape().ToString(), ", ",
                     num_t.shape().ToString());
  }
  const int64_t num =
      num_t.dtype() == DType::kInt32 ? num_t.scalar<int32_t>() : num_t.scalar<int64_t>();
  if (num <= 0) return ctx.Error("input 'num' must be positive, got ", num);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{num}));
  return Dispatch<FloatTypes>(start_t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    using W = fn::Wide<C>;
    const W start(ComputeData<T>(start_t)[0]), stop(ComputeData<T>(stop_t)[0]);
    C* o = MutableComputeData<T>(out);
    if (num == 1) {
      o[0] = static_cast<C>(start);
      return OkStatus();
    }
    const W step = (stop - start) / static_cast<W>(num - 1);
    for (int64_t i = 0; i < num - 1; ++i) o[i] = static_cast<C>(start + step * static_cast<W>(i));
    o[num - 1] = static_cast<C>(stop);
    return OkStatus();
  });
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"Cumsum", ComputeScan<SumOp, NumberTypes>},
    {"Cumprod", ComputeScan<ProdOp, NumberTypes>},
    {"CumulativeLogsumexp", ComputeScan<LogSumExpOp, FloatTypes>},
    {"LinSpace", ComputeLinSpace},
};

}  // namespace

std::span<const KernelEntry> ScanCpuKernels() { return kCpu; }

}  // namespace kiln::exec
