// Ops that move bytes on the GPU: Transpose, Slice, StridedSlice, BroadcastTo, ReverseV2,
// DepthToSpace and SpaceToDepth (strided gathers), GatherV2, GatherNd, MatrixBandPart, ConcatV2
// and Pack (one 2-D copy per input), Cast; and the views (Reshape, ExpandDims, Squeeze,
// Identity, Shape, EnsureShape...), whose CPU kernels only relabel a buffer and so serve the GPU
// as they are.
#include <vector>

#include "kernels/array_util.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/math_ops.h"
#include "kernels/matrix_ops.h"
#include "kernels/reverse_ops.h"
#include "kernels/space_ops.h"
#include "kernels/strided_slice.h"

namespace kiln::exec::cuda {
namespace {

// ---- Transpose ------------------------------------------------------------------------------

template <typename W, typename I>
__global__ void Gather(const W* x, W* y, I n, IndexMap<1> map) {
  for (I i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    I off[1];
    map.OffsetsAs(i, off);
    y[i] = x[off[0]];
  }
}

// y[i] = src[map(i)] for n elements of elem_bytes: one copy when the map keeps the order.
Status CopyMapped(const KernelContext& ctx, const void* src, void* y, int64_t n, IndexMap<1> map,
                  size_t elem_bytes) {
  if (n == 0) return OkStatus();
  WidenCopy(&map, &n, &elem_bytes, src, y);
  cudaStream_t stream = DeviceOf(ctx).stream();
  if (map.rank == 0 || (map.rank == 1 && map.strides[0][0] == 1)) {
    const cudaError_t err = cudaMemcpyAsync(y, src, static_cast<size_t>(n) * elem_bytes,
                                            cudaMemcpyDeviceToDevice, stream);
    return err == cudaSuccess ? OkStatus() : Check(err, "device copy");
  }
  // 32-bit index math (launch.cuh, OffsetsAs) when every index and source offset fits in it
  // and no stride is negative: a reversed StridedSlice's offsets would wrap in uint32_t (the
  // GPU op tester caught that as an illegal address).
  int64_t last = 0;
  bool forward = true;
  for (int d = 0; d < map.rank; ++d) {
    last += (map.dims[d] - 1) * map.strides[0][d];
    forward = forward && map.strides[0][d] >= 0;
  }
  const bool narrow = forward && n <= INT32_MAX && last <= INT32_MAX;
  const bool launched = ForWord(elem_bytes, [&](auto word) {
    using W = decltype(word);
    const auto* x = static_cast<const W*>(src);
    if (narrow) {
      Gather<W, uint32_t><<<Blocks(n), kThreads, 0, stream>>>(x, static_cast<W*>(y),
                                                              static_cast<uint32_t>(n), map);
    } else {
      Gather<W, int64_t><<<Blocks(n), kThreads, 0, stream>>>(x, static_cast<W*>(y), n, map);
    }
  });
  if (!launched) return ctx.Error("no GPU copy for elements of ", elem_bytes, " bytes");
  return LaunchStatus(ctx, "a strided copy");
}

Status ComputeTranspose(const KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(DeviceOf(ctx).Activate());
  const Tensor& x = ctx.input(0);
  const Tensor& perm_t = ctx.input(1);
  const int rank = x.rank();
  if (perm_t.NumElements() != rank)
    return ctx.Error("perm has ", perm_t.NumElements(), " entries for a tensor of rank ", rank);
  std::vector<int> perm(static_cast<size_t>(rank));
  Shape out;
  for (int d = 0; d < rank; ++d) {
    int64_t p = IndexAt(perm_t, d);
    if (p < -rank || p >= rank) return ctx.Error("perm is not a permutation of 0..", rank - 1);
    if (p < 0) p += rank;  // counts from the end, as TF's kernel reads it
    perm[d] = static_cast<int>(p);
    out.AddDim(x.dim(static_cast<int>(p)));
  }
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out));
  return LaunchPermute(ctx, x.raw_data(), y->raw_data(), x.shape().dims(), perm,
                       DTypeSize(x.dtype()));
}

// ---- Slice, StridedSlice, GatherV2 -----------------------------------------------------------

// y = the elements of x at base + map(i): a slice of any strides.
Status CopyStrided(const KernelContext& ctx, const Tensor& x, int64_t base, const IndexMap<1>& map,
                   const Shape& out) {
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out));
  const int64_t n = y->NumElements();
  const size_t b = DTypeSize(x.dtype());
  const char* src = static_cast<const char*>(x.raw_data()) + base * static_cast<int64_t>(b);
  return CopyMapped(ctx, src, y->raw_data(), n, map, b);
}

Status ComputeSlice(const KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(DeviceOf(ctx).Activate());
  const Tensor& x = ctx.input(0);
  const std::vector<int64_t> begin = IndexValues(ctx.input(1)), size = IndexValues(ctx.input(2));
  if (static_cast<int>(begin.size()) != x.rank() || static_cast<int>(size.size()) != x.rank())
    return ctx.Error("begin and size must have ", x.rank(), " entries");
  int64_t strides[kMaxRank];
  DenseStrides(x.shape().dims().data(), x.rank(), strides);
  IndexMap<1> map;
  Shape out;
  int64_t base = 0;
  for (int d = 0; d < x.rank(); ++d) {
    const int64_t n = size[d] == -1 ? x.dim(d) - begin[d] : size[d];
    if (begin[d] < 0 || n < 0 || begin[d] + n > x.dim(d))
      return ctx.Error("slice [", begin[d], ", ", begin[d] + n, ") of dim ", d, " (size ", x.dim(d),
                       ") is out of range");
    out.AddDim(n);
    base += begin[d] * strides[d];
    AddStridedDim(&map, n, strides[d]);
  }
  return CopyStrided(ctx, x, out.num_elements() == 0 ? 0 : base, map, out);
}

struct MasksState final : OpState {
  SliceMasks masks;
};
Status CreateStridedSliceState(PrepareContext& ctx) {
  auto st = std::make_shared<MasksState>();
  KILN_ASSIGN_OR_RETURN(st->masks.begin, ctx.attrs.GetInt("begin_mask", 0));
  KILN_ASSIGN_OR_RETURN(st->masks.end, ctx.attrs.GetInt("end_mask", 0));
  KILN_ASSIGN_OR_RETURN(st->masks.ellipsis, ctx.attrs.GetInt("ellipsis_mask", 0));
  KILN_ASSIGN_OR_RETURN(st->masks.new_axis, ctx.attrs.GetInt("new_axis_mask", 0));
  KILN_ASSIGN_OR_RETURN(st->masks.shrink, ctx.attrs.GetInt("shrink_axis_mask", 0));
  ctx.state = st;
  return OkStatus();
}

Status ComputeStridedSlice(const KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(DeviceOf(ctx).Activate());
  const Tensor& x = ctx.input(0);
  const std::vector<int64_t> begin = IndexValues(ctx.input(1)), end = IndexValues(ctx.input(2)),
                             strides = IndexValues(ctx.input(3));
  if (begin.size() != strides.size() || end.size() != strides.size())
    return ctx.Error("expected begin, end and strides to be vectors of equal length");
  DenseSlice dense;
  Status s =
      AnalyzeStridedSlice(x.shape().dims(), begin.data(), end.data(), strides.data(),
                          static_cast<int>(strides.size()), ctx.state<MasksState>().masks, &dense);
  if (!s.ok()) return ctx.Error(s.message());
  KILN_ASSIGN_OR_RETURN(Shape out, Shape::FromDims(dense.final_dims));
  int64_t in_strides[kMaxRank];
  DenseStrides(x.shape().dims().data(), x.rank(), in_strides);
  IndexMap<1> map;
  int64_t base = 0;
  for (int d = 0; d < x.rank(); ++d) {
    AddStridedDim(&map, dense.size[d], in_strides[d] * dense.stride[d]);
    base += dense.begin[d] * in_strides[d];
  }
  return CopyStrided(ctx, x, out.num_elements() == 0 ? 0 : base, map, out);
}

// GatherV2: out[b, o, j, :] = params[b, o, indices[b, j], :]; an index out of range gives zeros
// (as TF's GPU kernel; the CPU's fails the call).
template <typename W, typename I>
__global__ void GatherRows(const W* params, const I* idx, W* out, int64_t total, int64_t outer,
                           int64_t n, int64_t limit, int64_t inner) {
  KILN_GRID_LOOP(i, total) {
    const int64_t k = i % inner;
    const int64_t r = i / inner;  // (b * outer + o) * n + j
    const int64_t j = r % n, bo = r / n, b = bo / outer;
    const int64_t row = static_cast<int64_t>(idx[b * n + j]);
    out[i] = row >= 0 && row < limit ? params[(bo * limit + row) * inner + k] : W(0);
  }
}

struct GatherState final : OpState {
  int64_t batch_dims = 0;
};
Status CreateGatherState(PrepareContext& ctx) {
  auto st = std::make_shared<GatherState>();
  KILN_ASSIGN_OR_RETURN(st->batch_dims, ctx.attrs.GetInt("batch_dims", 0));
  ctx.state = st;
  return OkStatus();
}

Status ComputeGather(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const Tensor& params = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const std::vector<int64_t> axis_v = IndexValues(ctx.input(2));
  if (axis_v.size() != 1 || params.rank() == 0) return ctx.Error("axis must be a scalar");
  const int64_t axis = axis_v[0] < 0 ? axis_v[0] + params.rank() : axis_v[0];
  if (axis < 0 || axis >= params.rank()) return ctx.Error("axis ", axis_v[0], " is out of range");
  int64_t bd = ctx.state<GatherState>().batch_dims;
  if (bd < 0) bd += indices.rank();
  if (bd < 0 || bd > axis || bd > indices.rank())
    return ctx.Error("batch_dims ", bd, " must be in [0, min(axis, indices rank)]");
  for (int d = 0; d < bd; ++d)
    if (params.dim(d) != indices.dim(d))
      return ctx.Error("params.shape[", d, "]: ", params.dim(d),
                       " should be equal to indices.shape[", d, "]: ", indices.dim(d));
  int64_t outer = 1, inner = 1, n = 1;
  Shape out;
  for (int d = 0; d < axis; ++d) {
    if (d >= bd) outer *= params.dim(d);
    out.AddDim(params.dim(d));
  }
  for (int d = static_cast<int>(bd); d < indices.rank(); ++d) {
    n *= indices.dim(d);
    out.AddDim(indices.dim(d));
  }
  for (int d = static_cast<int>(axis) + 1; d < params.rank(); ++d) {
    inner *= params.dim(d);
    out.AddDim(params.dim(d));
  }
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out));
  const int64_t total = y->NumElements();
  if (total == 0) return OkStatus();
  const int64_t limit = params.dim(static_cast<int>(axis));
  auto launch = [&](auto word, auto index) {
    using W = decltype(word);
    using I = decltype(index);
    GatherRows<W, I><<<Blocks(total), kThreads, 0, dev.stream()>>>(
        static_cast<const W*>(params.raw_data()), static_cast<const I*>(indices.raw_data()),
        static_cast<W*>(y->raw_data()), total, outer, n, limit, inner);
  };
  const bool i64 = indices.dtype() == DType::kInt64;
  const bool launched = ForWord(DTypeSize(params.dtype()), [&](auto word) {
    if (i64) {
      launch(word, int64_t{});
    } else {
      launch(word, int32_t{});
    }
  });
  if (!launched) return ctx.Error("no GPU gather for ", DTypeShortName(params.dtype()));
  return LaunchStatus(ctx, "GatherV2");
}

// GatherNd: out[r, :] = params[indices[r, 0..q), :] over the params' first q dims (`dims`); an
// index vector out of range gives zeros (TF's GPU kernel; the CPU's fails the call unless
// bad_indices_policy is IGNORE).
struct NdDims {
  int64_t d[kMaxRank];
};
template <typename W, typename I>
__global__ void GatherNdRows(const W* params, const I* idx, W* out, int64_t total, int q,
                             NdDims dims, int64_t inner) {
  KILN_GRID_LOOP(i, total) {
    const int64_t k = i % inner, r = i / inner;
    int64_t row = 0;
    bool in_range = true;
    for (int j = 0; j < q; ++j) {
      const auto c = static_cast<int64_t>(idx[r * q + j]);
      in_range = in_range && c >= 0 && c < dims.d[j];
      row = row * dims.d[j] + c;
    }
    out[i] = in_range ? params[row * inner + k] : W(0);
  }
}

Status ComputeGatherNd(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const Tensor& params = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  if (indices.rank() == 0) return ctx.Error("input 'indices' must have rank at least 1");
  const int64_t q = indices.dim(indices.rank() - 1);
  if (q > params.rank())
    return ctx.Error("index innermost dimension length must be <= params rank; saw: ", q, " vs. ",
                     params.rank());
  Shape out;
  for (int d = 0; d + 1 < indices.rank(); ++d) out.AddDim(indices.dim(d));
  NdDims dims{};
  int64_t inner = 1;
  for (int d = 0; d < params.rank(); ++d) {
    if (d < q) {
      dims.d[d] = params.dim(d);
    } else {
      inner *= params.dim(d);
      out.AddDim(params.dim(d));
    }
  }
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out));
  const int64_t total = y->NumElements();
  if (total == 0) return OkStatus();
  const bool i64 = indices.dtype() == DType::kInt64;
  const bool launched = ForWord(DTypeSize(params.dtype()), [&](auto word) {
    using W = decltype(word);
    auto launch = [&](auto index) {
      using I = decltype(index);
      GatherNdRows<W, I><<<Blocks(total), kThreads, 0, dev.stream()>>>(
          static_cast<const W*>(params.raw_data()), static_cast<const I*>(indices.raw_data()),
          static_cast<W*>(y->raw_data()), total, static_cast<int>(q), dims, inner);
    };
    if (i64) {
      launch(int64_t{});
    } else {
      launch(int32_t{});
    }
  });
  if (!launched) return ctx.Error("no GPU gather for ", DTypeShortName(params.dtype()));
  return LaunchStatus(ctx, "GatherNd");
}

bool SupportsGatherNd(const PrepareContext& ctx) {
  return ctx.inputs.size() == 2 && SupportsWords(ctx) &&
         (ctx.inputs[1].dtype == DType::kInt32 || ctx.inputs[1].dtype == DType::kInt64);
}

// ---- MatrixBandPart ---------------------------------------------------------------------------

// y = x where (row, col) of each matrix is in the band (matrix::InBand, the CPU's test), else 0:
// a causal attention mask's lower triangle.
template <typename W>
__global__ void BandPart(const W* x, W* y, int64_t n, int64_t rows, int64_t cols, int64_t lower,
                         int64_t upper) {
  KILN_GRID_LOOP(i, n) {
    const int64_t j = i % cols, r = (i / cols) % rows;
    y[i] = matrix::InBand(r, j, lower, upper) ? x[i] : W(0);
  }
}

Status ComputeBandPart(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const Tensor& x = ctx.input(0);
  const Result<matrix::BandPartGeom> g = matrix::BandPartGeomOf(x, ctx.input(1), ctx.input(2));
  if (!g.ok()) return ctx.Error(g.status().message());
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x.shape()));
  const int64_t n = y->NumElements();
  if (n == 0) return OkStatus();
  const bool launched = ForWord(DTypeSize(x.dtype()), [&](auto word) {
    using W = decltype(word);
    BandPart<W><<<Blocks(n), kThreads, 0, dev.stream()>>>(static_cast<const W*>(x.raw_data()),
                                                          static_cast<W*>(y->raw_data()), n,
                                                          g->rows, g->cols, g->lower, g->upper);
  });
  if (!launched) return ctx.Error("no GPU kernel for ", DTypeShortName(x.dtype()));
  return LaunchStatus(ctx, "MatrixBandPart");
}

bool SupportsGather(const PrepareContext& ctx) {
  return ctx.inputs.size() == 3 && SupportsWords(ctx) &&
         (ctx.inputs[1].dtype == DType::kInt32 || ctx.inputs[1].dtype == DType::kInt64);
}

// ---- BroadcastTo, ReverseV2, DepthToSpace, SpaceToDepth: strided gathers ---------------------
// Each is one IndexMap over the output, with the CPU kernels' checks (and their messages).

// Stride 0 along the dims x repeats.
Status ComputeBroadcastTo(const KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(DeviceOf(ctx).Activate());
  const Tensor& x = ctx.input(0);
  auto target = ShapeFromDimsTensor(ctx.input(1), "shape");
  if (!target.ok()) return ctx.Error(target.status().message());
  const int rank = target->rank();
  const int offset = rank - x.rank();
  if (rank > kMaxDims) return ctx.Error("broadcasts to more than ", kMaxDims, " dims on the GPU");
  int64_t strides[kMaxRank];
  DenseStrides(x.shape().dims().data(), x.rank(), strides);
  IndexMap<1> map;
  bool ok = offset >= 0;
  for (int i = 0; ok && i < rank; ++i) {
    const int64_t want = target->dim(i);
    const int64_t d = i < offset ? 1 : x.dim(i - offset);
    ok = d == want || d == 1;
    AddStridedDim(&map, want, d == want && i >= offset ? strides[i - offset] : 0);
  }
  if (!ok)
    return ctx.Error("cannot broadcast a tensor of shape ", x.shape().ToString(), " to shape ",
                     target->ToString());
  if (*target == x.shape()) {
    ctx.SetOutput(0, x);
    return OkStatus();
  }
  return CopyStrided(ctx, x, 0, map, *target);
}

// Negative strides along the reversed dims, from their last element.
Status ComputeReverse(const KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(DeviceOf(ctx).Activate());
  const Tensor& x = ctx.input(0);
  const int rank = x.rank();
  auto rev = reverse::ReversedDims(IndexValues(ctx.input(1)), rank);
  if (!rev.ok()) return ctx.Error(rev.status().message());
  if (rank > kMaxDims) return ctx.Error("reverses more than ", kMaxDims, " dims on the GPU");
  int64_t strides[kMaxRank];
  DenseStrides(x.shape().dims().data(), rank, strides);
  IndexMap<1> map;
  int64_t base = 0;
  for (int d = 0; d < rank; ++d) {
    if ((*rev)[d]) base += (x.dim(d) - 1) * strides[d];
    AddStridedDim(&map, x.dim(d), (*rev)[d] ? -strides[d] : strides[d]);
  }
  return CopyStrided(ctx, x, x.NumElements() == 0 ? 0 : base, map, x.shape());
}

// DepthToSpace: y[n, h*b + i, w*b + j, c] = x[n, h, w, (i*b + j)*C + c]; SpaceToDepth the
// inverse. The map walks y's dims split as (n, h, i, w, j, c), resp. (n, h, w, i, j, c).
template <bool kToSpace>
Status ComputeDepthSpace(const KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(DeviceOf(ctx).Activate());
  const Tensor& x = ctx.input(0);
  const int64_t b = ctx.state<space::BlockState>().value;
  if (x.rank() != 4) return ctx.Error("input rank should be 4 instead of ", x.rank());
  const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), c = x.dim(3);
  IndexMap<1> map;
  Shape out;
  if constexpr (kToSpace) {
    if (c % (b * b) != 0)
      return ctx.Error("input depth dimension ", c, " should be divisible by: ", b * b);
    const int64_t co = c / (b * b);
    out = Shape{n, h * b, w * b, co};
    const int64_t dims[6] = {n, h, b, w, b, co};
    const int64_t steps[6] = {h * w * c, w * c, b * co, c, co, 1};
    for (int k = 0; k < 6; ++k) AddStridedDim(&map, dims[k], steps[k]);
  } else {
    if (h % b != 0 || w % b != 0)
      return ctx.Error("image width ", w, " and height ", h,
                       " should be divisible by block_size: ", b);
    out = Shape{n, h / b, w / b, c * b * b};
    const int64_t dims[6] = {n, h / b, w / b, b, b, c};
    const int64_t steps[6] = {h * w * c, b * w * c, b * c, w * c, c, 1};
    for (int k = 0; k < 6; ++k) AddStridedDim(&map, dims[k], steps[k]);
  }
  return CopyStrided(ctx, x, 0, map, out);
}

// Strided gathers of at most kMaxDims output dims (a rank the output spec may not know yet is
// checked at run time).
bool SupportsGatherWords(const PrepareContext& ctx) {
  if (!SupportsWords(ctx)) return false;
  for (const TensorSpec& s : ctx.outputs)
    if (!s.shape.unknown_rank() && s.shape.rank() > kMaxDims) return false;
  return true;
}

// ---- ConcatV2 and Pack ----------------------------------------------------------------------

// The axis, known at prepare time: ConcatV2's constant axis input, Pack's attr.
struct AxisState final : OpState {
  int64_t axis = 0;
};

Status CreateConcatState(PrepareContext& ctx) {
  const size_t n = ctx.inputs.size() - 1;
  const Tensor* axis = ctx.constant_inputs.size() > n ? ctx.constant_inputs[n] : nullptr;
  if (axis == nullptr) return ctx.Error("the GPU concat needs a constant axis");
  auto state = std::make_shared<AxisState>();
  state->axis = IndexAt(*axis, 0);
  ctx.state = state;
  return OkStatus();
}
bool SupportsConcat(const PrepareContext& ctx) {
  const size_t n = ctx.inputs.size() - 1;
  return ctx.constant_inputs.size() > n && ctx.constant_inputs[n] != nullptr && SupportsPod(ctx);
}
Status CreatePackState(PrepareContext& ctx) {
  auto state = std::make_shared<AxisState>();
  KILN_ASSIGN_OR_RETURN(state->axis, ctx.attrs.GetInt("axis", 0));
  ctx.state = state;
  return OkStatus();
}

// Copies `n` values laid side by side along `axis` of `out` (Pack: a new axis, each value one
// slice of it).
Status ConcatInto(const KernelContext& ctx, int n, int64_t axis, bool pack) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const Tensor& first = ctx.input(0);
  const int rank = first.rank() + (pack ? 1 : 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return ctx.Error("axis ", axis, " is out of range");
  Shape out;
  int64_t outer = 1;
  for (int d = 0; d < static_cast<int>(axis); ++d) outer *= first.dim(d);
  std::vector<size_t> row_bytes(n);
  const size_t elem = DTypeSize(first.dtype());
  for (int d = 0; d < rank; ++d) {
    if (pack) {
      out.AddDim(d == axis ? n : first.dim(d < axis ? d : d - 1));
      continue;
    }
    int64_t dim = first.dim(d);
    if (d == axis)
      for (int i = 1; i < n; ++i) dim += ctx.input(i).dim(d);
    out.AddDim(dim);
  }
  size_t total = 0;
  for (int i = 0; i < n; ++i) {
    const Tensor& v = ctx.input(i);
    if (!pack) {
      if (v.rank() != first.rank())
        return ctx.Error("values:", i, " has rank ", v.rank(), ", values:0 ", first.rank());
      for (int d = 0; d < v.rank(); ++d)
        if (d != axis && v.dim(d) != first.dim(d))
          return ctx.Error("values:", i, " has shape ", v.shape().ToString(), ", values:0 ",
                           first.shape().ToString(), ": they differ in dim ", d,
                           ", not the concatenation axis");
    }
    row_bytes[i] = outer == 0 ? 0 : v.ByteSize() / static_cast<size_t>(outer);
    if (pack && v.shape() != first.shape())
      return ctx.Error("values:", i, " has shape ", v.shape().ToString(), ", values:0 ",
                       first.shape().ToString());
    total += row_bytes[i];
  }
  (void)elem;
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out));
  if (y->ByteSize() == 0) return OkStatus();
  char* dst = static_cast<char*>(y->raw_data());
  for (int i = 0; i < n; ++i) {
    if (row_bytes[i] == 0) continue;
    KILN_RETURN_IF_ERROR(
        Check(cudaMemcpy2DAsync(dst, total, ctx.input(i).raw_data(), row_bytes[i], row_bytes[i],
                                static_cast<size_t>(outer), cudaMemcpyDeviceToDevice, dev.stream()),
              "concat copy"));
    dst += row_bytes[i];
  }
  return OkStatus();
}

Status ComputeConcat(const KernelContext& ctx) {
  return ConcatInto(ctx, ctx.num_inputs() - 1, ctx.state<AxisState>().axis, false);
}
Status ComputePack(const KernelContext& ctx) {
  return ConcatInto(ctx, ctx.num_inputs(), ctx.state<AxisState>().axis, true);
}

// ---- Cast -----------------------------------------------------------------------------------

// One element of Cast: through float for the float types (half and bfloat16 have no direct
// conversion to the integers), != 0 for bool.
template <typename From, typename To>
struct CastOne {
  __device__ To operator()(From v) const {
    if constexpr (std::is_same_v<To, bool>) {
      return static_cast<float>(v) != 0.0f;
    } else if constexpr (kIsFloating<From> || kIsFloating<To>) {
      return static_cast<To>(static_cast<float>(v));
    } else {
      return static_cast<To>(v);
    }
  }
};

using CastTypes = TypeList<float, Half, BFloat16, int32_t, int64_t, bool>;

Status ComputeCast(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x.shape()));
  const int64_t n = x.NumElements();
  if (n == 0) return OkStatus();
  return Dispatch<CastTypes>(x.dtype(), [&](auto from_tag) {
    using From = ComputeType<typename decltype(from_tag)::type>;
    return Dispatch<CastTypes>(y->dtype(), [&](auto to_tag) {
      using To = ComputeType<typename decltype(to_tag)::type>;
      LaunchUnary<CastOne<From, To>, From, To>(dev.stream(), static_cast<const From*>(x.raw_data()),
                                               static_cast<To*>(y->raw_data()), n);
      return LaunchStatus(ctx, "Cast");
    });
  });
}

bool SupportsCast(const PrepareContext& ctx) {
  auto ok = [](DType t) {
    return t == DType::kFloat || t == DType::kHalf || t == DType::kBFloat16 || t == DType::kInt32 ||
           t == DType::kInt64 || t == DType::kBool;
  };
  if (ctx.inputs.size() != 1 || !ok(ctx.inputs[0].dtype) || !ok(ctx.outputs[0].dtype)) return false;
  // A Cast with Truncate=True that truncates runs on the host, which implements it.
  const Result<bool> truncate = ctx.attrs.GetBool("Truncate", false);
  if (!truncate.ok() ||
      (*truncate && math::CastTruncates(ctx.inputs[0].dtype, ctx.outputs[0].dtype)))
    return false;
  // int32 results stay on the host (cuda_kernels.h).
  return ctx.outputs[0].dtype != DType::kInt32;
}

// Shape, Size, Rank: they read the input's dims alone and write a host tensor (int32 too), so
// the input stays where it is: no copy of a GPU tensor to learn its shape.
bool SupportsShapeOf(const PrepareContext& ctx) {
  return ctx.inputs.size() == 1 && DTypeIsPod(ctx.inputs[0].dtype);
}

// ---- the table ------------------------------------------------------------------------------

constexpr uint32_t kSecond = 1u << 1;  // a shape, a dim or a permutation: read on the host

std::vector<KernelEntry> Rows() {
  std::vector<KernelEntry> rows = {
      {"Cast", &ComputeCast, 0, 0, &SupportsCast, nullptr},
      {"ConcatV2", &ComputeConcat, 0, 0, &SupportsConcat, &CreateConcatState},
      {"Pack", &ComputePack, 0, 0, &SupportsPod, &CreatePackState},
      {"Transpose", &ComputeTranspose, kSecond, 0, &SupportsWords, nullptr},
      {"Slice", &ComputeSlice, (1u << 1) | (1u << 2), 0, &SupportsWords, nullptr},
      {"StridedSlice", &ComputeStridedSlice, (1u << 1) | (1u << 2) | (1u << 3), 0, &SupportsWords,
       &CreateStridedSliceState},
      {"GatherV2", &ComputeGather, 1u << 2, 0, &SupportsGather, &CreateGatherState},
      {"GatherNd", &ComputeGatherNd, 0, 0, &SupportsGatherNd, nullptr},
      {"MatrixBandPart", &ComputeBandPart, (1u << 1) | (1u << 2), 0, &SupportsWords, nullptr},
      {"BroadcastTo", &ComputeBroadcastTo, kSecond, 0, &SupportsGatherWords, nullptr},
      {"ReverseV2", &ComputeReverse, kSecond, 0, &SupportsGatherWords, nullptr},
      {"DepthToSpace", &ComputeDepthSpace<true>, 0, 0, &SupportsWords, nullptr},
      {"SpaceToDepth", &ComputeDepthSpace<false>, 0, 0, &SupportsWords, nullptr},
  };
  // Views: the CPU kernel relabels the buffer and reads no element.
  const struct {
    std::string_view op;
    uint32_t host_inputs, host_outputs;
  } views[] = {{"ExpandDims", kSecond, 0},
               {"Identity", 0, 0},
               {"Reshape", kSecond, 0},
               {"Shape", 0, 1u << 0},
               {"Squeeze", 0, 0},
               {"StopGradient", 0, 0},
               {"Size", 0, 1u << 0},
               {"Rank", 0, 1u << 0},
               {"EnsureShape", 0, 0},
               {"PreventGradient", 0, 0},
               {"PlaceholderWithDefault", 0, 0}};
  for (const auto& v : views)
    if (ComputeFn f = FindCpuKernel(v.op))
      rows.push_back({v.op, f, v.host_inputs, v.host_outputs,
                      v.host_outputs != 0 ? &SupportsShapeOf : &SupportsPod, nullptr});
  return rows;
}

}  // namespace

Status LaunchPermute(const KernelContext& ctx, const void* x, void* y,
                     std::span<const int64_t> dims, std::span<const int> perm, size_t elem_bytes) {
  const int rank = static_cast<int>(dims.size());
  if (static_cast<int>(perm.size()) != rank) return ctx.Error("permutation of the wrong rank");
  int64_t in_strides[kMaxRank];
  DenseStrides(dims.data(), rank, in_strides);
  IndexMap<1> map;
  bool seen[kMaxRank] = {};
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) {
    const int p = perm[d];
    if (p < 0 || p >= rank || seen[p]) return ctx.Error("not a permutation of 0..", rank - 1);
    seen[p] = true;
    n *= dims[p];
    AddStridedDim(&map, dims[p], in_strides[p]);
  }
  return CopyMapped(ctx, x, y, n, map, elem_bytes);
}

std::span<const KernelEntry> ArrayKernels() {
  static const std::vector<KernelEntry> rows = Rows();
  return rows;
}

}  // namespace kiln::exec::cuda
