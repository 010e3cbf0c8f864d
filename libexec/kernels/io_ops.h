// What RestoreV2's definition (kernels/io_ops.cc) and CPU kernel (kernels/cpu/io_ops.cc) share:
// its state (the attr dtypes) and the check that every slice is a whole tensor.
#pragma once

#include <string>
#include <vector>

#include "kernels/kernel_util.h"
#include "kiln/core/tensor.h"

namespace kiln::exec::io {

using RestoreState = TypedOpState<std::vector<DType>>;

Status CheckSlicesAreWhole(const Tensor& names, const Tensor& slices, const auto& error) {
  for (int64_t i = 0; i < slices.NumElements(); ++i) {
    const std::string& s = slices.data<std::string>()[i];
    if (!s.empty()) {
      std::string key = i < names.NumElements() ? names.data<std::string>()[i] : "?";
      Status e = error("shape_and_slices[", i, "] is '", s, "' for '", key,
                       "': only \"\" (whole tensors) is supported");
      return Status(StatusCode::kUnimplemented, e.message());
    }
  }
  return OkStatus();
}

}  // namespace kiln::exec::io
