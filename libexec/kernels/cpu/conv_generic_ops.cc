// The CPU kernels of the ops in kernels/conv_generic_ops.cc. Conv runs the channels-last
// forward pass of kernels/cpu/conv_nd_math.h. FusedPadConv2D / FusedResizeAndPadConv2D: TF's
// kernel is not quite MirrorPad (after a resize) then Conv2D, and this follows its kernel:
//   - windows sit where its im2col puts them: ((out - 1) * stride + filter - padded) / 2 rows
//     and columns before the padded image for SAME (the same + 1 for VALID), truncated toward
//     zero, so a stride that does not fit evenly shifts the windows (Conv2D would start at 0);
//   - resized values are computed and kept in T (half rounds every step, as TF's does);
//   - its cache of resized rows (a ring of 8M elements' worth of rows, row r in slot
//     r mod rows) is not refilled for the second and later images of a batch, so those read
//     the first image's rows: with images of up to 8M elements TF returns the first image's
//     result for every image. The ring is kept here, with TF's row count and refill rule, so
//     every batch gives TF's values. Its limits (the im2col patch and the filter's rows of the
//     cache) are TF's errors too.
// The products run through conv_nd_math.h's Gemm (half and bfloat16 sum in float).
#include "kernels/conv_generic_ops.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/conv_nd_math.h"
#include "kernels/cpu/conv_nd_math.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

using conv_generic::ConvOutputDims;
using conv_generic::ConvState;
using conv_generic::ConvTypes;
using conv_generic::FlatInput;
using conv_generic::FusedGeom;
using conv_generic::FusedPadTypes;
using conv_generic::FusedState;
using conv_generic::kInt32Max;
using conv_generic::MakeFusedGeom;

Status ComputeConv(const KernelContext& ctx) {
  const auto& st = ctx.state<ConvState>();
  const Tensor& input = ctx.input(0);
  const Tensor& filter = ctx.input(1);
  const int64_t spatial = input.rank() - 1 - st.batch_dims;
  if (spatial != 2 && spatial != 3)
    return ctx.Error("The input must have 2 or 3 spatial dimensions but got ", spatial);
  if (filter.NumElements() == 0)
    return ctx.Error("filter must not have zero elements (i.e. all dimensions must be non-zero)");
  if (filter.rank() != 4 && filter.rank() != 5)
    return ctx.Error("The filter must be rank 4 or 5 but got ", filter.rank());
  const int rank = st.spatial + 2;
  if (spatial != st.spatial)
    return ctx.Error("Sliding window strides field must specify ", spatial + 2, " dimensions");
  if (filter.rank() != rank) {
    return ctx.Error("a filter of rank ", filter.rank(), " does not fit an input with ", spatial,
                     " spatial dimensions (it needs rank ", rank, ")");
  }
  const std::vector<int64_t> in(input.shape().dims().begin(), input.shape().dims().end());
  const std::vector<int64_t> flat = FlatInput(in, st.batch_dims);
  std::array<int64_t, 3> k{1, 1, 1};
  for (int i = 0; i < st.spatial; ++i) {
    if (filter.dim(i) > kInt32Max) return ctx.Error("filter too large");
    if (flat[1 + i] > kInt32Max) return ctx.Error("Input spatial dimension ", i, " too large");
    k[3 - st.spatial + i] = filter.dim(i);
  }
  const int64_t in_c = flat.back(), f_in = filter.dim(rank - 2);
  if (in_c > kInt32Max) return ctx.Error("Input depth too large");
  if (f_in > kInt32Max) return ctx.Error("Patch depth too large");
  if (in_c != f_in)
    return ctx.Error("Input depth must be equal to filter depth: ", in_c, " vs ", f_in);
  if (flat[0] > kInt32Max) return ctx.Error("Batch is too large");
  conv_nd::ConvGeom g;
  Status s = MakeWindowDims(st.window, flat, k, &g.d);
  if (!s.ok()) return Wrap(ctx, s);
  g.batch = flat[0];
  g.in_c = in_c;
  g.out_c = filter.dim(rank - 1);
  std::vector<int64_t> flat_out = {g.batch};
  for (int i = 3 - st.spatial; i < 3; ++i) flat_out.push_back(g.d[i].out);
  flat_out.push_back(g.out_c);
  KILN_RETURN_IF_ERROR_CTX(CheckElementCount(flat_out, "output shape"), "node '", ctx.node_name(),
                           "'");
  const bool empty = g.OutPixels() == 0 || input.NumElements() == 0;
  KILN_ASSIGN_OR_RETURN(Shape out_shape,
                        Shape::FromDims(ConvOutputDims(in, st.batch_dims, flat_out, empty)));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  if (out->NumElements() == 0) return OkStatus();
  return Dispatch<ConvTypes>(st.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    using A = Acc<C>;
    if (input.NumElements() == 0) {  // only padding: zeros
      std::fill_n(MutableComputeData<T>(out), out->NumElements(), C(0));
      return OkStatus();
    }
    KILN_ASSIGN_OR_RETURN(const A* x, AccCopy<C>(ctx, ComputeData<T>(input), input.NumElements()));
    KILN_ASSIGN_OR_RETURN(const A* f,
                          AccCopy<C>(ctx, ComputeData<T>(filter), filter.NumElements()));
    AccOutput<C> result;
    KILN_RETURN_IF_ERROR(result.Init(ctx, MutableComputeData<T>(out), out->NumElements()));
    KILN_RETURN_IF_ERROR(conv_nd::ConvForward<A>(ctx, g, x, f, result.data()));
    result.Finish();
    return OkStatus();
  });
}

// ---- FusedPadConv2D, FusedResizeAndPadConv2D --------------------------------------------------

// TF's buffers, in elements of T: the resize cache and the im2col chunk.
constexpr int64_t kResizeCacheSize = int64_t{8} << 20;
constexpr int64_t kMaxChunkSize = int64_t{16} << 20;

// One row of TF's resize cache: the padded (and resized) image's row `y` over `line_w` columns
// from `x0`, zeros outside the padded image. Coordinates in float, sampling in C, as TF's.
template <typename C>
void FillCacheRow(const FusedState& st, const FusedGeom& g, const C* img, int64_t y, int64_t x0,
                  int64_t line_w, C* line) {
  const int64_t d = g.depth;
  if (y < 0 || y >= g.padded_h) {
    std::fill_n(line, line_w * d, C(0));
    return;
  }
  // Mirrors a padded coordinate into the resized image, then maps it into the input.
  const auto source = [&](int64_t v, int64_t pad, int64_t resized, float scale) {
    auto f = static_cast<float>(v - pad);
    const auto off = static_cast<float>(st.pad_offset);
    if (f < 0) {
      f = -(f + 1.0f - off);
    } else if (f >= static_cast<float>(resized)) {
      f = static_cast<float>(resized) * 2.0f - (f + 1.0f + off);
    }
    return f * scale;
  };
  const float in_y = source(y, g.pad_top, g.resized_h, g.scale_h);
  const auto top = static_cast<int64_t>(std::floor(in_y));
  const int64_t bottom = std::min(static_cast<int64_t>(std::ceil(in_y)), g.in_h - 1);
  const C y_lerp = static_cast<C>(in_y - static_cast<float>(top));
  const C* top_row = img + top * g.in_w * d;
  const C* bottom_row = img + bottom * g.in_w * d;
  for (int64_t i = 0; i < line_w; ++i) {
    const int64_t x = x0 + i;
    C* px = line + i * d;
    if (x < 0 || x >= g.padded_w) {
      std::fill_n(px, d, C(0));
      continue;
    }
    const float in_x = source(x, g.pad_left, g.resized_w, g.scale_w);
    const auto left = static_cast<int64_t>(std::floor(in_x));
    if (!st.resize) {  // nearest: the pixel itself
      std::copy_n(top_row + left * d, d, px);
      continue;
    }
    const int64_t right = std::min(static_cast<int64_t>(std::ceil(in_x)), g.in_w - 1);
    const C x_lerp = static_cast<C>(in_x - static_cast<float>(left));
    const C* tl = top_row + left * d;
    const C* tr = top_row + right * d;
    const C* bl = bottom_row + left * d;
    const C* br = bottom_row + right * d;
    for (int64_t c = 0; c < d; ++c) {
      const C t = tl[c] + (tr[c] - tl[c]) * x_lerp;
      const C b = bl[c] + (br[c] - bl[c]) * x_lerp;
      px[c] = t + (b - t) * y_lerp;
    }
  }
}

template <typename T>
Status RunFused(const KernelContext& ctx, const FusedState& st, const FusedGeom& g,
                const Tensor& input, const Tensor& filter, Tensor* out) {
  using C = ComputeType<T>;
  using A = Acc<C>;
  const int64_t d = g.depth, fh = g.fh, fw = g.fw, sh = st.stride_h, sw = st.stride_w;
  // TF's im2col window placement (C++ division truncates toward zero).
  const int64_t extra = st.padding == WindowPadding::kValid ? 1 : 0;
  const int64_t top_off = ((g.out_h - 1) * sh + fh - g.padded_h + extra) / 2;
  const int64_t left_off = ((g.out_w - 1) * sw + fw - g.padded_w + extra) / 2;
  const int64_t x0 = -left_off, line_w = (g.out_w - 1) * sw + fw;
  const int64_t line = line_w * d, patch = fh * fw * d;
  if (patch * static_cast<int64_t>(sizeof(T)) > kMaxChunkSize)
    return ctx.Error("Im2Col patch too large for buffer");
  if (fh * line * static_cast<int64_t>(sizeof(T)) > kResizeCacheSize)
    return ctx.Error("Input too large for resize cache");
  const int64_t cache_rows = kResizeCacheSize / line;  // TF's ring: row r in slot r mod this
  const int64_t first_row = -top_off, end_row = g.out_h * sh - top_off + fh;
  const int64_t ring_rows = std::min(cache_rows, end_row - first_row);
  const int64_t ring_dims[] = {ring_rows, line};
  KILN_RETURN_IF_ERROR_CTX(CheckElementCount(ring_dims, "resize cache"), "node '", ctx.node_name(),
                           "'");
  KILN_ASSIGN_OR_RETURN(void* ring_mem, ctx.AllocateTemp(sizeof(C) * ring_rows * line));
  C* ring = static_cast<C*>(ring_mem);
  // Rows keep their slot's residue (counted from the first row, so slots start at 0).
  const auto slot = [&](int64_t row) { return ring + ((row - first_row) % cache_rows) * line; };
  KILN_ASSIGN_OR_RETURN(const A* f, AccCopy<C>(ctx, ComputeData<T>(filter), filter.NumElements()));
  AccOutput<C> result;
  KILN_RETURN_IF_ERROR(result.Init(ctx, MutableComputeData<T>(out), out->NumElements()));
  const conv_nd::ChunkPlan plan = conv_nd::PlanChunks(g.out_w, patch, ctx.threads().num_threads());
  const int64_t chunk_elems = plan.per_chunk * patch;
  KILN_ASSIGN_OR_RETURN(void* patch_mem, ctx.AllocateTemp(sizeof(A) * chunk_elems * plan.workers));
  const C* in = ComputeData<T>(input);
  const int64_t image = g.in_h * g.in_w * d;
  // TF sets this once per call, not per image: later images find the rows cached.
  int64_t cached_end = std::numeric_limits<int64_t>::min();
  for (int64_t b = 0; b < g.batch; ++b) {
    const C* img = in + b * image;
    for (int64_t oy = 0; oy < g.out_h; ++oy) {
      const int64_t origin = oy * sh - top_off;
      if (cached_end < origin + fh) {
        const int64_t begin = std::max(origin, cached_end);
        const int64_t end = std::min(end_row, std::max(origin + cache_rows, cached_end));
        ctx.threads().ParallelFor(end - begin, std::max<int64_t>(1, 4096 / line),
                                  [&](int64_t lo, int64_t hi) {
                                    for (int64_t r = begin + lo; r < begin + hi; ++r)
                                      FillCacheRow(st, g, img, r, x0, line_w, slot(r));
                                  });
        cached_end = end;
      }
      A* out_row = result.data() + (b * g.out_h + oy) * g.out_w * g.out_c;
      conv_nd::ForChunks(ctx, plan, static_cast<A*>(patch_mem), chunk_elems,
                         [&](int64_t c, A* patches) {
                           const int64_t ox0 = c * plan.per_chunk;
                           const int64_t rows = std::min(plan.per_chunk, g.out_w - ox0);
                           for (int64_t r = 0; r < rows; ++r) {
                             A* dst = patches + r * patch;
                             for (int64_t ky = 0; ky < fh; ++ky, dst += fw * d) {
                               const C* src = slot(origin + ky) + (ox0 + r) * sw * d;
                               for (int64_t i = 0; i < fw * d; ++i) dst[i] = static_cast<A>(src[i]);
                             }
                           }
                           conv_nd::Gemm<A>(false, rows, g.out_c, patch, patches, patch, f, g.out_c,
                                            false, out_row + ox0 * g.out_c, g.out_c);
                         });
    }
  }
  result.Finish();
  return OkStatus();
}

Status ComputeFused(const KernelContext& ctx) {
  const auto& st = ctx.state<FusedState>();
  const Tensor& input = ctx.input(0);
  const Tensor& pads = ctx.input(st.paddings_input);
  const Tensor& filter = ctx.input(st.filter_input);
  std::vector<int64_t> size;
  if (st.resize) {
    const Tensor& s = ctx.input(1);
    if (s.rank() != 1)
      return ctx.Error("shape_t must be 1-dimensional, got shape ", s.shape().ToString());
    size = IndexValues(s);
  }
  FusedGeom g;
  Status s = MakeFusedGeom(st, input.shape().dims(), size, pads.shape().dims(),
                           pads.NumElements() == 8 ? IndexValues(pads) : std::vector<int64_t>(8, 0),
                           filter.shape().dims(), &g);
  if (!s.ok()) return Wrap(ctx, s);
  KILN_ASSIGN_OR_RETURN(Tensor * out,
                        ctx.AllocateOutput(0, Shape{g.batch, g.out_h, g.out_w, g.out_c}));
  if (g.fh == 0 || g.fw == 0) {  // TF leaves such an output unwritten; a sum of nothing is 0
    return Dispatch<FusedPadTypes>(st.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      std::fill_n(MutableComputeData<T>(out), out->NumElements(), ComputeType<T>(0));
      return OkStatus();
    });
  }
  return Dispatch<FusedPadTypes>(st.dtype, [&](auto tag) {
    return RunFused<typename decltype(tag)::type>(ctx, st, g, input, filter, out);
  });
}

constexpr KernelEntry kCpu[] = {
    {"Conv", ComputeConv},
    {"FusedPadConv2D", ComputeFused, 0b10},
    {"FusedResizeAndPadConv2D", ComputeFused, 0b110},
};

}  // namespace

std::span<const KernelEntry> ConvGenericCpuKernels() { return kCpu; }

}  // namespace kiln::exec
