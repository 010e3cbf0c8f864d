// The TF2 load's signatures and restored functions, their op check, and running its functions.
#include <algorithm>
#include <set>

#include "kiln/core/proto_convert.h"
#include "kiln/exec/op_coverage.h"
#include "loader/loader_common.h"
#include "loader/object_graph.h"
#include "loader/saved_model_loader.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::exec {
namespace {

// "node" -> "node:0"; "node:3" stays.
std::string CanonicalTensor(std::string_view t) {
  const size_t c = t.rfind(':');
  if (c == std::string_view::npos || c + 1 == t.size() ||
      t.substr(c + 1).find_first_not_of("0123456789") != std::string_view::npos)
    return std::string(t) + ":0";
  return std::string(t);
}

// Why the SignatureDef `sd` names tensors other than those its TF2 signature function `fn` takes
// and returns, or "". TF writes each signature as placeholders ("serving_default_x") fed to a
// call of the function in the main graph, whose output i is the function's output i (the
// output keys sorted): the SignatureDef names those. TF Serving and saved_model_cli run the
// names; kiln runs the function, so a SignatureDef naming anything else would be answered with
// something other than what it says. Without a call of `fn` in the main graph (a bundle not
// written by TF) only names of missing nodes are refused.
std::string SignatureNamesMismatch(const tensorflow::GraphDef& main, const std::string& fn,
                                   const tensorflow::SignatureDef& sd,
                                   const std::vector<std::string>& arg_keys,
                                   const std::vector<std::string>& out_keys) {
  std::string first;
  bool any_call = false;
  for (const auto& call : main.node()) {
    auto f = call.attr().find("f");
    if (call.op() != fn && (f == call.attr().end() || f->second.func().name() != fn)) continue;
    any_call = true;
    std::string why;
    for (size_t i = 0; i < arg_keys.size() && why.empty(); ++i) {
      auto in = sd.inputs().find(arg_keys[i]);
      if (in == sd.inputs().end()) continue;
      const std::string want = static_cast<int>(i) < call.input_size()
                                   ? CanonicalTensor(call.input(static_cast<int>(i)))
                                   : std::string("(none)");
      if (CanonicalTensor(in->second.name()) != want)
        why = "input '" + arg_keys[i] + "' names tensor '" + in->second.name() +
              "', but function '" + fn + "' takes '" + want + "' there";
    }
    for (size_t i = 0; i < out_keys.size() && why.empty(); ++i) {
      auto out = sd.outputs().find(out_keys[i]);
      if (out == sd.outputs().end()) continue;
      const std::string want = call.name() + ":" + std::to_string(i);
      if (CanonicalTensor(out->second.name()) != want)
        why = "output '" + out_keys[i] + "' names tensor '" + out->second.name() +
              "', but function '" + fn + "' returns it as '" + want + "'";
    }
    if (why.empty()) return {};
    if (first.empty()) first = why;
  }
  if (any_call || main.node_size() == 0) return first;
  std::set<std::string, std::less<>> nodes;
  for (const auto& n : main.node()) nodes.insert(n.name());
  for (const auto* map : {&sd.inputs(), &sd.outputs()})
    for (const auto& [k, ti] : *map) {
      const std::string t = CanonicalTensor(ti.name());
      if (!nodes.count(std::string_view(t).substr(0, t.rfind(':'))))
        return (map == &sd.inputs() ? "input '" : "output '") + k + "' names tensor '" + ti.name() +
               "', which is not in the graph";
    }
  return {};
}

}  // namespace

Status SavedModelLoader::CapturesFor(const std::string& fn_name,
                                     const tensorflow::SavedConcreteFunction& cf,
                                     std::vector<Tensor>* out, std::vector<TensorSpec>* specs,
                                     std::vector<internal::CaptureSource>* sources) {
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

Result<const tensorflow::FunctionDef*> SavedModelLoader::FindFunction(const std::string& name) {
  const auto* f = core().library->Find(name);
  if (f == nullptr) return NotFound("function '", name, "' is not in the function library");
  return f;
}

Status SavedModelLoader::LoadSignatures() {
  int map_id = FindChild(graph_->nodes(0), "signatures");
  if (map_id < 0) return OkStatus();
  if (map_id >= graph_->nodes_size()) return InvalidArgument("'signatures' child is out of range");
  const auto& sig_defs = meta_graph().signature_def();
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

    Signature::Parts sig;
    sig.name = key;
    std::vector<TensorSpec> cap_specs;
    std::vector<internal::CaptureSource> sources;
    KILN_RETURN_IF_ERROR_CTX(
        CapturesFor(fn_name, cf_it->second, &sig.captures, &cap_specs, &sources), where);
    if (options_.keep_graphs) plan_facts().signature_captures[key] = std::move(sources);
    const int n_args = fdef->signature().input_arg_size();
    const int n_user = n_args - static_cast<int>(sig.captures.size());
    if (n_user < 0 || n_user != bare.argument_keywords_size())
      return InvalidArgument(where, ": function '", fn_name, "' has ", n_args, " inputs, but ",
                             bare.argument_keywords_size(), " argument keywords and ",
                             sig.captures.size(), " captures");
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
      sig.inputs.push_back(a);
    }
    for (size_t c = 0; c < cap_specs.size(); ++c) arg_specs[n_user + c] = cap_specs[c];
    std::vector<int> order(n_user);
    for (int i = 0; i < n_user; ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](int x, int y) { return sig.inputs[x].key < sig.inputs[y].key; });
    std::vector<SignatureArg> sorted;
    for (int i : order) {
      sorted.push_back(sig.inputs[i]);
      sig.input_to_arg.push_back(i);
    }
    sig.inputs = std::move(sorted);

    std::vector<std::string> out_keys;
    std::vector<TensorSpec> out_specs;
    KILN_RETURN_IF_ERROR_CTX(
        FlattenOutputSignature(cf_it->second.output_signature(), &out_keys, &out_specs), where);
    if (static_cast<int>(out_keys.size()) != fdef->signature().output_arg_size())
      return InvalidArgument(where, ": output signature has ", out_keys.size(),
                             " entries, function '", fn_name, "' has ",
                             fdef->signature().output_arg_size(), " outputs");
    if (sd != sig_defs.end()) {
      std::vector<std::string> arg_keys(bare.argument_keywords().begin(),
                                        bare.argument_keywords().end());
      std::string why =
          SignatureNamesMismatch(meta_graph().graph_def(), fn_name, sd->second, arg_keys, out_keys);
      if (!why.empty()) {
        // As a TF1 signature of sparse tensors: the model serves its other signatures.
        why = where + " of '" + dir_.string() + "': its SignatureDef " + why +
              "; kiln refuses the signature (the model's other signatures are served)";
        if (!options_.signatures.empty()) return InvalidArgument(why);
        core().unavailable_signatures[key] = why;
        continue;
      }
    }
    for (size_t i = 0; i < out_keys.size(); ++i) {
      SignatureArg o;
      o.key = out_keys[i];
      o.spec = out_specs[i];
      if (sd != sig_defs.end()) {
        auto out = sd->second.outputs().find(o.key);
        if (out != sd->second.outputs().end()) o.tensor_name = out->second.name();
      }
      sig.outputs.push_back(o);
      sig.output_from_ret.push_back(static_cast<int>(i));
    }
    PrepareOptions popts;
    popts.resources = core().resources.get();
    popts.devices = devices_;
    popts.known_args = KnownCaptures(n_user, sig.captures);
    KILN_ASSIGN_OR_RETURN_CTX(sig.function, PrepareFunction(*fdef, arg_specs, popts), "loading ",
                              where, " of '", dir_.string(), "'");
    KILN_ASSIGN_OR_RETURN_CTX(Signature made, Signature::Make(std::move(sig), core().threads.get()),
                              "loading '", dir_.string(), "'");
    core().signatures.emplace(key, std::move(made));
  }
  return OkStatus();
}

Status SavedModelLoader::CheckRequestedSignatures() {
  std::set<std::string> have;
  if (graph_ != nullptr) {
    int map_id = FindChild(graph_->nodes(0), "signatures");
    if (map_id >= 0 && map_id < graph_->nodes_size())
      for (const auto& ref : graph_->nodes(map_id).children()) have.insert(ref.local_name());
  } else {
    for (const auto& [key, sd] : meta_graph().signature_def())
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

Status SavedModelLoader::RefuseUnsupportedOps(std::span<const FunctionToCheck> functions) {
  std::vector<UnsupportedOp> bad = FindUnsupportedOps(functions, *core().library);
  if (bad.empty()) return OkStatus();
  return Unimplemented("'", dir_.string(), "' uses ", DescribeUnsupportedOps(bad));
}

Status SavedModelLoader::CheckTf2Ops() {
  std::vector<FunctionToCheck> fns;
  auto add = [&](const std::string& where, const std::string& fn_name) {
    if (const auto* f = core().library->Find(fn_name)) fns.push_back({where, f, true});
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
  if (LoadsRestoredFunctions()) {
    for (const auto& ref : graph_->nodes(0).children()) {
      if (ref.node_id() < 0 || ref.node_id() >= graph_->nodes_size()) continue;
      for (const std::string& fn : ConcreteNames(graph_->nodes(ref.node_id()))) {
        auto cf = graph_->concrete_functions().find(fn);
        std::vector<TensorSpec> specs;
        std::vector<std::string> names;
        if (cf == graph_->concrete_functions().end() ||
            !FlattenInputSignature(cf->second.canonicalized_input_signature(), &specs, &names).ok())
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
          add("function '" + fn + "' (saving or restoring '" + name + "' of '" + paths_[id] + "')",
              fn);
      }
    }
  }
  return RefuseUnsupportedOps(fns);
}

Result<std::vector<Tensor>> SavedModelLoader::RunCaptureOnly(const std::string& fn_name,
                                                             const std::string& where) {
  return RunConcrete(fn_name, {}, where);
}

Result<std::vector<Tensor>> SavedModelLoader::RunConcrete(const std::string& fn_name,
                                                          std::vector<Tensor> args,
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
  popts.resources = core().resources.get();
  popts.devices = devices_;
  KILN_ASSIGN_OR_RETURN_CTX(auto fn,
                            PreparedFunction::Prepare(*fdef, *core().library, specs, popts),
                            "loading ", where, " of '", dir_.string(), "'");
  std::vector<Tensor> outs;
  RunOptions run;
  run.threads = core().threads.get();
  KILN_RETURN_IF_ERROR_CTX(fn->Run(args, &outs, run), "running ", where, " of '", dir_.string(),
                           "'");
  return outs;
}

Status SavedModelLoader::LoadFunctions() {
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
    RestoredFunction::Parts rf;
    rf.name = ref.local_name();
    for (const auto& fn_name : names) {
      auto cf_it = graph_->concrete_functions().find(fn_name);
      if (cf_it == graph_->concrete_functions().end())
        return InvalidArgument(where, ": concrete function '", fn_name,
                               "' has no entry in the object graph");
      KILN_ASSIGN_OR_RETURN_CTX(const tensorflow::FunctionDef* fdef, FindFunction(fn_name), where);
      RestoredFunction::Concrete c;
      c.function_name = fn_name;
      std::vector<TensorSpec> cap_specs;
      std::vector<internal::CaptureSource> sources;
      KILN_RETURN_IF_ERROR_CTX(
          CapturesFor(fn_name, cf_it->second, &c.captures, &cap_specs, &sources), where);
      Status st = FlattenInputSignature(cf_it->second.canonicalized_input_signature(), &c.arg_specs,
                                        &c.arg_names);
      if (!st.ok()) continue;  // non-tensor arguments: not callable from here
      if (c.arg_specs.size() + c.captures.size() !=
          static_cast<size_t>(fdef->signature().input_arg_size()))
        return InvalidArgument(where, ": concrete function '", fn_name, "' takes ",
                               fdef->signature().input_arg_size(), " inputs, its signature lists ",
                               c.arg_specs.size(), " arguments and ", c.captures.size(),
                               " captures");
      std::vector<TensorSpec> all = c.arg_specs;
      all.insert(all.end(), cap_specs.begin(), cap_specs.end());
      PrepareOptions popts;
      popts.resources = core().resources.get();
      popts.devices = devices_;
      popts.known_args = KnownCaptures(c.arg_specs.size(), c.captures);
      KILN_ASSIGN_OR_RETURN_CTX(c.function, PrepareFunction(*fdef, all, popts), "loading ", where,
                                " of '", dir_.string(), "'");
      if (options_.keep_graphs) plan_facts().method_captures[rf.name].push_back(std::move(sources));
      rf.concretes.push_back(std::move(c));
    }
    const std::string name = rf.name;
    KILN_ASSIGN_OR_RETURN_CTX(RestoredFunction made,
                              RestoredFunction::Make(std::move(rf), core().threads.get()),
                              "loading '", dir_.string(), "'");
    core().functions.emplace(name, std::move(made));
  }
  return OkStatus();
}

}  // namespace kiln::exec
