// The state of the functional control-flow nodes (If, While, For, RemoteCall, MapDefun): the
// functions their definitions (kernels/control_flow_ops.cc) prepare and their CPU kernels
// (kernels/cpu/control_flow_ops.cc) run.
#pragma once

#include <memory>
#include <vector>

#include "kernels/control_flow_util.h"
#include "kernels/recurrent_loop.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::control_flow_ops {

struct IfState : OpState {
  control_flow::PreparedPtr then_fn;
  control_flow::PreparedPtr else_fn;
};

struct WhileState : OpState {
  control_flow::PreparedPtr cond_fn;
  control_flow::PreparedPtr body_fn;
  // Set when the loop is a recognised recurrent layer (recurrent_loop.h).
  std::shared_ptr<const RecurrentLoop> recurrent;
  std::shared_ptr<RecurrentLoopCache> recurrent_cache = std::make_shared<RecurrentLoopCache>();
};

struct ForState : OpState {
  control_flow::PreparedPtr body_fn;
};

struct CallState : OpState {
  control_flow::PreparedPtr fn;
};

struct MapDefunState : OpState {
  control_flow::PreparedPtr fn;
  int num_args = 0;
  std::vector<PartialShape> out_shapes;  // per row, for an empty map
};

}  // namespace kiln::exec::control_flow_ops
