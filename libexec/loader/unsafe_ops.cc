#include "kiln/exec/unsafe_ops.h"

#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "loader/attr_functions.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::exec {
namespace {

struct Rule {
  const char* op;
  const char* why;
};
// Flagged wherever they are.
constexpr Rule kRules[] = {
    {"ReadFile", "reads a file of the host"},
    {"WriteFile", "writes a file of the host"},
    {"MatchingFiles", "lists files of the host"},
    {"ImmutableConst", "maps a file of the host into memory"},
    {"PyFunc", "calls back into the host program"},
    {"PyFuncStateless", "calls back into the host program"},
    {"EagerPyFunc", "calls back into the host program"},
    {"CreateSummaryFileWriter", "creates a summary writer that writes files of the host"},
    {"CreateSummaryDbWriter", "creates a summary writer that writes a database file of the host"},
    {"WriteSummary", "writes a summary to a file of the host"},
    {"WriteScalarSummary", "writes a summary to a file of the host"},
    {"WriteHistogramSummary", "writes a summary to a file of the host"},
    {"WriteImageSummary", "writes a summary to a file of the host"},
    {"WriteAudioSummary", "writes a summary to a file of the host"},
    {"WriteGraphSummary", "writes a summary to a file of the host"},
    {"WriteRawProtoSummary", "writes a summary to a file of the host"},
    {"ImportEvent", "writes a summary to a file of the host"},
    {"FlushSummaryWriter", "flushes a summary writer to a file of the host"},
    {"CloseSummaryWriter", "closes a summary writer of files of the host"},
};
// Checkpoint ops take any path: flagged unless only the bundle's saver uses them (see below).
constexpr Rule kSaverRules[] = {
    {"SaveV2", "writes a checkpoint to any file of the host"},
    {"Save", "writes a checkpoint to any file of the host"},
    {"SaveSlices", "writes a checkpoint to any file of the host"},
    {"MergeV2Checkpoints", "merges (writes and deletes) checkpoint files of the host"},
    {"RestoreV2", "reads a checkpoint from any file of the host"},
    {"Restore", "reads a checkpoint from any file of the host"},
    {"RestoreSlice", "reads a checkpoint from any file of the host"},
};

const char* Why(const tensorflow::NodeDef& node, bool saver_only) {
  for (const Rule& r : kRules)
    if (node.op() == r.op) return r.why;
  if (!saver_only)
    for (const Rule& r : kSaverRules)
      if (node.op() == r.op) return r.why;
  if (node.op() == "PrintV2") {
    auto it = node.attr().find("output_stream");
    if (it != node.attr().end() && std::string_view(it->second.s()).substr(0, 7) == "file://")
      return "prints to a file of the host";
  }
  return nullptr;
}

// "^node", "node:1", "node:out:0" -> "node".
std::string NodeOf(std::string_view input) {
  if (!input.empty() && input[0] == '^') input.remove_prefix(1);
  return std::string(input.substr(0, input.find(':')));
}

// The functions a node calls: its op when that is a library function, and every function
// named in its attrs (f, then_branch, body, ...).
void CalledFunctions(const tensorflow::NodeDef& node, const std::set<std::string>& library,
                     std::vector<std::string>* out) {
  if (library.count(node.op())) out->push_back(node.op());
  for (std::string& f : AttrFunctions(node)) out->push_back(std::move(f));
}

// The main-graph nodes that only the bundle's saver uses: the saver_def's save tensor and
// restore op (TF1's save/SaveV2 and save/restore_all, TF2's calls of __traced_save and
// __traced_restore) and what they read, less anything a signature or an init op also needs
// (a saver_def naming a serving node does not make that node the saver's).
std::set<std::string> SaverOnlyNodes(const tensorflow::MetaGraphDef& mg) {
  std::map<std::string, const tensorflow::NodeDef*> nodes;
  for (const auto& n : mg.graph_def().node()) nodes[n.name()] = &n;
  auto ancestors = [&](std::vector<std::string> stack) {
    std::set<std::string> seen;
    while (!stack.empty()) {
      const std::string name = std::move(stack.back());
      stack.pop_back();
      auto it = nodes.find(name);
      if (it == nodes.end() || !seen.insert(name).second) continue;
      for (const std::string& in : it->second->input()) stack.push_back(NodeOf(in));
    }
    return seen;
  };
  const auto& saver = mg.saver_def();
  std::vector<std::string> saver_roots;
  for (const std::string* t : {&saver.save_tensor_name(), &saver.restore_op_name()})
    if (!t->empty()) saver_roots.push_back(NodeOf(*t));
  if (saver_roots.empty()) return {};
  std::vector<std::string> other_roots;
  for (const auto& [key, sig] : mg.signature_def()) {
    for (const auto& [k, info] : sig.inputs()) other_roots.push_back(NodeOf(info.name()));
    for (const auto& [k, info] : sig.outputs()) other_roots.push_back(NodeOf(info.name()));
  }
  for (const auto& [key, col] : mg.collection_def())
    for (const std::string& n : col.node_list().value()) other_roots.push_back(NodeOf(n));
  std::set<std::string> only = ancestors(saver_roots);
  for (const std::string& n : ancestors(other_roots)) only.erase(n);
  return only;
}

}  // namespace

// Checkpoint ops appear in every bundle: TF2's __traced_save/__traced_restore functions and
// TF1's saver_def nodes. They run only when the bundle is saved or restored through its saver
// (with the path the caller gives), so they are flagged only where something else reaches
// them: a main-graph node outside the saver's part of the graph, or a library function called
// (at any depth) from such a node or from the object graph's functions (signatures and
// restored functions).
std::vector<UnsafeOp> ScanUnsafeOps(const tensorflow::MetaGraphDef& meta_graph) {
  const auto& library = meta_graph.graph_def().library();
  std::set<std::string> fn_names;
  std::map<std::string, const tensorflow::FunctionDef*> fns;
  for (const auto& fn : library.function()) {
    fn_names.insert(fn.signature().name());
    fns[fn.signature().name()] = &fn;
  }
  const std::set<std::string> saver_only = SaverOnlyNodes(meta_graph);
  std::vector<std::string> stack;
  for (const auto& node : meta_graph.graph_def().node())
    if (!saver_only.count(node.name())) CalledFunctions(node, fn_names, &stack);
  for (const auto& [name, cf] : meta_graph.object_graph_def().concrete_functions())
    stack.push_back(name);
  std::set<std::string> reached;
  while (!stack.empty()) {
    const std::string name = std::move(stack.back());
    stack.pop_back();
    auto it = fns.find(name);
    if (it == fns.end() || !reached.insert(name).second) continue;
    for (const auto& node : it->second->node_def()) CalledFunctions(node, fn_names, &stack);
  }

  std::vector<UnsafeOp> found;
  for (const auto& node : meta_graph.graph_def().node())
    if (const char* why = Why(node, saver_only.count(node.name()) != 0))
      found.push_back({node.op(), node.name(), "", why});
  for (const auto& fn : library.function()) {
    const bool saver_fn = !reached.count(fn.signature().name());
    for (const auto& node : fn.node_def())
      if (const char* why = Why(node, saver_fn))
        found.push_back({node.op(), node.name(), fn.signature().name(), why});
  }
  return found;
}

}  // namespace kiln::exec
