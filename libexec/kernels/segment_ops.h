// Segment's scalar-index helper, shared by its definitions and its CPU kernels.
#pragma once

#include <cstdint>

#include "kiln/core/tensor.h"

namespace kiln::exec::segment {

inline int64_t ScalarIndex(const Tensor& t) {
  return t.dtype() == DType::kInt32 ? t.scalar<int32_t>() : t.scalar<int64_t>();
}

}  // namespace kiln::exec::segment
