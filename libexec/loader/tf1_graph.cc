#include "loader/tf1_graph.h"

#include <map>
#include <set>

#include "graph/flat_graph.h"
#include "loader/loader_common.h"
#include "loader/tf1_control_flow.h"

namespace kiln::exec {
namespace {

// Ops whose output 0 is a reference to a variable (here: its resource handle).
bool OutputsRef(const std::string& op) {
  return op == "VariableV2" || op == "Assign" || op == "AssignAdd" || op == "AssignSub" ||
         op == "StridedSliceAssign";
}

// Ops that take a reference at input 0 (and so get the handle itself).
bool TakesRef(const std::string& op) {
  return op == "Assign" || op == "AssignAdd" || op == "AssignSub" || op == "VarIsInitializedOp" ||
         op == "StridedSliceAssign";
}

// The dtype a ref-producing node's value has.
tensorflow::DataType RefDType(const tensorflow::NodeDef& n) {
  auto it = n.attr().find(n.op() == "VariableV2" ? "dtype" : "T");
  return it == n.attr().end() ? tensorflow::DT_INVALID : it->second.type();
}

// "node:3" -> ("node", 3); "node" -> ("node", 0).
std::pair<std::string, int> SplitTensorName(const std::string& in) {
  const size_t colon = in.rfind(':');
  if (colon == std::string::npos) return {in, 0};
  const std::string idx = in.substr(colon + 1);
  if (idx.empty() || idx.find_first_not_of("0123456789") != std::string::npos) return {in, 0};
  return {in.substr(0, colon), std::stoi(idx)};
}

}  // namespace

std::string NodeOfTensor(const std::string& tensor) {
  std::string t = !tensor.empty() && tensor[0] == '^' ? tensor.substr(1) : tensor;
  return SplitTensorName(t).first;
}

const tensorflow::GraphDef& MainGraph(const tensorflow::GraphDef& graph,
                                      tensorflow::GraphDef* storage) {
  for (const auto& n : graph.node()) {
    if (OutputsRef(n.op()) || n.op() == "IsVariableInitialized") {
      *storage = RewriteRefVariables(graph);
      return *storage;
    }
  }
  return graph;
}

tensorflow::GraphDef RewriteRefVariables(const tensorflow::GraphDef& graph) {
  std::map<std::string, const tensorflow::NodeDef*> by_name;
  for (const auto& n : graph.node()) by_name[n.name()] = &n;
  std::set<std::string> names;
  for (const auto& n : graph.node()) names.insert(n.name());

  tensorflow::GraphDef out;
  out.mutable_versions()->CopyFrom(graph.versions());
  for (const auto& original : graph.node()) {
    tensorflow::NodeDef node = original;
    if (node.op() == "IsVariableInitialized") {
      node.set_op("VarIsInitializedOp");
      node.mutable_attr()->erase("dtype");
    }
    std::vector<std::string> controls;
    for (const std::string& in : node.input())
      if (!in.empty() && in[0] == '^') controls.push_back(in);
    for (int i = 0; i < node.input_size(); ++i) {
      const std::string& in = node.input(i);
      if (in.empty() || in[0] == '^') continue;
      auto [producer_name, index] = SplitTensorName(in);
      auto p = by_name.find(producer_name);
      if (p == by_name.end() || index != 0 || !OutputsRef(p->second->op())) continue;
      if (i == 0 && TakesRef(node.op())) continue;
      // A value read of the ref: a ReadVariableOp that runs when this node runs.
      std::string read_name = node.name() + "/_read_ref_" + std::to_string(i);
      while (names.count(read_name)) read_name += "_";
      names.insert(read_name);
      tensorflow::NodeDef* read = out.add_node();
      read->set_name(read_name);
      read->set_op("ReadVariableOp");
      read->set_device(node.device());
      read->add_input(in);
      for (const std::string& c : controls) read->add_input(c);
      (*read->mutable_attr())["dtype"].set_type(RefDType(*p->second));
      node.set_input(i, read_name);
    }
    *out.add_node() = std::move(node);
  }
  return out;
}

Result<std::unique_ptr<tensorflow::FunctionDef>> Tf1Function(
    const tensorflow::GraphDef& graph, const std::string& name, const std::vector<Tf1Feed>& feeds,
    const std::vector<std::pair<std::string, tensorflow::DataType>>& fetches,
    const std::vector<std::string>& targets,
    std::vector<std::unique_ptr<tensorflow::FunctionDef>>* helpers) {
  auto fdef = std::make_unique<tensorflow::FunctionDef>();
  fdef->mutable_signature()->set_name(name);
  (*fdef->mutable_attr())[kGraphStyleInputsAttr].set_b(true);  // its nodes keep GraphDef names
  std::map<std::string, const tensorflow::NodeDef*> present;
  for (const auto& n : graph.node()) present[n.name()] = &n;
  // "node:k" as a canonical tensor name ("node" is "node:0").
  auto canonical = [](const std::string& t) {
    auto [node, index] = SplitTensorName(t);
    return node + ":" + std::to_string(index);
  };
  // Outputs other than 0 that something reads, per node: a node fed at output 0 whose other
  // outputs are read stays in the graph.
  std::set<std::string> read_beyond_0;
  auto note_read = [&](const std::string& t) {
    if (t.empty() || t[0] == '^') return;
    auto [node, index] = SplitTensorName(t);
    if (index != 0) read_beyond_0.insert(node);
  };
  for (const auto& n : graph.node())
    for (const std::string& in : n.input()) note_read(in);
  for (const auto& f : fetches) note_read(f.first);
  // As Session::Run feeds: output 0 of a node nothing else reads from becomes an argument in
  // its node's place (its name, so the graph's references to it read the argument); any other
  // fed tensor becomes an argument of its own that its readers take, and its node stays for
  // the outputs not fed (TF's `split:0` fed, `split:1` computed).
  std::set<std::string> fed;                       // nodes replaced by an argument
  std::map<std::string, std::string> fed_tensors;  // other fed tensors -> their argument
  std::set<std::string> arg_names;
  for (const Tf1Feed& f : feeds) {
    auto [node, index] = SplitTensorName(f.tensor);
    if (node.empty() || !present.count(node))
      return NotFound("fed tensor '", f.tensor, "' names no graph node");
    const std::string tensor = canonical(f.tensor);
    if (fed.count(node) || fed_tensors.count(tensor))
      return InvalidArgument("'", f.tensor, "' is fed twice");
    std::string arg_name = node;
    if (index != 0 || read_beyond_0.count(node)) {
      arg_name = node + "/_fed_" + std::to_string(index);
      while (present.count(arg_name) || arg_names.count(arg_name)) arg_name += "_";
      fed_tensors[tensor] = arg_name;
    } else {
      fed.insert(node);
    }
    arg_names.insert(arg_name);
    auto* arg = fdef->mutable_signature()->add_input_arg();
    arg->set_name(arg_name);
    arg->set_type(f.dtype);
  }
  auto is_fed_tensor = [&](const std::string& in) {
    return !fed_tensors.empty() && !in.empty() && in[0] != '^' && fed_tensors.count(canonical(in));
  };
  // Only what the fetches and targets need, as Session::Run prunes (fed tensors cut the walk).
  std::set<std::string> needed;
  std::vector<std::string> stack;
  for (const auto& f : fetches)
    if (!is_fed_tensor(f.first)) stack.push_back(NodeOfTensor(f.first));
  for (const std::string& t : targets) stack.push_back(NodeOfTensor(t));
  while (!stack.empty()) {
    const std::string name = std::move(stack.back());
    stack.pop_back();
    auto it = present.find(name);
    if (it == present.end() || fed.count(name) || !needed.insert(name).second) continue;
    for (const std::string& in : it->second->input())
      if (!is_fed_tensor(in)) stack.push_back(NodeOfTensor(in));
  }
  std::vector<tensorflow::NodeDef> nodes;
  for (const auto& n : graph.node()) {
    if (!needed.count(n.name())) continue;
    nodes.push_back(n);
    for (int i = 0; i < nodes.back().input_size(); ++i)
      if (is_fed_tensor(nodes.back().input(i)))
        nodes.back().set_input(i, fed_tensors.at(canonical(nodes.back().input(i))));
  }
  if (HasTf1ControlFlow(nodes)) {
    if (helpers == nullptr)
      return Unimplemented("'", name, "' needs TF1 loops or conditionals, which are not run here");
    std::map<std::string, tensorflow::DataType> fed_dtypes;
    for (size_t i = 0; i < feeds.size(); ++i)
      fed_dtypes[fdef->signature().input_arg(static_cast<int>(i)).name()] = feeds[i].dtype;
    KILN_RETURN_IF_ERROR(FunctionalizeTf1ControlFlow(&nodes, name, fed_dtypes, helpers));
  }
  for (tensorflow::NodeDef& n : nodes) *fdef->add_node_def() = std::move(n);
  for (size_t i = 0; i < fetches.size(); ++i) {
    auto [node, index] = SplitTensorName(fetches[i].first);
    auto producer = present.find(node);
    if (producer == present.end())
      return NotFound("fetched tensor '", fetches[i].first, "' names no graph node");
    const std::string ret = "output_" + std::to_string(i);
    auto* out = fdef->mutable_signature()->add_output_arg();
    out->set_name(ret);
    out->set_type(fetches[i].second);
    if (is_fed_tensor(fetches[i].first)) {  // fetching a fed tensor gives what was fed
      (*fdef->mutable_ret())[ret] = fed_tensors.at(canonical(fetches[i].first));
      continue;
    }
    (*fdef->mutable_ret())[ret] = fetches[i].first;
    if (index == 0 && OutputsRef(producer->second->op())) {
      // Fetching a ref gives its value: read it after the producer ran.
      tensorflow::NodeDef* read = fdef->add_node_def();
      read->set_name(node + "/_fetch_ref_" + std::to_string(i));
      read->set_op("ReadVariableOp");
      read->add_input(node);
      (*read->mutable_attr())["dtype"].set_type(RefDType(*producer->second));
      (*fdef->mutable_ret())[ret] = read->name();
    }
  }
  for (const std::string& t : targets) {
    const std::string node = NodeOfTensor(t);
    if (!present.count(node)) return NotFound("target '", t, "' names no graph node");
    if (fed.count(node)) continue;  // a fed node has nothing to run
    fdef->mutable_signature()->add_control_output(node);
    (*fdef->mutable_control_ret())[node] = node;
  }
  return fdef;
}

Result<std::vector<std::pair<std::string, std::string>>> Tf1AssetFeeds(
    const tensorflow::MetaGraphDef& mg, const std::filesystem::path& dir) {
  std::vector<tensorflow::AssetFileDef> assets(mg.asset_file_def().begin(),
                                               mg.asset_file_def().end());
  if (assets.empty()) {
    auto it = mg.collection_def().find("saved_model_assets");
    if (it != mg.collection_def().end() && it->second.has_any_list()) {
      for (const auto& any : it->second.any_list().value()) {
        tensorflow::AssetFileDef a;
        if (a.ParseFromString(any.value())) assets.push_back(std::move(a));
      }
    }
  }
  std::vector<std::pair<std::string, std::string>> feeds;
  std::set<std::string> seen;  // builders may list an asset twice
  for (const auto& a : assets)
    if (!a.tensor_info().name().empty() && seen.insert(a.tensor_info().name()).second) {
      KILN_ASSIGN_OR_RETURN(std::string path, AssetPath(dir, a.filename()));
      feeds.emplace_back(a.tensor_info().name(), std::move(path));
    }
  return feeds;
}

Result<std::string> Tf1InitOpName(const tensorflow::MetaGraphDef& mg) {
  constexpr char kInitSig[] = "__saved_model_init_op";
  auto sig = mg.signature_def().find(kInitSig);
  if (sig != mg.signature_def().end()) {
    auto out = sig->second.outputs().find(kInitSig);
    if (out == sig->second.outputs().end())
      return InvalidArgument("signature '", kInitSig, "' has no output '", kInitSig, "'");
    return NodeOfTensor(out->second.name());
  }
  for (const char* key : {"saved_model_main_op", "legacy_init_op"}) {
    auto it = mg.collection_def().find(key);
    if (it == mg.collection_def().end()) continue;
    if (!it->second.has_node_list() || it->second.node_list().value_size() != 1)
      return InvalidArgument("collection '", key, "' must list exactly one init op");
    return NodeOfTensor(it->second.node_list().value(0));
  }
  return std::string();
}

}  // namespace kiln::exec
