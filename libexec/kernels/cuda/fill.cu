// Fill, ZerosLike, OnesLike, Tile and OneHot on the GPU.
#include <cstring>
#include <vector>

#include "kernels/cuda/launch.cuh"
#include "kernels/index_ops.h"

namespace kiln::exec::cuda {
namespace {

template <typename W>
__global__ void FillKernel(W* y, int64_t n, W value) {
  KILN_GRID_LOOP(i, n) { y[i] = value; }
}

// y (n elements of `bytes` each) = the element whose bits are `value`.
Status FillWith(const KernelContext& ctx, void* y, int64_t n, size_t bytes, uint64_t value) {
  if (n == 0) return OkStatus();
  cudaStream_t stream = DeviceOf(ctx).stream();
  const bool launched = ForWord(bytes, [&](auto word) {
    using W = decltype(word);
    W v;
    std::memcpy(&v, &value, sizeof(W));
    FillKernel<W><<<Blocks(n), kThreads, 0, stream>>>(static_cast<W*>(y), n, v);
  });
  if (!launched) return ctx.Error("no GPU fill for elements of ", bytes, " bytes");
  return LaunchStatus(ctx, "a fill");
}

// Fill: dims (input 0) and value (input 1), both read on the host.
Status ComputeFill(const KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(DeviceOf(ctx).Activate());
  const Tensor& dims = ctx.input(0);
  const Tensor& value = ctx.input(1);
  Shape shape;
  for (int64_t i = 0; i < dims.NumElements(); ++i) {
    const int64_t d = IndexAt(dims, i);
    if (d < 0) return ctx.Error("dims must be non-negative, got ", d);
    shape.AddDim(d);
  }
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, shape));
  uint64_t bits = 0;
  std::memcpy(&bits, value.raw_data(), DTypeSize(value.dtype()));
  return FillWith(ctx, y->raw_data(), y->NumElements(), DTypeSize(value.dtype()), bits);
}

// The bits of 1 in a dtype (complex: 1 + 0i, the real part first); false for the 8-bit floats
// and other types without a one here.
bool OneBits(DType t, uint64_t* bits) {
  *bits = 0;
  switch (t) {
    case DType::kFloat:
    case DType::kComplex64: {
      const float one = 1.0f;
      std::memcpy(bits, &one, sizeof(one));
      return true;
    }
    case DType::kDouble: {
      const double one = 1.0;
      std::memcpy(bits, &one, sizeof(one));
      return true;
    }
    case DType::kHalf:
      *bits = 0x3C00;
      return true;
    case DType::kBFloat16:
      *bits = 0x3F80;
      return true;
    case DType::kBool:
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kInt16:
    case DType::kUInt16:
    case DType::kUInt32:
    case DType::kInt64:
    case DType::kUInt64:
      *bits = 1;
      return true;
    default:
      return false;
  }
}

template <bool kOnes>
Status ComputeFillLike(const KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(DeviceOf(ctx).Activate());
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x.shape()));
  if (!kOnes) {
    if (y->ByteSize() == 0) return OkStatus();
    const cudaError_t err =
        cudaMemsetAsync(y->raw_data(), 0, y->ByteSize(), DeviceOf(ctx).stream());
    return err == cudaSuccess ? OkStatus() : Check(err, "ZerosLike");
  }
  uint64_t one = 0;
  if (!OneBits(x.dtype(), &one)) return ctx.Error("no GPU one for ", DTypeShortName(x.dtype()));
  return FillWith(ctx, y->raw_data(), y->NumElements(), DTypeSize(x.dtype()), one);
}

// Tile: y[i] = x[i mod x's dims], multiples (input 1) on the host.
struct TileMap {
  int rank = 0;
  int64_t out_dims[kMaxDims] = {}, in_dims[kMaxDims] = {};
};

template <typename W>
__global__ void TileKernel(const W* x, W* y, int64_t n, TileMap m) {
  KILN_GRID_LOOP(i, n) {
    int64_t r = i, off = 0, stride = 1;
    for (int d = m.rank - 1; d >= 0; --d) {
      off += (r % m.out_dims[d] % m.in_dims[d]) * stride;
      r /= m.out_dims[d];
      stride *= m.in_dims[d];
    }
    y[i] = x[off];
  }
}

Status ComputeTile(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const Tensor& x = ctx.input(0);
  const Tensor& mult = ctx.input(1);
  if (mult.NumElements() != x.rank())
    return ctx.Error("multiples has ", mult.NumElements(), " entries for rank ", x.rank());
  TileMap m;
  m.rank = x.rank();
  Shape out;
  for (int d = 0; d < x.rank(); ++d) {
    const int64_t k = IndexAt(mult, d);
    if (k < 0) return ctx.Error("multiples must be non-negative, got ", k);
    m.in_dims[d] = x.dim(d);
    m.out_dims[d] = x.dim(d) * k;
    out.AddDim(m.out_dims[d]);
  }
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out));
  const int64_t n = y->NumElements();
  if (n == 0) return OkStatus();
  const bool launched = ForWord(DTypeSize(x.dtype()), [&](auto word) {
    using W = decltype(word);
    TileKernel<W><<<Blocks(n), kThreads, 0, dev.stream()>>>(static_cast<const W*>(x.raw_data()),
                                                            static_cast<W*>(y->raw_data()), n, m);
  });
  if (!launched) return ctx.Error("no GPU tile for ", DTypeShortName(x.dtype()));
  return LaunchStatus(ctx, "Tile");
}

// ---- OneHot -----------------------------------------------------------------------------------

// y[p, d, s] = indices[p, s] == d ? on : off (d along the attr's axis).
template <typename I, typename W>
__global__ void OneHotKernel(const I* idx, W* y, int64_t n, int64_t depth, int64_t suffix, W on,
                             W off) {
  KILN_GRID_LOOP(i, n) {
    const int64_t j = i % suffix;
    const int64_t r = i / suffix;
    const int64_t d = r % depth, p = r / depth;
    y[i] = static_cast<int64_t>(idx[p * suffix + j]) == d ? on : off;
  }
}

// indices on the device; depth, on_value and off_value read on the host (the CPU's checks,
// index::OneHotGeomOf).
Status ComputeOneHot(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const Tensor& indices = ctx.input(0);
  const Result<index::OneHotGeom> g = index::OneHotGeomOf(
      indices, ctx.input(1), ctx.input(2), ctx.input(3), ctx.state<index::AxisState>().value);
  if (!g.ok()) return ctx.Error(g.status().message());
  const int64_t depth = g->depth, suffix = g->suffix;
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, g->shape));
  const int64_t n = y->NumElements();
  if (n == 0) return OkStatus();
  const size_t bytes = DTypeSize(y->dtype());
  bool launched = false;
  auto launch = [&](auto index_tag) {
    using I = decltype(index_tag);
    launched = ForWord(bytes, [&](auto word) {
      using W = decltype(word);
      W on, off;
      std::memcpy(&on, ctx.input(2).raw_data(), sizeof(W));
      std::memcpy(&off, ctx.input(3).raw_data(), sizeof(W));
      OneHotKernel<I, W><<<Blocks(n), kThreads, 0, dev.stream()>>>(
          static_cast<const I*>(indices.raw_data()), static_cast<W*>(y->raw_data()), n, depth,
          suffix, on, off);
    });
  };
  switch (indices.dtype()) {
    case DType::kUInt8:
      launch(uint8_t{});
      break;
    case DType::kInt8:
      launch(int8_t{});
      break;
    case DType::kInt32:
      launch(int32_t{});
      break;
    case DType::kInt64:
      launch(int64_t{});
      break;
    default:
      return ctx.Error("no GPU one-hot for ", DTypeShortName(indices.dtype()), " indices");
  }
  if (!launched) return ctx.Error("no GPU one-hot for elements of ", bytes, " bytes");
  return LaunchStatus(ctx, "OneHot");
}

// Outputs of 1, 2, 4 or 8 byte elements, int32 aside (it stays on the host).
bool SupportsWordsOut(const PrepareContext& ctx) {
  for (const TensorSpec& s : ctx.outputs) {
    if (!DTypeIsPod(s.dtype) || s.dtype == DType::kInt32) return false;
    const size_t b = DTypeSize(s.dtype);
    if (b != 1 && b != 2 && b != 4 && b != 8) return false;
  }
  return !ctx.outputs.empty();
}

bool SupportsOnesLike(const PrepareContext& ctx) {
  uint64_t one = 0;
  return SupportsWordsOut(ctx) && OneBits(ctx.outputs[0].dtype, &one);
}

const KernelEntry kRows[] = {
    {"Fill", &ComputeFill, (1u << 0) | (1u << 1), 0, &SupportsWordsOut, nullptr},
    {"OneHot", &ComputeOneHot, (1u << 1) | (1u << 2) | (1u << 3), 0, &SupportsWordsOut, nullptr},
    {"OnesLike", &ComputeFillLike<true>, 0, 0, &SupportsOnesLike, nullptr},
    {"Tile", &ComputeTile, 1u << 1, 0, &SupportsWordsOut, nullptr},
    {"ZerosLike", &ComputeFillLike<false>, 0, 0, &SupportsWordsOut, nullptr},
};

}  // namespace

std::span<const KernelEntry> FillKernels() { return kRows; }

}  // namespace kiln::exec::cuda
