#include "model_info.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace kiln::cli {

std::vector<MetaGraphFacts> SortedMetaGraphs(const tensorflow::SavedModel& model) {
  std::vector<MetaGraphFacts> out;
  for (const auto& mg : model.meta_graphs()) {
    MetaGraphFacts f;
    f.tags.assign(mg.meta_info_def().tags().begin(), mg.meta_info_def().tags().end());
    f.proto = &mg;
    out.push_back(std::move(f));
  }
  // Python's sorted() over lists of str is stable and compares lists element-wise.
  std::stable_sort(out.begin(), out.end(), [](const MetaGraphFacts& a, const MetaGraphFacts& b) {
    return a.tags < b.tags;
  });
  return out;
}

Result<const tensorflow::MetaGraphDef*> FindMetaGraph(const tensorflow::SavedModel& model,
                                                      const std::string& tag_set) {
  std::set<std::string> wanted;
  std::stringstream ss(tag_set);
  for (std::string tag; std::getline(ss, tag, ',');)
    if (!tag.empty()) wanted.insert(tag);
  std::vector<std::string> available;
  for (const auto& mg : model.meta_graphs()) {
    std::set<std::string> tags(mg.meta_info_def().tags().begin(), mg.meta_info_def().tags().end());
    if (tags == wanted) return &mg;
    std::string joined;
    for (const auto& t : tags) joined += (joined.empty() ? "" : ",") + t;
    available.push_back("'" + joined + "'");
  }
  std::string list;
  for (const auto& a : available) list += (list.empty() ? "" : ", ") + a;
  return NotFound("MetaGraphDef with tag-set '", tag_set,
                  "' could not be found in the SavedModel; available tag-sets: ", list);
}

std::vector<std::string> SortedSignatureKeys(const tensorflow::MetaGraphDef& mg) {
  std::vector<std::string> keys;
  for (const auto& [key, sig] : mg.signature_def()) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

namespace {

std::vector<TensorInfoFacts> SortedInfos(
    const google::protobuf::Map<std::string, tensorflow::TensorInfo>& map) {
  std::vector<TensorInfoFacts> out;
  for (const auto& [key, info] : map) out.push_back({key, &info});
  std::sort(out.begin(), out.end(),
            [](const TensorInfoFacts& a, const TensorInfoFacts& b) { return a.key < b.key; });
  return out;
}

}  // namespace

Result<SignatureFacts> GetSignature(const tensorflow::MetaGraphDef& mg, const std::string& key) {
  auto it = mg.signature_def().find(key);
  if (it == mg.signature_def().end()) {
    std::string list;
    for (const auto& k : SortedSignatureKeys(mg)) list += (list.empty() ? "" : ", ") + k;
    return NotFound("could not find signature '", key,
                    "'; available signatures: ", list.empty() ? "(none)" : list);
  }
  SignatureFacts f;
  f.key = key;
  f.inputs = SortedInfos(it->second.inputs());
  f.outputs = SortedInfos(it->second.outputs());
  f.method_name = it->second.method_name();
  return f;
}

std::vector<std::string> OpsUsedByGraphDef(const tensorflow::GraphDef& graph) {
  std::unordered_map<std::string, const tensorflow::FunctionDef*> functions;
  for (const auto& fn : graph.library().function()) functions[fn.signature().name()] = &fn;
  std::unordered_set<std::string> used;  // ops and function names, as TF collects them
  std::vector<const tensorflow::FunctionDef*> to_process;
  auto mark = [&](const std::string& op) {
    if (!used.count(op)) {
      auto it = functions.find(op);
      if (it != functions.end()) to_process.push_back(it->second);
    }
    used.insert(op);
  };
  auto process = [&](const tensorflow::NodeDef& node) {
    mark(node.op());
    if (node.op() == "PartitionedCall" || node.op() == "StatefulPartitionedCall") {
      auto it = node.attr().find("f");
      // TF reads node.attr["f"].func.name, which is "" when the attr is missing.
      mark(it == node.attr().end() ? std::string() : it->second.func().name());
    }
  };
  for (const auto& node : graph.node()) process(node);
  while (!to_process.empty()) {
    const tensorflow::FunctionDef* fn = to_process.back();
    to_process.pop_back();
    for (const auto& node : fn->node_def()) process(node);
  }
  std::vector<std::string> ops;
  for (const auto& op : used)
    if (!functions.count(op)) ops.push_back(op);
  std::sort(ops.begin(), ops.end());
  return ops;
}

const tensorflow::MetaGraphDef* ObjectGraphMetaGraph(const tensorflow::SavedModel& model) {
  for (const auto& mg : model.meta_graphs())
    if (mg.has_object_graph_def()) return &mg;
  return nullptr;
}

namespace {

ConcreteFunctionFacts ConcreteFacts(const tensorflow::SavedObjectGraph& graph,
                                    const std::string& name) {
  ConcreteFunctionFacts f;
  f.name = name;
  auto it = graph.concrete_functions().find(name);
  if (it == graph.concrete_functions().end() || !it->second.has_canonicalized_input_signature())
    return f;
  PyValue sig = DecodeStructuredValue(it->second.canonicalized_input_signature());
  if (sig.is(PyValue::Kind::kTuple) && sig.items.size() == 2) {
    f.args = sig.items[0];
    f.kwargs = sig.items[1];
  }
  return f;
}

}  // namespace

std::vector<FunctionFacts> RootFunctions(const tensorflow::SavedObjectGraph& graph) {
  std::vector<FunctionFacts> out;
  if (graph.nodes_size() == 0) return out;
  for (const auto& child : graph.nodes(0).children()) {
    if (child.node_id() < 0 || child.node_id() >= graph.nodes_size()) continue;
    const tensorflow::SavedObject& obj = graph.nodes(child.node_id());
    FunctionFacts f;
    f.name = child.local_name();
    if (obj.has_function()) {
      f.kind = "function";
      for (const auto& name : obj.function().concrete_functions())
        f.concrete_functions.push_back(ConcreteFacts(graph, name));
    } else if (obj.has_bare_concrete_function()) {
      f.kind = "bare_concrete_function";
      const auto& bare = obj.bare_concrete_function();
      ConcreteFunctionFacts c = ConcreteFacts(graph, bare.concrete_function_name());
      c.arg_keywords.assign(bare.argument_keywords().begin(), bare.argument_keywords().end());
      f.concrete_functions.push_back(std::move(c));
    } else {
      continue;
    }
    std::stable_sort(f.concrete_functions.begin(), f.concrete_functions.end(),
                     [](const ConcreteFunctionFacts& a, const ConcreteFunctionFacts& b) {
                       return a.name < b.name;
                     });
    out.push_back(std::move(f));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const FunctionFacts& a, const FunctionFacts& b) { return a.name < b.name; });
  return out;
}

}  // namespace kiln::cli
