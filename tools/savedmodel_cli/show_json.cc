// JSON output of `show --json`: the facts the text output shows, in the schema documented in
// docs/cli.md. Objects are keyed (and so sorted) by name.
#include <nlohmann/json.hpp>

#include "kiln/exec/op_coverage.h"
#include "model_info.h"
#include "python_format.h"
#include "show.h"
#include "structured_value.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::cli {
namespace {

using nlohmann::json;

// A shape as a list of dims (-1 unknown), or null for unknown rank.
json ShapeJson(const tensorflow::TensorShapeProto& shape) {
  if (shape.unknown_rank()) return nullptr;
  json dims = json::array();
  for (const auto& d : shape.dim()) dims.push_back(d.size());
  return dims;
}

json TensorInfoJson(const tensorflow::TensorInfo& info) {
  std::string dtype = TfDataTypeEnumName(info.dtype());
  if (dtype.empty()) dtype = "DT_" + std::to_string(info.dtype());
  return {{"dtype", dtype}, {"shape", ShapeJson(info.tensor_shape())}, {"name", info.name()}};
}

json SignatureJson(const SignatureFacts& sig) {
  json inputs = json::object(), outputs = json::object();
  for (const auto& t : sig.inputs) inputs[t.key] = TensorInfoJson(*t.proto);
  for (const auto& t : sig.outputs) outputs[t.key] = TensorInfoJson(*t.proto);
  return {{"method_name", sig.method_name}, {"inputs", inputs}, {"outputs", outputs}};
}

json ValueJson(const PyValue& v) {
  using K = PyValue::Kind;
  json j = {{"type", PyTypeName(v)}};
  switch (v.kind) {
    case K::kNone:
    case K::kMissing:
      j["value"] = nullptr;
      break;
    case K::kBool:
      j["value"] = v.b;
      break;
    case K::kInt:
      j["value"] = v.i;
      break;
    case K::kFloat:
      j["value"] = v.f;
      break;
    case K::kString:
      j["value"] = v.s;
      break;
    case K::kTensorSpec:
      j["name"] = v.has_name ? json(v.name) : json(nullptr);
      j["dtype"] = TfDTypePythonName(v.dtype);
      j["shape"] = ShapeJson(v.shape);
      break;
    case K::kList:
    case K::kTuple: {
      json items = json::array();
      for (const auto& item : v.items) items.push_back(ValueJson(item));
      j["items"] = items;
      break;
    }
    case K::kDict:
    case K::kNamedTuple: {
      json items = json::object();
      for (size_t i = 0; i < v.items.size(); ++i) items[v.keys[i]] = ValueJson(v.items[i]);
      j["items"] = items;
      break;
    }
    default:
      j["repr"] = PyRepr(v);
      break;
  }
  return j;
}

json FunctionsJson(const tensorflow::SavedModel& model) {
  const tensorflow::MetaGraphDef* mg = ObjectGraphMetaGraph(model);
  if (mg == nullptr) return nullptr;
  json functions = json::array();
  for (const FunctionFacts& fn : RootFunctions(mg->object_graph_def())) {
    json concretes = json::array();
    for (const ConcreteFunctionFacts& cf : fn.concrete_functions) {
      json c = {{"name", cf.name}, {"args", nullptr}, {"kwargs", nullptr}};
      if (cf.args) {
        json args = json::array();
        for (const auto& a : PyIterate(*cf.args)) args.push_back(ValueJson(a));
        c["args"] = args;
      }
      if (cf.kwargs) {
        json kwargs = json::object();
        for (size_t i = 0; i < cf.kwargs->items.size() && i < cf.kwargs->keys.size(); ++i)
          kwargs[cf.kwargs->keys[i]] = ValueJson(cf.kwargs->items[i]);
        c["kwargs"] = kwargs;
      }
      if (!cf.arg_keywords.empty()) c["arg_keywords"] = cf.arg_keywords;
      concretes.push_back(std::move(c));
    }
    functions.push_back(
        {{"name", fn.name}, {"kind", fn.kind}, {"concrete_functions", std::move(concretes)}});
  }
  return functions;
}

std::vector<std::string> Tags(const tensorflow::MetaGraphDef& mg) {
  return {mg.meta_info_def().tags().begin(), mg.meta_info_def().tags().end()};
}

Result<json> MetaGraphJson(const tensorflow::MetaGraphDef& mg) {
  json sigs = json::object();
  for (const std::string& key : SortedSignatureKeys(mg)) {
    KILN_ASSIGN_OR_RETURN(SignatureFacts sig, GetSignature(mg, key));
    sigs[key] = SignatureJson(sig);
  }
  return json{{"tags", Tags(mg)},
              {"signatures", sigs},
              {"ops", OpsUsedByGraphDef(mg.graph_def())},
              {"unsupported_ops", exec::UnrunnableOpsInGraph(mg.graph_def())}};
}

}  // namespace

Status ShowJson(const tensorflow::SavedModel& model, const ShowOptions& options,
                std::ostream& out) {
  json doc;
  if (options.all) {
    json metas = json::array();
    for (const MetaGraphFacts& facts : SortedMetaGraphs(model)) {
      KILN_ASSIGN_OR_RETURN(json mg, MetaGraphJson(*facts.proto));
      metas.push_back(std::move(mg));
    }
    doc = {{"meta_graphs", metas}, {"functions", FunctionsJson(model)}};
  } else if (!options.tag_set) {
    json sets = json::array();
    for (const MetaGraphFacts& facts : SortedMetaGraphs(model)) sets.push_back(facts.tags);
    doc = {{"tag_sets", sets}};
  } else {
    KILN_ASSIGN_OR_RETURN(const tensorflow::MetaGraphDef* mg,
                          FindMetaGraph(model, *options.tag_set));
    doc = {{"tags", Tags(*mg)}};
    if (options.list_ops) {
      doc["ops"] = OpsUsedByGraphDef(mg->graph_def());
      doc["unsupported_ops"] = exec::UnrunnableOpsInGraph(mg->graph_def());
      doc["op_families"] = exec::OpFamiliesOfGraph(mg->graph_def());
    }
    if (!options.signature_def) {
      doc["signature_keys"] = SortedSignatureKeys(*mg);
    } else {
      KILN_ASSIGN_OR_RETURN(SignatureFacts sig, GetSignature(*mg, *options.signature_def));
      json s = SignatureJson(sig);
      s["key"] = sig.key;
      doc["signature"] = s;
    }
  }
  out << doc.dump(2) << "\n";
  return OkStatus();
}

}  // namespace kiln::cli
