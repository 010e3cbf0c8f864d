// What the .cu families share: launch shapes, the grid-stride loop, and strided index maps
// (broadcasting, transposes) over at most kMaxDims dims.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "device/cuda/cuda_device.h"
#include "kernels/cuda/cuda_kernels.h"

namespace kiln::exec::cuda {

inline constexpr int kThreads = 256;

// Blocks for n elements, at most what keeps every SM busy a few times over (the loops stride).
inline unsigned Blocks(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::clamp<int64_t>(b, 1, 65535));
}

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

  __device__ void Offsets(int64_t i, int64_t (&off)[kOperands]) const {
    for (int k = 0; k < kOperands; ++k) off[k] = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t q = i / dims[d];
      const int64_t r = i - q * dims[d];
      i = q;
      for (int k = 0; k < kOperands; ++k) off[k] += r * strides[k][d];
    }
  }
};

// The dense strides of `dims` (row-major).
inline void DenseStrides(const int64_t* dims, int rank, int64_t* strides) {
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; --d) {
    strides[d] = s;
    s *= dims[d];
  }
}

}  // namespace kiln::exec::cuda
