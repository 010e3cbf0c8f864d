// The state of a Case node: what its definition (kernels/case_ops.cc) prepares and its CPU
// kernel (kernels/cpu/case_ops.cc) runs.
#pragma once

#include <vector>

#include "kernels/control_flow_util.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::case_ops {

struct CaseState : OpState {
  std::vector<control_flow::PreparedPtr> branches;
};

}  // namespace kiln::exec::case_ops
