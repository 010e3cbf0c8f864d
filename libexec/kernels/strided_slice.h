// TF's strided-slice analysis (ValidateStridedSliceOp), shared by the CPU kernel
// (slice_ops.cc) and the GPU's (cuda/array.cu): the sparse spec (begin/end/strides with masks,
// ellipsis and new axes) made dense over the input dims.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "kiln/core/shape.h"
#include "kiln/core/status.h"

namespace kiln::exec {

struct SliceMasks {
  int64_t begin = 0, end = 0, ellipsis = 0, new_axis = 0, shrink = 0;
};

// The dense slice: canonical begin, stride and size per input dim, and the result's dims.
struct DenseSlice {
  std::array<int64_t, kMaxRank> begin{}, stride{}, size{};  // size -1: unknown
  std::vector<int64_t> final_dims;                          // -1: unknown
};

// input_dims: -1 for unknown. begin/end null when their values are unknown.
Status AnalyzeStridedSlice(std::span<const int64_t> input_dims, const int64_t* begin,
                           const int64_t* end, const int64_t* strides, int n, const SliceMasks& m,
                           DenseSlice* out);

}  // namespace kiln::exec
