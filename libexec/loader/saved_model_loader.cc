// SavedModel loading (see saved_model.h): TF2 bundles through the object graph, TF1 bundles
// Session-style from the main graph (tf1_graph.h). Before anything is prepared, every function
// the load will prepare is checked for ops this runtime lacks, and all of them are named at once.
#include <algorithm>
#include <iostream>
#include <set>

#include "kiln/core/proto_convert.h"
#include "kiln/exec/op_coverage.h"
#include "kiln/exec/plan_model.h"
#include "kiln/exec/resources.h"
#include "kiln/exec/saved_model.h"
#include "kiln/exec/serving_plan.h"
#include "kiln/exec/tensor_bundle.h"
#include "kiln/plan_generated.h"
#include "loader/loader_common.h"
#include "loader/object_graph.h"
#include "loader/tf1_graph.h"
#include "plan/plan_model_load.h"
#include "plan/plan_reader.h"
#include "tensorflow/framework.pb.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::exec {
namespace {

constexpr char kObjectGraphKey[] = "_CHECKPOINTABLE_OBJECT_GRAPH";

const tensorflow::MetaGraphDef* FindMetaGraph(const tensorflow::SavedModel& proto,
                                              const std::vector<std::string>& tags) {
  std::set<std::string> want(tags.begin(), tags.end());
  for (const auto& mg : proto.meta_graphs()) {
    const auto& t = mg.meta_info_def().tags();
    if (std::set<std::string>(t.begin(), t.end()) == want) return &mg;
  }
  return nullptr;
}

std::string TagsString(const google::protobuf::RepeatedPtrField<std::string>& tags) {
  std::vector<std::string> sorted(tags.begin(), tags.end());
  std::sort(sorted.begin(), sorted.end());
  std::string s = "[";
  for (size_t i = 0; i < sorted.size(); ++i) s += (i ? ", '" : "'") + sorted[i] + "'";
  return s + "]";
}

// The concrete functions of a function object (or the one of a bare concrete function).
std::vector<std::string> ConcreteNames(const tensorflow::SavedObject& obj) {
  if (obj.has_function())
    return {obj.function().concrete_functions().begin(), obj.function().concrete_functions().end()};
  if (obj.has_bare_concrete_function())
    return {obj.bare_concrete_function().concrete_function_name()};
  return {};
}

// A TF1 signature may name a ref tensor (DT_FLOAT_REF = DT_FLOAT + 100): its value is fetched.
tensorflow::DataType ValueType(tensorflow::DataType t) {
  return t > 100 ? static_cast<tensorflow::DataType>(t - 100) : t;
}

std::vector<TensorSpec> StringScalarSpecs(size_t n) {
  return std::vector<TensorSpec>(n, TensorSpec{DType::kString, PartialShape::Scalar()});
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
    // oneDNN fixes a primitive's thread count when the primitive is made (at prepare time, here):
    // the model's setting must hold while preparing, not only while running.
    model_->threads_->ApplyToCallingThread();
    model_->tags_ = options_.tags;
    KILN_ASSIGN_OR_RETURN_CTX(devices_, ResolveDevices(options_.devices), "loading '",
                              dir_.string(), "'");
    if (given_proto_) {
      model_->proto_ = std::move(given_proto_);
    } else {
      KILN_RETURN_IF_ERROR(OpenPlan());
      if (plan_ != nullptr && plan_->root().model() != nullptr) {
        auto loaded = LoadFromPlanModel();
        if (loaded.ok() && *loaded) return std::move(model_);
        if (!loaded.ok()) {
          // Start again from the protobuf, keeping what the plan's failure said.
          PlanStatus status = model_->plan_status_;
          auto threads = std::move(model_->threads_);
          model_.reset(new SavedModel());
          model_->dir_ = dir_;
          model_->threads_ = std::move(threads);
          model_->tags_ = options_.tags;
          model_->plan_status_ = status;
          model_->plan_status_.functions_from_plan = 0;
          KILN_RETURN_IF_ERROR(PlanUnusable(loaded.status().message()));
        }
      }
      KILN_ASSIGN_OR_RETURN(model_->proto_, ReadSavedModelProto(dir_));
    }
    KILN_RETURN_IF_ERROR(SelectMetaGraph());
    const auto& mg = *model_->meta_graph_;
    model_->resources_ = std::make_unique<ResourceManager>();
    model_->library_ = std::make_unique<FunctionLibrary>(mg.graph_def().library());
    main_graph_ = RewriteRefVariables(mg.graph_def());
    if (!mg.has_object_graph_def()) {
      model_->plan_facts_.self_contained = false;
      model_->plan_facts_.not_self_contained =
          "it is a TF1 bundle (its signatures run the main graph)";
      KILN_RETURN_IF_ERROR(LoadTf1());
      KILN_RETURN_IF_ERROR(PrepareSave());
      return std::move(model_);
    }
    graph_ = &mg.object_graph_def();
    if (graph_->nodes_size() == 0)
      return InvalidArgument("object graph of '", dir_.string(), "' has no nodes");
    paths_ = ObjectPaths(*graph_);
    captures_.resize(graph_->nodes_size());
    sources_.resize(graph_->nodes_size());
    KILN_RETURN_IF_ERROR(CheckRequestedSignatures());
    // A plan's ops were checked when it was opened; a function it lacks is checked as it is
    // prepared.
    if (plan_ == nullptr) KILN_RETURN_IF_ERROR(CheckTf2Ops());
    KILN_RETURN_IF_ERROR(CreateVariables());
    KILN_RETURN_IF_ERROR(RestoreVariables());
    KILN_RETURN_IF_ERROR(CreateOtherCaptures());
    KILN_RETURN_IF_ERROR(CreateResources());
    KILN_RETURN_IF_ERROR(RestoreSaveables());
    checkpoint_.reset();
    KILN_RETURN_IF_ERROR(InitializeResources());
    if (options_.freeze_variables && !AnyFunctionWritesVariables()) {
      for (const RestoredVariable& v : model_->variables_) v.resource->Freeze();
      model_->plan_facts_.variables_frozen = true;
    }
    KILN_RETURN_IF_ERROR(LoadSignatures());
    if (options_.signatures.empty()) KILN_RETURN_IF_ERROR(LoadFunctions());
    KILN_RETURN_IF_ERROR(RegisterMainGraphVariables());
    KILN_RETURN_IF_ERROR(PrepareSave());
    return std::move(model_);
  }

 private:
  // Run-path shortcuts: whether inputs and outputs need reordering, and the model's threads.
  void FinishSignature(Signature* sig) const { sig->Finish(model_->threads_.get()); }

  Status SelectMetaGraph() {
    std::set<std::string> want(options_.tags.begin(), options_.tags.end());
    model_->meta_graph_ = FindMetaGraph(*model_->proto_, options_.tags);
    if (model_->meta_graph_ != nullptr) return OkStatus();
    std::string available;
    for (const auto& mg : model_->proto_->meta_graphs()) {
      const auto& tags = mg.meta_info_def().tags();
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
      sources_[id].variable = static_cast<int>(model_->variables_.size());
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
      if (!variable_ids_.empty() && !given_variables_optional_)
        return NotFound("'", dir_.string(), "' has ", variable_ids_.size(),
                        " variables but no variables/variables.index");
      return OkStatus();
    }
    BundleReadOptions read_options;
    read_options.verify_checksums = options_.verify_checksums;
    read_options.threads = model_->threads_.get();
    KILN_ASSIGN_OR_RETURN_CTX(checkpoint_, BundleReader::Open(prefix, read_options),
                              "restoring variables of '", dir_.string(), "'");
    BundleReader* reader = checkpoint_.get();
    KILN_ASSIGN_OR_RETURN_CTX(Tensor graph_str, reader->Read(kObjectGraphKey),
                              "restoring variables");
    if (graph_str.dtype() != DType::kString || graph_str.NumElements() != 1)
      return DataLoss("checkpoint entry ", kObjectGraphKey, " is not a scalar string");
    tensorflow::TrackableObjectGraph& ckpt = checkpoint_graph_;
    if (!ckpt.ParseFromString(graph_str.scalar<std::string>()))
      return DataLoss("checkpoint entry ", kObjectGraphKey, " of '", dir_.string(),
                      "' is not a TrackableObjectGraph");
    if (ckpt.nodes_size() == 0) return OkStatus();
    std::vector<int>& to_ckpt = to_checkpoint_;
    to_ckpt.assign(graph_->nodes_size(), -1);
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
    model_->plan_facts_.checkpoint_keys.resize(model_->variables_.size());
    for (const auto& [id, index] : variable_ids_) {
      auto& var = model_->variables_[index];
      if (to_ckpt[id] < 0) continue;  // not checkpointed: stays uninitialized, reads say so
      for (const auto& attr : ckpt.nodes(to_ckpt[id]).attributes()) {
        if (attr.name() != "VARIABLE_VALUE") continue;
        key_to_var_[attr.checkpoint_key()] = var.resource;
        model_->plan_facts_.checkpoint_keys[index] = attr.checkpoint_key();
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
        sources_[id].constant = captures_[id];
      } else if (obj.has_asset()) {
        int index = obj.asset().asset_file_def_index();
        if (index < 0 || index >= mg.asset_file_def_size())
          return InvalidArgument("asset object ", id, " refers to asset_file_def ", index,
                                 ", which does not exist");
        captures_[id] =
            Tensor::StringScalar((dir_ / "assets" / mg.asset_file_def(index).filename()).string());
        sources_[id].asset = mg.asset_file_def(index).filename();
      }
    }
    return OkStatus();
  }

  Status CapturesFor(const std::string& fn_name, const tensorflow::SavedConcreteFunction& cf,
                     std::vector<Tensor>* out, std::vector<TensorSpec>* specs,
                     std::vector<SavedModel::CaptureSource>* sources = nullptr) {
    for (int id : cf.bound_inputs()) {
      if (id < 0 || id >= graph_->nodes_size() || !captures_[id].IsInitialized())
        return Unimplemented("function '", fn_name, "' captures object ", id,
                             ", which is not a variable, constant or asset");
      out->push_back(captures_[id]);
      if (sources != nullptr) sources->push_back(sources_[id]);
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

  Status LoadSignatures() {
    int map_id = FindChild(graph_->nodes(0), "signatures");
    if (map_id < 0) return OkStatus();
    if (map_id >= graph_->nodes_size())
      return InvalidArgument("'signatures' child is out of range");
    const auto& sig_defs = model_->meta_graph_->signature_def();
    for (const auto& ref : graph_->nodes(map_id).children()) {
      const std::string& key = ref.local_name();
      if (!WantsSignature(options_, key)) continue;
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
      std::vector<SavedModel::CaptureSource> sources;
      KILN_RETURN_IF_ERROR_CTX(
          CapturesFor(fn_name, cf_it->second, &sig.captures_, &cap_specs, &sources), where);
      if (options_.keep_graphs) model_->plan_facts_.signature_captures[key] = std::move(sources);
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
      popts.devices = devices_;
      popts.known_args = KnownCaptures(n_user, sig.captures_);
      KILN_ASSIGN_OR_RETURN_CTX(sig.function_, PrepareFunction(*fdef, arg_specs, popts), "loading ",
                                where, " of '", dir_.string(), "'");
      FinishSignature(&sig);
      model_->signatures_.emplace(key, std::move(sig));
    }
    return OkStatus();
  }

  // Every requested signature must exist (in the object graph's map, or the SignatureDefs).
  Status CheckRequestedSignatures() {
    std::set<std::string> have;
    if (graph_ != nullptr) {
      int map_id = FindChild(graph_->nodes(0), "signatures");
      if (map_id >= 0 && map_id < graph_->nodes_size())
        for (const auto& ref : graph_->nodes(map_id).children()) have.insert(ref.local_name());
    } else {
      for (const auto& [key, sd] : model_->meta_graph_->signature_def())
        if (key != "__saved_model_init_op") have.insert(key);
    }
    for (const std::string& want : options_.signatures) {
      if (have.count(want)) continue;
      std::string avail;
      for (const std::string& k : have) avail += (avail.empty() ? "'" : ", '") + k + "'";
      return NotFound("no signature '", want, "' in '", dir_.string(),
                      "'; available: ", avail.empty() ? "none" : avail);
    }
    return OkStatus();
  }

  Status RefuseUnsupportedOps(std::span<const FunctionToCheck> functions) {
    std::vector<UnsupportedOp> bad = FindUnsupportedOps(functions, *model_->library_);
    if (bad.empty()) return OkStatus();
    return Unimplemented("'", dir_.string(), "' uses ", DescribeUnsupportedOps(bad));
  }

  // What a TF2 load prepares: the wanted signatures, the restored functions (all signatures
  // wanted) and the creators and initializers of resources.
  Status CheckTf2Ops() {
    std::vector<FunctionToCheck> fns;
    auto add = [&](const std::string& where, const std::string& fn_name) {
      if (const auto* f = model_->library_->Find(fn_name)) fns.push_back({where, f, true});
    };
    int map_id = FindChild(graph_->nodes(0), "signatures");
    if (map_id >= 0 && map_id < graph_->nodes_size()) {
      for (const auto& ref : graph_->nodes(map_id).children()) {
        if (!WantsSignature(options_, ref.local_name()) || ref.node_id() < 0 ||
            ref.node_id() >= graph_->nodes_size())
          continue;
        for (const std::string& fn : ConcreteNames(graph_->nodes(ref.node_id())))
          add("signature '" + ref.local_name() + "'", fn);
      }
    }
    if (options_.signatures.empty()) {
      for (const auto& ref : graph_->nodes(0).children()) {
        if (ref.node_id() < 0 || ref.node_id() >= graph_->nodes_size()) continue;
        for (const std::string& fn : ConcreteNames(graph_->nodes(ref.node_id()))) {
          auto cf = graph_->concrete_functions().find(fn);
          std::vector<TensorSpec> specs;
          std::vector<std::string> names;
          if (cf == graph_->concrete_functions().end() ||
              !FlattenInputSignature(cf->second.canonicalized_input_signature(), &specs, &names)
                   .ok())
            continue;  // not callable from here, so never prepared
          add("restored function '" + ref.local_name() + "'", fn);
        }
      }
    }
    for (int id = 0; id < graph_->nodes_size(); ++id) {
      if (!graph_->nodes(id).has_resource()) continue;
      for (const char* child : {"_create_resource", "_initialize"}) {
        int fid = FindChild(graph_->nodes(id), child);
        if (fid < 0 || fid >= graph_->nodes_size()) continue;
        for (const std::string& fn : ConcreteNames(graph_->nodes(fid)))
          add("function '" + fn + "' (" + child + " of resource '" + paths_[id] + "')", fn);
      }
    }
    for (int id = 0; id < graph_->nodes_size(); ++id) {
      for (const auto& [name, so] : graph_->nodes(id).saveable_objects()) {
        for (int fid : {so.save_function(), so.restore_function()}) {
          if (fid < 0 || fid >= graph_->nodes_size()) continue;
          for (const std::string& fn : ConcreteNames(graph_->nodes(fid)))
            add("function '" + fn + "' (saving or restoring '" + name + "' of '" + paths_[id] +
                    "')",
                fn);
        }
      }
    }
    return RefuseUnsupportedOps(fns);
  }

  // Runs a concrete function of the object graph with only its captures as arguments (the
  // creators and initializers of resources); returns its outputs.
  Result<std::vector<Tensor>> RunCaptureOnly(const std::string& fn_name, const std::string& where) {
    return RunConcrete(fn_name, {}, where);
  }

  // Runs a concrete function of the object graph on `args` followed by its captures.
  Result<std::vector<Tensor>> RunConcrete(const std::string& fn_name, std::vector<Tensor> args,
                                          const std::string& where) {
    auto cf = graph_->concrete_functions().find(fn_name);
    if (cf == graph_->concrete_functions().end())
      return InvalidArgument(where, ": concrete function '", fn_name,
                             "' has no entry in the object graph");
    KILN_ASSIGN_OR_RETURN_CTX(const tensorflow::FunctionDef* fdef, FindFunction(fn_name), where);
    std::vector<TensorSpec> specs;
    for (const Tensor& a : args) specs.push_back(TensorSpec{a.dtype(), PartialShape(a.shape())});
    KILN_RETURN_IF_ERROR_CTX(CapturesFor(fn_name, cf->second, &args, &specs), where);
    PrepareOptions popts;
    popts.resources = model_->resources_.get();
    popts.devices = devices_;
    KILN_ASSIGN_OR_RETURN_CTX(auto fn,
                              PreparedFunction::Prepare(*fdef, *model_->library_, specs, popts),
                              "loading ", where, " of '", dir_.string(), "'");
    std::vector<Tensor> outs;
    RunOptions run;
    run.threads = model_->threads_.get();
    KILN_RETURN_IF_ERROR_CTX(fn->Run(args, &outs, run), "running ", where, " of '", dir_.string(),
                             "'");
    return outs;
  }

  // Resources (lookup tables, ...) are made by their _create_resource function, as TF's
  // loader does; functions that capture the resource get the handle it returns.
  Status CreateResources() {
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
      model_->plan_facts_.self_contained = false;
      model_->plan_facts_.not_self_contained =
          "resource '" + paths_[id] + "' is made by a function, not restored from variables/";
    }
    return OkStatus();
  }

  // Objects saved through functions (mutable tables: SavedObject.saveable_objects) are restored
  // as TF's loader does, before the resources' _initialize functions run: the save function,
  // called with the object's checkpoint key, names the checkpoint entries (it returns name,
  // slice, tensor triples); the restore function takes those entries' values.
  Status RestoreSaveables() {
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

  Status RestoreSaveable(const tensorflow::SaveableObject& so, const std::string& key,
                         const std::string& where) {
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
      KILN_ASSIGN_OR_RETURN_CTX(Tensor v, checkpoint_->Read(name.scalar<std::string>()),
                                "restoring ", where);
      values.push_back(std::move(v));
    }
    return RunConcrete(restore_fn, values, where + " (restore)").status();
  }

  // Then each resource's _initialize function runs (tables fill from their keys and values or
  // vocabulary files), after the variables are restored.
  Status InitializeResources() {
    for (int id = 0; id < graph_->nodes_size(); ++id) {
      if (!graph_->nodes(id).has_resource()) continue;
      int fid = FindChild(graph_->nodes(id), "_initialize");
      if (fid < 0 || fid >= graph_->nodes_size()) continue;
      for (const std::string& fn : ConcreteNames(graph_->nodes(fid))) {
        KILN_RETURN_IF_ERROR(
            RunCaptureOnly(fn, "the _initialize function of resource '" + paths_[id] + "'")
                .status());
      }
    }
    return OkStatus();
  }

  // The main graph's own variables (VarHandleOps the saver's functions read) are the object
  // graph's: the saver's restore function says which checkpoint key each handle receives, and
  // the key says which restored variable it is. Registered under the handle's shared name, the
  // save op then writes our variables.
  Status RegisterMainGraphVariables() {
    const auto& saver = model_->meta_graph_->saver_def();
    const tensorflow::NodeDef* call = nullptr;
    for (const auto& n : main_graph_.node())
      if (n.name() == NodeOfTensor(saver.restore_op_name())) call = &n;
    if (call == nullptr) return OkStatus();
    auto f = call->attr().find("f");
    if (f == call->attr().end() || !f->second.has_func()) return OkStatus();
    const tensorflow::FunctionDef* fdef = model_->library_->Find(f->second.func().name());
    if (fdef == nullptr) return OkStatus();
    std::map<std::string, const tensorflow::NodeDef*> nodes;
    for (const auto& n : fdef->node_def()) nodes[n.name()] = &n;
    std::map<std::string, int> arg_index;
    for (int i = 0; i < fdef->signature().input_arg_size(); ++i)
      arg_index[fdef->signature().input_arg(i).name()] = i;
    std::map<std::string, const tensorflow::NodeDef*> main_nodes;
    for (const auto& n : main_graph_.node()) main_nodes[n.name()] = &n;
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
      auto names = TensorFromProto(value->second.tensor());
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
      model_->resources_->LookupOrCreate(name, [&] { return ours; });
    }
    return OkStatus();
  }

  // SavedModel::Save runs the SaverDef's save op over the main graph; it is built here (and
  // prepared when first used).
  Status PrepareSave() {
    const auto& saver = model_->meta_graph_->saver_def();
    if (saver.filename_tensor_name().empty() || saver.save_tensor_name().empty()) return OkStatus();
    auto fdef = Tf1Function(main_graph_, "__saver_save",
                            {{saver.filename_tensor_name(), tensorflow::DT_STRING}},
                            {{saver.save_tensor_name(), tensorflow::DT_STRING}}, {});
    if (fdef.ok()) model_->save_fdef_ = std::move(*fdef);
    return OkStatus();
  }

  // One TF1 signature: its inputs are fed (their nodes become the function's arguments), its
  // outputs fetched; only what the fetches need runs, as in Session::Run.
  // The shape a TF1 Session lets a fed tensor have: a fed Placeholder's (or
  // PlaceholderWithDefault's) own shape attr; any other fed tensor is replaced whatever its
  // shape (TF Serving feeds half_plus_two's x, an Identity the SignatureDef calls (-1, 1), with
  // shape (3,)). The SignatureDef's TensorInfo shape is documentation there, not a check.
  PartialShape Tf1FedShape(const std::string& tensor_name) const {
    const std::string node = NodeOfTensor(tensor_name);
    const size_t colon = tensor_name.rfind(':');
    if (colon != std::string::npos && tensor_name.substr(colon + 1) != "0")
      return PartialShape::UnknownRank();
    for (const auto& n : main_graph_.node()) {
      if (n.name() != node) continue;
      if (n.op() != "Placeholder" && n.op() != "PlaceholderWithDefault")
        return PartialShape::UnknownRank();
      auto attr = n.attr().find("shape");
      if (attr == n.attr().end() || !attr->second.has_shape()) return PartialShape::UnknownRank();
      const auto& proto = attr->second.shape();
      // Up to GraphDef version 21 a Placeholder's scalar shape meant "unknown" (TF's rule).
      if (n.op() == "Placeholder" && main_graph_.versions().producer() <= 21 &&
          !proto.unknown_rank() && proto.dim_size() == 0)
        return PartialShape::UnknownRank();
      auto shape = PartialShapeFromProto(proto);
      return shape.ok() ? *shape : PartialShape::UnknownRank();
    }
    return PartialShape::UnknownRank();
  }

  Status BuildTf1Signature(const std::string& key, const tensorflow::SignatureDef& sd,
                           Signature* sig, std::unique_ptr<tensorflow::FunctionDef>* fdef,
                           std::vector<TensorSpec>* arg_specs) {
    const std::string where = "signature '" + key + "'";
    sig->name_ = key;
    std::vector<std::string> in_keys;
    for (const auto& [k, ti] : sd.inputs()) in_keys.push_back(k);
    std::sort(in_keys.begin(), in_keys.end());
    std::vector<Tf1Feed> feeds;
    for (const std::string& k : in_keys) {
      const auto& ti = sd.inputs().at(k);
      SignatureArg a;
      a.key = k;
      a.tensor_name = ti.name();
      KILN_ASSIGN_OR_RETURN_CTX(a.spec.dtype, DTypeFromProto(ValueType(ti.dtype())), where,
                                " input '", k, "'");
      KILN_ASSIGN_OR_RETURN_CTX(a.spec.shape, PartialShapeFromProto(ti.tensor_shape()), where,
                                " input '", k, "'");
      sig->input_to_arg_.push_back(static_cast<int>(sig->inputs_.size()));
      const PartialShape fed = Tf1FedShape(ti.name());
      sig->fed_shapes_.push_back(fed);
      sig->inputs_.push_back(a);
      arg_specs->push_back(TensorSpec{a.spec.dtype, fed});
      feeds.push_back({ti.name(), ValueType(ti.dtype())});
    }
    std::vector<std::string> out_keys;
    for (const auto& [k, ti] : sd.outputs()) out_keys.push_back(k);
    std::sort(out_keys.begin(), out_keys.end());
    std::vector<std::pair<std::string, tensorflow::DataType>> fetches;
    for (size_t i = 0; i < out_keys.size(); ++i) {
      const auto& ti = sd.outputs().at(out_keys[i]);
      SignatureArg o;
      o.key = out_keys[i];
      o.tensor_name = ti.name();
      KILN_ASSIGN_OR_RETURN_CTX(o.spec.dtype, DTypeFromProto(ValueType(ti.dtype())), where,
                                " output '", o.key, "'");
      KILN_ASSIGN_OR_RETURN_CTX(o.spec.shape, PartialShapeFromProto(ti.tensor_shape()), where,
                                " output '", o.key, "'");
      sig->outputs_.push_back(o);
      sig->output_from_ret_.push_back(static_cast<int>(i));
      fetches.emplace_back(ti.name(), ValueType(ti.dtype()));
    }
    sig->num_function_args_ = arg_specs->size();
    KILN_ASSIGN_OR_RETURN_CTX(
        *fdef, Tf1Function(main_graph_, "__tf1_signature_" + key, feeds, fetches, {}), "loading ",
        where, " of TF1-style SavedModel '", dir_.string(), "'");
    return OkStatus();
  }

  // Runs the main graph once: `feeds` (string values) in, `target` run. Restore and init ops.
  Status RunTf1Target(const tensorflow::FunctionDef& fdef, const std::vector<std::string>& values,
                      const std::string& what) {
    PrepareOptions popts;
    popts.resources = model_->resources_.get();
    popts.devices = devices_;
    popts.keep_stateful = false;
    KILN_ASSIGN_OR_RETURN_CTX(
        auto fn,
        PreparedFunction::Prepare(fdef, *model_->library_, StringScalarSpecs(values.size()), popts),
        "loading ", what, " of TF1-style SavedModel '", dir_.string(), "'");
    std::vector<Tensor> args;
    for (const std::string& v : values) args.push_back(Tensor::StringScalar(v));
    std::vector<Tensor> outs;
    RunOptions run;
    run.threads = model_->threads_.get();
    KILN_RETURN_IF_ERROR_CTX(fn->Run(args, &outs, run), "running ", what, " of '", dir_.string(),
                             "'");
    return OkStatus();
  }

  // A TF1 bundle has no object graph: it loads the way TF's C++ loader does it with a Session.
  // The saver's restore op runs with the variables' path fed to its filename tensor, then the
  // init op (main op or legacy init op: table initializers, asset-dependent assigns), both with
  // the asset tensors fed with their files' paths; then each signature is prepared.
  Status LoadTf1() {
    const auto& mg = *model_->meta_graph_;
    KILN_RETURN_IF_ERROR(CheckRequestedSignatures());
    std::vector<FunctionToCheck> checks;
    const auto assets = Tf1AssetFeeds(mg, dir_);
    std::vector<Tf1Feed> asset_feeds;
    std::vector<std::string> asset_values;
    for (const auto& [tensor, path] : assets) {
      asset_feeds.push_back({tensor, tensorflow::DT_STRING});
      asset_values.push_back(path);
    }

    const auto& saver = mg.saver_def();
    const std::string variables = (dir_ / "variables" / "variables").string();
    std::unique_ptr<tensorflow::FunctionDef> restore;
    if (!saver.restore_op_name().empty() && !saver.filename_tensor_name().empty() &&
        std::filesystem::exists(variables + ".index")) {
      std::vector<Tf1Feed> feeds = {{saver.filename_tensor_name(), tensorflow::DT_STRING}};
      feeds.insert(feeds.end(), asset_feeds.begin(), asset_feeds.end());
      KILN_ASSIGN_OR_RETURN_CTX(
          restore, Tf1Function(main_graph_, "__tf1_restore", feeds, {}, {saver.restore_op_name()}),
          "the saver's restore op of '", dir_.string(), "'");
      checks.push_back(
          {"the restore op '" + saver.restore_op_name() + "'", restore.get(), false, true});
    }
    KILN_ASSIGN_OR_RETURN_CTX(std::string init_name, Tf1InitOpName(mg), "'", dir_.string(), "'");
    std::unique_ptr<tensorflow::FunctionDef> init;
    if (!init_name.empty()) {
      KILN_ASSIGN_OR_RETURN_CTX(
          init, Tf1Function(main_graph_, "__tf1_init", asset_feeds, {}, {init_name}),
          "the init op of '", dir_.string(), "'");
      checks.push_back({"the init op '" + init_name + "'", init.get(), false, true});
    }

    struct Pending {
      Signature sig;
      std::unique_ptr<tensorflow::FunctionDef> fdef;
      std::vector<TensorSpec> arg_specs;
    };
    std::vector<Pending> pending;
    std::vector<std::string> keys;
    for (const auto& [key, sd] : mg.signature_def())
      if ((!sd.inputs().empty() || !sd.outputs().empty()) && key != "__saved_model_init_op" &&
          WantsSignature(options_, key))
        keys.push_back(key);
    std::sort(keys.begin(), keys.end());
    for (const std::string& key : keys) {
      Pending p;
      KILN_RETURN_IF_ERROR(
          BuildTf1Signature(key, mg.signature_def().at(key), &p.sig, &p.fdef, &p.arg_specs));
      pending.push_back(std::move(p));
    }
    for (const Pending& p : pending)
      checks.push_back({"signature '" + p.sig.name_ + "'", p.fdef.get(), false, true});
    KILN_RETURN_IF_ERROR(RefuseUnsupportedOps(checks));

    if (restore) {
      std::vector<std::string> values = {variables};
      values.insert(values.end(), asset_values.begin(), asset_values.end());
      KILN_RETURN_IF_ERROR(RunTf1Target(*restore, values, "the restore op"));
    }
    if (init) KILN_RETURN_IF_ERROR(RunTf1Target(*init, asset_values, "the init op"));

    for (Pending& p : pending) {
      PrepareOptions popts;
      popts.resources = model_->resources_.get();
      popts.devices = devices_;
      popts.keep_stateful = false;
      const std::string where = "signature '" + p.sig.name_ + "'";
      KILN_ASSIGN_OR_RETURN_CTX(p.sig.function_, PrepareFunction(*p.fdef, p.arg_specs, popts),
                                "loading ", where, " of TF1-style SavedModel '", dir_.string(),
                                "'");
      model_->synthesized_.push_back(std::move(p.fdef));
      FinishSignature(&p.sig);
      const std::string key = p.sig.name_;
      model_->signatures_.emplace(key, std::move(p.sig));
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
        std::vector<SavedModel::CaptureSource> sources;
        KILN_RETURN_IF_ERROR_CTX(
            CapturesFor(fn_name, cf_it->second, &c.captures, &cap_specs, &sources), where);
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
        popts.devices = devices_;
        popts.known_args = KnownCaptures(c.arg_specs.size(), c.captures);
        KILN_ASSIGN_OR_RETURN_CTX(c.function, PrepareFunction(*fdef, all, popts), "loading ", where,
                                  " of '", dir_.string(), "'");
        if (options_.keep_graphs)
          model_->plan_facts_.method_captures[rf.name_].push_back(std::move(sources));
        rf.concretes_.push_back(std::move(c));
      }
      model_->functions_.emplace(rf.name_, std::move(rf));
    }
    return OkStatus();
  }

  // The plan's model section covers this load: variables, signatures and methods come from the
  // plan (plan_model.cc), and saved_model.pb is not read. False when it does not cover the load.
  Result<bool> LoadFromPlanModel() {
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<PlanModel> pm,
                          LoadPlanModel(*plan_, dir_, options_, model_->threads_.get(),
                                        /*restore_uncaptured=*/true));
    if (pm == nullptr) return false;
    model_->resources_ = std::move(pm->resources_);
    model_->library_ = std::move(pm->library_);
    model_->signatures_ = std::move(pm->signatures_);
    model_->functions_ = std::move(pm->functions_);
    model_->variables_ = std::move(pm->variables_);
    model_->plan_status_.functions_from_plan += pm->functions_from_plan_;
    model_->loaded_from_plan_ = true;
    return true;
  }

  // The bundle's serving plan, when options allow it and it is verified and fresh.
  Status OpenPlan() {
    PlanStatus& st = model_->plan_status_;
    if (options_.plan == PlanUse::kIgnore) return OkStatus();
    const std::filesystem::path path = dir_ / kPlanPath;
    std::error_code ec;
    st.present = std::filesystem::exists(path, ec);
    if (!st.present) {
      if (options_.plan == PlanUse::kRequire)
        return NotFound("'", dir_.string(), "' has no serving plan (", kPlanPath,
                        "); make one with `savedmodel-cli compile --dir ", dir_.string(), "`");
      return OkStatus();
    }
    auto plan = ServingPlan::Open(path, options_.verify_checksums);
    if (!plan.ok()) return PlanUnusable(plan.status().message());
    std::string stale = (*plan)->StaleReason(dir_, options_.tags, options_.freeze_variables);
    if (!stale.empty()) return PlanUnusable("the plan is stale: " + stale);
    plan_ = *plan;
    return OkStatus();
  }

  // A plan that cannot be used: an error when the load requires one, else a warning and the
  // protobuf path for everything not prepared yet.
  Status PlanUnusable(const std::string& why) {
    plan_.reset();
    PlanStatus& st = model_->plan_status_;
    st.reason = why;
    const std::string msg = "not using the serving plan of '" + dir_.string() + "': " + why;
    if (options_.plan == PlanUse::kRequire) return FailedPrecondition(msg);
    if (options_.warn) {
      options_.warn(msg + "; preparing from saved_model.pb");
    } else {
      std::cerr << "kiln: warning: " << msg << "; preparing from saved_model.pb\n";
    }
    return OkStatus();
  }

  // Prepares `fdef` for `specs`: from the plan's graph when the plan has it, else from the
  // FunctionDef.
  Result<std::shared_ptr<const PreparedFunction>> PrepareFunction(
      const tensorflow::FunctionDef& fdef, std::span<const TensorSpec> specs,
      PrepareOptions popts) {
    popts.keep_graph = options_.keep_graphs;
    if (plan_ != nullptr) {
      const std::string& name = fdef.signature().name();
      if (const plan::Function* pfn = plan_->Find(name, specs)) {
        auto prepared = plan_->Prepare(*pfn, *model_->library_, specs, popts);
        if (prepared.ok()) {
          ++model_->plan_status_.functions_from_plan;
          return prepared;
        }
        KILN_RETURN_IF_ERROR(PlanUnusable(prepared.status().message()));
      } else {
        ++model_->plan_status_.functions_not_in_plan;
        if (options_.plan == PlanUse::kRequire)
          return FailedPrecondition("the serving plan of '", dir_.string(), "' has no function '",
                                    name, "' for these argument specs; compile the bundle again");
      }
    }
    return PreparedFunction::Prepare(fdef, *model_->library_, specs, popts);
  }

  std::filesystem::path dir_;
  LoadOptions options_;
  std::vector<Device*> devices_;  // options_.devices, resolved
  std::shared_ptr<const ServingPlan> plan_;

 public:
  // LoadFromProto: the proto is already parsed; variables/ may be missing.
  std::unique_ptr<tensorflow::SavedModel> given_proto_;
  bool given_variables_optional_ = false;

 private:
  std::unique_ptr<SavedModel> model_;
  const tensorflow::SavedObjectGraph* graph_ = nullptr;
  std::vector<std::string> paths_;
  std::vector<Tensor> captures_;  // per object id: what a function capturing it gets
  std::vector<SavedModel::CaptureSource> sources_;  // per object id: where captures_ came from
  std::map<int, size_t> variable_ids_;              // object id -> index in variables_
  // Checkpoint key -> the variable restored from it.
  std::map<std::string, std::shared_ptr<VariableResource>> key_to_var_;
  // The variables checkpoint while loading (null when there is none), its object graph, and per
  // object id the checkpoint's node for it (-1: none).
  std::unique_ptr<BundleReader> checkpoint_;
  tensorflow::TrackableObjectGraph checkpoint_graph_;
  std::vector<int> to_checkpoint_;
  // The main graph, with TF1 reference variables made explicit (tf1_graph.h).
  tensorflow::GraphDef main_graph_;
};

SavedModel::SavedModel() = default;
SavedModel::~SavedModel() = default;

Result<std::unique_ptr<SavedModel>> SavedModel::Load(const std::filesystem::path& dir,
                                                     const LoadOptions& options) {
  SavedModelLoader loader(dir, options);
  return loader.Load();
}

Result<std::unique_ptr<SavedModel>> SavedModel::LoadFromProto(
    std::unique_ptr<tensorflow::SavedModel> proto, const std::filesystem::path& dir,
    const LoadOptions& options) {
  if (!proto) return InvalidArgument("LoadFromProto: no proto");
  SavedModelLoader loader(dir, options);
  loader.given_proto_ = std::move(proto);
  loader.given_variables_optional_ = true;
  return loader.Load();
}

std::vector<std::string> SavedModel::SignatureNames() const { return NamesOf(signatures_); }

Result<const Signature*> SavedModel::GetSignature(std::string_view name) const {
  return FindIn(signatures_, name, "signature", dir_);
}

const tensorflow::SavedModel& SavedModel::proto() const {
  std::call_once(proto_once_, [this] {
    if (proto_ != nullptr) return;
    auto proto = ReadSavedModelProto(dir_);
    proto_ = proto.ok() ? std::move(*proto) : std::make_unique<tensorflow::SavedModel>();
    meta_graph_ = FindMetaGraph(*proto_, tags_);
  });
  return *proto_;
}

const tensorflow::MetaGraphDef& SavedModel::meta_graph() const {
  proto();
  static const tensorflow::MetaGraphDef kEmpty;
  return meta_graph_ != nullptr ? *meta_graph_ : kEmpty;
}

Status SavedModel::Save(const std::filesystem::path& prefix) const {
  if (loaded_from_plan_)
    return FailedPrecondition("'", dir_.string(),
                              "' was loaded from its serving plan, which has no save op; load it "
                              "with LoadOptions::plan = PlanUse::kIgnore to save its variables");
  if (save_fdef_ == nullptr)
    return FailedPrecondition("'", dir_.string(), "' has no save op (its SaverDef names none)");
  PrepareOptions popts;
  popts.resources = resources_.get();
  popts.keep_stateful = false;
  const std::vector<TensorSpec> specs = {TensorSpec{DType::kString, PartialShape::Scalar()}};
  KILN_ASSIGN_OR_RETURN_CTX(auto fn,
                            PreparedFunction::Prepare(*save_fdef_, *library_, specs, popts),
                            "preparing the save op of '", dir_.string(), "'");
  std::vector<Tensor> args = {Tensor::StringScalar(prefix.string())};
  std::vector<Tensor> outs;
  RunOptions run;
  run.threads = threads_.get();
  KILN_RETURN_IF_ERROR_CTX(fn->Run(args, &outs, run), "saving the variables of '", dir_.string(),
                           "' to '", prefix.string(), "'");
  return OkStatus();
}

std::vector<std::string> SavedModel::FunctionNames() const { return NamesOf(functions_); }

Result<const RestoredFunction*> SavedModel::GetFunction(std::string_view name) const {
  return FindIn(functions_, name, "restored function", dir_);
}

}  // namespace kiln::exec
