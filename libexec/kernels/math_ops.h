// The Math family's type lists, shared by kernels/math_ops.cc and kernels/cpu/math_ops.cc.
#pragma once

#include <complex>
#include <cstdint>

#include "kernels/type_lists.h"
#include "kiln/core/dtype.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::math {

// Every numeric dtype TF's Cast kernel takes, half precision and complex included.
using CastTypes = TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t,
                           uint8_t, uint16_t, uint32_t, uint64_t, bool, std::complex<float>,
                           std::complex<double>, Float8E5M2, Float8E4M3FN>;

using AddTypes = NumberAndStringTypes;

// Whether TF's Cast with Truncate=True truncates from `src` to `dst`: for these pairs alone
// (cast_op.h's CAST_FUNCTORS) it zeroes the input's mantissa bits that `dst` lacks, then
// converts (so float 0.49999997 becomes bfloat16 0.49804688, not 0.5); the other pairs convert
// as without the attr.
constexpr bool CastTruncates(DType src, DType dst) {
  switch (dst) {
    case DType::kFloat:
    case DType::kComplex64:
      return src == DType::kDouble || src == DType::kComplex128;
    case DType::kHalf:
      return src == DType::kFloat || src == DType::kDouble || src == DType::kComplex64 ||
             src == DType::kComplex128;
    case DType::kBFloat16:
      return src == DType::kFloat;
    default:
      return false;
  }
}

// Cast's state: the destination type, and whether the conversion truncates (CastTruncates and
// the node's Truncate attr).
struct CastState : OpState {
  CastState(DType d, bool t) : dst(d), truncate(t) {}
  DType dst;
  bool truncate;
};

}  // namespace kiln::exec::math
