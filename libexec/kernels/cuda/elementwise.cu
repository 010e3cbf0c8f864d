// Element-wise ops on the GPU: the CPU's functors (elementwise_functors.h, math_functors.h) run
// per element in a grid-stride loop; binary ops broadcast through an IndexMap whose dims are
// merged where both operands move together, so the common cases are one flat loop. Also
// Select/SelectV2, ClipByValue and AddN.
#include <array>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cuda/launch.cuh"
#include "kernels/elementwise_functors.h"
#include "kernels/math_functors.h"

namespace kiln::exec::cuda {
namespace {

// a / b for floats (RealDiv, and Div on floats).
template <typename C>
struct RealDiv {
  KILN_HD C operator()(C a, C b) const { return a / b; }
};

// ---- launching ------------------------------------------------------------------------------

template <typename F, typename C, typename Out>
__global__ void BinaryFlat(const C* a, const C* b, Out* y, int64_t n, int64_t a_step,
                           int64_t b_step) {
  const F f;
  KILN_GRID_LOOP(i, n) { y[i] = static_cast<Out>(f(a[i * a_step], b[i * b_step])); }
}

// The flat loop N elements at a time, each operand read as one 16-byte access (kA, kB: the
// operand moves; else its one element broadcasts). Memory-bound kernels reach the GPU's
// bandwidth only with wide accesses: 2-byte ones (float16) ran at a quarter of it.
template <typename F, typename C, typename Out, int N, bool kA, bool kB>
__global__ void BinaryFlatVec(const C* a, const C* b, Out* y, int64_t vectors) {
  const F f;
  KILN_GRID_LOOP(i, vectors) {
    Vec<C, N> va, vb;
    if constexpr (kA) va = reinterpret_cast<const Vec<C, N>*>(a)[i];
    if constexpr (kB) vb = reinterpret_cast<const Vec<C, N>*>(b)[i];
    Vec<Out, N> vy;
#pragma unroll
    for (int k = 0; k < N; ++k)
      vy.v[k] = static_cast<Out>(f(kA ? va.v[k] : a[0], kB ? vb.v[k] : b[0]));
    reinterpret_cast<Vec<Out, N>*>(y)[i] = vy;
  }
}

template <typename F, typename C, typename Out, typename I>
__global__ void BinaryStrided(const C* a, const C* b, Out* y, I n, IndexMap<2> map) {
  const F f;
  for (I i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    I off[2];
    map.OffsetsAs(i, off);
    y[i] = static_cast<Out>(f(a[off[0]], b[off[1]]));
  }
}

// The strided loop N output elements at a time where the innermost dim holds whole vectors: an
// operand that moves along it (a_moves, b_moves) is read as one 16-byte access, one that
// broadcasts along it as one element; the index math runs once per vector. Bias and
// normalization broadcasts ([rows, C] + [C], [rows, C] * [rows, 1]) ran element by element.
template <typename F, typename C, typename Out, int N, typename I>
__global__ void BinaryStridedVec(const C* a, const C* b, Out* y, I vectors, IndexMap<2> map,
                                 bool a_moves, bool b_moves) {
  const F f;
  for (I v = blockIdx.x * blockDim.x + threadIdx.x; v < vectors; v += blockDim.x * gridDim.x) {
    I off[2];
    map.OffsetsAs(static_cast<I>(v * N), off);
    Vec<C, N> va, vb;
    if (a_moves) {
      va = *reinterpret_cast<const Vec<C, N>*>(a + off[0]);
    } else {
#pragma unroll
      for (int k = 0; k < N; ++k) va.v[k] = a[off[0]];
    }
    if (b_moves) {
      vb = *reinterpret_cast<const Vec<C, N>*>(b + off[1]);
    } else {
#pragma unroll
      for (int k = 0; k < N; ++k) vb.v[k] = b[off[1]];
    }
    Vec<Out, N> vy;
#pragma unroll
    for (int k = 0; k < N; ++k) vy.v[k] = static_cast<Out>(f(va.v[k], vb.v[k]));
    reinterpret_cast<Vec<Out, N>*>(y)[v] = vy;
  }
}

template <typename C>
__global__ void LeakyReluFlat(const C* x, C* y, int64_t n, float alpha) {
  KILN_GRID_LOOP(i, n) {
    const float v = static_cast<float>(x[i]);
    y[i] = static_cast<C>(v < 0.0f ? v * alpha : v);
  }
}

// ---- broadcasting ---------------------------------------------------------------------------

// The broadcast of K shapes (numpy rules) as an index map with merged dims; an error naming
// the shapes when they do not broadcast.
template <int K>
Status BroadcastMapN(const KernelContext& ctx, const std::span<const int64_t> (&shapes)[K],
                     Shape* out, IndexMap<K>* map) {
  int rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, static_cast<int>(s.size()));
  std::vector<int64_t> dims(rank);
  std::vector<std::array<int64_t, kMaxRank>> strides(K);
  int64_t stride[K];
  for (int k = 0; k < K; ++k) stride[k] = 1;
  for (int d = rank - 1; d >= 0; --d) {
    int64_t dim = 1;
    for (int k = 0; k < K; ++k) {
      const int i = d - (rank - static_cast<int>(shapes[k].size()));
      const int64_t dk = i >= 0 ? shapes[k][i] : 1;
      if (dk != 1 && dim != 1 && dk != dim) {
        std::string text;
        for (const auto& s : shapes)
          text += (text.empty() ? "" : " and ") + Shape::FromDims(s)->ToString();
        return ctx.Error("shapes ", text, " do not broadcast");
      }
      if (dk != 1) dim = dk;
    }
    dims[d] = dim;
    for (int k = 0; k < K; ++k) {
      const int i = d - (rank - static_cast<int>(shapes[k].size()));
      const int64_t dk = i >= 0 ? shapes[k][i] : 1;
      strides[k][d] = dk == 1 ? 0 : stride[k];
      stride[k] *= dk;
    }
  }
  KILN_ASSIGN_OR_RETURN(*out, Shape::FromDims(dims));
  // Merge dim d into the one before it where every operand steps through them as one.
  map->rank = 0;
  for (int d = 0; d < rank; ++d) {
    if (dims[d] == 1) continue;
    const int r = map->rank;
    bool merge = r > 0;
    for (int k = 0; k < K && merge; ++k) merge = map->strides[k][r - 1] == strides[k][d] * dims[d];
    if (merge) {
      map->dims[r - 1] *= dims[d];
      for (int k = 0; k < K; ++k) map->strides[k][r - 1] = strides[k][d];
      continue;
    }
    if (r == kMaxDims) return ctx.Error("broadcasts over more than ", kMaxDims, " dims on the GPU");
    map->dims[r] = dims[d];
    for (int k = 0; k < K; ++k) map->strides[k][r] = strides[k][d];
    map->rank = r + 1;
  }
  return OkStatus();
}

Status BroadcastMap(const KernelContext& ctx, std::span<const int64_t> a,
                    std::span<const int64_t> b, Shape* out, IndexMap<2>* map) {
  const std::span<const int64_t> shapes[2] = {a, b};
  return BroadcastMapN<2>(ctx, shapes, out, map);
}

// Launches BinaryStridedVec where the map allows it (whole vectors along the innermost dim,
// each operand moving along it contiguously or broadcasting, aligned); false where not.
template <typename F, typename C, typename Out>
bool LaunchBinaryStridedVec(cudaStream_t stream, const C* a, const C* b, Out* y, int64_t n,
                            const IndexMap<2>& map) {
  constexpr int N = kVecOf<C>;
  if constexpr (N == 1) {
    return false;
  } else {
    const int r = map.rank - 1;
    if (r < 0 || map.dims[r] % N != 0 || !VecAligned<Out, N>(y)) return false;
    const void* p[2] = {a, b};
    bool moves[2];
    for (int k = 0; k < 2; ++k) {
      const int64_t s = map.strides[k][r];
      moves[k] = s == 1;
      if (s != 0 && s != 1) return false;
      if (!moves[k]) continue;
      if (!VecAligned<C, N>(p[k])) return false;
      for (int d = 0; d < r; ++d)
        if (map.strides[k][d] % N != 0) return false;
    }
    const int64_t vectors = n / N;
    if (n <= INT32_MAX) {
      BinaryStridedVec<F, C, Out, N, uint32_t><<<Blocks(vectors), kThreads, 0, stream>>>(
          a, b, y, static_cast<uint32_t>(vectors), map, moves[0], moves[1]);
    } else {
      BinaryStridedVec<F, C, Out, N, int64_t>
          <<<Blocks(vectors), kThreads, 0, stream>>>(a, b, y, vectors, map, moves[0], moves[1]);
    }
    return true;
  }
}

template <typename F, typename C, typename Out>
void LaunchBinary(cudaStream_t stream, const C* a, const C* b, Out* y, int64_t n,
                  const IndexMap<2>& map) {
  const bool flat =
      map.rank <= 1 && (map.rank == 0 || ((map.strides[0][0] | map.strides[1][0]) & ~1) == 0);
  if (flat) {
    const int64_t sa = map.rank == 0 ? 0 : map.strides[0][0];
    const int64_t sb = map.rank == 0 ? 0 : map.strides[1][0];
    constexpr int N = kVecOf<C>;
    const bool aligned = N > 1 && (sa == 0 || VecAligned<C, N>(a)) &&
                         (sb == 0 || VecAligned<C, N>(b)) && VecAligned<Out, N>(y);
    const int64_t vectors = aligned && (sa | sb) != 0 ? n / N : 0;
    if (vectors > 0) {
      const unsigned blocks = Blocks(vectors);
      if (sa != 0 && sb != 0)
        BinaryFlatVec<F, C, Out, N, true, true><<<blocks, kThreads, 0, stream>>>(a, b, y, vectors);
      else if (sa != 0)
        BinaryFlatVec<F, C, Out, N, true, false><<<blocks, kThreads, 0, stream>>>(a, b, y, vectors);
      else
        BinaryFlatVec<F, C, Out, N, false, true><<<blocks, kThreads, 0, stream>>>(a, b, y, vectors);
    }
    const int64_t done = vectors * N;
    if (done < n)
      BinaryFlat<F, C, Out><<<Blocks(n - done), kThreads, 0, stream>>>(a + done * sa, b + done * sb,
                                                                       y + done, n - done, sa, sb);
  } else if (LaunchBinaryStridedVec<F, C, Out>(stream, a, b, y, n, map)) {
    return;
  } else if (n <= INT32_MAX) {  // every offset is below n: 32-bit index math
    BinaryStrided<F, C, Out, uint32_t>
        <<<Blocks(n), kThreads, 0, stream>>>(a, b, y, static_cast<uint32_t>(n), map);
  } else {
    BinaryStrided<F, C, Out, int64_t><<<Blocks(n), kThreads, 0, stream>>>(a, b, y, n, map);
  }
}

// Out: bool for comparisons and logic, else the operands' type.
template <template <typename> class F, typename C>
using BinaryOut = std::conditional_t<std::is_same_v<decltype(F<C>()(C(), C())), bool>, bool, C>;

template <template <typename> class F, typename Types>
Status Binary(const KernelContext& ctx, const Tensor& a, const Tensor& b,
              std::span<const int64_t> b_dims) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  Shape out;
  IndexMap<2> map;
  KILN_RETURN_IF_ERROR(BroadcastMap(ctx, a.shape().dims(), b_dims, &out, &map));
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out));
  const int64_t n = out.num_elements();
  if (n == 0) return OkStatus();
  return Dispatch<Types>(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    using Out = BinaryOut<F, C>;
    LaunchBinary<F<C>, C, Out>(dev.stream(), reinterpret_cast<const C*>(a.raw_data()),
                               reinterpret_cast<const C*>(b.raw_data()),
                               static_cast<Out*>(y->raw_data()), n, map);
    return LaunchStatus(ctx, "an element-wise kernel");
  });
}

template <template <typename> class F, typename Types>
Status ComputeBinary(const KernelContext& ctx) {
  return Binary<F, Types>(ctx, ctx.input(0), ctx.input(1), ctx.input(1).shape().dims());
}

// BiasAdd: the bias broadcasts along the channel dim (last for NHWC, 1 for NCHW).
struct BiasState final : OpState {
  bool channels_first = false;
};
Status CreateBiasState(PrepareContext& ctx) {
  KILN_ASSIGN_OR_RETURN(std::string format, ctx.attrs.GetString("data_format", "NHWC"));
  auto state = std::make_shared<BiasState>();
  state->channels_first = format.size() >= 2 && format[1] == 'C';
  ctx.state = state;
  return OkStatus();
}
Status ComputeBiasAdd(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& bias = ctx.input(1);
  std::vector<int64_t> dims = {bias.NumElements()};
  if (ctx.state<BiasState>().channels_first)
    for (int d = 2; d < x.rank(); ++d) dims.push_back(1);
  return Binary<fn::Add, GpuNumberTypes>(ctx, x, bias, dims);
}

template <template <typename> class F, typename Types>
Status ComputeUnary(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x.shape()));
  const int64_t n = x.NumElements();
  if (n == 0) return OkStatus();
  return Dispatch<Types>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    using Out = std::conditional_t<std::is_same_v<decltype(F<C>()(C())), bool>, bool, C>;
    LaunchUnary<F<C>, C, Out>(dev.stream(), reinterpret_cast<const C*>(x.raw_data()),
                              static_cast<Out*>(y->raw_data()), n);
    return LaunchStatus(ctx, "an element-wise kernel");
  });
}

struct AlphaState final : OpState {
  float alpha = 0.2f;
};
Status CreateAlphaState(PrepareContext& ctx) {
  auto state = std::make_shared<AlphaState>();
  KILN_ASSIGN_OR_RETURN(state->alpha, ctx.attrs.GetFloat("alpha", 0.2f));
  ctx.state = state;
  return OkStatus();
}
Status ComputeLeakyRelu(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x.shape()));
  const int64_t n = x.NumElements();
  if (n == 0) return OkStatus();
  const float alpha = ctx.state<AlphaState>().alpha;
  return Dispatch<GpuFloatTypes>(x.dtype(), [&](auto tag) {
    using C = ComputeType<typename decltype(tag)::type>;
    LeakyReluFlat<C><<<Blocks(n), kThreads, 0, dev.stream()>>>(
        reinterpret_cast<const C*>(x.raw_data()), static_cast<C*>(y->raw_data()), n, alpha);
    return LaunchStatus(ctx, "LeakyRelu");
  });
}

// ---- Select, SelectV2 -----------------------------------------------------------------------

template <typename W>
__global__ void SelectKernel(const bool* cond, const W* t, const W* e, W* y, int64_t n,
                             IndexMap<3> map) {
  KILN_GRID_LOOP(i, n) {
    int64_t off[3];
    map.Offsets(i, off);
    y[i] = cond[off[0]] ? t[off[1]] : e[off[2]];
  }
}

// SelectV2 broadcasts all three; Select (v1) takes a condition of the values' shape or a vector
// along their first dim.
Status ComputeSelect(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const Tensor& c = ctx.input(0);
  const Tensor& t = ctx.input(1);
  const Tensor& e = ctx.input(2);
  std::vector<int64_t> cond_dims = c.shape().ToVector();
  const bool v1 = c.rank() == 1 && t.rank() > 1;  // Select's vector form
  if (v1) cond_dims.resize(static_cast<size_t>(t.rank()), 1);
  const std::span<const int64_t> shapes[3] = {cond_dims, t.shape().dims(), e.shape().dims()};
  Shape out;
  IndexMap<3> map;
  KILN_RETURN_IF_ERROR(BroadcastMapN<3>(ctx, shapes, &out, &map));
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out));
  const int64_t n = y->NumElements();
  if (n == 0) return OkStatus();
  const bool launched = ForWord(DTypeSize(t.dtype()), [&](auto word) {
    using W = decltype(word);
    SelectKernel<W><<<Blocks(n), kThreads, 0, dev.stream()>>>(
        static_cast<const bool*>(c.raw_data()), static_cast<const W*>(t.raw_data()),
        static_cast<const W*>(e.raw_data()), static_cast<W*>(y->raw_data()), n, map);
  });
  if (!launched) return ctx.Error("no GPU select for ", DTypeShortName(t.dtype()));
  return LaunchStatus(ctx, "Select");
}

bool SupportsSelect(const PrepareContext& ctx) {
  if (ctx.inputs.size() != 3 || ctx.inputs[0].dtype != DType::kBool) return false;
  const DType t = ctx.inputs[1].dtype;
  const size_t b = DTypeIsPod(t) ? DTypeSize(t) : 0;
  return b == 1 || b == 2 || b == 4 || b == 8;
}

// ---- ClipByValue, AddN ----------------------------------------------------------------------

// ClipByValue: bounds of t's shape, or scalars (step 0 repeats them); the CPU's functor.
template <typename C>
__global__ void ClipKernel(const C* x, const C* lo, const C* hi, C* y, int64_t n, int64_t lo_step,
                           int64_t hi_step) {
  const fn::Clip<C> f;
  KILN_GRID_LOOP(i, n) { y[i] = f(x[i], lo[i * lo_step], hi[i * hi_step]); }
}

Status ComputeClipByValue(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const Tensor& x = ctx.input(0);
  const Tensor& lo = ctx.input(1);
  const Tensor& hi = ctx.input(2);
  for (const Tensor* bound : {&lo, &hi}) {
    if (bound->rank() != 0 && bound->shape() != x.shape())
      return ctx.Error("clip_value_min and clip_value_max must be scalars or have the shape of t ",
                       x.shape().ToString(), ", got ", lo.shape().ToString(), " and ",
                       hi.shape().ToString());
  }
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x.shape()));
  const int64_t n = y->NumElements();
  if (n == 0) return OkStatus();
  return Dispatch<GpuNumberTypes>(x.dtype(), [&](auto tag) {
    using C = ComputeType<typename decltype(tag)::type>;
    ClipKernel<C><<<Blocks(n), kThreads, 0, dev.stream()>>>(
        reinterpret_cast<const C*>(x.raw_data()), reinterpret_cast<const C*>(lo.raw_data()),
        reinterpret_cast<const C*>(hi.raw_data()), static_cast<C*>(y->raw_data()), n,
        lo.rank() == 0 ? 0 : 1, hi.rank() == 0 ? 0 : 1);
    return LaunchStatus(ctx, "ClipByValue");
  });
}

// AddN: up to kAddNInputs inputs a pass, summed in input order in float (half types) and
// rounded once, as the CPU does; more inputs take further passes that start from the sum so
// far (rounded to the type between passes).
constexpr int kAddNInputs = 16;
template <typename C>
struct AddNInputs {
  const C* in[kAddNInputs];
  int count;
};

template <typename C, typename Acc>
__global__ void AddNKernel(AddNInputs<C> a, C* y, int64_t n) {
  KILN_GRID_LOOP(i, n) {
    Acc acc = static_cast<Acc>(a.in[0][i]);
    for (int k = 1; k < a.count; ++k) acc = acc + static_cast<Acc>(a.in[k][i]);
    y[i] = static_cast<C>(acc);
  }
}

Status ComputeAddN(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const Tensor& first = ctx.input(0);
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    if (ctx.input(i).shape() != first.shape())
      return ctx.Error("all inputs must have the same shape: input 0 has ",
                       first.shape().ToString(), ", input ", i, " has ",
                       ctx.input(i).shape().ToString());
  }
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, first.shape()));
  const int64_t n = y->NumElements();
  if (n == 0) return OkStatus();
  return Dispatch<GpuNumberTypes>(first.dtype(), [&](auto tag) -> Status {
    using C = ComputeType<typename decltype(tag)::type>;
    using Acc = std::conditional_t<std::is_same_v<C, int64_t>, int64_t, float>;
    C* out = static_cast<C*>(y->raw_data());
    int next = 0;
    while (next < ctx.num_inputs()) {
      AddNInputs<C> a{};
      if (next > 0) a.in[a.count++] = out;  // the sum so far
      while (a.count < kAddNInputs && next < ctx.num_inputs())
        a.in[a.count++] = reinterpret_cast<const C*>(ctx.input(next++).raw_data());
      AddNKernel<C, Acc><<<Blocks(n), kThreads, 0, dev.stream()>>>(a, out, n);
      KILN_RETURN_IF_ERROR(LaunchStatus(ctx, "AddN"));
    }
    return OkStatus();
  });
}

// ---- supports -------------------------------------------------------------------------------

// Comparisons: number operands, a bool result.
bool SupportsCompare(const PrepareContext& ctx) {
  return ctx.inputs.size() == 2 && IsGpuNumber(ctx.inputs[0].dtype) &&
         ctx.inputs[1].dtype == ctx.inputs[0].dtype;
}
bool SupportsLogic(const PrepareContext& ctx) {
  for (const TensorSpec& s : ctx.inputs)
    if (s.dtype != DType::kBool) return false;
  return true;
}
bool SupportsFloatTest(const PrepareContext& ctx) {
  return ctx.inputs.size() == 1 && IsGpuFloat(ctx.inputs[0].dtype);
}

using Numbers = GpuNumberTypes;
using Floats = GpuFloatTypes;
using Bools = TypeList<bool>;

#define KILN_BINARY(op, F, Types, supports) \
  KernelEntry { op, &ComputeBinary<F, Types>, 0, 0, supports, nullptr }
#define KILN_UNARY(op, F, Types, supports) \
  KernelEntry { op, &ComputeUnary<F, Types>, 0, 0, supports, nullptr }

const KernelEntry kRows[] = {
    KILN_BINARY("Add", fn::Add, Numbers, &SupportsNumber),
    KILN_BINARY("AddV2", fn::Add, Numbers, &SupportsNumber),
    KILN_BINARY("Sub", fn::Sub, Numbers, &SupportsNumber),
    KILN_BINARY("Mul", fn::Mul, Numbers, &SupportsNumber),
    KILN_BINARY("RealDiv", RealDiv, Floats, &SupportsFloat),
    KILN_BINARY("Div", RealDiv, Floats, &SupportsFloat),
    KILN_BINARY("Maximum", fn::Maximum, Numbers, &SupportsNumber),
    KILN_BINARY("Minimum", fn::Minimum, Numbers, &SupportsNumber),
    KILN_BINARY("Pow", fn::Pow, Floats, &SupportsFloat),
    KILN_BINARY("SquaredDifference", fn::SquaredDifference, Floats, &SupportsFloat),
    KILN_BINARY("FloorDiv", fn::FloorDiv, Floats, &SupportsFloat),
    KILN_BINARY("FloorMod", fn::FloorMod, Floats, &SupportsFloat),
    KILN_BINARY("Less", fn::Less, Numbers, &SupportsCompare),
    KILN_BINARY("LessEqual", fn::LessEqual, Numbers, &SupportsCompare),
    KILN_BINARY("Greater", fn::Greater, Numbers, &SupportsCompare),
    KILN_BINARY("GreaterEqual", fn::GreaterEqual, Numbers, &SupportsCompare),
    KILN_BINARY("Equal", fn::Equal, Numbers, &SupportsCompare),
    KILN_BINARY("NotEqual", fn::NotEqual, Numbers, &SupportsCompare),
    KILN_BINARY("LogicalAnd", fn::LogicalAnd, Bools, &SupportsLogic),
    KILN_BINARY("LogicalOr", fn::LogicalOr, Bools, &SupportsLogic),
    KILN_BINARY("Atan2", fn::Atan2, Floats, &SupportsFloat),
    KILN_BINARY("DivNoNan", fn::DivNoNan, Floats, &SupportsFloat),
    KILN_BINARY("MulNoNan", fn::MulNoNan, Floats, &SupportsFloat),
    KILN_BINARY("Xdivy", fn::Xdivy, Floats, &SupportsFloat),
    KILN_BINARY("Xlogy", fn::Xlogy, Floats, &SupportsFloat),
    KILN_BINARY("Xlog1py", fn::Xlog1py, Floats, &SupportsFloat),
    KernelEntry{"BiasAdd", &ComputeBiasAdd, 0, 0, &SupportsNumber, &CreateBiasState},
    KILN_UNARY("Neg", fn::Neg, Numbers, &SupportsNumber),
    KILN_UNARY("Abs", fn::Abs, Numbers, &SupportsNumber),
    KILN_UNARY("Square", fn::Square, Numbers, &SupportsNumber),
    KILN_UNARY("Relu", fn::Relu, Numbers, &SupportsNumber),
    KILN_UNARY("Relu6", fn::Relu6, Floats, &SupportsFloat),
    KILN_UNARY("Elu", fn::Elu, Floats, &SupportsFloat),
    KILN_UNARY("Selu", fn::Selu, Floats, &SupportsFloat),
    KILN_UNARY("Sqrt", fn::Sqrt, Floats, &SupportsFloat),
    KILN_UNARY("Rsqrt", fn::Rsqrt, Floats, &SupportsFloat),
    KILN_UNARY("Exp", fn::Exp, Floats, &SupportsFloat),
    KILN_UNARY("Log", fn::Log, Floats, &SupportsFloat),
    KILN_UNARY("Tanh", fn::Tanh, Floats, &SupportsFloat),
    KILN_UNARY("Sigmoid", fn::Sigmoid, Floats, &SupportsFloat),
    KILN_UNARY("Reciprocal", fn::Reciprocal, Floats, &SupportsFloat),
    KILN_UNARY("Softplus", fn::Softplus, Floats, &SupportsFloat),
    KILN_UNARY("Softsign", fn::Softsign, Floats, &SupportsFloat),
    KILN_UNARY("Erf", fn::Erf, Floats, &SupportsFloat),
    KILN_UNARY("Erfc", fn::Erfc, Floats, &SupportsFloat),
    KILN_UNARY("Sin", fn::Sin, Floats, &SupportsFloat),
    KILN_UNARY("Cos", fn::Cos, Floats, &SupportsFloat),
    KILN_UNARY("Floor", fn::Floor, Floats, &SupportsFloat),
    KILN_UNARY("Ceil", fn::Ceil, Floats, &SupportsFloat),
    KILN_UNARY("Log1p", fn::Log1p, Floats, &SupportsFloat),
    KILN_UNARY("Expm1", fn::Expm1, Floats, &SupportsFloat),
    KILN_UNARY("Tan", fn::Tan, Floats, &SupportsFloat),
    KILN_UNARY("Asin", fn::Asin, Floats, &SupportsFloat),
    KILN_UNARY("Acos", fn::Acos, Floats, &SupportsFloat),
    KILN_UNARY("Atan", fn::Atan, Floats, &SupportsFloat),
    KILN_UNARY("Sinh", fn::Sinh, Floats, &SupportsFloat),
    KILN_UNARY("Cosh", fn::Cosh, Floats, &SupportsFloat),
    KILN_UNARY("Asinh", fn::Asinh, Floats, &SupportsFloat),
    KILN_UNARY("Acosh", fn::Acosh, Floats, &SupportsFloat),
    KILN_UNARY("Atanh", fn::Atanh, Floats, &SupportsFloat),
    KILN_UNARY("Rint", fn::Rint, Floats, &SupportsFloat),
    KILN_UNARY("Round", fn::Round, Numbers, &SupportsNumber),
    KILN_UNARY("Sign", fn::Sign, Numbers, &SupportsNumber),
    KILN_UNARY("IsNan", fn::IsNan, Floats, &SupportsFloatTest),
    KILN_UNARY("IsInf", fn::IsInf, Floats, &SupportsFloatTest),
    KILN_UNARY("IsFinite", fn::IsFinite, Floats, &SupportsFloatTest),
    KILN_UNARY("LogicalNot", fn::LogicalNot, Bools, &SupportsLogic),
    KernelEntry{"LeakyRelu", &ComputeLeakyRelu, 0, 0, &SupportsFloat, &CreateAlphaState},
    KernelEntry{"Select", &ComputeSelect, 0, 0, &SupportsSelect, nullptr},
    KernelEntry{"ClipByValue", &ComputeClipByValue, 0, 0, &SupportsNumber, nullptr},
    KernelEntry{"AddN", &ComputeAddN, 0, 0, &SupportsNumber, nullptr},
    KernelEntry{"SelectV2", &ComputeSelect, 0, 0, &SupportsSelect, nullptr},
};

}  // namespace

std::span<const KernelEntry> ElementwiseKernels() { return kRows; }

}  // namespace kiln::exec::cuda
