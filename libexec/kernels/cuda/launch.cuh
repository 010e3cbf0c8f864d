// What the .cu families share: launch shapes, the grid-stride loop, and strided index maps
// (broadcasting, transposes) over at most kMaxDims dims.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "device/cuda/cuda_device.h"
#include "kernels/cuda/cuda_kernels.h"

namespace kiln::exec::cuda {

inline constexpr int kThreads = 256;

// Blocks for n elements, at most what keeps every SM busy a few times over (the loops stride).
inline unsigned Blocks(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::clamp<int64_t>(b, 1, 65535));
}

// Row kernels that give each row a warp (softmax, layer norm, innermost reductions): the blocks
// for `rows` rows at kThreads / 32 rows a block, and the loop of one warp over its rows.
inline unsigned WarpRowBlocks(int64_t rows) {
  const int64_t per_block = kThreads / 32;
  return static_cast<unsigned>(std::clamp<int64_t>((rows + per_block - 1) / per_block, 1, 65535));
}

#define KILN_WARP_ROW_LOOP(row, rows)                                                       \
  for (int64_t row = blockIdx.x * static_cast<int64_t>(blockDim.x / 32) + threadIdx.x / 32; \
       row < (rows); row += static_cast<int64_t>(gridDim.x) * (blockDim.x / 32))

#define KILN_GRID_LOOP(i, n)                                                             \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

// An output index space of `rank` dims and, per operand, the stride of each dim in its
// elements (0 where the operand broadcasts along it).
template <int kOperands>
struct IndexMap {
  int rank = 0;
  int64_t dims[kMaxDims] = {};
  int64_t strides[kOperands][kMaxDims] = {};

  __device__ void Offsets(int64_t i, int64_t (&off)[kOperands]) const { OffsetsAs(i, off); }

  // The same in index type I: uint32_t where every index fits (a 64-bit division is a long
  // call on the GPU, a 32-bit one a few instructions).
  template <typename I>
  __device__ void OffsetsAs(I i, I (&off)[kOperands]) const {
    for (int k = 0; k < kOperands; ++k) off[k] = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const I n = static_cast<I>(dims[d]);
      const I q = i / n;
      const I r = i - q * n;
      i = q;
      for (int k = 0; k < kOperands; ++k) off[k] += r * static_cast<I>(strides[k][d]);
    }
  }
};

// N elements of T as one aligned access (16 bytes for N = 16 / sizeof(T)).
template <typename T, int N>
struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

// Whether p may be read as Vec<T, N>.
template <typename T, int N>
inline bool VecAligned(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % (sizeof(T) * N) == 0;
}

// Elements per 16-byte access of C (1 where C is wider, or a vector would not help).
template <typename C>
inline constexpr int kVecOf = sizeof(C) <= 8 ? static_cast<int>(16 / sizeof(C)) : 1;

// y[i] = f(x[i]): the flat loop, and the same N elements at a time as one wide access each
// way (memory-bound kernels reach the GPU's bandwidth only with wide accesses).
template <typename F, typename C, typename Out>
__global__ void UnaryFlat(const C* x, Out* y, int64_t n) {
  const F f;
  KILN_GRID_LOOP(i, n) { y[i] = static_cast<Out>(f(x[i])); }
}

template <typename F, typename C, typename Out, int N>
__global__ void UnaryFlatVec(const C* x, Out* y, int64_t vectors) {
  const F f;
  KILN_GRID_LOOP(i, vectors) {
    const Vec<C, N> vx = reinterpret_cast<const Vec<C, N>*>(x)[i];
    Vec<Out, N> vy;
#pragma unroll
    for (int k = 0; k < N; ++k) vy.v[k] = static_cast<Out>(f(vx.v[k]));
    reinterpret_cast<Vec<Out, N>*>(y)[i] = vy;
  }
}

// Runs y[i] = f(x[i]) over n elements: vectors of the wider of C and Out where both pointers
// allow, the flat loop for the rest.
template <typename F, typename C, typename Out>
void LaunchUnary(cudaStream_t stream, const C* x, Out* y, int64_t n) {
  constexpr int N = kVecOf<std::conditional_t<(sizeof(C) >= sizeof(Out)), C, Out>>;
  const int64_t vectors = N > 1 && VecAligned<C, N>(x) && VecAligned<Out, N>(y) ? n / N : 0;
  if (vectors > 0)
    UnaryFlatVec<F, C, Out, N><<<Blocks(vectors), kThreads, 0, stream>>>(x, y, vectors);
  const int64_t done = vectors * N;
  if (done < n)
    UnaryFlat<F, C, Out><<<Blocks(n - done), kThreads, 0, stream>>>(x + done, y + done, n - done);
}

// Appends an output dim of `n` elements `s` input elements apart to `map`, merged into the
// dim before when it continues it; dims of one element add nothing.
inline void AddStridedDim(IndexMap<1>* map, int64_t n, int64_t s) {
  if (n == 1) return;
  const int r = map->rank;
  if (r > 0 && map->strides[0][r - 1] == s * n) {
    map->dims[r - 1] *= n;
    map->strides[0][r - 1] = s;
    return;
  }
  map->dims[r] = n;
  map->strides[0][r] = s;
  map->rank = r + 1;
}

// 16 bytes as one aligned word: what wide copies move.
struct alignas(16) Word16 {
  uint32_t v[4];
};

// Element bytes as an unsigned word of that size: what kernels that only move elements use.
template <size_t kBytes>
using Word = std::conditional_t<
    kBytes == 1, uint8_t,
    std::conditional_t<kBytes == 2, uint16_t,
                       std::conditional_t<kBytes == 4, uint32_t,
                                          std::conditional_t<kBytes == 8, uint64_t, Word16>>>>;

// Calls f(W{}) with W the word of `bytes` (1, 2, 4 or 8); false for any other size.
template <typename F>
bool ForWord(size_t bytes, F&& f) {
  switch (bytes) {
    case 1:
      f(Word<1>{});
      return true;
    case 2:
      f(Word<2>{});
      return true;
    case 4:
      f(Word<4>{});
      return true;
    case 8:
      f(Word<8>{});
      return true;
    case 16:
      f(Word<16>{});
      return true;
    default:
      return false;
  }
}

// The same copy (y[i] = src[map(i)], n elements of *bytes) as fewer, wider elements: where the
// innermost dim runs contiguously in whole words of up to 16 bytes, every other stride is a
// whole number of words and both pointers are aligned to one. A head split's transpose of
// float16 values moved 2 bytes per thread, at a fraction of the GPU's bandwidth.
inline void WidenCopy(IndexMap<1>* map, int64_t* n, size_t* bytes, const void* src,
                      const void* dst) {
  if (map->rank == 0) return;
  const int r = map->rank - 1;
  if (map->strides[0][r] != 1) return;
  for (size_t wide = 16; wide > *bytes; wide /= 2) {
    const auto f = static_cast<int64_t>(wide / *bytes);
    bool ok = map->dims[r] % f == 0 && reinterpret_cast<uintptr_t>(src) % wide == 0 &&
              reinterpret_cast<uintptr_t>(dst) % wide == 0;
    for (int d = 0; d < r && ok; ++d) ok = map->strides[0][d] % f == 0;
    if (!ok) continue;
    map->dims[r] /= f;
    for (int d = 0; d < r; ++d) map->strides[0][d] /= f;
    *n /= f;
    *bytes = wide;
    return;
  }
}

// Element i of an index tensor (int32 or int64) in host memory: shapes, axes, paddings.
inline int64_t IndexAt(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kInt64 ? t.data<int64_t>()[i]
                                    : static_cast<int64_t>(t.data<int32_t>()[i]);
}

// The dense strides of `dims` (row-major).
inline void DenseStrides(const int64_t* dims, int rank, int64_t* strides) {
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; --d) {
    strides[d] = s;
    s *= dims[d];
  }
}

}  // namespace kiln::exec::cuda
