// What RestoreV2's definition (kernels/io_ops.cc) and CPU kernel (kernels/cpu/io_ops.cc) share:
// its state (the attr dtypes).
#pragma once

#include <string>
#include <vector>

#include "kernels/kernel_util.h"
#include "kiln/core/tensor.h"

namespace kiln::exec::io {

using RestoreState = TypedOpState<std::vector<DType>>;

}  // namespace kiln::exec::io
