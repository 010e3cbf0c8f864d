// Which ops this runtime can run: the loader checks every function a load will prepare before
// preparing any (so a bundle with unsupported ops is refused with all of them named at once),
// and `savedmodel-cli show --list_ops` marks the ops it cannot run.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/exec/executor.h"

namespace tensorflow {
class FunctionDef;
class GraphDef;
}  // namespace tensorflow

namespace kiln::exec {

// True when `op` has a CPU kernel, is a call the executor inlines (PartitionedCall,
// StatefulPartitionedCall, or the name of a function in `library`), or is rewritten by the TF1
// loader into one that has (IsVariableInitialized). The one answer to "does kiln run this op":
// the loader's check, `show --list_ops` and coverage tools all ask it.
bool OpIsRunnable(std::string_view op, const FunctionLibrary* library = nullptr);

struct UnsupportedOp {
  std::string op;
  int count = 0;            // nodes using it
  std::string first_node;   // the first such node
  std::string first_where;  // where that node is: "signature 'x'", "function 'f'"
};

// One function the load will prepare, with what to call it in messages.
struct FunctionToCheck {
  std::string where;  // "signature 'serving_default'"
  const tensorflow::FunctionDef* fdef = nullptr;
  // As PrepareOptions::keep_stateful: whether stateful nodes run when no output needs them
  // (TF2 functions) or only what the outputs and control outputs need runs (TF1 sessions).
  bool keep_stateful = true;
  // Functions made from one TF1 main graph share its nodes: a node is counted once however
  // many of them hold it.
  bool main_graph = false;
};

// The ops that running the functions needs (the nodes the executor would keep, in them and in
// every function they call or name in attrs: branches, loop bodies) and this runtime lacks,
// sorted by op name. A function reached twice is counted once.
std::vector<UnsupportedOp> FindUnsupportedOps(std::span<const FunctionToCheck> functions,
                                              const FunctionLibrary& library);

// "2 ops that this runtime does not implement: ParseExample (1 node, first
// 'ParseExample/ParseExample' in signature 'regress'), TRTEngineOp (...)".
std::string DescribeUnsupportedOps(const std::vector<UnsupportedOp>& ops);

// The ops of a graph (its nodes and its library's functions) that this runtime cannot run,
// sorted and unique.
std::vector<std::string> UnrunnableOpsInGraph(const tensorflow::GraphDef& graph);

// The op family (libexec/kernels/op_families.h) that defines the op, as KILN_OP_FAMILIES names
// it: "MatMul" for BatchMatMulV2; "" when the op is unknown.
std::string_view OpFamily(std::string_view op);

// The op families (OpFamily) of a graph's ops, its library's functions' included, sorted and
// unique: what a build with only some families (KILN_OP_FAMILIES) needs to run it.
std::vector<std::string> OpFamiliesOfGraph(const tensorflow::GraphDef& graph);

}  // namespace kiln::exec
