// TF2 SavedModel loading through the object graph (see saved_model.h).
#include <algorithm>
#include <set>

#include "kiln/core/proto_convert.h"
#include "kiln/exec/resources.h"
#include "kiln/exec/saved_model.h"
#include "kiln/exec/tensor_bundle.h"
#include "loader/object_graph.h"
#include "tensorflow/framework.pb.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::exec {
namespace {

constexpr char kObjectGraphKey[] = "_CHECKPOINTABLE_OBJECT_GRAPH";

std::string TagsString(const google::protobuf::RepeatedPtrField<std::string>& tags) {
  std::vector<std::string> sorted(tags.begin(), tags.end());
  std::sort(sorted.begin(), sorted.end());
  std::string s = "[";
  for (size_t i = 0; i < sorted.size(); ++i) s += (i ? ", '" : "'") + sorted[i] + "'";
  return s + "]";
}

Tensor ResourceTensor(std::shared_ptr<ResourceBase> r) {
  Tensor t(DType::kResource, Shape());
  t.scalar<std::shared_ptr<ResourceBase>>() = std::move(r);
  return t;
}

}  // namespace

class SavedModelLoader {
 public:
  SavedModelLoader(std::filesystem::path dir, const LoadOptions& options)
      : dir_(std::move(dir)), options_(options) {}

  Result<std::unique_ptr<SavedModel>> Load() {
    model_.reset(new SavedModel());
    model_->dir_ = dir_;
    model_->threads_ = std::make_unique<ThreadPool>(options_.num_threads);
    KILN_ASSIGN_OR_RETURN(model_->proto_, ReadSavedModelProto(dir_));
    KILN_RETURN_IF_ERROR(SelectMetaGraph());
    const auto& mg = *model_->meta_graph_;
    if (!mg.has_object_graph_def()) {
      KILN_RETURN_IF_ERROR(LoadTf1Signatures());
      return std::move(model_);
    }
    graph_ = &mg.object_graph_def();
    if (graph_->nodes_size() == 0)
      return InvalidArgument("object graph of '", dir_.string(), "' has no nodes");
    model_->resources_ = std::make_unique<ResourceManager>();
    model_->library_ = std::make_unique<FunctionLibrary>(mg.graph_def().library());
    paths_ = ObjectPaths(*graph_);
    captures_.resize(graph_->nodes_size());
    KILN_RETURN_IF_ERROR(CreateVariables());
    KILN_RETURN_IF_ERROR(RestoreVariables());
    KILN_RETURN_IF_ERROR(CreateOtherCaptures());
    if (options_.freeze_variables && !AnyFunctionWritesVariables())
      for (const RestoredVariable& v : model_->variables_) v.resource->Freeze();
    KILN_RETURN_IF_ERROR(LoadSignatures());
    KILN_RETURN_IF_ERROR(LoadFunctions());
    return std::move(model_);
  }

 private:
  // Run-path shortcuts: whether inputs and outputs need reordering, and the model's threads.
  void FinishSignature(Signature* sig) const {
    sig->args_in_input_order_ = true;
    for (size_t i = 0; i < sig->input_to_arg_.size(); ++i)
      sig->args_in_input_order_ &= sig->input_to_arg_[i] == static_cast<int>(i);
    sig->outputs_in_ret_order_ = true;
    for (size_t i = 0; i < sig->output_from_ret_.size(); ++i)
      sig->outputs_in_ret_order_ &= sig->output_from_ret_[i] == static_cast<int>(i);
    sig->threads_ = model_->threads_.get();
  }

  Status SelectMetaGraph() {
    std::set<std::string> want(options_.tags.begin(), options_.tags.end());
    std::string available;
    for (const auto& mg : model_->proto_->meta_graphs()) {
      const auto& tags = mg.meta_info_def().tags();
      if (std::set<std::string>(tags.begin(), tags.end()) == want) {
        model_->meta_graph_ = &mg;
        return OkStatus();
      }
      available += (available.empty() ? "" : ", ") + TagsString(tags);
    }
    std::vector<std::string> w(want.begin(), want.end());
    google::protobuf::RepeatedPtrField<std::string> wf(w.begin(), w.end());
    return NotFound("'", dir_.string(), "' has no MetaGraphDef with tag-set ", TagsString(wf),
                    "; available tag-sets: ", available.empty() ? "none" : available);
  }

  Status CreateVariables() {
    for (int id = 0; id < graph_->nodes_size(); ++id) {
      const auto& obj = graph_->nodes(id);
      if (!obj.has_variable()) continue;
      const auto& v = obj.variable();
      const std::string where = "variable '" + paths_[id] + "' (object " + std::to_string(id) + ")";
      KILN_ASSIGN_OR_RETURN_CTX(DType dtype, DTypeFromProto(v.dtype()), where);
      KILN_ASSIGN_OR_RETURN_CTX(PartialShape shape, PartialShapeFromProto(v.shape()), where);
      auto var = std::make_shared<VariableResource>(paths_[id].empty() ? v.name() : paths_[id],
                                                    dtype, shape);
      captures_[id] = ResourceTensor(var);
      variable_ids_[id] = model_->variables_.size();
      model_->variables_.push_back({var->name(), var, v.trainable()});
    }
    return OkStatus();
  }

  // Matches object-graph nodes to checkpoint nodes by child names from the root (as
  // TensorFlow's restore does) and assigns each variable its checkpointed value.
  Status RestoreVariables() {
    const auto prefix = dir_ / "variables" / "variables";
    const bool has_index = std::filesystem::exists(prefix.string() + ".index");
    if (!has_index) {
      if (!variable_ids_.empty())
        return NotFound("'", dir_.string(), "' has ", variable_ids_.size(),
                        " variables but no variables/variables.index");
      return OkStatus();
    }
    KILN_ASSIGN_OR_RETURN_CTX(auto reader, BundleReader::Open(prefix), "restoring variables of '",
                              dir_.string(), "'");
    KILN_ASSIGN_OR_RETURN_CTX(Tensor graph_str, reader->Read(kObjectGraphKey),
                              "restoring variables");
    if (graph_str.dtype() != DType::kString || graph_str.NumElements() != 1)
      return DataLoss("checkpoint entry ", kObjectGraphKey, " is not a scalar string");
    tensorflow::TrackableObjectGraph ckpt;
    if (!ckpt.ParseFromString(graph_str.scalar<std::string>()))
      return DataLoss("checkpoint entry ", kObjectGraphKey, " of '", dir_.string(),
                      "' is not a TrackableObjectGraph");
    if (ckpt.nodes_size() == 0) return OkStatus();
    std::vector<int> to_ckpt(graph_->nodes_size(), -1);
    to_ckpt[0] = 0;
    std::vector<int> queue{0};
    for (size_t qi = 0; qi < queue.size(); ++qi) {
      int id = queue[qi];
      const auto& cnode = ckpt.nodes(to_ckpt[id]);
      for (const auto& ref : graph_->nodes(id).children()) {
        int child = ref.node_id();
        if (child < 0 || child >= graph_->nodes_size() || to_ckpt[child] >= 0) continue;
        for (const auto& cref : cnode.children()) {
          if (cref.local_name() == ref.local_name() && cref.node_id() >= 0 &&
              cref.node_id() < ckpt.nodes_size()) {
            to_ckpt[child] = cref.node_id();
            queue.push_back(child);
            break;
          }
        }
      }
    }
    for (const auto& [id, index] : variable_ids_) {
      auto& var = model_->variables_[index];
      if (to_ckpt[id] < 0) continue;  // not checkpointed: stays uninitialized, reads say so
      for (const auto& attr : ckpt.nodes(to_ckpt[id]).attributes()) {
        if (attr.name() != "VARIABLE_VALUE") continue;
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

  Status CreateOtherCaptures() {
    const auto& mg = *model_->meta_graph_;
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
      } else if (obj.has_asset()) {
        int index = obj.asset().asset_file_def_index();
        if (index < 0 || index >= mg.asset_file_def_size())
          return InvalidArgument("asset object ", id, " refers to asset_file_def ", index,
                                 ", which does not exist");
        captures_[id] =
            Tensor::StringScalar((dir_ / "assets" / mg.asset_file_def(index).filename()).string());
      }
    }
    return OkStatus();
  }

  Status CapturesFor(const std::string& fn_name, const tensorflow::SavedConcreteFunction& cf,
                     std::vector<Tensor>* out, std::vector<TensorSpec>* specs) {
    for (int id : cf.bound_inputs()) {
      if (id < 0 || id >= graph_->nodes_size() || !captures_[id].IsInitialized())
        return Unimplemented("function '", fn_name, "' captures object ", id,
                             ", which is not a variable, constant or asset");
      out->push_back(captures_[id]);
      TensorSpec s{captures_[id].dtype(), captures_[id].dtype() == DType::kResource
                                              ? PartialShape::Scalar()
                                              : PartialShape(captures_[id].shape())};
      specs->push_back(s);
    }
    return OkStatus();
  }

  Result<const tensorflow::FunctionDef*> FindFunction(const std::string& name) {
    const auto* f = model_->library_->Find(name);
    if (f == nullptr) return NotFound("function '", name, "' is not in the function library");
    return f;
  }

  // Whether any function the model can run (the object graph's concrete functions and what
  // they call) assigns a variable or applies an update to one. Unknown ops count as writers.
  bool AnyFunctionWritesVariables() const {
    auto writes = [](std::string_view op) {
      return op.starts_with("Assign") || op.starts_with("ResourceApply") ||
             op.starts_with("ResourceSparseApply") || op.starts_with("ResourceScatter") ||
             op == "ResourceStridedSliceAssign" || op == "DestroyResourceOp";
    };
    std::vector<std::string> stack;
    std::set<std::string, std::less<>> seen;
    for (const auto& [name, cf] : graph_->concrete_functions()) stack.push_back(name);
    while (!stack.empty()) {
      const std::string name = std::move(stack.back());
      stack.pop_back();
      if (!seen.insert(name).second) continue;
      const tensorflow::FunctionDef* f = model_->library_->Find(name);
      if (f == nullptr) continue;
      for (const auto& node : f->node_def()) {
        if (writes(node.op())) return true;
        const bool call = node.op() == "PartitionedCall" || node.op() == "StatefulPartitionedCall";
        if (model_->library_->Find(node.op()) != nullptr) {
          stack.push_back(node.op());
        } else if (!call && FindOp(node.op()) == nullptr) {
          return true;  // unknown: assume the worst
        }
        for (const auto& [attr, value] : node.attr()) {
          if (value.has_func()) stack.push_back(value.func().name());
          for (const auto& fn : value.list().func()) stack.push_back(fn.name());
        }
      }
    }
    return false;
  }

  // Capture values as prepare-time knowns, after the user arguments.
  static std::vector<Tensor> KnownCaptures(size_t n_user, const std::vector<Tensor>& captures) {
    std::vector<Tensor> known(n_user);
    known.insert(known.end(), captures.begin(), captures.end());
    return known;
  }

  Status LoadSignatures() {
    int map_id = FindChild(graph_->nodes(0), "signatures");
    if (map_id < 0) return OkStatus();
    if (map_id >= graph_->nodes_size())
      return InvalidArgument("'signatures' child is out of range");
    const auto& sig_defs = model_->meta_graph_->signature_def();
    for (const auto& ref : graph_->nodes(map_id).children()) {
      const std::string& key = ref.local_name();
      const std::string where = "signature '" + key + "'";
      if (ref.node_id() < 0 || ref.node_id() >= graph_->nodes_size() ||
          !graph_->nodes(ref.node_id()).has_bare_concrete_function())
        return InvalidArgument(where, ": object is not a concrete function");
      const auto& bare = graph_->nodes(ref.node_id()).bare_concrete_function();
      const std::string& fn_name = bare.concrete_function_name();
      auto cf_it = graph_->concrete_functions().find(fn_name);
      if (cf_it == graph_->concrete_functions().end())
        return InvalidArgument(where, ": concrete function '", fn_name,
                               "' has no entry in the object graph");
      KILN_ASSIGN_OR_RETURN_CTX(const tensorflow::FunctionDef* fdef, FindFunction(fn_name), where);

      Signature sig;
      sig.name_ = key;
      std::vector<TensorSpec> cap_specs;
      KILN_RETURN_IF_ERROR_CTX(CapturesFor(fn_name, cf_it->second, &sig.captures_, &cap_specs),
                               where);
      const int n_args = fdef->signature().input_arg_size();
      const int n_user = n_args - static_cast<int>(sig.captures_.size());
      if (n_user < 0 || n_user != bare.argument_keywords_size())
        return InvalidArgument(where, ": function '", fn_name, "' has ", n_args, " inputs, but ",
                               bare.argument_keywords_size(), " argument keywords and ",
                               sig.captures_.size(), " captures");
      auto sd = sig_defs.find(key);
      // Inputs: keys sorted; each maps to its position among the argument keywords.
      std::vector<TensorSpec> arg_specs(n_args);
      for (int i = 0; i < n_user; ++i) {
        SignatureArg a;
        a.key = bare.argument_keywords(i);
        KILN_ASSIGN_OR_RETURN(a.spec.dtype, DTypeFromProto(fdef->signature().input_arg(i).type()));
        if (sd != sig_defs.end()) {
          auto in = sd->second.inputs().find(a.key);
          if (in == sd->second.inputs().end())
            return InvalidArgument(where, ": argument '", a.key,
                                   "' is missing from the SignatureDef");
          a.tensor_name = in->second.name();
          KILN_ASSIGN_OR_RETURN_CTX(a.spec.shape, PartialShapeFromProto(in->second.tensor_shape()),
                                    where, " input '", a.key, "'");
        }
        arg_specs[i] = a.spec;
        sig.inputs_.push_back(a);
      }
      for (size_t c = 0; c < cap_specs.size(); ++c) arg_specs[n_user + c] = cap_specs[c];
      std::vector<int> order(n_user);
      for (int i = 0; i < n_user; ++i) order[i] = i;
      std::sort(order.begin(), order.end(),
                [&](int x, int y) { return sig.inputs_[x].key < sig.inputs_[y].key; });
      std::vector<SignatureArg> sorted;
      for (int i : order) {
        sorted.push_back(sig.inputs_[i]);
        sig.input_to_arg_.push_back(i);
      }
      sig.inputs_ = std::move(sorted);
      sig.num_function_args_ = n_args;

      std::vector<std::string> out_keys;
      std::vector<TensorSpec> out_specs;
      KILN_RETURN_IF_ERROR_CTX(
          FlattenOutputSignature(cf_it->second.output_signature(), &out_keys, &out_specs), where);
      if (static_cast<int>(out_keys.size()) != fdef->signature().output_arg_size())
        return InvalidArgument(where, ": output signature has ", out_keys.size(),
                               " entries, function '", fn_name, "' has ",
                               fdef->signature().output_arg_size(), " outputs");
      for (size_t i = 0; i < out_keys.size(); ++i) {
        SignatureArg o;
        o.key = out_keys[i];
        o.spec = out_specs[i];
        if (sd != sig_defs.end()) {
          auto out = sd->second.outputs().find(o.key);
          if (out != sd->second.outputs().end()) o.tensor_name = out->second.name();
        }
        sig.outputs_.push_back(o);
        sig.output_from_ret_.push_back(static_cast<int>(i));
      }
      PrepareOptions popts;
      popts.resources = model_->resources_.get();
      popts.known_args = KnownCaptures(n_user, sig.captures_);
      KILN_ASSIGN_OR_RETURN_CTX(
          sig.function_, PreparedFunction::Prepare(*fdef, *model_->library_, arg_specs, popts),
          "loading ", where, " of '", dir_.string(), "'");
      FinishSignature(&sig);
      model_->signatures_.emplace(key, std::move(sig));
    }
    return OkStatus();
  }

  // A TF1 bundle has no object graph: each signature runs like Session::Run, feeding its input
  // placeholders and fetching its outputs from the main graph; only what the fetches need runs.
  Status LoadTf1Signatures() {
    const auto& mg = *model_->meta_graph_;
    model_->resources_ = std::make_unique<ResourceManager>();
    model_->library_ = std::make_unique<FunctionLibrary>(mg.graph_def().library());
    std::vector<std::string> keys;
    for (const auto& [key, sd] : mg.signature_def())
      if (!sd.inputs().empty() || !sd.outputs().empty()) keys.push_back(key);
    std::sort(keys.begin(), keys.end());
    for (const std::string& key : keys) {
      if (key == "__saved_model_init_op") continue;
      const auto& sd = mg.signature_def().at(key);
      const std::string where = "signature '" + key + "'";
      auto fdef = std::make_unique<tensorflow::FunctionDef>();
      fdef->mutable_signature()->set_name("__tf1_signature_" + key);
      Signature sig;
      sig.name_ = key;
      std::set<std::string> fed;
      std::vector<TensorSpec> arg_specs;
      std::vector<std::string> in_keys;
      for (const auto& [k, ti] : sd.inputs()) in_keys.push_back(k);
      std::sort(in_keys.begin(), in_keys.end());
      for (const std::string& k : in_keys) {
        const auto& ti = sd.inputs().at(k);
        const std::string node = ti.name().substr(0, ti.name().find(':'));
        if (node.empty() ||
            (ti.name().size() > node.size() && ti.name().substr(node.size()) != ":0"))
          return InvalidArgument(where, ": input '", k, "' names tensor '", ti.name(),
                                 "'; only output 0 of a placeholder can be fed");
        SignatureArg a;
        a.key = k;
        a.tensor_name = ti.name();
        KILN_ASSIGN_OR_RETURN_CTX(a.spec.dtype, DTypeFromProto(ti.dtype()), where, " input '", k,
                                  "'");
        KILN_ASSIGN_OR_RETURN_CTX(a.spec.shape, PartialShapeFromProto(ti.tensor_shape()), where,
                                  " input '", k, "'");
        auto* arg = fdef->mutable_signature()->add_input_arg();
        arg->set_name(node);
        arg->set_type(static_cast<tensorflow::DataType>(ti.dtype()));
        sig.input_to_arg_.push_back(static_cast<int>(sig.inputs_.size()));
        sig.inputs_.push_back(a);
        arg_specs.push_back(a.spec);
        fed.insert(node);
      }
      for (const auto& n : mg.graph_def().node())
        if (!fed.count(n.name())) *fdef->add_node_def() = n;
      std::vector<std::string> out_keys;
      for (const auto& [k, ti] : sd.outputs()) out_keys.push_back(k);
      std::sort(out_keys.begin(), out_keys.end());
      for (size_t i = 0; i < out_keys.size(); ++i) {
        const auto& ti = sd.outputs().at(out_keys[i]);
        SignatureArg o;
        o.key = out_keys[i];
        o.tensor_name = ti.name();
        KILN_ASSIGN_OR_RETURN_CTX(o.spec.dtype, DTypeFromProto(ti.dtype()), where, " output '",
                                  o.key, "'");
        KILN_ASSIGN_OR_RETURN_CTX(o.spec.shape, PartialShapeFromProto(ti.tensor_shape()), where,
                                  " output '", o.key, "'");
        const std::string ret_name = "output_" + std::to_string(i);
        auto* out = fdef->mutable_signature()->add_output_arg();
        out->set_name(ret_name);
        out->set_type(static_cast<tensorflow::DataType>(ti.dtype()));
        (*fdef->mutable_ret())[ret_name] = ti.name();
        sig.outputs_.push_back(o);
        sig.output_from_ret_.push_back(static_cast<int>(i));
      }
      sig.num_function_args_ = arg_specs.size();
      PrepareOptions popts;
      popts.resources = model_->resources_.get();
      popts.keep_stateful = false;
      KILN_ASSIGN_OR_RETURN_CTX(
          sig.function_, PreparedFunction::Prepare(*fdef, *model_->library_, arg_specs, popts),
          "loading ", where, " of TF1-style SavedModel '", dir_.string(), "'");
      model_->synthesized_.push_back(std::move(fdef));
      FinishSignature(&sig);
      model_->signatures_.emplace(key, std::move(sig));
    }
    return OkStatus();
  }

  Status LoadFunctions() {
    for (const auto& ref : graph_->nodes(0).children()) {
      int id = ref.node_id();
      if (id < 0 || id >= graph_->nodes_size()) continue;
      const auto& obj = graph_->nodes(id);
      std::vector<std::string> names;
      if (obj.has_function()) {
        names.assign(obj.function().concrete_functions().begin(),
                     obj.function().concrete_functions().end());
      } else if (obj.has_bare_concrete_function()) {
        names.push_back(obj.bare_concrete_function().concrete_function_name());
      } else {
        continue;
      }
      const std::string where = "restored function '" + ref.local_name() + "'";
      RestoredFunction rf;
      rf.name_ = ref.local_name();
      rf.threads_ = model_->threads_.get();
      for (const auto& fn_name : names) {
        auto cf_it = graph_->concrete_functions().find(fn_name);
        if (cf_it == graph_->concrete_functions().end())
          return InvalidArgument(where, ": concrete function '", fn_name,
                                 "' has no entry in the object graph");
        KILN_ASSIGN_OR_RETURN_CTX(const tensorflow::FunctionDef* fdef, FindFunction(fn_name),
                                  where);
        RestoredFunction::Concrete c;
        c.function_name = fn_name;
        std::vector<TensorSpec> cap_specs;
        KILN_RETURN_IF_ERROR_CTX(CapturesFor(fn_name, cf_it->second, &c.captures, &cap_specs),
                                 where);
        Status st = FlattenInputSignature(cf_it->second.canonicalized_input_signature(),
                                          &c.arg_specs, &c.arg_names);
        if (!st.ok()) continue;  // non-tensor arguments: not callable from here
        if (c.arg_specs.size() + c.captures.size() !=
            static_cast<size_t>(fdef->signature().input_arg_size()))
          return InvalidArgument(where, ": concrete function '", fn_name, "' takes ",
                                 fdef->signature().input_arg_size(),
                                 " inputs, its signature lists ", c.arg_specs.size(),
                                 " arguments and ", c.captures.size(), " captures");
        std::vector<TensorSpec> all = c.arg_specs;
        all.insert(all.end(), cap_specs.begin(), cap_specs.end());
        PrepareOptions popts;
        popts.resources = model_->resources_.get();
        popts.known_args = KnownCaptures(c.arg_specs.size(), c.captures);
        KILN_ASSIGN_OR_RETURN_CTX(c.function,
                                  PreparedFunction::Prepare(*fdef, *model_->library_, all, popts),
                                  "loading ", where, " of '", dir_.string(), "'");
        rf.concretes_.push_back(std::move(c));
      }
      model_->functions_.emplace(rf.name_, std::move(rf));
    }
    return OkStatus();
  }

  std::filesystem::path dir_;
  LoadOptions options_;
  std::unique_ptr<SavedModel> model_;
  const tensorflow::SavedObjectGraph* graph_ = nullptr;
  std::vector<std::string> paths_;
  std::vector<Tensor> captures_;        // per object id: what a function capturing it gets
  std::map<int, size_t> variable_ids_;  // object id -> index in variables_
};

SavedModel::SavedModel() = default;
SavedModel::~SavedModel() = default;

Result<std::unique_ptr<SavedModel>> SavedModel::Load(const std::filesystem::path& dir,
                                                     const LoadOptions& options) {
  SavedModelLoader loader(dir, options);
  return loader.Load();
}

std::vector<std::string> SavedModel::SignatureNames() const {
  std::vector<std::string> names;
  for (const auto& [k, v] : signatures_) names.push_back(k);
  return names;
}

Result<const Signature*> SavedModel::GetSignature(std::string_view name) const {
  auto it = signatures_.find(name);
  if (it == signatures_.end()) {
    std::string avail;
    for (const auto& [k, v] : signatures_) avail += (avail.empty() ? "'" : ", '") + k + "'";
    return NotFound("no signature '", name, "' in '", dir_.string(),
                    "'; available: ", avail.empty() ? "none" : avail);
  }
  return &it->second;
}

std::vector<std::string> SavedModel::FunctionNames() const {
  std::vector<std::string> names;
  for (const auto& [k, v] : functions_) names.push_back(k);
  return names;
}

Result<const RestoredFunction*> SavedModel::GetFunction(std::string_view name) const {
  auto it = functions_.find(name);
  if (it == functions_.end()) {
    std::string avail;
    for (const auto& [k, v] : functions_) avail += (avail.empty() ? "'" : ", '") + k + "'";
    return NotFound("no restored function '", name, "' in '", dir_.string(),
                    "'; available: ", avail.empty() ? "none" : avail);
  }
  return &it->second;
}

}  // namespace kiln::exec
