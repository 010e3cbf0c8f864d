#include "host_scalar.h"

#include <cmath>
#include <limits>
#include <type_traits>

#include "kiln/trace/ops.h"

namespace kiln::trace::internal {
namespace {

template <typename T>
Value ScalarOf(DType dtype, double v) {
  if constexpr (std::is_floating_point_v<T>) {
    return Constant(Tensor::Scalar<T>(static_cast<T>(v)));
  } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // [min, 2^digits) in doubles: both bounds are exact powers of two.
    const double hi = std::ldexp(1.0, std::numeric_limits<T>::digits);
    const double lo = std::is_signed_v<T> ? -hi : 0.0;
    if (!(v >= lo && v < hi) || std::trunc(v) != v) {
      return Value::Error(InvalidArgument("the host number ", v, " does not fit ",
                                          DTypeShortName(dtype), " (a whole number in range)"));
    }
    return Constant(Tensor::Scalar<T>(static_cast<T>(v)));
  } else {
    return Value::Error(
        InvalidArgument("cannot combine a host number with a ", DTypeShortName(dtype), " value"));
  }
}

}  // namespace

Value HostScalar(DType dtype, double v) {
  switch (dtype) {
#define KILN_X(e, n, T, ...) \
  case DType::e:             \
    return ScalarOf<T>(dtype, v);
    KILN_DTYPES(KILN_X)
#undef KILN_X
    default:
      return Value::Error(
          InvalidArgument("cannot combine a host number with a ", DTypeShortName(dtype), " value"));
  }
}

Value HostScalar(const Value& like, double v) {
  if (!like.ok()) return like;
  return HostScalar(like.dtype(), v);
}

}  // namespace kiln::trace::internal
