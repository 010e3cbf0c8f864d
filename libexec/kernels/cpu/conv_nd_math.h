// The channels-last convolution math of the CPU kernels of conv_nd_ops.cc over three spatial
// dims (2-D ops have a depth of 1; the geometry is kernels/conv_nd_math.h's): patches times
// filter for the forward pass, gathered rows for the input backprop, patches transposed for the
// filter backprop, and the depthwise forms. Chunks have sizes fixed by the shapes, never by the
// thread count, so results are identical on any number of threads.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "kernels/conv_nd_math.h"
#include "kernels/cpu/onednn.h"
#include "kernels/kernel_util.h"

namespace kiln::exec::conv_nd {

template <typename A>
using RowMatrix = Eigen::Matrix<A, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Splits rows into chunks of a size fixed by the shapes (about 2^16 elements of scratch per
// chunk) and gives each of at most `threads` workers its own scratch slot.
struct ChunkPlan {
  int64_t rows = 0, per_chunk = 1, chunks = 0, workers = 0;
};
inline ChunkPlan PlanChunks(int64_t rows, int64_t row_elems, int threads) {
  ChunkPlan p;
  p.rows = rows;
  p.per_chunk = std::clamp<int64_t>((int64_t{1} << 16) / std::max<int64_t>(row_elems, 1), 1,
                                    std::max<int64_t>(rows, 1));
  p.chunks = (rows + p.per_chunk - 1) / p.per_chunk;
  p.workers = std::min<int64_t>(threads, p.chunks);
  return p;
}

// Runs chunk(c, scratch) for every chunk; worker w owns scratch slot w of `slot` elements.
template <typename A, typename F>
void ForChunks(const KernelContext& ctx, const ChunkPlan& p, A* scratch, int64_t slot, F chunk) {
  if (p.chunks == 0) return;
  ctx.threads().ParallelFor(p.workers, 1, [&](int64_t begin, int64_t end) {
    for (int64_t w = begin; w < end; ++w) {
      for (int64_t c = w; c < p.chunks; c += p.workers) chunk(c, scratch + w * slot);
    }
  });
}

// Fills row r of the patch matrix for output pixel p: taps * cn values (input channels c0 ..
// c0 + cn - 1 of every tap), zeros for padding.
template <typename A>
void GatherPatch(const ConvGeom& g, const A* in, int64_t p, A* row, int64_t c0, int64_t cn) {
  const Pos o = OutPos(g, p);
  for (int64_t kz = 0; kz < g.d[0].k; ++kz) {
    const int64_t iz = InCoord(g.d[0], o.z, kz);
    for (int64_t ky = 0; ky < g.d[1].k; ++ky) {
      const int64_t iy = InCoord(g.d[1], o.y, ky);
      for (int64_t kx = 0; kx < g.d[2].k; ++kx, row += cn) {
        const int64_t ix = InCoord(g.d[2], o.x, kx);
        if (iz < 0 || iy < 0 || ix < 0) {
          std::fill(row, row + cn, A(0));
        } else {
          const A* src =
              in + (((o.b * g.d[0].in + iz) * g.d[1].in + iy) * g.d[2].in + ix) * g.in_c + c0;
          std::copy(src, src + cn, row);
        }
      }
    }
  }
}

// C (m x n, row stride ldc) = op(A) B + beta C, with op(A) = A (m x k) or A^T (A stored k x m);
// row-major. float32 goes to oneDNN's JIT sgemm, other types to Eigen.
template <typename A>
void Gemm(bool ta, int64_t m, int64_t n, int64_t k, const A* a, int64_t lda, const A* b,
          int64_t ldb, bool accumulate, A* c, int64_t ldc) {
  if constexpr (std::is_same_v<A, float>) {
    [[maybe_unused]] const Status s =
        onednn::Sgemm(ta, false, m, n, k, a, lda, b, ldb, accumulate ? 1.0f : 0.0f, c, ldc);
    KILN_DCHECK(s.ok());
  } else {
    using Strided = Eigen::OuterStride<>;
    Eigen::Map<const RowMatrix<A>, 0, Strided> bm(b, k, n, Strided(ldb));
    Eigen::Map<RowMatrix<A>, 0, Strided> cm(c, m, n, Strided(ldc));
    if (ta) {
      Eigen::Map<const RowMatrix<A>, 0, Strided> am(a, k, m, Strided(lda));
      if (accumulate) {
        cm.noalias() += am.transpose() * bm;
      } else {
        cm.noalias() = am.transpose() * bm;
      }
    } else {
      Eigen::Map<const RowMatrix<A>, 0, Strided> am(a, m, k, Strided(lda));
      if (accumulate) {
        cm.noalias() += am * bm;
      } else {
        cm.noalias() = am * bm;
      }
    }
  }
}

// ---- the three computations ------------------------------------------------------------------

// Grouped: group j's patches hold its in_c / groups channels and multiply the filter columns of
// its out_c / groups output channels.
template <typename A>
Status ConvForward(const KernelContext& ctx, const ConvGeom& g, const A* in, const A* filter,
                   A* out) {
  const int64_t icg = g.in_c / g.groups, ocg = g.out_c / g.groups;
  const int64_t k = g.Taps() * icg, pixels = g.OutPixels();
  if (pixels == 0 || g.out_c == 0) return OkStatus();
  if (k == 0) {
    std::fill(out, out + pixels * g.out_c, A(0));
    return OkStatus();
  }
  const ChunkPlan plan = PlanChunks(pixels, k, ctx.threads().num_threads());
  const int64_t slot = plan.per_chunk * k;
  KILN_ASSIGN_OR_RETURN(void* mem, ctx.AllocateTemp(sizeof(A) * slot * plan.workers));
  ForChunks(ctx, plan, static_cast<A*>(mem), slot, [&](int64_t c, A* patches) {
    const int64_t p0 = c * plan.per_chunk, rows = std::min(plan.per_chunk, pixels - p0);
    for (int64_t j = 0; j < g.groups; ++j) {
      for (int64_t r = 0; r < rows; ++r) GatherPatch(g, in, p0 + r, patches + r * k, j * icg, icg);
      Gemm<A>(false, rows, ocg, k, patches, k, filter + j * ocg, g.out_c, false,
              out + p0 * g.out_c + j * ocg, g.out_c);
    }
  });
  return OkStatus();
}

// d(input) of a regular convolution: filter [taps, in_c, out_c], out_backprop [pixels, out_c].
template <typename A>
Status ConvBackpropInput(const KernelContext& ctx, const ConvGeom& g, const A* filter, const A* dy,
                         A* dx) {
  const int64_t taps = g.Taps(), k = taps * g.out_c, pixels = g.InPixels();
  if (pixels == 0 || g.in_c == 0) return OkStatus();
  if (k == 0 || g.OutPixels() == 0) {
    std::fill(dx, dx + pixels * g.in_c, A(0));
    return OkStatus();
  }
  // The filter transposed per tap: [taps * out_c, in_c].
  KILN_ASSIGN_OR_RETURN(void* fmem, ctx.AllocateTemp(sizeof(A) * k * g.in_c));
  A* ft = static_cast<A*>(fmem);
  for (int64_t t = 0; t < taps; ++t)
    for (int64_t ci = 0; ci < g.in_c; ++ci)
      for (int64_t co = 0; co < g.out_c; ++co)
        ft[(t * g.out_c + co) * g.in_c + ci] = filter[(t * g.in_c + ci) * g.out_c + co];
  const ChunkPlan plan = PlanChunks(pixels, k, ctx.threads().num_threads());
  const int64_t slot = plan.per_chunk * k;
  KILN_ASSIGN_OR_RETURN(void* mem, ctx.AllocateTemp(sizeof(A) * slot * plan.workers));
  ForChunks(ctx, plan, static_cast<A*>(mem), slot, [&](int64_t c, A* rows_buf) {
    const int64_t p0 = c * plan.per_chunk, rows = std::min(plan.per_chunk, pixels - p0);
    for (int64_t r = 0; r < rows; ++r) {
      const Pos i = InPos(g, p0 + r);
      A* row = rows_buf + r * k;
      for (int64_t kz = 0; kz < g.d[0].k; ++kz) {
        const int64_t oz = OutCoord(g.d[0], i.z, kz);
        for (int64_t ky = 0; ky < g.d[1].k; ++ky) {
          const int64_t oy = OutCoord(g.d[1], i.y, ky);
          for (int64_t kx = 0; kx < g.d[2].k; ++kx, row += g.out_c) {
            const int64_t ox = OutCoord(g.d[2], i.x, kx);
            if (oz < 0 || oy < 0 || ox < 0) {
              std::fill(row, row + g.out_c, A(0));
            } else {
              const A* src =
                  dy + (((i.b * g.d[0].out + oz) * g.d[1].out + oy) * g.d[2].out + ox) * g.out_c;
              std::copy(src, src + g.out_c, row);
            }
          }
        }
      }
    }
    Gemm<A>(false, rows, g.in_c, k, rows_buf, k, ft, g.in_c, false, dx + p0 * g.in_c, g.in_c);
  });
  return OkStatus();
}

// d(filter) of a regular convolution: [taps * in_c, out_c] = patches^T * out_backprop.
template <typename A>
Status ConvBackpropFilter(const KernelContext& ctx, const ConvGeom& g, const A* in, const A* dy,
                          A* df) {
  const int64_t k = g.Taps() * g.in_c, pixels = g.OutPixels();
  const int64_t fsize = k * g.out_c;
  if (fsize == 0) return OkStatus();
  std::fill(df, df + fsize, A(0));
  if (pixels == 0) return OkStatus();
  ChunkPlan plan = PlanChunks(pixels, k, ctx.threads().num_threads());
  // Fixed groups of chunks, each summed into its own partial, the partials summed in order.
  const int64_t groups = std::min<int64_t>(plan.chunks, 8);
  const int64_t patch_elems = plan.per_chunk * k;
  KILN_ASSIGN_OR_RETURN(void* mem, ctx.AllocateTemp(sizeof(A) * groups * (patch_elems + fsize)));
  A* scratch = static_cast<A*>(mem);
  ctx.threads().ParallelFor(groups, 1, [&](int64_t begin, int64_t end) {
    for (int64_t grp = begin; grp < end; ++grp) {
      A* patches = scratch + grp * (patch_elems + fsize);
      A* partial = patches + patch_elems;
      bool first = true;
      for (int64_t c = grp; c < plan.chunks; c += groups) {
        const int64_t p0 = c * plan.per_chunk, rows = std::min(plan.per_chunk, pixels - p0);
        for (int64_t r = 0; r < rows; ++r) GatherPatch(g, in, p0 + r, patches + r * k, 0, g.in_c);
        Gemm<A>(true, k, g.out_c, rows, patches, k, dy + p0 * g.out_c, g.out_c, !first, partial,
                g.out_c);
        first = false;
      }
      if (first) std::fill(partial, partial + fsize, A(0));
    }
  });
  for (int64_t grp = 0; grp < groups; ++grp) {
    const A* partial = scratch + grp * (patch_elems + fsize) + patch_elems;
    for (int64_t i = 0; i < fsize; ++i) df[i] += partial[i];
  }
  return OkStatus();
}

// d(input) of a depthwise convolution: filter [taps, in_c, mult].
template <typename A>
void DepthwiseBackpropInput(const KernelContext& ctx, const ConvGeom& g, const A* filter,
                            const A* dy, A* dx) {
  const int64_t pixels = g.InPixels();
  const int64_t cost = std::max<int64_t>(1, g.Taps() * g.out_c);
  ctx.threads().ParallelFor(pixels, std::max<int64_t>(1, 16384 / cost), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const Pos i = InPos(g, p);
      A* out = dx + p * g.in_c;
      std::fill(out, out + g.in_c, A(0));
      for (int64_t kz = 0; kz < g.d[0].k; ++kz) {
        const int64_t oz = OutCoord(g.d[0], i.z, kz);
        if (oz < 0) continue;
        for (int64_t ky = 0; ky < g.d[1].k; ++ky) {
          const int64_t oy = OutCoord(g.d[1], i.y, ky);
          if (oy < 0) continue;
          for (int64_t kx = 0; kx < g.d[2].k; ++kx) {
            const int64_t ox = OutCoord(g.d[2], i.x, kx);
            if (ox < 0) continue;
            const int64_t t = (kz * g.d[1].k + ky) * g.d[2].k + kx;
            const A* f = filter + t * g.out_c;
            const A* d =
                dy + (((i.b * g.d[0].out + oz) * g.d[1].out + oy) * g.d[2].out + ox) * g.out_c;
            for (int64_t c = 0; c < g.in_c; ++c) {
              A acc = out[c];
              for (int64_t m = 0; m < g.mult; ++m) acc += d[c * g.mult + m] * f[c * g.mult + m];
              out[c] = acc;
            }
          }
        }
      }
    }
  });
}

// d(filter) of a depthwise convolution: every tap is one worker's, summed over pixels in order.
template <typename A>
void DepthwiseBackpropFilter(const KernelContext& ctx, const ConvGeom& g, const A* in, const A* dy,
                             A* df) {
  const int64_t taps = g.Taps(), pixels = g.OutPixels();
  ctx.threads().ParallelFor(taps, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t kx = t % g.d[2].k, ky = (t / g.d[2].k) % g.d[1].k,
                    kz = t / (g.d[2].k * g.d[1].k);
      A* out = df + t * g.out_c;
      std::fill(out, out + g.out_c, A(0));
      for (int64_t p = 0; p < pixels; ++p) {
        const Pos o = OutPos(g, p);
        const int64_t iz = InCoord(g.d[0], o.z, kz), iy = InCoord(g.d[1], o.y, ky),
                      ix = InCoord(g.d[2], o.x, kx);
        if (iz < 0 || iy < 0 || ix < 0) continue;
        const A* x = in + (((o.b * g.d[0].in + iz) * g.d[1].in + iy) * g.d[2].in + ix) * g.in_c;
        const A* d = dy + p * g.out_c;
        for (int64_t c = 0; c < g.in_c; ++c)
          for (int64_t m = 0; m < g.mult; ++m) out[c * g.mult + m] += x[c] * d[c * g.mult + m];
      }
    }
  });
}

}  // namespace kiln::exec::conv_nd
