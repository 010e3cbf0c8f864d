// The per-call memory of one prepared function: the frame of slots, the planned buffers over
// one arena per device, and kernel scratch per device. A function keeps a pool of these and
// reuses them, so a steady call allocates nothing.
#pragma once

#include <memory>
#include <vector>

#include "kiln/core/tensor.h"
#include "kiln/exec/executor.h"

namespace kiln::exec {

class ExecutionState {
 public:
  std::vector<Tensor> slots;
  // Per slot: its arena buffer, or null.
  std::vector<std::shared_ptr<TensorBuffer>> planned;
  // Per device of the function.
  std::vector<std::unique_ptr<ScratchArena>> scratch;
  // Recording and replay (device_graph.cc; PrepareOptions::device_graphs): the calls run so
  // far, whether recording failed, and once made the graph with the host buffers it reads the
  // arguments from and writes the results to (per output; constants stay unset).
  int calls = 0;
  bool graph_failed = false;
  std::unique_ptr<DeviceGraph> graph;
  std::vector<Tensor> graph_args;
  std::vector<Tensor> graph_outputs;
};

}  // namespace kiln::exec
