// The CPU kernels of the ops in kernels/space_ops.cc: each is a copy of its input's elements into
// new places (strided, or run by run with padding as zeros).
#include "kernels/space_ops.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/array_util.h"

namespace kiln::exec {
namespace {

using space::BlockOutputDims;
using space::BlockSpec;
using space::BlockState;
using space::BlockV1State;
using space::PatchState;
using space::ReadBlockSpec;

// ---- SpaceToBatchND, BatchToSpaceND ----------------------------------------------------------

Status RunBlockBatch(const KernelContext& ctx, const Tensor& x, bool to_batch,
                     const Result<BlockSpec>& spec) {
  if (!spec.ok()) return Wrap(ctx, spec.status());
  auto dims = BlockOutputDims(to_batch, x.shape().dims(), *spec);
  if (!dims.ok()) return Wrap(ctx, dims.status());
  const Shape out_shape = *Shape::FromDims(*dims);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  if (out->NumElements() == 0) return OkStatus();
  // The batch-side tensor has dims [block offsets..., batch, blocked spatial..., rest]; the
  // space-side one [batch, spatial..., rest]. Walk the batch side: each of its (spatial)
  // positions is one `rest`-sized run of the space side, or padding.
  const Shape& batch_shape = to_batch ? out_shape : x.shape();
  const Shape& space_shape = to_batch ? x.shape() : out_shape;
  const int m = static_cast<int>(spec->block.size());
  int64_t rest = 1;
  for (int d = 1 + m; d < x.rank(); ++d) rest *= x.dim(d);
  const int64_t batch = space_shape.dim(0);
  const auto space_strides = RowMajorStrides(space_shape);
  int64_t positions = 1;  // spatial positions per batch-side image
  for (int i = 0; i < m; ++i) positions *= batch_shape.dim(1 + i);
  return DispatchStorage(x.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U* src = Elems<U>(x);
    U* dst = Elems<U>(*out);
    ctx.threads().ParallelFor(batch_shape.dim(0) * positions, std::max<int64_t>(1, 16384 / rest),
                              [&](int64_t begin, int64_t end) {
                                for (int64_t r = begin; r < end; ++r) {
                                  const int64_t image = r / positions;  // batch-side batch index
                                  int64_t pos = r % positions;
                                  int64_t offset = image / batch;  // flat block offset
                                  const int64_t b = image % batch;
                                  // Space-side coordinates of this position, innermost dim first.
                                  int64_t space_off = b * space_strides[0];
                                  bool inside = true;
                                  for (int i = m - 1; i >= 0; --i) {
                                    const int64_t p = pos % batch_shape.dim(1 + i);
                                    pos /= batch_shape.dim(1 + i);
                                    const int64_t o = offset % spec->block[i];
                                    offset /= spec->block[i];
                                    const int64_t s = p * spec->block[i] + o -
                                                      spec->pads[2 * static_cast<size_t>(i)];
                                    inside &= s >= 0 && s < space_shape.dim(1 + i);
                                    space_off += s * space_strides[1 + i];
                                  }
                                  if (to_batch) {
                                    U* run = dst + r * rest;
                                    if (inside) {
                                      std::copy(src + space_off, src + space_off + rest, run);
                                    } else {
                                      std::fill(run, run + rest, U{});  // padding
                                    }
                                  } else if (inside) {  // positions outside were cropped away
                                    const U* run = src + r * rest;
                                    std::copy(run, run + rest, dst + space_off);
                                  }
                                }
                              });
    return OkStatus();
  });
}

Status ComputeBlockBatch(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const bool to_batch = ctx.state<TypedOpState<bool>>().value;
  return RunBlockBatch(
      ctx, x, to_batch,
      ReadBlockSpec(ctx.input(1), ctx.input(2), x.rank(), to_batch ? "paddings" : "crops"));
}

Result<BlockSpec> BlockSpecV1(const Tensor& x, const Tensor& pads, const BlockV1State& st) {
  if (x.rank() != 4) {
    return InvalidArgument("input should have rank 4 instead of ", x.rank());
  }
  Tensor block(DType::kInt64, Shape{2});
  block.data<int64_t>()[0] = block.data<int64_t>()[1] = st.block_size;
  return ReadBlockSpec(block, pads, 4, st.to_batch ? "paddings" : "crops");
}

Status ComputeBlockBatchV1(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const auto& st = ctx.state<BlockV1State>();
  return RunBlockBatch(ctx, x, st.to_batch, BlockSpecV1(x, ctx.input(1), st));
}

// ---- SpaceToDepth, DepthToSpace --------------------------------------------------------------

Status ComputeSpaceToDepth(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t bs = ctx.state<BlockState>().value;
  if (x.rank() != 4) return ctx.Error("input rank should be 4 instead of ", x.rank());
  const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), c = x.dim(3);
  if (h % bs != 0 || w % bs != 0) {
    return ctx.Error("image width ", w, " and height ", h,
                     " should be divisible by block_size: ", bs);
  }
  // out[b, y, x, (oy*bs + ox)*C + c] = in[b, y*bs + oy, x*bs + ox, c]: a transpose of the input
  // viewed as [N, H/bs, bs, W/bs, bs, C] to [N, H/bs, W/bs, bs, bs, C].
  CopyPlan plan;
  AddCopyDim(&plan, n, h * w * c);
  AddCopyDim(&plan, h / bs, bs * w * c);
  AddCopyDim(&plan, w / bs, bs * c);
  AddCopyDim(&plan, bs, w * c);
  AddCopyDim(&plan, bs, c);
  AddCopyDim(&plan, c, 1);
  return CopyIntoOutput(ctx, 0, x, Shape{n, h / bs, w / bs, c * bs * bs}, plan);
}

Status ComputeDepthToSpace(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t bs = ctx.state<BlockState>().value;
  if (x.rank() != 4) return ctx.Error("input rank should be 4 instead of ", x.rank());
  const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), cin = x.dim(3);
  if (cin % (bs * bs) != 0) {
    return ctx.Error("input depth dimension ", cin, " should be divisible by: ", bs * bs);
  }
  const int64_t c = cin / (bs * bs);
  // out[b, y*bs + oy, x*bs + ox, c] = in[b, y, x, (oy*bs + ox)*C + c]: the output viewed as
  // [N, H, bs, W, bs, C].
  CopyPlan plan;
  AddCopyDim(&plan, n, h * w * cin);
  AddCopyDim(&plan, h, w * cin);
  AddCopyDim(&plan, bs, bs * c);
  AddCopyDim(&plan, w, cin);
  AddCopyDim(&plan, bs, c);
  AddCopyDim(&plan, c, 1);
  return CopyIntoOutput(ctx, 0, x, Shape{n, h * bs, w * bs, c}, plan);
}

// ---- ExtractImagePatches, ExtractVolumePatches ----------------------------------------------

Status ComputePatches(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const auto& st = ctx.state<PatchState>();
  const Result<space::PatchGeom> g = space::PatchGeomOf(x, st);
  if (!g.ok()) return Wrap(ctx, g.status());
  const int64_t n = g->n, c = g->c, taps = g->taps;
  const int64_t* in = g->in;
  const int64_t* o = g->o;
  const int64_t* pad = g->pad;
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, g->out));
  if (out->NumElements() == 0) return OkStatus();
  const int64_t pixels = o[0] * o[1] * o[2];
  return DispatchStorage(x.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U* src = Elems<U>(x);
    U* dst = Elems<U>(*out);
    // One output pixel at a time: taps runs of C channels, zeros outside the volume.
    ctx.threads().ParallelFor(
        n * pixels, std::max<int64_t>(1, 16384 / (taps * c)), [&](int64_t b, int64_t e) {
          for (int64_t p = b; p < e; ++p) {
            const int64_t img = p / pixels, op = p / (o[1] * o[2]) % o[0], oy = p / o[2] % o[1],
                          ox = p % o[2];
            U* to = dst + p * taps * c;
            for (int64_t a = 0; a < st.k[0]; ++a) {
              const int64_t z = op * st.s[0] + a * st.r[0] - pad[0];
              for (int64_t i = 0; i < st.k[1]; ++i) {
                const int64_t y = oy * st.s[1] + i * st.r[1] - pad[1];
                for (int64_t j = 0; j < st.k[2]; ++j, to += c) {
                  const int64_t xx = ox * st.s[2] + j * st.r[2] - pad[2];
                  if (z < 0 || z >= in[0] || y < 0 || y >= in[1] || xx < 0 || xx >= in[2]) {
                    std::fill(to, to + c, U{});
                  } else {
                    const U* from = src + (((img * in[0] + z) * in[1] + y) * in[2] + xx) * c;
                    std::copy(from, from + c, to);
                  }
                }
              }
            }
          }
        });
    return OkStatus();
  });
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"SpaceToBatchND", ComputeBlockBatch},   {"BatchToSpaceND", ComputeBlockBatch},
    {"SpaceToBatch", ComputeBlockBatchV1},   {"BatchToSpace", ComputeBlockBatchV1},
    {"SpaceToDepth", ComputeSpaceToDepth},   {"DepthToSpace", ComputeDepthToSpace},
    {"ExtractImagePatches", ComputePatches}, {"ExtractVolumePatches", ComputePatches},
};

}  // namespace

std::span<const KernelEntry> SpaceCpuKernels() { return kCpu; }

}  // namespace kiln::exec
