#include "loader/object_graph.h"

#include <deque>

#include "kiln/core/proto_convert.h"

namespace kiln::exec {

std::vector<std::string> ObjectPaths(const tensorflow::SavedObjectGraph& graph) {
  std::vector<std::string> paths(graph.nodes_size());
  std::vector<char> seen(graph.nodes_size(), 0);
  if (graph.nodes_size() == 0) return paths;
  std::deque<int> queue{0};
  seen[0] = 1;
  while (!queue.empty()) {
    int id = queue.front();
    queue.pop_front();
    for (const auto& ref : graph.nodes(id).children()) {
      int c = ref.node_id();
      if (c < 0 || c >= graph.nodes_size() || seen[c]) continue;
      seen[c] = 1;
      paths[c] = paths[id].empty() ? ref.local_name() : paths[id] + "/" + ref.local_name();
      queue.push_back(c);
    }
  }
  return paths;
}

std::vector<int> MatchCheckpointNodes(const tensorflow::SavedObjectGraph& graph,
                                      const tensorflow::TrackableObjectGraph& checkpoint) {
  std::vector<int> to_ckpt(graph.nodes_size(), -1);
  if (graph.nodes_size() == 0 || checkpoint.nodes_size() == 0) return to_ckpt;
  to_ckpt[0] = 0;
  std::vector<int> queue{0};
  for (size_t qi = 0; qi < queue.size(); ++qi) {
    const int id = queue[qi];
    const auto& cnode = checkpoint.nodes(to_ckpt[id]);
    for (const auto& ref : graph.nodes(id).children()) {
      const int child = ref.node_id();
      if (child < 0 || child >= graph.nodes_size() || to_ckpt[child] >= 0) continue;
      for (const auto& cref : cnode.children()) {
        if (cref.local_name() == ref.local_name() && cref.node_id() >= 0 &&
            cref.node_id() < checkpoint.nodes_size()) {
          to_ckpt[child] = cref.node_id();
          queue.push_back(child);
          break;
        }
      }
    }
  }
  return to_ckpt;
}

int FindChild(const tensorflow::SavedObject& node, const std::string& name) {
  for (const auto& ref : node.children())
    if (ref.local_name() == name) return ref.node_id();
  return -1;
}

namespace {

Status FlattenLeaves(const tensorflow::StructuredValue& v, const std::string& name,
                     std::vector<TensorSpec>* specs, std::vector<std::string>* names) {
  switch (v.kind_case()) {
    case tensorflow::StructuredValue::kTensorSpecValue: {
      TensorSpec s;
      KILN_ASSIGN_OR_RETURN(s.dtype, DTypeFromProto(v.tensor_spec_value().dtype()));
      KILN_ASSIGN_OR_RETURN(s.shape, PartialShapeFromProto(v.tensor_spec_value().shape()));
      specs->push_back(s);
      names->push_back(v.tensor_spec_value().name().empty() ? name : v.tensor_spec_value().name());
      return OkStatus();
    }
    case tensorflow::StructuredValue::kTupleValue:
      for (int i = 0; i < v.tuple_value().values_size(); ++i)
        KILN_RETURN_IF_ERROR(
            FlattenLeaves(v.tuple_value().values(i), name + "_" + std::to_string(i), specs, names));
      return OkStatus();
    case tensorflow::StructuredValue::kListValue:
      for (int i = 0; i < v.list_value().values_size(); ++i)
        KILN_RETURN_IF_ERROR(
            FlattenLeaves(v.list_value().values(i), name + "_" + std::to_string(i), specs, names));
      return OkStatus();
    case tensorflow::StructuredValue::kDictValue: {
      std::vector<std::string> keys;
      for (const auto& [k, unused] : v.dict_value().fields()) keys.push_back(k);
      std::sort(keys.begin(), keys.end());
      for (const auto& k : keys)
        KILN_RETURN_IF_ERROR(FlattenLeaves(v.dict_value().fields().at(k), k, specs, names));
      return OkStatus();
    }
    case tensorflow::StructuredValue::kNoneValue:
      return OkStatus();
    default:
      return Unimplemented("argument '", name, "' is not a tensor (structured value kind ",
                           static_cast<int>(v.kind_case()),
                           "); only tensor arguments are supported");
  }
}

}  // namespace

Status FlattenInputSignature(const tensorflow::StructuredValue& sig, std::vector<TensorSpec>* specs,
                             std::vector<std::string>* names) {
  if (!sig.has_tuple_value() || sig.tuple_value().values_size() != 2)
    return InvalidArgument("canonicalized_input_signature is not an (args, kwargs) pair");
  const auto& args = sig.tuple_value().values(0);
  for (int i = 0; i < args.tuple_value().values_size(); ++i)
    KILN_RETURN_IF_ERROR(
        FlattenLeaves(args.tuple_value().values(i), "arg_" + std::to_string(i), specs, names));
  return FlattenLeaves(sig.tuple_value().values(1), "kwargs", specs, names);
}

Status FlattenOutputSignature(const tensorflow::StructuredValue& sig,
                              std::vector<std::string>* keys, std::vector<TensorSpec>* specs) {
  std::vector<std::string> names;
  KILN_RETURN_IF_ERROR(FlattenLeaves(sig, "output", specs, &names));
  if (sig.has_dict_value()) {
    for (const auto& [k, unused] : sig.dict_value().fields()) keys->push_back(k);
    std::sort(keys->begin(), keys->end());
  } else {
    for (size_t i = 0; i < specs->size(); ++i) keys->push_back("output_" + std::to_string(i));
  }
  return OkStatus();
}

}  // namespace kiln::exec
