// Compare's type lists and op state, shared by its definitions and its CPU kernels.
#pragma once

#include <complex>
#include <cstdint>
#include <string>

#include "kernels/type_lists.h"
#include "kiln/core/dtype.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::compare {

// TF's Equal and NotEqual also compare quantized values (their stored integers).
using EqualityTypes =
    TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
             uint32_t, uint64_t, bool, std::string, std::complex<float>, std::complex<double>,
             QInt8, QUInt8, QInt16, QUInt16, QInt32>;

struct CompareState : OpState {
  // Equal / NotEqual with incompatible_shape_error=false give a scalar instead of failing.
  bool incompatible_shape_error = true;
};

using SelectTypes = AllTypes;  // it moves elements and computes nothing

}  // namespace kiln::exec::compare
