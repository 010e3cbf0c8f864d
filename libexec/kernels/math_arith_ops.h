// MathArith's type lists and op state, shared by its definitions and its CPU kernels.
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

#include "kernels/type_lists.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::math_arith {

// TF's CPU kernels: every real type and bool; ZerosLike also strings (empty ones).
using ZerosLikeTypes = NumberBoolStringTypes;
using OnesLikeTypes =
    TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
             uint32_t, uint64_t, bool, std::complex<float>, std::complex<double>>;

using BucketizeTypes = TypeList<int32_t, int64_t, float, double>;

struct BucketizeState : OpState {
  std::vector<float> boundaries;
};

}  // namespace kiln::exec::math_arith
