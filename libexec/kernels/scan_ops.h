// Scan's op state and checked sizes, shared by its definitions, CPU kernels and GPU kernels
// (kernels/cuda/reduce.cu).
#pragma once

#include <cstdint>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::scan {

struct ScanState : OpState {
  bool exclusive = false;
  bool reverse = false;
};

// x as [outer, n, inner] around the scanned axis (input 'axis', a scalar), or why not.
struct ScanGeom {
  int64_t outer = 1, n = 0, inner = 1;
};
inline Result<ScanGeom> ScanGeomOf(const Tensor& x, const Tensor& axis_t) {
  if (axis_t.rank() != 0)
    return InvalidArgument("input 'axis' must be a scalar, got shape ", axis_t.shape().ToString());
  const int64_t v =
      axis_t.dtype() == DType::kInt32 ? axis_t.scalar<int32_t>() : axis_t.scalar<int64_t>();
  if (v < -x.rank() || v >= x.rank())
    return InvalidArgument("input 'axis' is ", v, ", expected a value in [", -x.rank(), ", ",
                           x.rank(), ") for x of shape ", x.shape().ToString());
  const int axis = static_cast<int>(v < 0 ? v + x.rank() : v);
  ScanGeom g;
  for (int i = 0; i < x.rank(); ++i) {
    if (i < axis) g.outer *= x.dim(i);
    if (i > axis) g.inner *= x.dim(i);
  }
  g.n = x.dim(axis);
  return g;
}

}  // namespace kiln::exec::scan
