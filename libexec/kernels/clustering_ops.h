// Clustering's IsotonicRegression type list, shared by its definitions and its CPU kernels.
#pragma once

#include <cstdint>

#include "kernels/type_lists.h"

namespace kiln::exec::clustering {

// The input dtypes of IsotonicRegression.
using IsotonicTypes = TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t>;

}  // namespace kiln::exec::clustering
