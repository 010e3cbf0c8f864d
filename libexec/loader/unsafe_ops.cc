#include "kiln/exec/unsafe_ops.h"

#include <string_view>

#include "tensorflow/saved_model.pb.h"

namespace kiln::exec {
namespace {

struct Rule {
  const char* op;
  const char* why;
};
constexpr Rule kRules[] = {
    {"ReadFile", "reads a file of the host"},
    {"WriteFile", "writes a file of the host"},
    {"MatchingFiles", "lists files of the host"},
    {"ImmutableConst", "maps a file of the host into memory"},
    {"PyFunc", "calls back into the host program"},
    {"PyFuncStateless", "calls back into the host program"},
    {"EagerPyFunc", "calls back into the host program"},
};

const char* Why(const tensorflow::NodeDef& node) {
  for (const Rule& r : kRules)
    if (node.op() == r.op) return r.why;
  if (node.op() == "PrintV2") {
    auto it = node.attr().find("output_stream");
    if (it != node.attr().end() && std::string_view(it->second.s()).substr(0, 7) == "file://")
      return "prints to a file of the host";
  }
  return nullptr;
}

}  // namespace

std::vector<UnsafeOp> ScanUnsafeOps(const tensorflow::MetaGraphDef& meta_graph) {
  std::vector<UnsafeOp> found;
  for (const auto& node : meta_graph.graph_def().node())
    if (const char* why = Why(node)) found.push_back({node.op(), node.name(), "", why});
  for (const auto& fn : meta_graph.graph_def().library().function())
    for (const auto& node : fn.node_def())
      if (const char* why = Why(node))
        found.push_back({node.op(), node.name(), fn.signature().name(), why});
  return found;
}

}  // namespace kiln::exec
