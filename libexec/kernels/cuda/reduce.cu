// Sum, Mean, Max, Min, Prod (and All, Any over bools) on the GPU over any set of axes: one block
// per output element reduces the elements an IndexMap of the reduced dims reaches (a warp per
// output where the innermost dims reduce), in float for the float types (as TF accumulates half in
// float) and in the type itself for integers. Also Cumsum and Cumprod (a thread per scanned line)
// and TopKV2 (a block per row).
#include <type_traits>
#include <vector>

#include "kernels/cuda/launch.cuh"
#include "kernels/elementwise_functors.h"
#include "kernels/index_ops.h"
#include "kernels/math_functors.h"
#include "kernels/scan_ops.h"

namespace kiln::exec::cuda {
namespace {

enum class Reduce { kSum, kMean, kMax, kMin, kProd, kAll, kAny };

template <Reduce R, typename A>
__device__ A Combine(A a, A b) {
  if constexpr (R == Reduce::kSum || R == Reduce::kMean) return fn::Add<A>()(a, b);  // ints wrap
  if constexpr (R == Reduce::kProd) return fn::Mul<A>()(a, b);
  if constexpr (R == Reduce::kMax) return fn::Maximum<A>()(a, b);
  if constexpr (R == Reduce::kMin) return fn::Minimum<A>()(a, b);
  if constexpr (R == Reduce::kAll) return a && b;
  if constexpr (R == Reduce::kAny) return a || b;
}

template <Reduce R, typename A>
__device__ A Identity() {
  if constexpr (R == Reduce::kSum || R == Reduce::kMean) return A(0);
  if constexpr (R == Reduce::kProd) return A(1);
  if constexpr (R == Reduce::kAll) return true;
  if constexpr (R == Reduce::kAny) return false;
  // Over floats the identity of max is -inf (an all -inf row gives -inf, as on the CPU).
  constexpr bool kInf = std::numeric_limits<A>::has_infinity;
  if constexpr (R == Reduce::kMax)
    return kInf ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::lowest();
  if constexpr (R == Reduce::kMin)
    return kInf ? std::numeric_limits<A>::infinity() : std::numeric_limits<A>::max();
}

// I: the index type, uint32_t when every offset into x fits (launch.cuh, OffsetsAs).
template <Reduce R, typename C, typename A, typename I>
__global__ void ReduceKernel(const C* x, C* y, I outputs, IndexMap<1> kept, IndexMap<1> reduced,
                             I count) {
  __shared__ A shared[kThreads];
  for (I o = blockIdx.x; o < outputs; o += gridDim.x) {
    I base[1];
    kept.OffsetsAs(o, base);
    A acc = Identity<R, A>();
    for (I r = threadIdx.x; r < count; r += blockDim.x) {
      I off[1];
      reduced.OffsetsAs(r, off);
      acc = Combine<R, A>(acc, static_cast<A>(x[base[0] + off[0]]));
    }
    shared[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (static_cast<int>(threadIdx.x) < s)
        shared[threadIdx.x] = Combine<R, A>(shared[threadIdx.x], shared[threadIdx.x + s]);
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      A v = shared[0];
      if constexpr (R == Reduce::kMean) v = v / static_cast<A>(count);
      y[o] = static_cast<C>(v);
    }
    __syncthreads();
  }
}

// Rows of `count` contiguous elements (a reduction over the innermost dims: layer norm's
// moments), a warp per row with a shuffle reduction, over float accumulators. A block per row
// left most of its threads idle on rows of a few hundred elements.
template <Reduce R, typename C>
__global__ void ReduceRowsWarp(const C* x, C* y, int64_t rows, int64_t count) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  KILN_WARP_ROW_LOOP(row, rows) {
    const C* in = x + row * count;
    float acc = Identity<R, float>();
    for (int64_t i = lane; i < count; i += 32)
      acc = Combine<R, float>(acc, static_cast<float>(in[i]));
    for (int o = 16; o > 0; o >>= 1)
      acc = Combine<R, float>(acc, __shfl_xor_sync(0xffffffffu, acc, o));
    if (lane == 0) {
      if constexpr (R == Reduce::kMean) acc = acc / static_cast<float>(count);
      y[row] = static_cast<C>(acc);
    }
  }
}

struct ReduceState final : OpState {
  bool keep_dims = false;
};
Status CreateReduceState(PrepareContext& ctx) {
  auto state = std::make_shared<ReduceState>();
  KILN_ASSIGN_OR_RETURN(state->keep_dims, ctx.attrs.GetBool("keep_dims", false));
  ctx.state = state;
  return OkStatus();
}

// Types: the element types the row's `supports` lets through (All and Any: bool alone).
template <Reduce R, typename Types = GpuNumberTypes>
Status ComputeReduce(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const Tensor& x = ctx.input(0);
  const Tensor& axes = ctx.input(1);
  const int rank = x.rank();
  bool reduce[kMaxRank] = {};
  for (int64_t i = 0; i < axes.NumElements(); ++i) {
    int64_t a = IndexAt(axes, i);
    if (a < -rank || a >= rank)
      return ctx.Error("reduction axis ", a, " is out of range for a tensor of rank ", rank);
    bool& r = reduce[a < 0 ? a + rank : a];
    if (r) return ctx.Error("reduction axis ", a, " is given twice");
    r = true;
  }
  int64_t strides[kMaxRank];
  DenseStrides(x.shape().dims().data(), rank, strides);
  IndexMap<1> kept, reduced;
  Shape out;
  int64_t count = 1;
  for (int d = 0; d < rank; ++d) {
    const int64_t n = x.dim(d);
    if (reduce[d]) {
      count *= n;
      AddStridedDim(&reduced, n, strides[d]);
      if (ctx.state<ReduceState>().keep_dims) out.AddDim(1);
    } else {
      out.AddDim(n);
      AddStridedDim(&kept, n, strides[d]);
    }
  }
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out));
  const int64_t outputs = out.num_elements();
  if (outputs == 0) return OkStatus();
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(outputs, 65535));
  return Dispatch<Types>(x.dtype(), [&](auto tag) {
    using C = ComputeType<typename decltype(tag)::type>;
    using A = std::conditional_t<kIsFloating<C>, float, C>;
    const auto* in = reinterpret_cast<const C*>(x.raw_data());
    auto* out_data = static_cast<C*>(y->raw_data());
    // The reduced dims are the innermost ones (merged into one contiguous run): rows.
    const bool rows = reduced.rank == 1 && reduced.strides[0][0] == 1;
    if constexpr (std::is_same_v<A, float>) {
      if (rows && (count <= 4096 || outputs >= 4096)) {
        ReduceRowsWarp<R, C>
            <<<WarpRowBlocks(outputs), kThreads, 0, dev.stream()>>>(in, out_data, outputs, count);
        return LaunchStatus(ctx, "a reduction");
      }
    }
    if (x.NumElements() <= INT32_MAX) {
      ReduceKernel<R, C, A, uint32_t>
          <<<blocks, kThreads, 0, dev.stream()>>>(in, out_data, static_cast<uint32_t>(outputs),
                                                  kept, reduced, static_cast<uint32_t>(count));
    } else {
      ReduceKernel<R, C, A, int64_t>
          <<<blocks, kThreads, 0, dev.stream()>>>(in, out_data, outputs, kept, reduced, count);
    }
    return LaunchStatus(ctx, "a reduction");
  });
}

bool SupportsBool(const PrepareContext& ctx) {
  return !ctx.inputs.empty() && ctx.inputs[0].dtype == DType::kBool;
}

// Mean of integers truncates on the CPU; the GPU takes the float types for it (over an empty
// axis the float accumulator gives 0/0 = NaN, as the CPU does).
bool SupportsMean(const PrepareContext& ctx) {
  return !ctx.inputs.empty() && IsGpuFloat(ctx.inputs[0].dtype) && SupportsNumber(ctx);
}

// ---- ArgMax, ArgMin ------------------------------------------------------------------------

// out[o, i] = the index along n of the extreme of x[o, :, i], the first on ties; the search
// starts from the type's extreme, so NaNs (which compare false) are passed over, as TF's
// kernel (and the CPU's) does.
template <bool kMax, typename C, typename A, typename Index>
__global__ void ArgKernel(const C* x, Index* y, int64_t outer, int64_t n, int64_t inner, A start) {
  KILN_GRID_LOOP(u, outer * inner) {
    const int64_t o = u / inner, i = u % inner;
    const C* base = x + o * n * inner + i;
    int64_t best = 0;
    A best_v = start;
    for (int64_t k = 0; k < n; ++k) {
      const A v = static_cast<A>(base[k * inner]);
      if (kMax ? v > best_v : v < best_v) {
        best_v = v;
        best = k;
      }
    }
    y[u] = static_cast<Index>(best);
  }
}

template <bool kMax>
Status ComputeArg(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const Tensor& x = ctx.input(0);
  const Tensor& dim_t = ctx.input(1);
  if (dim_t.NumElements() != 1 || x.rank() == 0)
    return ctx.Error("dimension must be a scalar and the input a tensor of rank >= 1");
  int64_t axis = IndexAt(dim_t, 0);
  if (axis < -x.rank() || axis >= x.rank())
    return ctx.Error("dimension ", axis, " is out of range for rank ", x.rank());
  if (axis < 0) axis += x.rank();
  int64_t outer = 1, inner = 1;
  Shape out;
  for (int d = 0; d < x.rank(); ++d) {
    if (d == axis) continue;
    out.AddDim(x.dim(d));
    (d < axis ? outer : inner) *= x.dim(d);
  }
  const int64_t n = x.dim(static_cast<int>(axis));
  if (n == 0) return ctx.Error("reduction over an empty dimension");
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out));
  const int64_t total = y->NumElements();
  if (total == 0) return OkStatus();
  return Dispatch<GpuNumberTypes>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    using A = std::conditional_t<kIsFloating<C>, float, C>;
    const A start = kMax ? static_cast<A>(std::numeric_limits<C>::lowest())
                         : static_cast<A>(std::numeric_limits<C>::max());
    auto launch = [&](auto index) {
      using Index = decltype(index);
      ArgKernel<kMax, C, A, Index><<<Blocks(total), kThreads, 0, dev.stream()>>>(
          reinterpret_cast<const C*>(x.raw_data()), static_cast<Index*>(y->raw_data()), outer, n,
          inner, start);
    };
    if (y->dtype() == DType::kInt64) {
      launch(int64_t{});
    } else {
      launch(int32_t{});
    }
    return LaunchStatus(ctx, kMax ? "ArgMax" : "ArgMin");
  });
}

// A number input, int64 indices out (int32 ones stay on the host, with their consumers).
bool SupportsArg(const PrepareContext& ctx) {
  return !ctx.inputs.empty() && IsGpuNumber(ctx.inputs[0].dtype) && ctx.outputs.size() == 1 &&
         ctx.outputs[0].dtype == DType::kInt64;
}

// ---- TopKV2 -----------------------------------------------------------------------------------

// The k largest of each row of x [rows, cols] in the CPU's order (index::TopKBefore, equal values
// by index): a block per row picks them one at a time, each pass the first element after the
// one picked last, by a block-wide reduction. k passes over the row suit the small k of
// classification heads and beam search.
template <typename C, typename I>
__global__ void TopKRows(const C* x, C* values, I* indices, int64_t rows, int64_t cols, int64_t k) {
  using A = std::conditional_t<kIsFloating<C>, float, C>;
  __shared__ long long warp_best[kThreads / 32];
  __shared__ long long picked;
  const int lane = static_cast<int>(threadIdx.x % 32), warp = static_cast<int>(threadIdx.x / 32);
  const int warps = static_cast<int>(blockDim.x / 32);
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const C* in = x + row * cols;
    // Whether element a comes before element b; -1 stands for none, which comes last.
    auto first = [in](long long a, long long b) {
      if (a < 0 || b < 0) return b < 0 && a >= 0;
      const A va = static_cast<A>(in[a]), vb = static_cast<A>(in[b]);
      return index::TopKBefore(va, vb) || (!index::TopKBefore(vb, va) && a < b);
    };
    long long last = -1;
    for (int64_t j = 0; j < k; ++j) {
      long long best = -1;
      for (long long c = threadIdx.x; c < cols; c += blockDim.x)
        if ((last < 0 || first(last, c)) && first(c, best)) best = c;
      for (int o = 16; o > 0; o >>= 1) {
        const long long other = __shfl_xor_sync(0xffffffffu, best, o);
        if (first(other, best)) best = other;
      }
      if (lane == 0) warp_best[warp] = best;
      __syncthreads();
      if (threadIdx.x == 0) {
        long long b = -1;
        for (int w = 0; w < warps; ++w)
          if (first(warp_best[w], b)) b = warp_best[w];
        picked = b;
        values[row * k + j] = in[b];
        indices[row * k + j] = static_cast<I>(b);
      }
      __syncthreads();
      last = picked;
    }
  }
}

Status ComputeTopK(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const Tensor& x = ctx.input(0);
  const auto& st = ctx.state<index::TopKState>();
  const Result<index::TopKGeom> g =
      index::TopKGeomOf(x, st, st.attr_k >= 0 ? nullptr : &ctx.input(1));
  if (!g.ok()) return ctx.Error(g.status().message());
  KILN_ASSIGN_OR_RETURN(Tensor * values, ctx.AllocateOutput(0, g->shape));
  KILN_ASSIGN_OR_RETURN(Tensor * indices, ctx.AllocateOutput(1, g->shape));
  if (g->k == 0 || g->rows == 0) return OkStatus();
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(g->rows, 65535));
  return Dispatch<GpuNumberTypes>(x.dtype(), [&](auto tag) {
    using C = ComputeType<typename decltype(tag)::type>;
    auto launch = [&](auto index) {
      using I = decltype(index);
      TopKRows<C, I><<<blocks, kThreads, 0, dev.stream()>>>(
          reinterpret_cast<const C*>(x.raw_data()), static_cast<C*>(values->raw_data()),
          static_cast<I*>(indices->raw_data()), g->rows, g->cols, g->k);
    };
    if (indices->dtype() == DType::kInt64) {
      launch(int64_t{});
    } else {
      launch(int32_t{});
    }
    return LaunchStatus(ctx, "TopKV2");
  });
}

// A number input; the indices int32 (TF's default) or int64: they are data a gather reads, not
// shapes.
bool SupportsTopK(const PrepareContext& ctx) {
  return ctx.inputs.size() == 2 && IsGpuNumber(ctx.inputs[0].dtype) && ctx.outputs.size() == 2 &&
         ctx.outputs[0].dtype == ctx.inputs[0].dtype &&
         (ctx.outputs[1].dtype == DType::kInt32 || ctx.outputs[1].dtype == DType::kInt64);
}

constexpr uint32_t kAxes = 1u << 1;  // reduction_indices: read on the host
// ---- Cumsum, Cumprod ---------------------------------------------------------------------------

// x as [outer, n, inner]: a thread per (outer, inner) line walks its n elements in the CPU
// kernel's order and type (fn::Wide: float for the half types), so the sums are the CPU's.
template <bool kProd, typename C>
__global__ void ScanKernel(const C* x, C* y, int64_t lines, int64_t n, int64_t inner,
                           bool exclusive, bool reverse) {
  using Acc = fn::Wide<C>;
  KILN_GRID_LOOP(line, lines) {
    const int64_t row = line / inner, col = line % inner;
    Acc acc = Acc(kProd ? 1 : 0);
    for (int64_t step = 0; step < n; ++step) {
      const int64_t k = reverse ? n - 1 - step : step;
      const int64_t at = (row * n + k) * inner + col;
      const Acc v(x[at]);
      if (exclusive) y[at] = static_cast<C>(acc);
      acc = kProd ? fn::Mul<Acc>()(acc, v) : fn::Add<Acc>()(acc, v);
      if (!exclusive) y[at] = static_cast<C>(acc);
    }
  }
}

// axis (input 1) read on the host; the CPU's checks (scan::ScanGeomOf).
template <bool kProd>
Status ComputeScan(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const Tensor& x = ctx.input(0);
  const Result<scan::ScanGeom> g = scan::ScanGeomOf(x, ctx.input(1));
  if (!g.ok()) return ctx.Error(g.status().message());
  const auto& st = ctx.state<scan::ScanState>();
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x.shape()));
  if (x.NumElements() == 0) return OkStatus();
  const int64_t lines = g->outer * g->inner;
  return Dispatch<GpuNumberTypes>(x.dtype(), [&](auto tag) {
    using C = ComputeType<typename decltype(tag)::type>;
    ScanKernel<kProd, C><<<Blocks(lines), kThreads, 0, dev.stream()>>>(
        reinterpret_cast<const C*>(x.raw_data()), static_cast<C*>(y->raw_data()), lines, g->n,
        g->inner, st.exclusive, st.reverse);
    return LaunchStatus(ctx, kProd ? "Cumprod" : "Cumsum");
  });
}

const KernelEntry kRows[] = {
    {"All", &ComputeReduce<Reduce::kAll, TypeList<bool>>, kAxes, 0, &SupportsBool,
     &CreateReduceState},
    {"Any", &ComputeReduce<Reduce::kAny, TypeList<bool>>, kAxes, 0, &SupportsBool,
     &CreateReduceState},
    {"ArgMax", &ComputeArg<true>, kAxes, 0, &SupportsArg, nullptr},
    {"ArgMin", &ComputeArg<false>, kAxes, 0, &SupportsArg, nullptr},
    {"Cumprod", &ComputeScan<true>, kAxes, 0, &SupportsNumber, nullptr},
    {"Cumsum", &ComputeScan<false>, kAxes, 0, &SupportsNumber, nullptr},
    {"Max", &ComputeReduce<Reduce::kMax>, kAxes, 0, &SupportsNumber, &CreateReduceState},
    {"Mean", &ComputeReduce<Reduce::kMean>, kAxes, 0, &SupportsMean, &CreateReduceState},
    {"Min", &ComputeReduce<Reduce::kMin>, kAxes, 0, &SupportsNumber, &CreateReduceState},
    {"Prod", &ComputeReduce<Reduce::kProd>, kAxes, 0, &SupportsNumber, &CreateReduceState},
    {"Sum", &ComputeReduce<Reduce::kSum>, kAxes, 0, &SupportsNumber, &CreateReduceState},
    {"TopKV2", &ComputeTopK, kAxes, 0, &SupportsTopK, nullptr},
};

}  // namespace

std::span<const KernelEntry> ReduceKernels() { return kRows; }

}  // namespace kiln::exec::cuda
