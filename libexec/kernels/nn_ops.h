// Nn's op state, shared by its definitions and its CPU kernels.
#pragma once

#include "kiln/exec/op_table.h"

namespace kiln::exec::nn {

struct BiasAddState : OpState {
  bool nchw = false;
};

}  // namespace kiln::exec::nn
