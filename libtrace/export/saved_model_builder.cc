// BuildSavedModel / Save: a module tree and its traced functions as a TF2 SavedModel.
//
// Layout follows what TensorFlow writes (see docs/export.md): object graph ids are assigned
// breadth first over modules and variables (the checkpointable part, "signatures" as the
// root's child after its own state), then methods, then signature functions. Function names
// come from one counter in that order, so the same module state always gives the same bytes.
#include <algorithm>
#include <deque>
#include <filesystem>
#include <map>
#include <set>
#include <system_error>

#include "export/proto_util.h"
#include "export/saver_functions.h"
#include "function_key_util.h"
#include "graph.h"
#include "kiln/core/file_util.h"
#include "kiln/core/proto_convert.h"
#include "kiln/exec/serving_plan.h"
#include "kiln/exec/tensor_bundle.h"
#include "kiln/trace/export.h"

namespace kiln::trace {
namespace {

using internal::ProtoDType;
using internal::SavedVariableInfo;

constexpr int kGraphProducer = 1205;  // a 2022 TF (2.10 era): readable by every TF since
constexpr int kGraphMinConsumer = 12;
constexpr char kObjectGraphKey[] = "_CHECKPOINTABLE_OBJECT_GRAPH";
constexpr char kInitOpKey[] = "__saved_model_init_op";
constexpr char kPredictMethod[] = "tensorflow/serving/predict";

enum class Kind { kModule, kVariable, kSignatureMap, kFunction, kSignature };

struct ObjectNode {
  Kind kind = Kind::kModule;
  const Module* module = nullptr;
  Variable variable;
  Function* function = nullptr;
  std::string signature_key;
  std::vector<std::pair<std::string, int>> children;
  std::vector<std::string> path;  // local names from the root (first path found)
  bool trainable = true;          // modules: effective flag; variables: effective trainable
};

struct SignatureInfo {
  std::string key;
  Function* function = nullptr;
  const ConcreteFunction* concrete = nullptr;
  std::string wrapper_name;
  int node_id = -1;
  std::vector<int> arg_order;            // wrapper input j = method argument arg_order[j]
  std::vector<int> output_order;         // wrapper output j = method output output_order[j]
  std::vector<std::string> output_keys;  // sorted: "output_0", "output_1", "output_10", ...
};

std::string JoinPath(const std::vector<std::string>& path) {
  std::string s;
  for (const std::string& p : path) s += (s.empty() ? "" : "/") + p;
  return s;
}

tensorflow::TensorInfo MakeTensorInfo(const std::string& name, const TensorSpec& spec) {
  tensorflow::TensorInfo info;
  info.set_name(name);
  info.set_dtype(ProtoDType(spec.dtype));
  PartialShapeToProto(spec.shape, info.mutable_tensor_shape());
  return info;
}

tensorflow::VersionDef ObjectVersion() {
  tensorflow::VersionDef v;
  v.set_producer(1);
  v.set_min_consumer(1);
  return v;
}

class Exporter {
 public:
  Exporter(Module& root, const SignatureMap& signatures) : root_(root), signatures_(signatures) {}

  Result<ExportedModel> Build() {
    KILN_RETURN_IF_ERROR_CTX(root_.status(), "saving module '", root_.name(), "'");
    KILN_RETURN_IF_ERROR(CheckSignatureKeys());
    KILN_RETURN_IF_ERROR(TraceDeclaredFunctions());
    KILN_RETURN_IF_ERROR_CTX(root_.status(), "saving module '", root_.name(), "'");
    CollectObjects();
    KILN_RETURN_IF_ERROR(CollectFunctions());
    KILN_RETURN_IF_ERROR(CollectVariables());
    KILN_RETURN_IF_ERROR(CheckCaptures());

    ExportedModel out;
    out.saved_model = std::make_unique<tensorflow::SavedModel>();
    out.saved_model->set_saved_model_schema_version(1);
    tensorflow::MetaGraphDef* mg = out.saved_model->add_meta_graphs();
    mg->mutable_meta_info_def()->add_tags("serve");
    mg->mutable_meta_info_def()->set_stripped_default_attrs(true);

    const std::string object_graph = internal::SerializeDeterministic(CheckpointGraph());
    KILN_RETURN_IF_ERROR(BuildLibrary(mg->mutable_graph_def()->mutable_library()));
    KILN_RETURN_IF_ERROR(BuildMainGraph(object_graph, mg));
    BuildObjectGraph(mg->mutable_object_graph_def());

    for (const SavedVariableInfo& v : vars_)
      out.checkpoint[v.checkpoint_key] = values_.at(v.node_id);
    out.checkpoint[kObjectGraphKey] = Tensor::StringScalar(object_graph);
    return out;
  }

 private:
  Status CheckSignatureKeys() const {
    for (const auto& [key, fn] : signatures_) {
      if (key.empty() || key == kInitOpKey) {
        return InvalidArgument("'", key, "' cannot be a signature name");
      }
      if (fn == nullptr) return InvalidArgument("signature '", key, "' has no function");
    }
    return OkStatus();
  }

  // Object ids: modules and variables breadth first, then methods, then signatures.
  void CollectObjects() {
    nodes_.push_back(ObjectNode{Kind::kModule, &root_, {}, nullptr, {}, {}, {}, root_.trainable()});
    std::deque<int> queue = {0};
    while (!queue.empty()) {
      const int id = queue.front();
      queue.pop_front();
      if (nodes_[id].kind != Kind::kModule) continue;
      const Module* m = nodes_[id].module;
      for (const Module::Child& c : m->children()) {
        std::vector<std::string> path = nodes_[id].path;
        path.push_back(c.name);
        if (c.variable.valid()) {
          const internal::VariableState* state = internal::VariableAccess::State(c.variable).get();
          auto it = var_ids_.find(state);
          if (it != var_ids_.end()) {
            nodes_[id].children.emplace_back(c.name, it->second);
            continue;
          }
          ObjectNode v{Kind::kVariable,
                       nullptr,
                       c.variable,
                       nullptr,
                       {},
                       {},
                       path,
                       nodes_[id].trainable && c.variable.trainable()};
          nodes_.push_back(std::move(v));
          const int vid = static_cast<int>(nodes_.size()) - 1;
          var_ids_.emplace(state, vid);
          nodes_[id].children.emplace_back(c.name, vid);
        } else if (c.module != nullptr) {
          ObjectNode child{Kind::kModule,
                           c.module,
                           {},
                           nullptr,
                           {},
                           {},
                           path,
                           nodes_[id].trainable && c.module->trainable()};
          nodes_.push_back(std::move(child));
          const int mid = static_cast<int>(nodes_.size()) - 1;
          nodes_[id].children.emplace_back(c.name, mid);
          queue.push_back(mid);
        }
      }
      if (id == 0) {
        nodes_.push_back(
            ObjectNode{Kind::kSignatureMap, nullptr, {}, nullptr, {}, {}, {"signatures"}, true});
        signature_map_id_ = static_cast<int>(nodes_.size()) - 1;
        nodes_[0].children.emplace_back("signatures", signature_map_id_);
      }
    }
    const int checkpointable = static_cast<int>(nodes_.size());
    for (int id = 0; id < checkpointable; ++id) {
      if (nodes_[id].kind != Kind::kModule) continue;
      for (const Module::Child& c : nodes_[id].module->children()) {
        if (c.function == nullptr) continue;
        std::vector<std::string> path = nodes_[id].path;
        path.push_back(c.name);
        nodes_.push_back(ObjectNode{Kind::kFunction, nullptr, {}, c.function, {}, {}, path, true});
        nodes_[id].children.emplace_back(c.name, static_cast<int>(nodes_.size()) - 1);
      }
    }
    for (const auto& [key, fn] : signatures_) {
      nodes_.push_back(ObjectNode{Kind::kSignature, nullptr, {}, fn, key, {}, {}, true});
      const int sid = static_cast<int>(nodes_.size()) - 1;
      nodes_[signature_map_id_].children.emplace_back(key, sid);
      SignatureInfo info;
      info.key = key;
      info.function = fn;
      info.node_id = sid;
      sigs_.push_back(std::move(info));
    }
  }

  // Traces the methods and signature functions that have an input signature but no trace
  // yet, before the tree is walked: a first trace may create variables (an optimizer's slots)
  // that the bundle must then hold.
  Status TraceDeclaredFunctions() {
    std::vector<std::pair<std::string, Function*>> fns;
    std::vector<std::pair<std::string, Module*>> modules = root_.named_submodules();
    modules.emplace(modules.begin(), root_.name(), &root_);
    for (const auto& [path, m] : modules) {
      for (const Module::Child& c : m->children()) {
        if (c.function != nullptr)
          fns.emplace_back("method '" + path + "/" + c.name + "'", c.function);
      }
    }
    for (const auto& [key, fn] : signatures_) fns.emplace_back("signature '" + key + "'", fn);
    for (const auto& [who, fn] : fns) {
      if (fn->input_signature() && fn->concrete_functions().empty()) {
        KILN_RETURN_IF_ERROR_CTX(fn->GetConcreteFunction().status(), "saving ", who);
      }
    }
    return OkStatus();
  }

  std::string NameFor(const ConcreteFunction* cf, const std::string& who) {
    auto it = export_names_.find(cf);
    if (it != export_names_.end()) return it->second;
    std::string name = "__inference_" + internal::SanitizeFunctionName(cf->function_name()) + "_" +
                       std::to_string(counter_++);
    export_names_.emplace(cf, name);
    owners_.emplace(cf, who);
    ordered_.push_back(cf);
    return name;
  }

  Status CollectFunctions() {
    for (ObjectNode& n : nodes_) {
      if (n.kind != Kind::kFunction) continue;
      const std::string who = "method '" + JoinPath(n.path) + "'";
      if (n.function->input_signature() && n.function->concrete_functions().empty()) {
        KILN_RETURN_IF_ERROR_CTX(n.function->GetConcreteFunction().status(), "saving ", who);
      }
      for (const ConcreteFunction* cf : n.function->concrete_functions()) {
        KILN_RETURN_IF_ERROR_CTX(cf->CheckExportable(), "saving ", who);
        NameFor(cf, who);
      }
    }
    for (SignatureInfo& s : sigs_) {
      const std::string who = "signature '" + s.key + "' (function '" + s.function->name() + "')";
      if (s.function->input_signature()) {
        KILN_ASSIGN_OR_RETURN_CTX(s.concrete, s.function->GetConcreteFunction(), "saving ", who);
      } else {
        std::vector<const ConcreteFunction*> all = s.function->concrete_functions();
        if (all.size() != 1) {
          return FailedPrecondition(who, " has ", all.size(),
                                    " concrete functions; a signature needs exactly one: give "
                                    "the function an input signature");
        }
        s.concrete = all[0];
      }
      KILN_RETURN_IF_ERROR_CTX(s.concrete->CheckExportable(), "saving ", who);
      if (s.concrete->outputs().empty()) {
        return FailedPrecondition(who, " returns nothing; a signature must return a tensor");
      }
      NameFor(s.concrete, who);
      s.wrapper_name = "__inference_signature_wrapper_" + std::to_string(counter_++);

      std::vector<int> order(s.concrete->inputs().size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
      std::sort(order.begin(), order.end(), [&](int a, int b) {
        return s.concrete->inputs()[a].name < s.concrete->inputs()[b].name;
      });
      s.arg_order = order;
      // Outputs are a dict: TensorFlow flattens it in sorted-key order.
      std::vector<std::pair<std::string, int>> keys;
      for (size_t i = 0; i < s.concrete->outputs().size(); ++i) {
        keys.emplace_back("output_" + std::to_string(i), static_cast<int>(i));
      }
      std::sort(keys.begin(), keys.end());
      for (auto& [k, i] : keys) {
        s.output_keys.push_back(k);
        s.output_order.push_back(i);
      }
    }
    save_name_ = "__inference__traced_save_" + std::to_string(counter_++);
    restore_name_ = "__inference__traced_restore_" + std::to_string(counter_++);
    return OkStatus();
  }

  Status CollectVariables() {
    for (int id = 0; id < static_cast<int>(nodes_.size()); ++id) {
      const ObjectNode& n = nodes_[id];
      if (n.kind != Kind::kVariable) continue;
      const std::string path = JoinPath(n.path);
      Result<Tensor> value = n.variable.value();
      if (!value.ok()) return value.status().WithContext("saving variable '" + path + "'");
      SavedVariableInfo info;
      info.node_id = id;
      info.checkpoint_key = CheckpointKey(n.path);
      info.node_name = graph_names_.Unique(internal::SafeNodeName(path));
      info.read_node_name = graph_names_.Unique(info.node_name + "/Read/ReadVariableOp");
      info.dtype = n.variable.dtype();
      info.shape = n.variable.shape();
      values_.emplace(id, *std::move(value));
      var_index_.emplace(id, vars_.size());
      vars_.push_back(std::move(info));
    }
    return OkStatus();
  }

  Status CheckCaptures() const {
    for (const ConcreteFunction* cf : ordered_) {
      for (const Variable& v : cf->captured_variables()) {
        if (var_ids_.count(internal::VariableAccess::State(v).get()) == 0) {
          return FailedPrecondition(
              owners_.at(cf), " captures variable '", v.name(),
              "', which is not reachable from the root module '", root_.name(),
              "': add it to a module of the tree (Module::AddVariable) before saving");
        }
      }
    }
    return OkStatus();
  }

  std::vector<int> BoundInputs(const ConcreteFunction* cf) const {
    std::vector<int> ids;
    for (const Variable& v : cf->captured_variables()) {
      ids.push_back(var_ids_.at(internal::VariableAccess::State(v).get()));
    }
    return ids;
  }

  const SavedVariableInfo& VarInfo(int node_id) const { return vars_[var_index_.at(node_id)]; }

  tensorflow::TrackableObjectGraph CheckpointGraph() const {
    tensorflow::TrackableObjectGraph g;
    for (int id = 0; id < static_cast<int>(nodes_.size()); ++id) {
      auto* obj = g.add_nodes();
      for (const auto& [name, child] : nodes_[id].children) {
        auto* ref = obj->add_children();
        ref->set_node_id(child);
        ref->set_local_name(name);
      }
      if (nodes_[id].kind == Kind::kVariable) {
        const SavedVariableInfo& v = VarInfo(id);
        auto* attr = obj->add_attributes();
        attr->set_name("VARIABLE_VALUE");
        attr->set_full_name(v.node_name);
        attr->set_checkpoint_key(v.checkpoint_key);
      }
    }
    return g;
  }

  // The signature function: kwargs (sorted) + captures -> dict of outputs (sorted keys), by a
  // call of the method's function.
  tensorflow::FunctionDef Wrapper(const SignatureInfo& s) const {
    const ConcreteFunction& cf = *s.concrete;
    tensorflow::FunctionDef f;
    auto* sig = f.mutable_signature();
    sig->set_name(s.wrapper_name);
    internal::NameUniquifier names;
    std::vector<std::string> user_args(cf.inputs().size());
    std::vector<PartialShape> shapes;
    for (size_t j = 0; j < s.arg_order.size(); ++j) {
      const ArgSpec& a = cf.inputs()[s.arg_order[j]];
      user_args[s.arg_order[j]] = names.Unique(internal::ArgNameFrom(a.name));
      auto* in = sig->add_input_arg();
      in->set_name(user_args[s.arg_order[j]]);
      in->set_type(ProtoDType(a.dtype));
      shapes.push_back(a.shape);
      (*(*f.mutable_arg_attr())[static_cast<uint32_t>(j)].mutable_attr())["_user_specified_name"] =
          internal::StringAttr(a.name);
    }
    const size_t n_user = cf.inputs().size();
    std::vector<std::string> capture_args;
    for (size_t k = 0; k < cf.captured_variables().size(); ++k) {
      capture_args.push_back(
          names.Unique("statefulpartitionedcall_args_" + std::to_string(n_user + k)));
      auto* in = sig->add_input_arg();
      in->set_name(capture_args.back());
      in->set_type(ProtoDType(DType::kResource));
      shapes.push_back(PartialShape::UnknownRank());
    }
    const bool stateful = cf.is_stateful();
    const std::string call = stateful ? "StatefulPartitionedCall" : "PartitionedCall";
    std::vector<std::string> inputs = user_args;
    inputs.insert(inputs.end(), capture_args.begin(), capture_args.end());
    tensorflow::NodeDef* node = internal::AddNode(f.mutable_node_def(), call, call, inputs);
    std::vector<DType> tin, tout;
    for (const ArgSpec& a : cf.inputs()) tin.push_back(a.dtype);
    for (size_t k = 0; k < capture_args.size(); ++k) tin.push_back(DType::kResource);
    for (const TensorSpec& o : cf.outputs()) tout.push_back(o.dtype);
    internal::SetAttr(node, "Tin", internal::TypeListAttr(tin));
    internal::SetAttr(node, "Tout", internal::TypeListAttr(tout));
    internal::SetAttr(node, "f", internal::FuncAttr(export_names_.at(&cf)));
    for (size_t j = 0; j < s.output_order.size(); ++j) {
      const std::string id = j == 0 ? "Identity" : "Identity_" + std::to_string(j);
      std::vector<std::string> in = {call + ":output:" + std::to_string(s.output_order[j])};
      if (stateful) in.push_back("^" + call);
      tensorflow::NodeDef* n = internal::AddNode(f.mutable_node_def(), id, "Identity", in);
      internal::SetAttr(n, "T", internal::TypeAttr(cf.outputs()[s.output_order[j]].dtype));
      const std::string out_name = internal::ArgNameFrom(id);
      auto* out = sig->add_output_arg();
      out->set_name(out_name);
      out->set_type(ProtoDType(cf.outputs()[s.output_order[j]].dtype));
      (*f.mutable_ret())[out_name] = id + ":output:0";
    }
    if (stateful) {
      sig->set_is_stateful(true);
      sig->add_control_output(call);
      (*f.mutable_control_ret())[call] = call;
    }
    (*f.mutable_attr())["_input_shapes"] = internal::ShapeListAttr(shapes);
    return f;
  }

  Status BuildLibrary(tensorflow::FunctionDefLibrary* lib) const {
    // The functions each concrete function calls (control-flow branches and bodies, nested
    // traced functions) come along, renamed in a fixed order ("cond_true_12" ->
    // "cond_true_<n>") so that names do not depend on what else the process traced.
    std::map<std::string, std::string> renames;
    std::vector<tensorflow::FunctionDef> called;
    int next = counter_;
    for (const ConcreteFunction* cf : ordered_) {
      const auto& cf_lib = cf->library();
      for (int i = 1; i < cf_lib.function_size(); ++i) {
        const std::string& old = cf_lib.function(i).signature().name();
        if (renames.count(old) != 0) continue;
        std::string base = old;
        while (!base.empty() && base.back() >= '0' && base.back() <= '9') base.pop_back();
        if (base.empty() || base.back() != '_') base = old + "_";
        renames.emplace(old, base + std::to_string(next++));
        called.push_back(cf_lib.function(i));
        called.back().mutable_signature()->set_name(renames.at(old));
      }
    }
    auto rename_calls = [&](tensorflow::FunctionDef* f, const ConcreteFunction* self) {
      for (auto& node : *f->mutable_node_def()) {
        for (auto& [key, attr] : *node.mutable_attr()) {
          if (!attr.has_func()) continue;
          if (self != nullptr && attr.func().name() == self->name()) {
            attr.mutable_func()->set_name(export_names_.at(self));
          } else if (auto it = renames.find(attr.func().name()); it != renames.end()) {
            attr.mutable_func()->set_name(it->second);
          }
        }
      }
    };
    for (const ConcreteFunction* cf : ordered_) {
      tensorflow::FunctionDef f = cf->function_def();
      f.mutable_signature()->set_name(export_names_.at(cf));
      rename_calls(&f, cf);
      *lib->add_function() = std::move(f);
    }
    for (tensorflow::FunctionDef& f : called) {
      rename_calls(&f, nullptr);
      *lib->add_function() = std::move(f);
    }
    for (const SignatureInfo& s : sigs_) *lib->add_function() = Wrapper(s);
    KILN_ASSIGN_OR_RETURN(*lib->add_function(), internal::SaveFunction(save_name_, vars_));
    KILN_ASSIGN_OR_RETURN(*lib->add_function(), internal::RestoreFunction(restore_name_, vars_));
    return OkStatus();
  }

  tensorflow::NodeDef* Call(tensorflow::GraphDef* g, const std::string& op,
                            std::vector<std::string> inputs, const std::vector<DType>& tin,
                            const std::vector<DType>& tout, const std::string& f) {
    tensorflow::NodeDef* n =
        internal::AddNode(g->mutable_node(), graph_names_.Unique(op), op, std::move(inputs));
    internal::SetAttr(n, "Tin", internal::TypeListAttr(tin));
    internal::SetAttr(n, "Tout", internal::TypeListAttr(tout));
    internal::SetAttr(n, "f", internal::FuncAttr(f));
    return n;
  }

  tensorflow::NodeDef* Placeholder(tensorflow::GraphDef* g, const std::string& name,
                                   const TensorSpec& spec) {
    tensorflow::NodeDef* n =
        internal::AddNode(g->mutable_node(), graph_names_.Unique(name), "Placeholder");
    internal::SetAttr(n, "dtype", internal::TypeAttr(spec.dtype));
    if (!spec.shape.unknown_rank()) internal::SetAttr(n, "shape", internal::ShapeAttr(spec.shape));
    return n;
  }

  Status BuildMainGraph(const std::string& object_graph, tensorflow::MetaGraphDef* mg) {
    tensorflow::GraphDef* g = mg->mutable_graph_def();
    g->mutable_versions()->set_producer(kGraphProducer);
    g->mutable_versions()->set_min_consumer(kGraphMinConsumer);
    for (const SavedVariableInfo& v : vars_) {
      tensorflow::NodeDef* h = internal::AddNode(g->mutable_node(), v.node_name, "VarHandleOp");
      internal::SetAttr(h, "dtype", internal::TypeAttr(v.dtype));
      internal::SetAttr(h, "shape", internal::ShapeAttr(v.shape));
      internal::SetAttr(h, "shared_name", internal::StringAttr(v.node_name));
      tensorflow::NodeDef* r =
          internal::AddNode(g->mutable_node(), v.read_node_name, "ReadVariableOp", {v.node_name});
      internal::SetAttr(r, "dtype", internal::TypeAttr(v.dtype));
    }
    const std::string init_op = graph_names_.Unique("NoOp");
    internal::AddNode(g->mutable_node(), init_op, "NoOp");
    const std::string graph_const = graph_names_.Unique("Const");
    tensorflow::NodeDef* c = internal::AddNode(g->mutable_node(), graph_const, "Const");
    c->set_device("/device:CPU:0");
    KILN_RETURN_IF_ERROR(internal::SetTensorAttr(c, Tensor::StringScalar(object_graph)));

    for (const SignatureInfo& s : sigs_) {
      const ConcreteFunction& cf = *s.concrete;
      tensorflow::SignatureDef sd;
      std::vector<std::string> inputs;
      std::vector<DType> tin, tout;
      for (int i : s.arg_order) {
        const ArgSpec& a = cf.inputs()[i];
        tensorflow::NodeDef* p =
            Placeholder(g, internal::SafeNodeName(s.key + "_" + a.name), a.spec());
        inputs.push_back(p->name());
        tin.push_back(a.dtype);
        (*sd.mutable_inputs())[a.name] = MakeTensorInfo(p->name() + ":0", a.spec());
      }
      for (int id : BoundInputs(&cf)) {
        inputs.push_back(VarInfo(id).node_name);
        tin.push_back(DType::kResource);
      }
      for (int i : s.output_order) tout.push_back(cf.outputs()[i].dtype);
      tensorflow::NodeDef* call =
          Call(g, cf.is_stateful() ? "StatefulPartitionedCall" : "PartitionedCall",
               std::move(inputs), tin, tout, s.wrapper_name);
      for (size_t j = 0; j < s.output_order.size(); ++j) {
        (*sd.mutable_outputs())[s.output_keys[j]] =
            MakeTensorInfo(call->name() + ":" + std::to_string(j), cf.outputs()[s.output_order[j]]);
      }
      sd.set_method_name(kPredictMethod);
      (*mg->mutable_signature_def())[s.key] = std::move(sd);
    }

    tensorflow::NodeDef* filename =
        Placeholder(g, "saver_filename", TensorSpec{DType::kString, PartialShape::Scalar()});
    std::vector<std::string> save_in = {filename->name()};
    std::vector<DType> save_tin = {DType::kString};
    std::vector<std::string> restore_in = {filename->name()};
    std::vector<DType> restore_tin = {DType::kString};
    for (const SavedVariableInfo& v : vars_) {
      save_in.push_back(v.read_node_name);
      save_tin.push_back(v.dtype);
      restore_in.push_back(v.node_name);
      restore_tin.push_back(DType::kResource);
    }
    save_in.push_back(graph_const);
    save_tin.push_back(DType::kString);
    tensorflow::NodeDef* save = Call(g, "StatefulPartitionedCall", std::move(save_in), save_tin,
                                     {DType::kString}, save_name_);
    tensorflow::NodeDef* restore = Call(g, "StatefulPartitionedCall", std::move(restore_in),
                                        restore_tin, {DType::kString}, restore_name_);

    auto* saver = mg->mutable_saver_def();
    saver->set_filename_tensor_name(filename->name() + ":0");
    saver->set_save_tensor_name(save->name() + ":0");
    saver->set_restore_op_name(restore->name());
    saver->set_version(tensorflow::SaverDef::V2);

    (*mg->mutable_collection_def())["saved_model_main_op"].mutable_node_list()->add_value(init_op);
    tensorflow::SignatureDef init;
    tensorflow::TensorInfo init_info;
    init_info.set_name(init_op);
    init_info.mutable_tensor_shape()->set_unknown_rank(true);
    (*init.mutable_outputs())[kInitOpKey] = init_info;
    (*mg->mutable_signature_def())[kInitOpKey] = std::move(init);
    return OkStatus();
  }

  tensorflow::StructuredValue OutputSignature(const ConcreteFunction& cf) const {
    if (cf.outputs().empty()) return internal::NoneValue();
    if (cf.outputs().size() == 1) {
      return internal::TensorSpecValue("", cf.outputs()[0].shape, cf.outputs()[0].dtype);
    }
    std::vector<tensorflow::StructuredValue> items;
    for (const TensorSpec& o : cf.outputs()) {
      items.push_back(internal::TensorSpecValue("", o.shape, o.dtype));
    }
    return internal::TupleValue(std::move(items));
  }

  void BuildObjectGraph(tensorflow::SavedObjectGraph* og) const {
    for (int id = 0; id < static_cast<int>(nodes_.size()); ++id) {
      const ObjectNode& n = nodes_[id];
      tensorflow::SavedObject* obj = og->add_nodes();
      for (const auto& [name, child] : n.children) {
        auto* ref = obj->add_children();
        ref->set_node_id(child);
        ref->set_local_name(name);
      }
      switch (n.kind) {
        case Kind::kModule:
        case Kind::kSignatureMap: {
          auto* u = obj->mutable_user_object();
          u->set_identifier(n.kind == Kind::kModule ? "_generic_user_object" : "signature_map");
          *u->mutable_version() = ObjectVersion();
          break;
        }
        case Kind::kVariable: {
          const SavedVariableInfo& v = VarInfo(id);
          auto* sv = obj->mutable_variable();
          sv->set_dtype(ProtoDType(v.dtype));
          PartialShapeToProto(v.shape, sv->mutable_shape());
          sv->set_trainable(n.trainable);
          sv->set_name(v.node_name);
          break;
        }
        case Kind::kFunction: {
          auto* f = obj->mutable_function();
          std::vector<std::string> arg_names;
          std::vector<const ConcreteFunction*> cfs = n.function->concrete_functions();
          for (const ConcreteFunction* cf : cfs) f->add_concrete_functions(export_names_.at(cf));
          const auto& signature = n.function->input_signature();
          if (signature) {
            for (const ArgSpec& a : *signature) arg_names.push_back(a.name);
          } else if (!cfs.empty()) {
            for (const ArgSpec& a : cfs[0]->inputs()) arg_names.push_back(a.name);
          }
          auto* spec = f->mutable_function_spec();
          *spec->mutable_fullargspec() = internal::FullArgSpec(arg_names);
          spec->set_is_method(false);  // bound methods are saved without `self`
          if (signature) {
            std::vector<tensorflow::StructuredValue> specs;
            for (const ArgSpec& a : *signature) {
              specs.push_back(internal::TensorSpecValue("", a.shape, a.dtype));
            }
            *spec->mutable_input_signature() = internal::TupleValue(std::move(specs));
          } else {
            *spec->mutable_input_signature() = internal::NoneValue();
          }
          break;
        }
        case Kind::kSignature: {
          const SignatureInfo& s = SignatureOf(id);
          auto* b = obj->mutable_bare_concrete_function();
          b->set_concrete_function_name(s.wrapper_name);
          for (int i : s.arg_order) b->add_argument_keywords(s.concrete->inputs()[i].name);
          b->set_allowed_positional_arguments(s.arg_order.size() == 1 ? 1 : 0);
          break;
        }
      }
    }

    auto& functions = *og->mutable_concrete_functions();
    for (const ConcreteFunction* cf : ordered_) {
      tensorflow::SavedConcreteFunction scf;
      for (int id : BoundInputs(cf)) scf.add_bound_inputs(id);
      std::vector<tensorflow::StructuredValue> args;
      for (const ArgSpec& a : cf->inputs()) {
        args.push_back(internal::TensorSpecValue(a.name, a.shape, a.dtype));
      }
      *scf.mutable_canonicalized_input_signature() =
          internal::TupleValue({internal::TupleValue(std::move(args)), internal::DictValue({})});
      *scf.mutable_output_signature() = OutputSignature(*cf);
      functions[export_names_.at(cf)] = std::move(scf);
    }
    for (const SignatureInfo& s : sigs_) {
      const ConcreteFunction& cf = *s.concrete;
      tensorflow::SavedConcreteFunction scf;
      for (int id : BoundInputs(&cf)) scf.add_bound_inputs(id);
      std::vector<std::pair<std::string, tensorflow::StructuredValue>> kwargs;
      for (const ArgSpec& a : cf.inputs()) {
        kwargs.emplace_back(a.name, internal::TensorSpecValue(a.name, a.shape, a.dtype));
      }
      *scf.mutable_canonicalized_input_signature() =
          internal::TupleValue({internal::TupleValue({}), internal::DictValue(std::move(kwargs))});
      std::vector<std::pair<std::string, tensorflow::StructuredValue>> outs;
      for (size_t j = 0; j < s.output_order.size(); ++j) {
        const TensorSpec& o = cf.outputs()[s.output_order[j]];
        outs.emplace_back(s.output_keys[j],
                          internal::TensorSpecValue(s.output_keys[j], o.shape, o.dtype));
      }
      *scf.mutable_output_signature() = internal::DictValue(std::move(outs));
      functions[s.wrapper_name] = std::move(scf);
    }
  }

  const SignatureInfo& SignatureOf(int node_id) const {
    for (const SignatureInfo& s : sigs_) {
      if (s.node_id == node_id) return s;
    }
    return sigs_.front();  // not reached: every signature node has an entry
  }

  Module& root_;
  const SignatureMap& signatures_;
  std::vector<ObjectNode> nodes_;
  std::map<const internal::VariableState*, int> var_ids_;
  int signature_map_id_ = -1;
  std::vector<SignatureInfo> sigs_;
  int counter_ = 0;
  std::map<const ConcreteFunction*, std::string> export_names_;
  std::map<const ConcreteFunction*, std::string> owners_;  // who exports it, for errors
  std::vector<const ConcreteFunction*> ordered_;
  std::string save_name_;
  std::string restore_name_;
  internal::NameUniquifier graph_names_;
  std::vector<SavedVariableInfo> vars_;
  std::map<int, size_t> var_index_;
  std::map<int, Tensor> values_;
};

std::string EscapeLocalName(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == '.') {
      out += "..";
    } else if (c == '/') {
      out += ".S";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string CheckpointKey(const std::vector<std::string>& path) {
  std::string key;
  for (const std::string& p : path) key += EscapeLocalName(p) + "/";
  return key + ".ATTRIBUTES/VARIABLE_VALUE";
}

Result<ExportedModel> BuildSavedModel(Module& root, const SignatureMap& signatures) {
  return Exporter(root, signatures).Build();
}

Status Save(Module& root, const std::filesystem::path& dir, const SignatureMap& signatures) {
  KILN_ASSIGN_OR_RETURN(ExportedModel model, BuildSavedModel(root, signatures));
  const std::string pb = internal::SerializeDeterministic(*model.saved_model);
  if (pb.size() >= (size_t{1} << 31)) {
    return FailedPrecondition("saved_model.pb would be ", pb.size(),
                              " bytes; protobuf cannot hold 2 GiB or more");
  }
  return WriteDirectoryAtomically(
      dir,
      [&](const std::filesystem::path& tmp) -> Status {
        std::error_code ec;
        std::filesystem::create_directories(tmp / "variables", ec);
        if (ec) {
          return PermissionDenied("cannot create '", (tmp / "variables").string(),
                                  "': ", ec.message());
        }
        exec::BundleWriter writer(tmp / "variables" / "variables");
        for (const auto& [key, value] : model.checkpoint)
          KILN_RETURN_IF_ERROR(writer.Add(key, value));
        KILN_RETURN_IF_ERROR(writer.Finish());
        // Written last, as TensorFlow does: its presence marks a complete bundle.
        return WriteStringToFile(tmp / "saved_model.pb", pb);
      },
      exec::kSavedModelOwnedPaths);
}

}  // namespace kiln::trace
