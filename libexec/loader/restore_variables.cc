// Variables restored from the checkpoint, other captures, resources, saveables and the save op.
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string_view>

#include "kiln/core/proto_convert.h"
#include "kiln/exec/function_call.h"
#include "kiln/exec/op_table.h"
#include "kiln/exec/resources.h"
#include "kiln/exec/tensor_bundle.h"
#include "loader/loader_common.h"
#include "loader/object_graph.h"
#include "loader/saved_model_loader.h"
#include "loader/tf1_graph.h"
#include "loader/variable_writes.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::exec {

Status SavedModelLoader::CreateVariables() {
  for (int id = 0; id < graph_->nodes_size(); ++id) {
    const auto& obj = graph_->nodes(id);
    if (!obj.has_variable()) continue;
    const auto& v = obj.variable();
    const std::string where = "variable '" + paths_[id] + "' (object " + std::to_string(id) + ")";
    KILN_ASSIGN_OR_RETURN_CTX(DType dtype, DTypeFromProto(v.dtype()), where);
    KILN_ASSIGN_OR_RETURN_CTX(PartialShape shape, PartialShapeFromProto(v.shape()), where);
    auto var = std::make_shared<VariableResource>(paths_[id].empty() ? v.name() : paths_[id], dtype,
                                                  shape);
    captures_[id] = ResourceTensor(var);
    sources_[id].variable = static_cast<int>(core().variables.size());
    variable_ids_[id] = core().variables.size();
    core().variables.push_back({var->name(), var, v.trainable()});
  }
  return OkStatus();
}

Status SavedModelLoader::RestoreVariables() {
  const auto prefix = dir_ / "variables" / "variables";
  const bool has_index = std::filesystem::exists(prefix.string() + ".index");
  if (!has_index) {
    if (!variable_ids_.empty() && !given_variables_optional_)
      return NotFound("'", dir_.string(), "' has ", variable_ids_.size(),
                      " variables but no variables/variables.index");
    return OkStatus();
  }
  BundleReadOptions read_options;
  read_options.verify_checksums = options_.verify_checksums;
  read_options.threads = core().threads.get();
  KILN_ASSIGN_OR_RETURN_CTX(checkpoint_, BundleReader::Open(prefix, read_options),
                            "restoring variables of '", dir_.string(), "'");
  BundleReader* reader = checkpoint_.get();
  KILN_ASSIGN_OR_RETURN_CTX(Tensor graph_str, reader->Read(kObjectGraphKey), "restoring variables");
  if (graph_str.dtype() != DType::kString || graph_str.NumElements() != 1)
    return DataLoss("checkpoint entry ", kObjectGraphKey, " is not a scalar string");
  tensorflow::TrackableObjectGraph& ckpt = checkpoint_graph_;
  if (!ckpt.ParseFromString(graph_str.scalar<std::string>()))
    return DataLoss("checkpoint entry ", kObjectGraphKey, " of '", dir_.string(),
                    "' is not a TrackableObjectGraph");
  to_checkpoint_ = MatchCheckpointNodes(*graph_, ckpt);
  const std::vector<int>& to_ckpt = to_checkpoint_;
  KILN_RETURN_IF_ERROR(CheckCheckpointCoversObjects());
  plan_facts().checkpoint_keys.resize(core().variables.size());
  for (const auto& [id, index] : variable_ids_) {
    auto& var = core().variables[index];
    for (const auto& attr : ckpt.nodes(to_ckpt[id]).attributes()) {
      if (attr.name() != "VARIABLE_VALUE") continue;
      key_to_var_[attr.checkpoint_key()] = var.resource;
      plan_facts().checkpoint_keys[index] = attr.checkpoint_key();
      // TF saves a variable that was never initialised with its key listed but no value:
      // it stays uninitialised here too, and reading it says so.
      if (!reader->Contains(attr.checkpoint_key())) continue;
      KILN_ASSIGN_OR_RETURN_CTX(Tensor value, reader->Read(attr.checkpoint_key()),
                                "restoring variable '", var.path, "'");
      KILN_RETURN_IF_ERROR_CTX(var.resource->Assign(value), "restoring variable '", var.path,
                               "' from checkpoint key '", attr.checkpoint_key(), "'");
    }
  }
  return OkStatus();
}

// TF's assert_existing_objects_matched: every object of the model that a checkpoint holds values
// for (variables, saveables) must be an object of the checkpoint's object graph. A variables/
// directory written by another model (or holding none of this model's objects) fails here,
// naming them, not at the first read with "read before any assignment". A variable that the
// checkpoint lists without a value is matched: that is how TF saves a variable never
// initialised (UninitializedVariable), and it stays uninitialised (see RestoreVariables).
Status SavedModelLoader::CheckCheckpointCoversObjects() const {
  std::vector<std::string> missing;
  for (int id = 0; id < graph_->nodes_size(); ++id) {
    const auto& obj = graph_->nodes(id);
    if (!obj.has_variable() && obj.saveable_objects().empty()) continue;
    if (id < static_cast<int>(to_checkpoint_.size()) && to_checkpoint_[id] >= 0) continue;
    missing.push_back("'" + paths_[id] + "' (object " + std::to_string(id) + ")");
  }
  if (missing.empty()) return OkStatus();
  std::string list;
  for (size_t i = 0; i < missing.size() && i < 10; ++i) list += (i ? ", " : "") + missing[i];
  if (missing.size() > 10) list += ", ...";
  return NotFound("'", (dir_ / "variables" / "variables.index").string(), "' has no entry for ",
                  missing.size(), missing.size() == 1 ? " object" : " objects",
                  " of the model: ", list,
                  "; the checkpoint was not written for this model (variables/ of another model?)");
}

Status SavedModelLoader::CreateOtherCaptures() {
  const auto& mg = meta_graph();
  for (int id = 0; id < graph_->nodes_size(); ++id) {
    const auto& obj = graph_->nodes(id);
    if (obj.has_constant()) {
      const std::string& op = obj.constant().operation();
      const tensorflow::NodeDef* node = nullptr;
      for (const auto& n : mg.graph_def().node())
        if (n.name() == op) node = &n;
      if (node == nullptr || !node->attr().count("value"))
        return InvalidArgument("constant object ", id, " names graph node '", op,
                               "', which is missing or has no value");
      KILN_ASSIGN_OR_RETURN_CTX(captures_[id], TensorFromProto(node->attr().at("value").tensor()),
                                "constant '", op, "'");
      sources_[id].constant = captures_[id];
    } else if (obj.has_asset()) {
      int index = obj.asset().asset_file_def_index();
      if (index < 0 || index >= mg.asset_file_def_size())
        return InvalidArgument("asset object ", id, " refers to asset_file_def ", index,
                               ", which does not exist");
      KILN_ASSIGN_OR_RETURN_CTX(std::string path,
                                AssetPath(dir_, mg.asset_file_def(index).filename()),
                                "asset object ", id);
      captures_[id] = Tensor::StringScalar(path);
      sources_[id].asset = mg.asset_file_def(index).filename();
    }
  }
  return OkStatus();
}

void SavedModelLoader::FreezeUnwrittenVariables() {
  // What this load prepares: the signatures it serves, and the restored functions if it
  // loads them (every concrete function then, which covers them).
  std::vector<std::string> roots;
  if (LoadsRestoredFunctions()) {
    for (const auto& [name, cf] : graph_->concrete_functions()) roots.push_back(name);
  } else if (const int map_id = FindChild(graph_->nodes(0), "signatures");
             map_id >= 0 && map_id < graph_->nodes_size()) {
    for (const auto& ref : graph_->nodes(map_id).children())
      if (WantsSignature(options_, ref.local_name()) && ref.node_id() >= 0 &&
          ref.node_id() < graph_->nodes_size())
        for (const std::string& fn : ConcreteNames(graph_->nodes(ref.node_id())))
          roots.push_back(fn);
  }
  const std::optional<std::set<int>> written = WrittenVariables(*graph_, *core().library, roots);
  if (!written.has_value()) return;
  for (const auto& [id, index] : variable_ids_)
    if (written->count(id) == 0) core().variables[index].resource->Freeze();
  // A plan records one answer for all; with some written, its load freezes none (the others
  // are written by no function, so their values stay the checkpoint's either way).
  plan_facts().variables_frozen = written->empty();
}

Status SavedModelLoader::CreateResources() {
  for (int id = 0; id < graph_->nodes_size(); ++id) {
    if (!graph_->nodes(id).has_resource()) continue;
    int fid = FindChild(graph_->nodes(id), "_create_resource");
    if (fid < 0 || fid >= graph_->nodes_size()) continue;
    const std::vector<std::string> fns = ConcreteNames(graph_->nodes(fid));
    if (fns.empty()) continue;
    const std::string where = "the _create_resource function of resource '" + paths_[id] + "'";
    KILN_ASSIGN_OR_RETURN(std::vector<Tensor> outs, RunCaptureOnly(fns[0], where));
    if (outs.size() != 1 || outs[0].dtype() != DType::kResource)
      return InvalidArgument(where, " must return one resource handle");
    captures_[id] = outs[0];
    plan_facts().self_contained = false;
    plan_facts().not_self_contained =
        "resource '" + paths_[id] + "' is made by a function, not restored from variables/";
  }
  return OkStatus();
}

Status SavedModelLoader::RestoreSaveables() {
  if (checkpoint_ == nullptr) return OkStatus();
  for (int id = 0; id < graph_->nodes_size(); ++id) {
    const auto& obj = graph_->nodes(id);
    if (obj.saveable_objects().empty()) continue;
    const int cid = id < static_cast<int>(to_checkpoint_.size()) ? to_checkpoint_[id] : -1;
    if (cid < 0) continue;  // not in the checkpoint: keeps what its initializer gives
    for (const auto& attr : checkpoint_graph_.nodes(cid).attributes()) {
      auto so = obj.saveable_objects().find(attr.name());
      if (so == obj.saveable_objects().end()) continue;
      const std::string where = "saveable '" + attr.name() + "' of object '" + paths_[id] + "'";
      KILN_RETURN_IF_ERROR(RestoreSaveable(so->second, attr.checkpoint_key(), where));
    }
  }
  return OkStatus();
}

Status SavedModelLoader::RestoreSaveable(const tensorflow::SaveableObject& so,
                                         const std::string& key, const std::string& where) {
  auto fn_of = [&](int node) -> Result<std::string> {
    if (node < 0 || node >= graph_->nodes_size())
      return InvalidArgument(where, ": function object ", node, " is not in the object graph");
    const std::vector<std::string> fns = ConcreteNames(graph_->nodes(node));
    if (fns.empty())
      return InvalidArgument(where, ": object ", node, " is not a concrete function");
    return fns[0];
  };
  KILN_ASSIGN_OR_RETURN(std::string save_fn, fn_of(so.save_function()));
  KILN_ASSIGN_OR_RETURN(std::string restore_fn, fn_of(so.restore_function()));
  KILN_ASSIGN_OR_RETURN(std::vector<Tensor> specs,
                        RunConcrete(save_fn, {Tensor::StringScalar(key)}, where + " (save)"));
  if (specs.size() % 3 != 0)
    return InvalidArgument(where, ": the save function returns ", specs.size(),
                           " tensors, expected (name, slice, tensor) triples");
  std::vector<Tensor> values;
  for (size_t i = 0; i < specs.size(); i += 3) {
    const Tensor& name = specs[i];
    if (name.dtype() != DType::kString || name.NumElements() != 1)
      return InvalidArgument(where, ": the save function's output ", i,
                             " must be a string scalar (a checkpoint key), got ",
                             name.DebugString());
    KILN_ASSIGN_OR_RETURN_CTX(Tensor v, checkpoint_->Read(name.scalar<std::string>()), "restoring ",
                              where);
    values.push_back(std::move(v));
  }
  return RunConcrete(restore_fn, values, where + " (restore)").status();
}

Status SavedModelLoader::InitializeResources() {
  for (int id = 0; id < graph_->nodes_size(); ++id) {
    if (!graph_->nodes(id).has_resource()) continue;
    int fid = FindChild(graph_->nodes(id), "_initialize");
    if (fid < 0 || fid >= graph_->nodes_size()) continue;
    for (const std::string& fn : ConcreteNames(graph_->nodes(fid))) {
      KILN_RETURN_IF_ERROR(
          RunCaptureOnly(fn, "the _initialize function of resource '" + paths_[id] + "'").status());
    }
  }
  return OkStatus();
}

Status SavedModelLoader::RegisterMainGraphVariables() {
  const auto& saver = meta_graph().saver_def();
  const tensorflow::NodeDef* call = nullptr;
  const std::string restore_op = NodeOfTensor(saver.restore_op_name());
  for (const auto& n : main_graph_->node())
    if (n.name() == restore_op) call = &n;
  if (call == nullptr) return OkStatus();
  auto f = call->attr().find("f");
  if (f == call->attr().end() || !f->second.has_func()) return OkStatus();
  const tensorflow::FunctionDef* fdef = core().library->Find(f->second.func().name());
  if (fdef == nullptr) return OkStatus();
  std::map<std::string, const tensorflow::NodeDef*> nodes;
  for (const auto& n : fdef->node_def()) nodes[n.name()] = &n;
  std::map<std::string, int> arg_index;
  for (int i = 0; i < fdef->signature().input_arg_size(); ++i)
    arg_index[fdef->signature().input_arg(i).name()] = i;
  std::map<std::string, const tensorflow::NodeDef*> main_nodes;
  for (const auto& n : main_graph_->node()) main_nodes[n.name()] = &n;
  // RestoreV2's key lists, decoded once each: every AssignVariableOp names an element of one
  // (decoding it per variable cost 9-12 ms of a Keras CNN's load).
  std::map<const tensorflow::NodeDef*, Result<Tensor>> key_lists;
  for (const auto& n : fdef->node_def()) {
    if (n.op() != "AssignVariableOp" || n.input_size() < 2) continue;
    auto arg = arg_index.find(n.input(0));
    if (arg == arg_index.end() || arg->second >= call->input_size()) continue;
    // The value: Identity* of RestoreV2 output i, whose name is tensor_names[i].
    std::string in = n.input(1);
    const tensorflow::NodeDef* p = nullptr;
    for (int hops = 0; hops < 16; ++hops) {
      auto it = nodes.find(in.substr(0, in.find(':')));
      if (it == nodes.end()) break;
      p = it->second;
      if (p->op() != "Identity" || p->input_size() < 1) break;
      in = p->input(0);
    }
    if (p == nullptr || p->op() != "RestoreV2" || p->input_size() < 2) continue;
    const int out_index = std::atoi(in.substr(in.rfind(':') + 1).c_str());
    auto names_node = nodes.find(p->input(1).substr(0, p->input(1).find(':')));
    if (names_node == nodes.end() || names_node->second->op() != "Const") continue;
    auto value = names_node->second->attr().find("value");
    if (value == names_node->second->attr().end()) continue;
    auto listed = key_lists.find(names_node->second);
    if (listed == key_lists.end())
      listed = key_lists.emplace(names_node->second, TensorFromProto(value->second.tensor())).first;
    const Result<Tensor>& names = listed->second;
    if (!names.ok() || names->dtype() != DType::kString || out_index < 0 ||
        out_index >= names->NumElements())
      continue;
    auto var = key_to_var_.find(names->data<std::string>()[out_index]);
    if (var == key_to_var_.end()) continue;
    auto handle = main_nodes.find(NodeOfTensor(call->input(arg->second)));
    if (handle == main_nodes.end() || handle->second->op() != "VarHandleOp") continue;
    auto shared = handle->second->attr().find("shared_name");
    const std::string name = shared != handle->second->attr().end() && !shared->second.s().empty()
                                 ? shared->second.s()
                                 : handle->second->name();
    std::shared_ptr<ResourceBase> ours = var->second;
    core().resources->LookupOrCreate(name, [&] { return ours; });
  }
  return OkStatus();
}

std::unique_ptr<tensorflow::FunctionDef> SaveFunction(const tensorflow::MetaGraphDef& mg) {
  const auto& saver = mg.saver_def();
  if (saver.filename_tensor_name().empty() || saver.save_tensor_name().empty()) return nullptr;
  tensorflow::GraphDef rewritten;
  auto fdef = Tf1Function(MainGraph(mg.graph_def(), &rewritten), "__saver_save",
                          {{saver.filename_tensor_name(), tensorflow::DT_STRING}},
                          {{saver.save_tensor_name(), tensorflow::DT_STRING}}, {});
  return fdef.ok() ? std::move(*fdef) : nullptr;
}

}  // namespace kiln::exec
