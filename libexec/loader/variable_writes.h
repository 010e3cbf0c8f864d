// Which of a TF2 SavedModel's variables its functions may write: the loader freezes the others
// (LoadOptions::freeze_variables), so a bundle whose training functions update some variables
// (tf.keras's batch norms assign their moving averages) still serves with its weights folded.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kiln/exec/executor.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::exec {

// The object-graph ids of the variables whose handle, captured by one of the concrete
// functions `roots`, reaches an op that assigns, updates or destroys a resource (through
// Identity nodes, calls, While/If/Case bodies); nullopt when a write cannot be traced to a
// captured variable (an op this runtime does not know, a handle made or passed in at run time).
std::optional<std::set<int>> WrittenVariables(const tensorflow::SavedObjectGraph& graph,
                                              const FunctionLibrary& library,
                                              const std::vector<std::string>& roots);

}  // namespace kiln::exec
