// What the position ops' definitions (kernels/index_ops.cc) and CPU kernels
// (kernels/cpu/index_ops.cc) share: their states, dtype lists, OneHot's checks and sizes (also the
// GPU's, kernels/cuda/fill.cu) and TopKV2's k reader.
#pragma once

#include <complex>
#include <cstdint>

#include "kernels/array_util.h"
#include "kernels/host_device.h"
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

// OneHot's output: indices as [prefix, suffix] around the attr's axis, `depth` values inserted
// there; the checks of both devices' kernels (depth, on_value and off_value in host memory).
struct OneHotGeom {
  Shape shape;
  int64_t depth = 0, prefix = 1, suffix = 1;
};
inline Result<OneHotGeom> OneHotGeomOf(const Tensor& indices, const Tensor& depth, const Tensor& on,
                                       const Tensor& off, int64_t axis_attr) {
  KILN_RETURN_IF_ERROR(CheckOneHotAxis(axis_attr, indices.rank()));
  if (indices.rank() >= kMaxRank) return InvalidArgument("indices have rank ", indices.rank());
  const Tensor* scalars[] = {&depth, &on, &off};
  for (int i = 0; i < 3; ++i) {
    if (scalars[i]->NumElements() != 1)
      return InvalidArgument("inputs depth, on_value and off_value must be scalars, got input ",
                             i + 1, " of shape ", scalars[i]->shape().ToString());
  }
  OneHotGeom g;
  g.depth = depth.data<int32_t>()[0];
  if (g.depth < 0) return InvalidArgument("depth must be non-negative, got: ", g.depth);
  const int axis = static_cast<int>(axis_attr < 0 ? indices.rank() : axis_attr);
  for (int d = 0; d < indices.rank(); ++d) {
    if (d == axis) g.shape.AddDim(g.depth);
    g.shape.AddDim(indices.dim(d));
    (d < axis ? g.prefix : g.suffix) *= indices.dim(d);
  }
  if (axis == indices.rank()) g.shape.AddDim(g.depth);
  return g;
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

// The k largest along the last axis of x, as [rows, cols] -> [rows, k]: both devices' checks.
struct TopKGeom {
  Shape shape;  // of values and indices
  int64_t rows = 0, cols = 0, k = 0;
};
inline Result<TopKGeom> TopKGeomOf(const Tensor& x, const TopKState& st, const Tensor* k_input) {
  if (x.rank() == 0) return InvalidArgument("input must be >= 1-D, got shape []");
  TopKGeom g;
  if (st.attr_k >= 0) {
    g.k = st.attr_k;
  } else {
    KILN_ASSIGN_OR_RETURN(g.k, ReadK(*k_input));
  }
  g.cols = x.dim(x.rank() - 1);
  if (g.k > g.cols)
    return InvalidArgument("input must have at least k columns. Had ", g.cols, ", needed ", g.k);
  g.shape = x.shape();
  g.shape.set_dim(x.rank() - 1, g.k);
  g.rows = g.cols == 0 ? 0 : x.NumElements() / g.cols;
  return g;
}

// a before b: larger first, NaN largest (as TF's CPU kernel orders them); equal values are
// ordered by index by the caller.
template <typename C>
KILN_HD bool TopKBefore(C a, C b) {
  if constexpr (kIsFloating<C>) {
    const bool na = a != a, nb = b != b;  // NOLINT(misc-redundant-expression): NaN tests
    if (na || nb) return na && !nb;
  }
  return b < a;
}

// ---- Where -----------------------------------------------------------------------------------

using WhereTypes =
    TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
             uint32_t, uint64_t, bool, std::complex<float>, std::complex<double>>;

// ---- LowerBound, UpperBound ------------------------------------------------------------------

// TF's registrations: the real number types.
using SearchTypes = RealTypes;

}  // namespace kiln::exec::index
