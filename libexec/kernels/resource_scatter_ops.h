// The state of the row-access nodes on resource variables: what their definitions
// (kernels/resource_scatter_ops.cc) read and their CPU kernels
// (kernels/cpu/resource_scatter_ops.cc) apply.
#pragma once

#include "kernels/strided_slice.h"
#include "kiln/core/dtype.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::resource_scatter {

struct GatherState : OpState {
  int batch_dims = 0;
  DType dtype = DType::kInvalid;
};

// The combination a ResourceScatter[Nd]<Op> node applies.
enum class ScatterOp { kUpdate, kAdd, kSub, kMul, kDiv, kMin, kMax };

struct SliceAssignState : OpState {
  SliceMasks masks;
};

}  // namespace kiln::exec::resource_scatter
