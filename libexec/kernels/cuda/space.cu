// The spatial-block ops on the GPU: SpaceToBatchND and BatchToSpaceND (dilated convolutions as
// TF1-era graphs and DeepLab write them), ExtractImagePatches and ExtractVolumePatches (a ViT's
// patches): a thread per element, with the CPU kernels' checks and geometry (space_ops.h).
// Elements of any width move as words; padding reads as zeros.
#include <vector>

#include "kernels/cuda/launch.cuh"
#include "kernels/space_ops.h"

namespace kiln::exec::cuda {
namespace {

// ---- SpaceToBatchND, BatchToSpaceND ---------------------------------------------------------

// The batch side [block offsets.., batch, blocked spatial.., rest] against the space side
// [batch, spatial.., rest], per block dim.
struct BlockGeom {
  int m = 0;
  int64_t block[kMaxRank] = {}, pad[kMaxRank] = {}, batch_dim[kMaxRank] = {},
          space_dim[kMaxRank] = {}, space_stride[kMaxRank] = {};
  int64_t batch = 1, positions = 1, rest = 1, space_batch_stride = 1;
};

// A thread per batch-side element: where it is on the space side (as the CPU kernel walks it).
// To batch: read it there, or zero in the padding. To space: write it there unless cropped
// (each space element has exactly one batch-side element).
template <typename W, bool kToBatch>
__global__ void BlockBatch(const W* x, W* y, int64_t n, BlockGeom g) {
  KILN_GRID_LOOP(i, n) {
    const int64_t k = i % g.rest, r = i / g.rest;
    const int64_t image = r / g.positions;
    int64_t pos = r % g.positions;
    int64_t offset = image / g.batch;
    int64_t space = (image % g.batch) * g.space_batch_stride;
    bool inside = true;
    for (int d = g.m - 1; d >= 0; --d) {
      const int64_t p = pos % g.batch_dim[d];
      pos /= g.batch_dim[d];
      const int64_t o = offset % g.block[d];
      offset /= g.block[d];
      const int64_t s = p * g.block[d] + o - g.pad[d];
      inside = inside && s >= 0 && s < g.space_dim[d];
      space += s * g.space_stride[d];
    }
    if constexpr (kToBatch) {
      y[i] = inside ? x[space + k] : W(0);
    } else {
      if (inside) y[space + k] = x[i];
    }
  }
}

template <bool kToBatch>
Status ComputeBlockBatch(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const Tensor& x = ctx.input(0);
  const Result<space::BlockSpec> spec =
      space::ReadBlockSpec(ctx.input(1), ctx.input(2), x.rank(), kToBatch ? "paddings" : "crops");
  if (!spec.ok()) return ctx.Error(spec.status().message());
  const Result<std::vector<int64_t>> dims =
      space::BlockOutputDims(kToBatch, x.shape().dims(), *spec);
  if (!dims.ok()) return ctx.Error(dims.status().message());
  KILN_ASSIGN_OR_RETURN(const Shape out_shape, Shape::FromDims(*dims));
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, out_shape));
  if (y->NumElements() == 0) return OkStatus();
  const Shape& batch_side = kToBatch ? out_shape : x.shape();
  const Shape& space_side = kToBatch ? x.shape() : out_shape;
  BlockGeom g;
  g.m = static_cast<int>(spec->block.size());
  for (int d = 1 + g.m; d < x.rank(); ++d) g.rest *= x.dim(d);
  g.batch = space_side.dim(0);
  int64_t stride = g.rest;
  for (int d = g.m - 1; d >= 0; --d) {
    g.block[d] = spec->block[d];
    g.pad[d] = spec->pads[2 * static_cast<size_t>(d)];
    g.batch_dim[d] = batch_side.dim(1 + d);
    g.space_dim[d] = space_side.dim(1 + d);
    g.space_stride[d] = stride;
    stride *= space_side.dim(1 + d);
    g.positions *= g.batch_dim[d];
  }
  g.space_batch_stride = stride;
  // Every batch-side element (the input of BatchToSpaceND, the output of SpaceToBatchND).
  const int64_t n = batch_side.num_elements();
  const bool launched = ForWord(DTypeSize(x.dtype()), [&](auto word) {
    using W = decltype(word);
    BlockBatch<W, kToBatch><<<Blocks(n), kThreads, 0, dev.stream()>>>(
        static_cast<const W*>(x.raw_data()), static_cast<W*>(y->raw_data()), n, g);
  });
  if (!launched) return ctx.Error("no GPU kernel for ", DTypeShortName(x.dtype()));
  return LaunchStatus(ctx, kToBatch ? "SpaceToBatchND" : "BatchToSpaceND");
}

// ---- ExtractImagePatches, ExtractVolumePatches ----------------------------------------------

// The geometry (space::PatchGeom's numbers) and the window, as a kernel argument.
struct PatchDims {
  int64_t c, taps, in[3], o[3], pad[3];
  int64_t k[3], s[3], r[3];
};

// A thread per output element: pixel p, tap (a, i, j) of the window, channel ch.
template <typename W>
__global__ void Patches(const W* x, W* y, int64_t n, PatchDims g) {
  const PatchDims& w = g;
  KILN_GRID_LOOP(e, n) {
    const int64_t ch = e % g.c, tap = e / g.c % g.taps, p = e / (g.c * g.taps);
    const int64_t pixels = g.o[0] * g.o[1] * g.o[2];
    const int64_t img = p / pixels, op = p / (g.o[1] * g.o[2]) % g.o[0], oy = p / g.o[2] % g.o[1],
                  ox = p % g.o[2];
    const int64_t a = tap / (w.k[1] * w.k[2]), i = tap / w.k[2] % w.k[1], j = tap % w.k[2];
    const int64_t z = op * w.s[0] + a * w.r[0] - g.pad[0];
    const int64_t yy = oy * w.s[1] + i * w.r[1] - g.pad[1];
    const int64_t xx = ox * w.s[2] + j * w.r[2] - g.pad[2];
    const bool inside = z >= 0 && z < g.in[0] && yy >= 0 && yy < g.in[1] && xx >= 0 && xx < g.in[2];
    y[e] = inside ? x[(((img * g.in[0] + z) * g.in[1] + yy) * g.in[2] + xx) * g.c + ch] : W(0);
  }
}

Status ComputePatches(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const Tensor& x = ctx.input(0);
  const auto& st = ctx.state<space::PatchState>();
  const Result<space::PatchGeom> g = space::PatchGeomOf(x, st);
  if (!g.ok()) return ctx.Error(g.status().message());
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, g->out));
  const int64_t n = y->NumElements();
  if (n == 0) return OkStatus();
  PatchDims dims{};
  dims.c = g->c;
  dims.taps = g->taps;
  for (int d = 0; d < 3; ++d) {
    dims.in[d] = g->in[d];
    dims.o[d] = g->o[d];
    dims.pad[d] = g->pad[d];
    dims.k[d] = st.k[d];
    dims.s[d] = st.s[d];
    dims.r[d] = st.r[d];
  }
  const bool launched = ForWord(DTypeSize(x.dtype()), [&](auto word) {
    using W = decltype(word);
    Patches<W><<<Blocks(n), kThreads, 0, dev.stream()>>>(static_cast<const W*>(x.raw_data()),
                                                         static_cast<W*>(y->raw_data()), n, dims);
  });
  if (!launched) return ctx.Error("no GPU kernel for ", DTypeShortName(x.dtype()));
  return LaunchStatus(ctx, "ExtractImagePatches");
}

constexpr uint32_t kBlockArgs = (1u << 1) | (1u << 2);  // block_shape, paddings/crops: host

const KernelEntry kRows[] = {
    {"BatchToSpaceND", &ComputeBlockBatch<false>, kBlockArgs, 0, &SupportsWords, nullptr},
    {"ExtractImagePatches", &ComputePatches, 0, 0, &SupportsWords, nullptr},
    {"ExtractVolumePatches", &ComputePatches, 0, 0, &SupportsWords, nullptr},
    {"SpaceToBatchND", &ComputeBlockBatch<true>, kBlockArgs, 0, &SupportsWords, nullptr},
};

}  // namespace

std::span<const KernelEntry> SpaceKernels() { return kRows; }

}  // namespace kiln::exec::cuda
