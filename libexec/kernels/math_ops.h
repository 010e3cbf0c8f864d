// The Math family's type lists, shared by kernels/math_ops.cc and kernels/cpu/math_ops.cc.
#pragma once

#include <complex>
#include <cstdint>

#include "kernels/type_lists.h"

namespace kiln::exec::math {

// Every numeric dtype TF's Cast kernel takes, half precision and complex included.
using CastTypes = TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t,
                           uint8_t, uint16_t, uint32_t, uint64_t, bool, std::complex<float>,
                           std::complex<double>, Float8E5M2, Float8E4M3FN>;

using AddTypes = NumberAndStringTypes;

}  // namespace kiln::exec::math
