// Scan's op state, shared by its definitions and its CPU kernels.
#pragma once

#include "kiln/exec/op_table.h"

namespace kiln::exec::scan {

struct ScanState : OpState {
  bool exclusive = false;
  bool reverse = false;
};

}  // namespace kiln::exec::scan
