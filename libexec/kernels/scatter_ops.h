// What the scatter ops' definitions (kernels/scatter_ops.cc) and CPU kernels
// (kernels/cpu/scatter_ops.cc) share: their dtype lists, the combine mode and state, and TF's
// scatter shape rules.
#pragma once

#include <complex>
#include <cstdint>
#include <span>
#include <string>

#include "kernels/array_util.h"
#include "kernels/nd_index.h"
#include "kernels/type_lists.h"

namespace kiln::exec::scatter {

using ScatterAddTypes =
    TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
             uint32_t, uint64_t, bool, std::string, std::complex<float>, std::complex<double>>;
using ArithmeticTypes =
    TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
             uint32_t, uint64_t, std::complex<float>, std::complex<double>>;
// TF 1's ScatterNdNonAliasingAdd also adds bool (or).
using NonAliasingAddTypes =
    TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
             uint32_t, uint64_t, std::complex<float>, std::complex<double>, bool>;

enum class Combine { kUpdate, kAdd, kSub, kMax, kMin };

struct ScatterState : OpState {
  Combine combine = Combine::kUpdate;
  bool ignore_bad = false;
  bool into_zeros = false;  // ScatterNd
};

// TF's scatter shape rules: indices [..., K]; updates = indices.shape[:-1] + shape[K:].
// Dims may be -1 (unknown) at prepare time; those pass.
inline Status CheckScatterShapes(std::span<const int64_t> shape, std::span<const int64_t> indices,
                                 std::span<const int64_t> updates) {
  if (indices.empty()) return InvalidArgument("indices must have rank at least 1, got a scalar");
  const int64_t k = indices.back();
  if (k > static_cast<int64_t>(shape.size())) {
    return InvalidArgument("the last dimension of indices (", k,
                           ") must not exceed the rank of the output shape ", ShapeBrackets(shape));
  }
  const size_t batch = indices.size() - 1;
  auto same = [](int64_t a, int64_t b) { return a < 0 || b < 0 || a == b; };
  bool ok = updates.size() >= batch;
  for (size_t d = 0; ok && d < batch; ++d) ok = same(indices[d], updates[d]);
  if (ok && k >= 0) {  // K unknown at prepare time: only the batch dims can be checked
    const size_t slice_rank = shape.size() - k;
    ok = updates.size() == batch + slice_rank;
    for (size_t d = 0; ok && d < slice_rank; ++d) ok = same(shape[k + d], updates[batch + d]);
  }
  if (!ok) {
    return InvalidArgument("updates of shape ", ShapeBrackets(updates),
                           " must have shape indices.shape[:-1] + shape[indices.shape[-1]:] "
                           "for indices of shape ",
                           ShapeBrackets(indices), " into shape ", ShapeBrackets(shape));
  }
  return OkStatus();
}

}  // namespace kiln::exec::scatter
