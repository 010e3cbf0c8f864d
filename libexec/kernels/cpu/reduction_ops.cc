// The CPU kernels of the ops in kernels/reduction_ops.cc.
//
// A reduction is two strided walks (strided_walk.h) over the input: one over the kept dims (with
// the output as a second operand) and one over the reduced dims. When the input's innermost dim
// is reduced, every output element reduces contiguous runs; otherwise a run of outputs is
// updated from contiguous runs of the input for every reduced position. Outputs are independent,
// so threads split them; a long reduction is also cut into fixed blocks whose partial results
// combine in order, so results never depend on the thread count.
#include "kernels/reduction_ops.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/kernel_util.h"
#include "kernels/math_functors.h"
#include "kernels/strided_walk.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using reduction::ReducedDims;
using reduction::ReduceState;
using reduction::ScalarIndex;

// ---- reducers --------------------------------------------------------------------------------

// A reducer over inputs of compute type C: an accumulator type (float for half and bfloat16,
// a 64-bit integer for integer means), its identity (the value of an empty reduction), a step,
// how two partial results combine, and the output value from the accumulator and the count.
template <typename C>
struct SumReducer {
  using Acc = fn::Wide<C>;
  static Acc Identity() { return Acc(0); }
  static Acc Step(Acc a, C v) { return fn::Add<Acc>()(a, Acc(v)); }
  static Acc Combine(Acc a, Acc b) { return fn::Add<Acc>()(a, b); }
  static C Finalize(Acc a, int64_t) { return static_cast<C>(a); }
};

// Integer means sum in 64 bits, so int8 / int32 inputs do not wrap (as TF's kernel).
template <typename C>
using MeanAcc =
    std::conditional_t<kIsInteger<C>, std::conditional_t<std::is_signed_v<C>, int64_t, uint64_t>,
                       fn::Wide<C>>;
template <typename C>
struct MeanReducer {
  using Acc = MeanAcc<C>;
  static Acc Identity() { return Acc(0); }
  static Acc Step(Acc a, C v) { return fn::Add<Acc>()(a, static_cast<Acc>(v)); }
  static Acc Combine(Acc a, Acc b) { return fn::Add<Acc>()(a, b); }
  // An empty float mean is NaN, an empty integer mean 0 (as TF).
  static C Finalize(Acc a, int64_t count) {
    if constexpr (kIsInteger<C>) {
      return count == 0 ? C(0) : static_cast<C>(a / static_cast<Acc>(count));
    } else {
      return static_cast<C>(a / static_cast<Acc>(count));
    }
  }
};

// sqrt(sum of squares), tf.math.reduce_euclidean_norm; float accumulation for half types.
// Complex sums x * conj(x); integers square and sum in their own type (wrapping) and take the
// square root truncated, as TF's Eigen reducer (a sum that wrapped negative gives 0).
template <typename C>
struct EuclideanNormReducer {
  using Acc = fn::Wide<C>;
  static Acc Identity() { return Acc(0); }
  static Acc Step(Acc a, C v) {
    if constexpr (kIsInteger<C>) {
      return fn::Add<C>()(a, fn::Mul<C>()(v, v));
    } else {
      return a + Acc(v) * fn::Conj(Acc(v));
    }
  }
  static Acc Combine(Acc a, Acc b) {
    if constexpr (kIsInteger<C>) {
      return fn::Add<C>()(a, b);
    } else {
      return a + b;
    }
  }
  static C Finalize(Acc a, int64_t) {
    if constexpr (kIsInteger<C>) {
      return a > C(0) ? static_cast<C>(std::sqrt(static_cast<double>(a))) : C(0);
    } else {
      return static_cast<C>(std::sqrt(a));
    }
  }
};

template <typename C>
struct ProdReducer {
  using Acc = fn::Wide<C>;
  static Acc Identity() { return Acc(1); }
  static Acc Step(Acc a, C v) { return fn::Mul<Acc>()(a, Acc(v)); }
  static Acc Combine(Acc a, Acc b) { return fn::Mul<Acc>()(a, b); }
  static C Finalize(Acc a, int64_t) { return static_cast<C>(a); }
};

// NaN wins, as in tf.reduce_max / tf.reduce_min.
template <typename C>
struct MaxReducer {
  using Acc = C;
  static Acc Identity() {
    if constexpr (kIsFloating<C>) return -std::numeric_limits<C>::infinity();
    return std::numeric_limits<C>::lowest();
  }
  static Acc Step(Acc a, C v) {
    if constexpr (kIsFloating<C>) return (v > a || Eigen::numext::isnan(v)) ? v : a;
    return v > a ? v : a;
  }
  static Acc Combine(Acc a, Acc b) { return Step(a, b); }
  static C Finalize(Acc a, int64_t) { return a; }
};
template <typename C>
struct MinReducer {
  using Acc = C;
  static Acc Identity() {
    if constexpr (kIsFloating<C>) return std::numeric_limits<C>::infinity();
    return std::numeric_limits<C>::max();
  }
  static Acc Step(Acc a, C v) {
    if constexpr (kIsFloating<C>) return (v < a || Eigen::numext::isnan(v)) ? v : a;
    return v < a ? v : a;
  }
  static Acc Combine(Acc a, Acc b) { return Step(a, b); }
  static C Finalize(Acc a, int64_t) { return a; }
};

template <typename C>
struct AllReducer {
  using Acc = bool;
  static Acc Identity() { return true; }
  static Acc Step(Acc a, C v) { return a && v; }
  static Acc Combine(Acc a, Acc b) { return a && b; }
  static C Finalize(Acc a, int64_t) { return a; }
};
template <typename C>
struct AnyReducer {
  using Acc = bool;
  static Acc Identity() { return false; }
  static Acc Step(Acc a, C v) { return a || v; }
  static Acc Combine(Acc a, Acc b) { return a || b; }
  static C Finalize(Acc a, int64_t) { return a; }
};

// acc stepped over p[0], p[s], ..., p[(n-1)s]. A contiguous run goes through eight independent
// lanes (vectorised), combined in a fixed order: the result depends on n only.
template <typename R, typename C>
typename R::Acc ReduceRun(typename R::Acc acc, const C* p, int64_t n, int64_t s) {
  using Acc = typename R::Acc;
  if (s != 1 || n < 32) {
    for (int64_t j = 0; j < n; ++j) acc = R::Step(acc, p[j * s]);
    return acc;
  }
  constexpr int kLanes = 8;
  Acc lanes[kLanes];
  for (Acc& l : lanes) l = R::Identity();
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int k = 0; k < kLanes; ++k) lanes[k] = R::Step(lanes[k], p[j + k]);
  for (; j < n; ++j) lanes[0] = R::Step(lanes[0], p[j]);
  Acc run = lanes[0];
  for (int k = 1; k < kLanes; ++k) run = R::Combine(run, lanes[k]);
  return R::Combine(acc, run);
}

// ---- geometry --------------------------------------------------------------------------------

struct ReduceGeometry {
  Shape out_shape;
  StridedPlan<2> kept;     // over the kept dims: operand 0 the output, 1 the input
  StridedPlan<1> reduced;  // over the reduced dims: the input
  bool inner_reduced = false;
};

ReduceGeometry MakeReduceGeometry(const Shape& in, const std::array<bool, kMaxRank>& reduced,
                                  bool keep_dims) {
  ReduceGeometry g;
  const auto in_strides = RowMajorStrides(in);
  Shape kept_shape;
  for (int i = 0; i < in.rank(); ++i) {
    if (!reduced[i]) {
      g.out_shape.AddDim(in.dim(i));
      kept_shape.AddDim(in.dim(i));
    } else if (keep_dims) {
      g.out_shape.AddDim(1);
    }
  }
  const auto out_strides = RowMajorStrides(kept_shape);
  int k = 0;
  for (int i = 0; i < in.rank(); ++i) {
    if (reduced[i]) {
      g.reduced.AddDim(in.dim(i), {in_strides[i]});
    } else {
      g.kept.AddDim(in.dim(i), {out_strides[k++], in_strides[i]});
    }
    if (in.dim(i) != 1) g.inner_reduced = reduced[i];
  }
  return g;
}

// The operand offsets of element `index` of a plan's index space.
template <typename Plan>
typename Plan::Offsets OffsetsOf(const Plan& p, int64_t index) {
  typename Plan::Offsets off = p.offset;
  for (int i = p.rank - 1; i >= 0; --i) {
    const int64_t idx = index % p.dims[i];
    index /= p.dims[i];
    for (size_t k = 0; k < off.size(); ++k) off[k] += idx * p.strides[i][k];
  }
  return off;
}

// Elements per thread below which splitting does not pay, and the block length of long
// reductions (fixed, so the order of partial results is a property of the shape).
constexpr int64_t kMinPerThread = 32768;
constexpr int64_t kBlock = 32768;

template <typename R, typename C>
Status RunReduce(const KernelContext& ctx, const ReduceGeometry& g, const C* in, C* out) {
  using Acc = typename R::Acc;
  const int64_t n_out = g.kept.num_elements;
  const int64_t count = g.reduced.num_elements;
  if (n_out == 0) return OkStatus();
  if (!g.inner_reduced) {
    // Runs of outputs, each updated from contiguous input runs at every reduced position.
    ParallelWalk(
        g.kept, ctx.threads(), std::max<int64_t>(1, kMinPerThread / std::max<int64_t>(1, count)),
        [&](const auto& off, int64_t n, const auto& s) {
          constexpr int64_t kChunk = 256;
          Acc acc[kChunk];
          for (int64_t c0 = 0; c0 < n; c0 += kChunk) {
            const int64_t m = std::min(kChunk, n - c0);
            for (int64_t j = 0; j < m; ++j) acc[j] = R::Identity();
            const C* base = in + off[1] + c0 * s[1];
            WalkRange(g.reduced, 0, count, [&](const auto& roff, int64_t rn, const auto& rs) {
              for (int64_t r = 0; r < rn; ++r) {
                const C* p = base + roff[0] + r * rs[0];
                if (s[1] == 1) {
                  for (int64_t j = 0; j < m; ++j) acc[j] = R::Step(acc[j], p[j]);
                } else {
                  for (int64_t j = 0; j < m; ++j) acc[j] = R::Step(acc[j], p[j * s[1]]);
                }
              }
            });
            C* o = out + off[0] + c0 * s[0];
            for (int64_t j = 0; j < m; ++j) o[j * s[0]] = R::Finalize(acc[j], count);
          }
        });
    return OkStatus();
  }
  // Every output reduces `count` elements: in one go when they fit a block, walking the outputs
  // in runs; else in blocks of kBlock.
  auto reduce_range = [&](const C* base, int64_t begin, int64_t end) {
    Acc acc = R::Identity();
    if (g.reduced.rank <= 1) {  // one run: no walk needed
      const int64_t s = g.reduced.rank == 0 ? 1 : g.reduced.strides[0][0];
      return ReduceRun<R>(acc, base + begin * s, end - begin, s);
    }
    WalkRange(g.reduced, begin, end, [&](const auto& roff, int64_t rn, const auto& rs) {
      acc = ReduceRun<R>(acc, base + roff[0], rn, rs[0]);
    });
    return acc;
  };
  if (count <= kBlock) {
    ParallelWalk(g.kept, ctx.threads(),
                 std::max<int64_t>(1, kMinPerThread / std::max<int64_t>(1, count)),
                 [&](const auto& off, int64_t n, const auto& s) {
                   for (int64_t j = 0; j < n; ++j) {
                     out[off[0] + j * s[0]] =
                         R::Finalize(reduce_range(in + off[1] + j * s[1], 0, count), count);
                   }
                 });
    return OkStatus();
  }
  const int64_t blocks = (count + kBlock - 1) / kBlock;
  KILN_ASSIGN_OR_RETURN(void* mem, ctx.AllocateTemp(sizeof(Acc) * n_out * blocks));
  Acc* partial = static_cast<Acc*>(mem);
  ctx.threads().ParallelFor(n_out * blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      const int64_t b = u % blocks;
      partial[u] = reduce_range(in + OffsetsOf(g.kept, u / blocks)[1], b * kBlock,
                                std::min(count, (b + 1) * kBlock));
    }
  });
  ctx.threads().ParallelFor(n_out, 64, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      Acc acc = partial[o * blocks];
      for (int64_t b = 1; b < blocks; ++b) acc = R::Combine(acc, partial[o * blocks + b]);
      out[OffsetsOf(g.kept, o)[0]] = R::Finalize(acc, count);
    }
  });
  return OkStatus();
}

// ---- compute ---------------------------------------------------------------------------------

template <template <typename> class Reducer, typename List>
Status ComputeReduce(const KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& axes = ctx.input(1);
  if (axes.rank() > 1) {
    return ctx.Error("input 'reduction_indices' must be a scalar or a vector, got shape ",
                     axes.shape().ToString());
  }
  Result<std::array<bool, kMaxRank>> reduced = ReducedDims(axes, in.rank());
  if (!reduced.ok()) {
    return ctx.Error(reduced.status().message(), " (input shape ", in.shape().ToString(), ")");
  }
  const ReduceGeometry g =
      MakeReduceGeometry(in.shape(), *reduced, ctx.state<ReduceState>().keep_dims);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, in.dtype(), g.out_shape));
  return Dispatch<List>(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    return RunReduce<Reducer<C>>(ctx, g, ComputeData<T>(in), MutableComputeData<T>(out));
  });
}

// ---- ArgMax, ArgMin --------------------------------------------------------------------------

// The input viewed as [outer, n, inner]; out[o, i] is the index along n of the extreme value,
// the first on ties. The search starts from the type's extreme, not element 0, so NaNs (which
// compare false) are passed over as TF's kernel does: argmax([nan, 1, 3]) is 2.
template <bool kMax, typename C, typename Index>
void ArgExtreme(const ThreadPool& pool, const C* in, int64_t outer, int64_t n, int64_t inner,
                Index* out) {
  C start;
  if constexpr (std::is_same_v<C, bool>) {
    start = !kMax;
  } else {
    start = kMax ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max();
  }
  pool.ParallelFor(outer * inner, std::max<int64_t>(1, kMinPerThread / std::max<int64_t>(1, n)),
                   [&](int64_t begin, int64_t end) {
                     for (int64_t u = begin; u < end; ++u) {
                       const int64_t o = u / inner, i = u % inner;
                       const C* base = in + o * n * inner + i;
                       int64_t best = 0;
                       C best_v = start;
                       for (int64_t k = 0; k < n; ++k) {
                         const C v = base[k * inner];
                         if (kMax ? v > best_v : v < best_v) {
                           best_v = v;
                           best = k;
                         }
                       }
                       out[u] = static_cast<Index>(best);
                     }
                   });
}

template <bool kMax>
Status ComputeArg(const KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& dim = ctx.input(1);
  if (dim.rank() != 0) {
    return ctx.Error("input 'dimension' must be a scalar, got shape ", dim.shape().ToString());
  }
  const int64_t axis = ScalarIndex(dim);
  if (axis < -in.rank() || axis >= in.rank()) {
    return ctx.Error("input 'dimension' is ", axis, ", expected a value in [", -in.rank(), ", ",
                     in.rank(), ") for input shape ", in.shape().ToString());
  }
  const int a = static_cast<int>(axis < 0 ? axis + in.rank() : axis);
  const int64_t n = in.dim(a);
  Shape out_shape;
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < in.rank(); ++i) {
    if (i == a) continue;
    out_shape.AddDim(in.dim(i));
    (i < a ? outer : inner) *= in.dim(i);
  }
  const DType out_type = ctx.state<TypedOpState<DType>>().value;
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_type, out_shape));
  if (out->NumElements() > 0 && n == 0) {
    return ctx.Error("reduction axis ", a, " is empty in shape ", in.shape().ToString());
  }
  return Dispatch<RealAndBoolTypes>(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    return Dispatch<TypeList<int16_t, uint16_t, int32_t, int64_t>>(out_type, [&](auto index_tag) {
      using Index = typename decltype(index_tag)::type;
      ArgExtreme<kMax>(ctx.threads(), ComputeData<T>(in), outer, n, inner, out->data<Index>());
      return OkStatus();
    });
  });
}

// ---- tables ----------------------------------------------------------------------------------

using BoolTypes = TypeList<bool>;

constexpr KernelEntry kCpu[] = {
    {"Sum", ComputeReduce<SumReducer, NumberTypes>},
    {"Mean", ComputeReduce<MeanReducer, NumberTypes>},
    {"Max", ComputeReduce<MaxReducer, RealTypes>},
    {"Min", ComputeReduce<MinReducer, RealTypes>},
    {"Prod", ComputeReduce<ProdReducer, NumberTypes>},
    {"EuclideanNorm", ComputeReduce<EuclideanNormReducer, NumberTypes>},
    {"All", ComputeReduce<AllReducer, BoolTypes>},
    {"Any", ComputeReduce<AnyReducer, BoolTypes>},
    {"ArgMax", ComputeArg<true>},
    {"ArgMin", ComputeArg<false>},
};

}  // namespace

std::span<const KernelEntry> ReductionCpuKernels() { return kCpu; }

}  // namespace kiln::exec
