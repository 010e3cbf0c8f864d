#include "loader/object_graph.h"

#include <algorithm>
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

// The component tensors of a RaggedTensor or SparseTensor signature output, in the order TF's
// signature function returns them (nest.flatten(expand_composites=True)): a RaggedTensor's
// flat_values, then its row splits outermost first; a SparseTensor's indices, values,
// dense_shape. Each is named "<name>.<component>" after the tf.RaggedTensor/tf.SparseTensor
// attribute it holds.
Status CompositeComponents(const tensorflow::TypeSpecProto& ts, const std::string& name,
                           std::vector<TensorSpec>* specs, std::vector<std::string>* names) {
  const auto& state = ts.type_state().tuple_value();
  const std::string what = "output '" + name + "' (" + ts.type_spec_class_name() + ")";
  if (state.values_size() < 2 || !state.values(0).has_tensor_shape_value() ||
      !state.values(1).has_tensor_dtype_value())
    return InvalidArgument(what, ": type state is not (shape, dtype, ...)");
  KILN_ASSIGN_OR_RETURN_CTX(PartialShape shape,
                            PartialShapeFromProto(state.values(0).tensor_shape_value()), what);
  KILN_ASSIGN_OR_RETURN_CTX(DType dtype, DTypeFromProto(state.values(1).tensor_dtype_value()),
                            what);
  const size_t before = specs->size();
  auto add = [&](const std::string& component, DType dt, const PartialShape& s) {
    specs->push_back(TensorSpec{dt, s});
    names->push_back(name + "." + component);
  };
  if (ts.type_spec_class() == tensorflow::TypeSpecProto::SPARSE_TENSOR_SPEC) {
    const int64_t rank = shape.rank();  // -1: unknown
    add("indices", DType::kInt64, PartialShape({-1, rank}));
    add("values", dtype, PartialShape({-1}));
    add("dense_shape", DType::kInt64, PartialShape({rank}));
  } else {
    // (shape, dtype, ragged_rank, row_splits_dtype[, flat_values_spec])
    if (state.values_size() < 4 ||
        state.values(2).kind_case() != tensorflow::StructuredValue::kInt64Value)
      return InvalidArgument(what, ": type state is not (shape, dtype, ragged_rank, ...)");
    const int64_t ragged_rank = state.values(2).int64_value();
    KILN_ASSIGN_OR_RETURN_CTX(DType splits, DTypeFromProto(state.values(3).tensor_dtype_value()),
                              what);
    if (ragged_rank < 0 || (!shape.unknown_rank() && ragged_rank >= std::max(shape.rank(), 1)))
      return InvalidArgument(what, ": ragged_rank ", ragged_rank, " does not fit shape ",
                             shape.ToCliString());
    PartialShape flat = PartialShape::UnknownRank();
    if (state.values_size() > 4 && state.values(4).has_tensor_spec_value()) {
      KILN_ASSIGN_OR_RETURN_CTX(
          flat, PartialShapeFromProto(state.values(4).tensor_spec_value().shape()), what);
    } else if (!shape.unknown_rank()) {
      std::vector<int64_t> dims{-1};
      for (int d = static_cast<int>(ragged_rank) + 1; d < shape.rank(); ++d)
        dims.push_back(shape.dim(d));
      KILN_ASSIGN_OR_RETURN_CTX(flat, PartialShape::FromDims(dims), what);
    }
    add("flat_values", dtype, flat);
    for (int64_t i = 0; i < ragged_rank; ++i)
      add(ragged_rank == 1 ? std::string("row_splits") : "nested_row_splits_" + std::to_string(i),
          splits, PartialShape({-1}));
  }
  if (ts.num_flat_components() != 0 &&
      specs->size() - before != static_cast<size_t>(ts.num_flat_components()))
    return InvalidArgument(what, ": has ", ts.num_flat_components(), " components, expected ",
                           specs->size() - before);
  return OkStatus();
}

Status FlattenLeaves(const tensorflow::StructuredValue& v, const std::string& name,
                     std::vector<TensorSpec>* specs, std::vector<std::string>* names,
                     bool expand_composites = false) {
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
        KILN_RETURN_IF_ERROR(FlattenLeaves(v.tuple_value().values(i),
                                           name + "_" + std::to_string(i), specs, names,
                                           expand_composites));
      return OkStatus();
    case tensorflow::StructuredValue::kListValue:
      for (int i = 0; i < v.list_value().values_size(); ++i)
        KILN_RETURN_IF_ERROR(FlattenLeaves(v.list_value().values(i), name + "_" + std::to_string(i),
                                           specs, names, expand_composites));
      return OkStatus();
    case tensorflow::StructuredValue::kDictValue: {
      std::vector<std::string> keys;
      for (const auto& [k, unused] : v.dict_value().fields()) keys.push_back(k);
      std::sort(keys.begin(), keys.end());
      for (const auto& k : keys)
        KILN_RETURN_IF_ERROR(
            FlattenLeaves(v.dict_value().fields().at(k), k, specs, names, expand_composites));
      return OkStatus();
    }
    case tensorflow::StructuredValue::kNoneValue:
      return OkStatus();
    case tensorflow::StructuredValue::kTypeSpecValue: {
      const auto& ts = v.type_spec_value();
      if (expand_composites &&
          (ts.type_spec_class() == tensorflow::TypeSpecProto::RAGGED_TENSOR_SPEC ||
           ts.type_spec_class() == tensorflow::TypeSpecProto::SPARSE_TENSOR_SPEC))
        return CompositeComponents(ts, name, specs, names);
      return Unimplemented("'", name, "' is a ", ts.type_spec_class_name(),
                           expand_composites
                               ? "; signature outputs may be tensors, RaggedTensors or "
                                 "SparseTensors"
                               : "; only tensor arguments are supported");
    }
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
  if (sig.has_dict_value()) {
    std::vector<std::string> sorted;
    for (const auto& [k, unused] : sig.dict_value().fields()) sorted.push_back(k);
    std::sort(sorted.begin(), sorted.end());
    for (const auto& k : sorted) {
      const auto& leaf = sig.dict_value().fields().at(k);
      const size_t before = names.size();
      KILN_RETURN_IF_ERROR(FlattenLeaves(leaf, k, specs, &names, /*expand_composites=*/true));
      // A composite output gives one key per component ("<key>.flat_values", ...).
      if (leaf.has_type_spec_value())
        keys->insert(keys->end(), names.begin() + static_cast<std::ptrdiff_t>(before), names.end());
      else
        keys->push_back(k);
    }
  } else {
    KILN_RETURN_IF_ERROR(FlattenLeaves(sig, "output", specs, &names, /*expand_composites=*/true));
    for (size_t i = 0; i < specs->size(); ++i) keys->push_back("output_" + std::to_string(i));
  }
  return OkStatus();
}

}  // namespace kiln::exec
