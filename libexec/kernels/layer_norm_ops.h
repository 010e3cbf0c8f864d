// _MklLayerNorm's op state, shared by its definition and its CPU kernel.
#pragma once

#include "kiln/exec/op_table.h"

namespace kiln::exec::layer_norm {

struct LayerNormState : OpState {
  float epsilon = 0.001f;
};

}  // namespace kiln::exec::layer_norm
