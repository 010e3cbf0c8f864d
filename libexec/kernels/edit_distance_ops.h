// What EditDistance's definition (kernels/edit_distance_ops.cc) and CPU kernel
// (kernels/cpu/edit_distance_ops.cc) share: the element types and the state.
#pragma once

#include <complex>
#include <cstdint>
#include <string>

#include "kernels/type_lists.h"
#include "kiln/core/dtype.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::edit_distance {

// TF registers every type (TF_CALL_ALL_TYPES): numbers, bool and strings.
using EditTypes =
    TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
             uint32_t, uint64_t, std::complex<float>, std::complex<double>, bool, std::string>;

struct EditDistanceState : OpState {
  bool normalize = true;
};

}  // namespace kiln::exec::edit_distance
