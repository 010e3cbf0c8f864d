// TF1 control flow made functional. A TF1 graph expresses loops and conditionals with dataflow
// ops that only TensorFlow's frame-and-dead-tensor executor runs: Switch, Merge, Enter, Exit,
// NextIteration and LoopCond (and their Ref forms). This file rewrites a Session graph so none
// of them is left, the way TensorFlow's XLA bridge does (tf2xla's functionalize_control_flow):
//   - each while loop (the nodes of one Enter frame) becomes a While node over a cond and a body
//     function; innermost loops first, so an outer body holds the inner loop's While;
//   - each conditional (the nodes a Switch's output reaches before the Merge that joins them)
//     becomes an If node over a then and an else function; innermost first.
// The rewritten graph keeps every node name a fetch can name: an Exit or a Merge becomes an
// Identity of the While or If output it stood for.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"
#include "tensorflow/framework.pb.h"

namespace kiln::exec {

// Whether `op` is one of the TF1 control-flow ops above (Ref forms included).
bool IsTf1ControlFlowOp(std::string_view op);

// Whether any node is a TF1 control-flow op.
bool HasTf1ControlFlow(const std::vector<tensorflow::NodeDef>& nodes);

// Rewrites `nodes` as above. Inputs naming nodes that are not in `nodes` (fed tensors) are
// outside every loop and conditional; `external_dtypes` gives their dtypes by node name. The
// functions made are appended to `functions`, named `prefix` + "/" + a node's name. Errors
// name the node whose structure is not one tf.compat.v1's while_loop or cond builds.
Status FunctionalizeTf1ControlFlow(
    std::vector<tensorflow::NodeDef>* nodes, const std::string& prefix,
    const std::map<std::string, tensorflow::DataType>& external_dtypes,
    std::vector<std::unique_ptr<tensorflow::FunctionDef>>* functions);

}  // namespace kiln::exec
