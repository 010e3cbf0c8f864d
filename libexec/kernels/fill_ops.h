// What Range's definition (kernels/fill_ops.cc) and CPU kernel (kernels/cpu/fill_ops.cc)
// share: the element count of a range, computed as TF computes it.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/array_util.h"

namespace kiln::exec::fill {

// ---- Range -------------------------------------------------------------------------------------

template <typename T>
Result<int64_t> RangeSize(T start, T limit, T delta) {
  if (delta == 0) return InvalidArgument("requires delta != 0");
  if (delta > 0 && start > limit) {
    return InvalidArgument("requires start <= limit when delta > 0: ", start, "/", limit);
  }
  if (delta < 0 && start < limit) {
    return InvalidArgument("requires start >= limit when delta < 0: ", start, "/", limit);
  }
  if constexpr (std::is_integral_v<T>) {
    const int64_t span = std::abs(static_cast<int64_t>(limit) - static_cast<int64_t>(start));
    const int64_t step = std::abs(static_cast<int64_t>(delta));
    return (span + step - 1) / step;
  } else {
    // In T's precision, as TF computes it: float ranges can differ from a double count.
    const T n = std::ceil(std::abs((limit - start) / delta));
    if (!std::isfinite(n) || n > static_cast<T>(INT64_MAX / 2)) {
      return InvalidArgument("range from ", start, " to ", limit, " by ", delta,
                             " has too many elements");
    }
    return static_cast<int64_t>(n);
  }
}

template <typename T>
Result<int64_t> RangeSizeOf(const Tensor& start, const Tensor& limit, const Tensor& delta) {
  return RangeSize<T>(start.data<T>()[0], limit.data<T>()[0], delta.data<T>()[0]);
}

}  // namespace kiln::exec::fill
