// TF's strided-slice analysis (ValidateStridedSliceOp), shared by the definitions
// (slice_ops.cc), the CPU kernels (cpu/slice_ops.cc) and the GPU's (cuda/array.cu): the sparse
// spec (begin/end/strides with masks, ellipsis and new axes) made dense over the input dims. And
// the slice's writes on the CPU (StridedSliceGrad, TensorStridedSliceUpdate,
// ResourceStridedSliceAssign).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "kiln/core/shape.h"
#include "kiln/core/status.h"

namespace kiln {
class Tensor;
}

namespace kiln::exec {

struct PrepareContext;

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

// The five mask attrs of a strided-slice node.
Status ReadSliceMasks(PrepareContext& ctx, SliceMasks* m);

// The dense slice of a tensor of `shape` from begin/end/strides tensors (int32 or int64).
Status AnalyzeSliceOf(const Shape& shape, const Tensor& begin, const Tensor& end,
                      const Tensor& strides, const SliceMasks& m, DenseSlice* out);

// Writes `values`, broadcast to the slice's shape (dense.final_dims), into `dst` through the
// slice; an error naming the shapes when they do not broadcast.
Status WriteStridedSlice(const Tensor& values, const DenseSlice& dense, Tensor* dst);

}  // namespace kiln::exec
