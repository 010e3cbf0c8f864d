// MathArith's type lists and op state, shared by its definitions and its CPU kernels.
#pragma once

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/type_lists.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::math_arith {

// TF's CPU kernels: every number type and bool; ZerosLike also strings (empty ones); both
// ZerosLike and AddN variants (tensor lists, element by element).
using ZerosLikeTypes = TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t,
                                uint8_t, uint16_t, uint32_t, uint64_t, bool, std::string,
                                std::complex<float>, std::complex<double>, VariantPtr>;
using AddNTypes =
    TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
             uint32_t, uint64_t, std::complex<float>, std::complex<double>, VariantPtr>;
using OnesLikeTypes =
    TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
             uint32_t, uint64_t, bool, std::complex<float>, std::complex<double>>;

using BucketizeTypes = TypeList<int32_t, int64_t, float, double>;

struct BucketizeState : OpState {
  std::vector<float> boundaries;
};

}  // namespace kiln::exec::math_arith
