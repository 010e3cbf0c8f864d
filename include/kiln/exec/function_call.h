// Which ops call a library function.
#pragma once

#include <string_view>

namespace kiln::exec {

// Ops that call the library function in attr `f` with their inputs as its arguments and give its
// results as their outputs; the importer inlines them. BatchFunction (TF Serving's in-graph
// batching: `f` over in_tensors, then captured_tensors) is one: batching concurrent requests is
// the server's job here (--enable_batching), and each call gets what TF's batched run gives it.
inline bool IsFunctionCallOp(std::string_view op) {
  return op == "PartitionedCall" || op == "StatefulPartitionedCall" || op == "BatchFunction";
}

}  // namespace kiln::exec
