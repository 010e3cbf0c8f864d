// ResizeBilinear and ResizeNearestNeighbor (NHWC) on the GPU: one thread per output element,
// with the CPU kernels' coordinate math (kernels/image_resize_coords.h, the KILN_HD functions)
// and their sizes checked by the same MakeResizeGeom. Bilinear reads float, half or bfloat16 and
// writes float, as TF's op does; nearest moves elements of any width. `size` stays on the host.
#include "kernels/cuda/launch.cuh"
#include "kernels/image_resize_coords.h"
#include "kernels/image_resize_ops.h"

namespace kiln::exec::cuda {
namespace {

using image_resize::MakeResizeGeom;
using image_resize::ResizeGeom;
using image_resize::ResizeState;

struct ResizeArgs {
  ResizeGeom g;
  bool align_corners = false;
  bool half_pixel = false;
};

// Output element i's (n, y, x, c).
struct OutPos {
  int64_t n, y, x, c;
};
__device__ inline OutPos PosOf(int64_t i, const ResizeGeom& g) {
  OutPos p;
  p.c = i % g.c;
  int64_t r = i / g.c;
  p.x = r % g.out_w;
  r /= g.out_w;
  p.y = r % g.out_h;
  p.n = r / g.out_h;
  return p;
}

template <typename C>
__global__ void BilinearKernel(const C* in, float* out, int64_t total, ResizeArgs a) {
  const ResizeGeom& g = a.g;
  KILN_GRID_LOOP(i, total) {
    const OutPos p = PosOf(i, g);
    const Lerp ly = BilinearLerp(p.y, g.in_h, g.scale_h, a.half_pixel);
    const Lerp lx = BilinearLerp(p.x, g.in_w, g.scale_w, a.half_pixel);
    const C* img = in + p.n * g.in_h * g.in_w * g.c;
    const C* top = img + ly.lower * g.in_w * g.c;
    const C* bottom = img + ly.upper * g.in_w * g.c;
    const int64_t l = lx.lower * g.c + p.c, u = lx.upper * g.c + p.c;
    out[i] =
        BilinearMix(static_cast<float>(top[l]), static_cast<float>(top[u]),
                    static_cast<float>(bottom[l]), static_cast<float>(bottom[u]), lx.lerp, ly.lerp);
  }
}

template <typename W>
__global__ void NearestKernel(const W* in, W* out, int64_t total, ResizeArgs a) {
  const ResizeGeom& g = a.g;
  KILN_GRID_LOOP(i, total) {
    const OutPos p = PosOf(i, g);
    const int64_t iy = NearestIndex(p.y, g.scale_h, g.in_h, a.align_corners, a.half_pixel);
    const int64_t ix = NearestIndex(p.x, g.scale_w, g.in_w, a.align_corners, a.half_pixel);
    out[i] = in[((p.n * g.in_h + iy) * g.in_w + ix) * g.c + p.c];
  }
}

template <bool kBilinear>
Status ComputeResize(const KernelContext& ctx) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  const auto& st = ctx.state<ResizeState>();
  ResizeArgs a;
  KILN_RETURN_IF_ERROR(MakeResizeGeom(ctx, st, &a.g));
  a.align_corners = st.align_corners;
  a.half_pixel = st.half_pixel_centers;
  const ResizeGeom& g = a.g;
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, Shape{g.batch, g.out_h, g.out_w, g.c}));
  const int64_t total = y->NumElements();
  if (total == 0) return OkStatus();
  const Tensor& x = ctx.input(0);
  if constexpr (kBilinear) {
    return Dispatch<GpuFloatTypes>(x.dtype(), [&](auto tag) {
      using C = ComputeType<typename decltype(tag)::type>;
      BilinearKernel<C><<<Blocks(total), kThreads, 0, dev.stream()>>>(
          reinterpret_cast<const C*>(x.raw_data()), y->data<float>(), total, a);
      return LaunchStatus(ctx, "ResizeBilinear");
    });
  } else {
    const size_t bytes = DTypeSize(x.dtype());
    const bool launched = ForWord(bytes, [&](auto word) {
      using W = decltype(word);
      NearestKernel<W><<<Blocks(total), kThreads, 0, dev.stream()>>>(
          static_cast<const W*>(x.raw_data()), static_cast<W*>(y->raw_data()), total, a);
    });
    if (!launched) return ctx.Error("no GPU resize for elements of ", bytes, " bytes");
    return LaunchStatus(ctx, "ResizeNearestNeighbor");
  }
}

// Nearest neighbour moves elements of 1, 2, 4 or 8 bytes (int32 images stay on the host, as
// every int32 value does: SupportsPod).
bool SupportsNearest(const PrepareContext& ctx) {
  if (!SupportsPod(ctx)) return false;
  const size_t b = DTypeSize(ctx.outputs[0].dtype);
  return b == 1 || b == 2 || b == 4 || b == 8;
}

constexpr uint32_t kHostSize = 1u << 1;

const KernelEntry kRows[] = {
    {"ResizeBilinear", &ComputeResize<true>, kHostSize, 0, &SupportsFloat, nullptr},
    {"ResizeNearestNeighbor", &ComputeResize<false>, kHostSize, 0, &SupportsNearest, nullptr},
};

}  // namespace

std::span<const KernelEntry> ImageKernels() { return kRows; }

}  // namespace kiln::exec::cuda
