#include "kiln/exec/op_coverage.h"

#include <map>
#include <set>

#include "kernels/op_table_builder.h"
#include "kiln/exec/function_call.h"
#include "kiln/exec/op_table.h"
#include "loader/attr_functions.h"
#include "loader/tf1_control_flow.h"
#include "tensorflow/framework.pb.h"

namespace kiln::exec {
namespace {

// "node:out:0", "node:0", "^node" -> "node".
std::string_view InputNode(std::string_view in) {
  if (!in.empty() && in[0] == '^') in.remove_prefix(1);
  return in.substr(0, in.find(':'));
}

class Checker {
 public:
  explicit Checker(const FunctionLibrary& library) : library_(library) {}

  void Check(const FunctionToCheck& f) {
    main_graph_ = f.main_graph;
    Walk(*f.fdef, f.where, f.keep_stateful);
    main_graph_ = false;
  }

  std::vector<UnsupportedOp> Result() const {
    std::vector<UnsupportedOp> out;
    for (const auto& [op, u] : found_) out.push_back(u);
    return out;
  }

 private:
  void Walk(const tensorflow::FunctionDef& fdef, const std::string& where, bool keep_stateful) {
    if (!visited_.insert(fdef.signature().name() + (keep_stateful ? "/s" : "/p")).second) return;
    const bool main_graph = main_graph_;
    main_graph_ = false;  // functions it calls are ordinary functions
    std::map<std::string_view, int> index;
    for (int i = 0; i < fdef.node_def_size(); ++i) index[fdef.node_def(i).name()] = i;
    // Liveness as the executor's: outputs, control outputs and (TF2) stateful or unknown ops.
    std::vector<int> stack;
    auto push = [&](std::string_view node) {
      auto it = index.find(node);
      if (it != index.end()) stack.push_back(it->second);
    };
    for (const auto& [k, v] : fdef.ret()) push(InputNode(v));
    for (const auto& [k, v] : fdef.control_ret()) push(v);
    if (keep_stateful) {
      for (int i = 0; i < fdef.node_def_size(); ++i) {
        const std::string& op = fdef.node_def(i).op();
        const OpDefinition* def = FindOp(op);
        if (IsFunctionCallOp(op) || library_.Find(op) != nullptr || def == nullptr ||
            (def->flags & kOpStateful) != 0)
          stack.push_back(i);
      }
    }
    std::vector<char> live(fdef.node_def_size(), 0);
    while (!stack.empty()) {
      const int v = stack.back();
      stack.pop_back();
      if (live[v]) continue;
      live[v] = 1;
      for (const std::string& in : fdef.node_def(v).input()) push(InputNode(in));
    }
    for (int i = 0; i < fdef.node_def_size(); ++i) {
      if (!live[i]) continue;
      const tensorflow::NodeDef& n = fdef.node_def(i);
      const std::string id =
          (main_graph ? std::string() : fdef.signature().name()) + "/" + n.name();
      if (!OpIsRunnable(n.op(), &library_) && counted_.insert(id).second) {
        UnsupportedOp& u = found_[n.op()];
        if (u.count++ == 0) {
          u.op = n.op();
          u.first_node = n.name();
          u.first_where = where;
        }
      }
      if (const tensorflow::FunctionDef* callee = library_.Find(n.op()))
        Walk(*callee, "function '" + n.op() + "'", keep_stateful);
      // Called functions, branches and loop bodies: every function-valued attr.
      for (const std::string& fn : AttrFunctions(n))
        if (const tensorflow::FunctionDef* callee = library_.Find(fn))
          Walk(*callee, "function '" + fn + "'", true);
    }
  }

  const FunctionLibrary& library_;
  std::set<std::string> visited_;
  std::set<std::string> counted_;  // nodes already counted
  bool main_graph_ = false;
  std::map<std::string, UnsupportedOp> found_;
};

}  // namespace

bool OpIsRunnable(std::string_view op, const FunctionLibrary* library) {
  if (IsFunctionCallOp(op) || HostDevice()->FindKernel(op) != nullptr) return true;
  // A TF1 graph's IsVariableInitialized becomes VarIsInitializedOp when the loader makes its
  // reference variables explicit (tf1_graph.h).
  if (op == "IsVariableInitialized") return true;
  return library != nullptr && library->Find(op) != nullptr;
}

std::vector<UnsupportedOp> FindUnsupportedOps(std::span<const FunctionToCheck> functions,
                                              const FunctionLibrary& library) {
  Checker checker(library);
  for (const FunctionToCheck& f : functions) checker.Check(f);
  return checker.Result();
}

std::string DescribeUnsupportedOps(const std::vector<UnsupportedOp>& ops) {
  std::string s = internal::StrCat(ops.size(), ops.size() == 1 ? " op" : " ops",
                                   " that this runtime does not implement: ");
  for (size_t i = 0; i < ops.size(); ++i) {
    const UnsupportedOp& u = ops[i];
    s += internal::StrCat(i ? ", " : "", u.op, " (", u.count, u.count == 1 ? " node" : " nodes",
                          ", first '", u.first_node, "' in ", u.first_where, ")");
  }
  s += OpTableNote();  // a build with only some op families says which
  return s;
}

std::vector<std::string> UnrunnableOpsInGraph(const tensorflow::GraphDef& graph) {
  FunctionLibrary library(graph.library());
  std::set<std::string> ops;
  // The main graph's TF1 loops and conditionals become If and While (tf1_control_flow.h).
  for (const auto& n : graph.node())
    if (!OpIsRunnable(n.op(), &library) && !IsTf1ControlFlowOp(n.op())) ops.insert(n.op());
  for (const auto& f : graph.library().function())
    for (const auto& n : f.node_def())
      if (!OpIsRunnable(n.op(), &library)) ops.insert(n.op());
  return {ops.begin(), ops.end()};
}

std::vector<std::string> OpFamiliesOfGraph(const tensorflow::GraphDef& graph) {
  std::set<std::string> families;
  auto add = [&](const std::string& op) {
    if (std::string_view f = OpFamily(op); !f.empty()) families.emplace(f);
  };
  for (const auto& n : graph.node()) add(n.op());
  for (const auto& f : graph.library().function())
    for (const auto& n : f.node_def()) add(n.op());
  return {families.begin(), families.end()};
}

}  // namespace kiln::exec
