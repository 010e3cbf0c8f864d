// The state of an EagerPyFunc node: the callback its definition (kernels/host_callback_ops.cc)
// finds and its CPU kernel (kernels/cpu/host_callback_ops.cc) calls.
#pragma once

#include <memory>
#include <vector>

#include "kernels/host_callback.h"
#include "kiln/core/dtype.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::host_callback {

struct HostCallbackState : OpState {
  std::shared_ptr<const HostCallbackEntry> entry;
  std::vector<DType> tout;
};

}  // namespace kiln::exec::host_callback
