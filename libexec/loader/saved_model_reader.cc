// ReadSavedModelProto: reads D/saved_model.pb (or D/saved_model.pbtxt) and checks the structure
// that protobuf parsing does not: tags, dtypes, shapes and Const values. `show` and the loader
// both go through here, so a broken bundle is refused the same way by both.
#include <climits>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <system_error>

#include "core/attr_kind.h"
#include "kiln/core/file_util.h"
#include "kiln/core/status.h"
#include "kiln/core/text_proto.h"
#include "kiln/exec/saved_model.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::exec {
namespace fs = std::filesystem;

namespace {

// Every DataType number TensorFlow's types.proto names (including the _REF variants), so a
// bundle that TF itself could describe is accepted even where this runtime cannot compute.
bool IsTensorFlowDataType(int n) { return (n >= 0 && n <= 32) || (n >= 101 && n <= 132); }

std::string ShapeText(const tensorflow::TensorShapeProto& shape) {
  if (shape.unknown_rank()) return "unknown_rank";
  std::string s = "(";
  for (int i = 0; i < shape.dim_size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape.dim(i).size());
  }
  return s + ")";
}

Status CheckTensorInfo(const tensorflow::TensorInfo& info, const std::string& what) {
  if (!IsTensorFlowDataType(info.dtype()))
    return InvalidArgument(what, ": dtype ", info.dtype(), " is not a known DataType");
  for (const auto& dim : info.tensor_shape().dim()) {
    if (dim.size() < -1)
      return InvalidArgument(what, ": shape ", ShapeText(info.tensor_shape()), " has dimension ",
                             dim.size(), " (dimensions must be >= 0, or -1 for unknown)");
  }
  return OkStatus();
}

// Attrs whose kind is fixed by the OpDef of a few ops every SavedModel uses. A fuzzed or
// hand-edited bundle with the wrong kind here would otherwise fail deep inside a kernel.
struct AttrRule {
  const char* op;
  const char* attr;
  AttrKind kind;
};
constexpr AttrRule kAttrRules[] = {
    {"Const", "dtype", AttrKind::kType},
    {"Const", "value", AttrKind::kTensor},
    {"Placeholder", "dtype", AttrKind::kType},
    {"Placeholder", "shape", AttrKind::kShape},
    {"PlaceholderWithDefault", "dtype", AttrKind::kType},
    {"PlaceholderWithDefault", "shape", AttrKind::kShape},
    {"VarHandleOp", "dtype", AttrKind::kType},
    {"VarHandleOp", "shape", AttrKind::kShape},
    {"VarHandleOp", "shared_name", AttrKind::kString},
    {"ReadVariableOp", "dtype", AttrKind::kType},
    {"AssignVariableOp", "dtype", AttrKind::kType},
    {"PartitionedCall", "f", AttrKind::kFunc},
    {"PartitionedCall", "Tin", AttrKind::kTypeList},
    {"PartitionedCall", "Tout", AttrKind::kTypeList},
    {"StatefulPartitionedCall", "f", AttrKind::kFunc},
    {"StatefulPartitionedCall", "Tin", AttrKind::kTypeList},
    {"StatefulPartitionedCall", "Tout", AttrKind::kTypeList},
    {"If", "then_branch", AttrKind::kFunc},
    {"If", "else_branch", AttrKind::kFunc},
    {"StatelessIf", "then_branch", AttrKind::kFunc},
    {"StatelessIf", "else_branch", AttrKind::kFunc},
    {"While", "cond", AttrKind::kFunc},
    {"While", "body", AttrKind::kFunc},
    {"StatelessWhile", "cond", AttrKind::kFunc},
    {"StatelessWhile", "body", AttrKind::kFunc},
};

Status CheckConst(const tensorflow::NodeDef& node) {
  auto it = node.attr().find("value");
  if (it == node.attr().end())
    return InvalidArgument(
        "a Const node is a constant tensor but no value has been provided (no 'value' attr)");
  if (it->second.value_case() != tensorflow::AttrValue::kTensor) return OkStatus();  // rule table
  const tensorflow::TensorProto& value = it->second.tensor();
  const tensorflow::TensorShapeProto& shape = value.tensor_shape();
  bool defined = !shape.unknown_rank();
  for (const auto& dim : shape.dim())
    if (dim.size() < 0) defined = false;
  if (!defined)
    return InvalidArgument("attr 'value' has shape ", ShapeText(shape),
                           ", which is not fully defined (a Const initializes from a tensor "
                           "with -1 elements)");
  if (!IsTensorFlowDataType(value.dtype()))
    return InvalidArgument("attr 'value' has dtype ", value.dtype(),
                           ", which is not a known DataType");
  auto dt = node.attr().find("dtype");
  if (dt != node.attr().end() && dt->second.value_case() == tensorflow::AttrValue::kType &&
      dt->second.type() != value.dtype())
    return InvalidArgument("attr 'value' holds a tensor of DataType ", value.dtype(),
                           " but attr 'dtype' says ", dt->second.type());
  return OkStatus();
}

Status CheckNode(const tensorflow::NodeDef& node) {
  for (const AttrRule& rule : kAttrRules) {
    if (node.op() != rule.op) continue;
    auto it = node.attr().find(rule.attr);
    if (it == node.attr().end()) continue;  // missing attrs are the op's business
    KILN_RETURN_IF_ERROR(CheckAttrKind(rule.attr, it->second, rule.kind));
    if (rule.kind == AttrKind::kType && !IsTensorFlowDataType(it->second.type()))
      return InvalidArgument("attr '", rule.attr, "' holds DataType ", it->second.type(),
                             ", which is not a known DataType");
  }
  if (node.op() == "Const") KILN_RETURN_IF_ERROR(CheckConst(node));
  return OkStatus();
}

std::string TagsText(const tensorflow::MetaGraphDef& mg) {
  std::string s = "[";
  for (int i = 0; i < mg.meta_info_def().tags_size(); ++i) {
    if (i) s += ", ";
    s += "'" + mg.meta_info_def().tags(i) + "'";
  }
  return s + "]";
}

Status CheckObjectGraph(const tensorflow::SavedObjectGraph& og) {
  const int n = og.nodes_size();
  for (int i = 0; i < n; ++i) {
    for (const auto& child : og.nodes(i).children()) {
      if (child.node_id() < 0 || child.node_id() >= n)
        return InvalidArgument("object graph node ", i, " child '", child.local_name(),
                               "' refers to node ", child.node_id(), " but there are ", n,
                               " nodes");
    }
  }
  return OkStatus();
}

Status CheckMetaGraph(const tensorflow::MetaGraphDef& mg) {
  // Sorted, so that the first error reported does not depend on map order.
  std::map<std::string, const tensorflow::SignatureDef*> sigs;
  for (const auto& [key, sig] : mg.signature_def()) sigs[key] = &sig;
  for (const auto& [key, sig] : sigs) {
    std::map<std::string, const tensorflow::TensorInfo*> ins, outs;
    for (const auto& [k, v] : sig->inputs()) ins[k] = &v;
    for (const auto& [k, v] : sig->outputs()) outs[k] = &v;
    for (const auto& [k, v] : ins)
      KILN_RETURN_IF_ERROR(CheckTensorInfo(*v, "signature '" + key + "' input '" + k + "'"));
    for (const auto& [k, v] : outs)
      KILN_RETURN_IF_ERROR(CheckTensorInfo(*v, "signature '" + key + "' output '" + k + "'"));
  }
  for (const auto& node : mg.graph_def().node())
    KILN_RETURN_IF_ERROR_CTX(CheckNode(node), "node '", node.name(), "' (", node.op(), ")");
  for (const auto& fn : mg.graph_def().library().function()) {
    for (const auto& node : fn.node_def())
      KILN_RETURN_IF_ERROR_CTX(CheckNode(node), "function '", fn.signature().name(), "' node '",
                               node.name(), "' (", node.op(), ")");
  }
  if (mg.has_object_graph_def()) KILN_RETURN_IF_ERROR(CheckObjectGraph(mg.object_graph_def()));
  return OkStatus();
}

Status ValidateSavedModel(const tensorflow::SavedModel& sm) {
  if (sm.meta_graphs_size() == 0) return InvalidArgument("it holds no MetaGraphDef");
  for (int i = 0; i < sm.meta_graphs_size(); ++i) {
    const auto& mg = sm.meta_graphs(i);
    if (mg.meta_info_def().tags_size() == 0)
      return InvalidArgument("MetaGraphDef #", i, " has no tags");
    KILN_RETURN_IF_ERROR_CTX(CheckMetaGraph(mg), "MetaGraphDef with tag-set ", TagsText(mg));
  }
  return OkStatus();
}

Result<std::unique_ptr<tensorflow::SavedModel>> ParseFile(const fs::path& dir) {
  const fs::path pb = dir / "saved_model.pb";
  const fs::path pbtxt = dir / "saved_model.pbtxt";
  std::error_code ec;
  auto proto = std::make_unique<tensorflow::SavedModel>();
  if (fs::exists(pb, ec)) {
    KILN_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(pb));
    if (!proto->ParseFromString(bytes))
      return DataLoss("could not parse ", pb.string(),
                      " as a SavedModel protocol buffer (truncated or corrupt)");
    return proto;
  }
  if (fs::exists(pbtxt, ec)) {
    KILN_ASSIGN_OR_RETURN(std::string text, ReadFileToString(pbtxt));
    // Our schema declares only the fields we use; TF's other fields are skipped, as the
    // binary parser keeps them as unknown fields.
    const Status parsed = ParseTextProto(text, proto.get(), {.allow_unknown_fields = true});
    if (!parsed.ok())
      return DataLoss("could not parse ", pbtxt.string(),
                      " as a SavedModel in protobuf text format: ", parsed.message());
    return proto;
  }
  return NotFound("no saved_model.pb or saved_model.pbtxt in ", dir.string());
}

}  // namespace

Result<std::unique_ptr<tensorflow::SavedModel>> ReadSavedModelProto(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec))
    return NotFound("SavedModel directory ", dir.string(), " does not exist");
  if (!fs::is_directory(dir, ec))
    return InvalidArgument("SavedModel path ", dir.string(), " is not a directory");
  try {
    KILN_ASSIGN_OR_RETURN(auto proto, ParseFile(dir));
    const fs::path file =
        fs::exists(dir / "saved_model.pb", ec) ? dir / "saved_model.pb" : dir / "saved_model.pbtxt";
    KILN_RETURN_IF_ERROR_CTX(ValidateSavedModel(*proto), file.string());
    return proto;
  } catch (const std::exception& e) {
    return Internal("reading SavedModel in ", dir.string(), ": ", e.what());
  }
}

Result<std::unique_ptr<tensorflow::SavedModel>> ParseSavedModelProto(std::string_view bytes,
                                                                     std::string_view name) {
  try {
    auto proto = std::make_unique<tensorflow::SavedModel>();
    if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
        !proto->ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
      return DataLoss("could not parse ", name,
                      " as a SavedModel protocol buffer (truncated or corrupt)");
    KILN_RETURN_IF_ERROR_CTX(ValidateSavedModel(*proto), name);
    return proto;
  } catch (const std::exception& e) {
    return Internal("reading SavedModel ", name, ": ", e.what());
  }
}

}  // namespace kiln::exec
