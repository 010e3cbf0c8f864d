// What the position ops' definitions (kernels/index_ops.cc) and CPU kernels
// (kernels/cpu/index_ops.cc) share: their states, dtype lists, OneHot's axis check and TopKV2's k
// reader.
#pragma once

#include <complex>
#include <cstdint>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/nd_index.h"
#include "kernels/type_lists.h"

namespace kiln::exec::index {

// ---- OneHot ----------------------------------------------------------------------------------

using AxisState = TypedOpState<int64_t>;

inline Status CheckOneHotAxis(int64_t axis, int indices_rank) {
  if (axis < -1 || axis > indices_rank) {
    return InvalidArgument("expected axis to be -1 or between [0, ", indices_rank + 1,
                           "), but received: ", axis);
  }
  return OkStatus();
}

// ---- TopKV2 ----------------------------------------------------------------------------------

struct TopKState : OpState {
  DType index_type = DType::kInt32;
  int64_t attr_k = -1;  // ApproxTopK's k (an attr); TopKV2 reads its k input
};

inline Result<int64_t> ReadK(const Tensor& k) {
  if (k.NumElements() != 1) {
    return InvalidArgument("input 'k' must be a scalar, got shape ", k.shape().ToString());
  }
  int64_t v = 0;
  KILN_RETURN_IF_ERROR(DispatchIndex(k.dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    v = IndexAt(k.data<I>(), 0);
    return OkStatus();
  }));
  if (v < 0) return InvalidArgument("need k >= 0, got ", v);
  return v;
}

// ---- Where -----------------------------------------------------------------------------------

using WhereTypes =
    TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
             uint32_t, uint64_t, bool, std::complex<float>, std::complex<double>>;

// ---- LowerBound, UpperBound ------------------------------------------------------------------

// TF's registrations: the real number types.
using SearchTypes = RealTypes;

}  // namespace kiln::exec::index
