// SavedModel loading (see saved_model.h): TF2 bundles through the object graph, TF1 bundles
// Session-style from the main graph (tf1_graph.h). Before anything is prepared, every function
// the load will prepare is checked for ops this runtime lacks, and all of them are named at once.
// One SavedModelLoader does one load; its steps are defined by topic in saved_model_loader.cc,
// load_signatures.cc, restore_variables.cc and load_tf1.cc.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/exec/device.h"
#include "kiln/exec/executor.h"
#include "kiln/exec/op_coverage.h"
#include "kiln/exec/resources.h"
#include "kiln/exec/saved_model.h"
#include "kiln/exec/tensor_bundle.h"
#include "loader/saved_model_access.h"
#include "tensorflow/framework.pb.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::exec {

class ServingPlan;

// The concrete functions of a function object (or the one of a bare concrete function).
inline std::vector<std::string> ConcreteNames(const tensorflow::SavedObject& obj) {
  if (obj.has_function())
    return {obj.function().concrete_functions().begin(), obj.function().concrete_functions().end()};
  if (obj.has_bare_concrete_function())
    return {obj.bare_concrete_function().concrete_function_name()};
  return {};
}

class SavedModelLoader {
 public:
  SavedModelLoader(std::filesystem::path dir, const LoadOptions& options)
      : dir_(std::move(dir)), options_(options) {}

  Result<std::unique_ptr<SavedModel>> Load();

 private:
  using Access = internal::SavedModelAccess;

  // The model being loaded, through its access struct (saved_model_access.h).
  LoadedModel& core() const { return Access::core(*model_); }
  internal::PlanFacts& plan_facts() const { return Access::plan_facts(*model_); }
  PlanStatus& plan_status() const { return Access::plan_status(*model_); }
  const tensorflow::MetaGraphDef& meta_graph() const { return *Access::meta_graph(*model_); }

  // saved_model_loader.cc: the meta graph and the serving plan.

  Status SelectMetaGraph();

  // The plan's model section covers this load: variables, signatures and methods come from the
  // plan (plan_model.cc), and saved_model.pb is not read. False when it does not cover the load.
  Result<bool> LoadFromPlanModel();

  // The bundle's serving plan, when options allow it and it is verified and fresh.
  Status OpenPlan();

  // A plan that cannot be used: an error when the load requires one, else a warning and the
  // protobuf path for everything not prepared yet.
  Status PlanUnusable(const std::string& why);

  // Prepares `fdef` for `specs`: from the plan's graph when the plan has it, else from the
  // FunctionDef.
  Result<std::shared_ptr<const PreparedFunction>> PrepareFunction(
      const tensorflow::FunctionDef& fdef, std::span<const TensorSpec> specs, PrepareOptions popts);

  // load_signatures.cc: signatures, restored functions and the op check.

  Status CapturesFor(const std::string& fn_name, const tensorflow::SavedConcreteFunction& cf,
                     std::vector<Tensor>* out, std::vector<TensorSpec>* specs,
                     std::vector<internal::CaptureSource>* sources = nullptr);

  Result<const tensorflow::FunctionDef*> FindFunction(const std::string& name);

  Status LoadSignatures();

  // Every requested signature must exist (in the object graph's map, or the SignatureDefs).
  Status CheckRequestedSignatures();

  Status RefuseUnsupportedOps(std::span<const FunctionToCheck> functions);

  // What a TF2 load prepares: the wanted signatures, the restored functions (all signatures
  // wanted) and the creators and initializers of resources.
  Status CheckTf2Ops();

  // Runs a concrete function of the object graph with only its captures as arguments (the
  // creators and initializers of resources); returns its outputs.
  Result<std::vector<Tensor>> RunCaptureOnly(const std::string& fn_name, const std::string& where);

  // Runs a concrete function of the object graph on `args` followed by its captures.
  Result<std::vector<Tensor>> RunConcrete(const std::string& fn_name, std::vector<Tensor> args,
                                          const std::string& where);

  Status LoadFunctions();

  // restore_variables.cc: the object graph's variables, captures, resources and saveables.

  Status CreateVariables();

  // Matches object-graph nodes to checkpoint nodes by child names from the root (as
  // TensorFlow's restore does) and assigns each variable its checkpointed value.
  Status RestoreVariables();
  Status CheckCheckpointCoversObjects() const;

  Status CreateOtherCaptures();

  // Freezes the variables no function the model can run (the object graph's concrete
  // functions and what they call) assigns or updates (loader/variable_writes.h); all of them
  // where no function writes any.
  void FreezeUnwrittenVariables();
  bool LoadsRestoredFunctions() const {
    return options_.signatures.empty() && options_.restored_functions;
  }

  // Resources (lookup tables, ...) are made by their _create_resource function, as TF's
  // loader does; functions that capture the resource get the handle it returns.
  Status CreateResources();

  // Objects saved through functions (mutable tables: SavedObject.saveable_objects) are restored
  // as TF's loader does, before the resources' _initialize functions run: the save function,
  // called with the object's checkpoint key, names the checkpoint entries (it returns name,
  // slice, tensor triples); the restore function takes those entries' values.
  Status RestoreSaveables();

  Status RestoreSaveable(const tensorflow::SaveableObject& so, const std::string& key,
                         const std::string& where);

  // Then each resource's _initialize function runs (tables fill from their keys and values or
  // vocabulary files), after the variables are restored.
  Status InitializeResources();

  // The main graph's own variables (VarHandleOps the saver's functions read) are the object
  // graph's: the saver's restore function says which checkpoint key each handle receives, and
  // the key says which restored variable it is. Registered under the handle's shared name, the
  // save op then writes our variables.
  Status RegisterMainGraphVariables();

  // load_tf1.cc: TF1 bundles.

  // The shape a TF1 Session lets a fed tensor have: a fed Placeholder's (or
  // PlaceholderWithDefault's) own shape attr; any other fed tensor is replaced whatever its
  // shape (TF Serving feeds half_plus_two's x, an Identity the SignatureDef calls (-1, 1), with
  // shape (3,)). The SignatureDef's TensorInfo shape is documentation there, not a check.
  PartialShape Tf1FedShape(const std::string& tensor_name) const;

  // One TF1 signature: its inputs are fed (their nodes become the function's arguments), its
  // outputs fetched; only what the fetches need runs, as in Session::Run.
  Status BuildTf1Signature(const std::string& key, const tensorflow::SignatureDef& sd,
                           Signature::Parts* sig, std::unique_ptr<tensorflow::FunctionDef>* fdef,
                           std::vector<TensorSpec>* arg_specs);

  // Runs the main graph once: `feeds` (string values) in, `target` run. Restore and init ops.
  Status RunTf1Target(const tensorflow::FunctionDef& fdef, const std::vector<std::string>& values,
                      const std::string& what);

  // A TF1 bundle has no object graph: it loads the way TF's C++ loader does it with a Session.
  // The saver's restore op runs with the variables' path fed to its filename tensor, then the
  // init op (main op or legacy init op: table initializers, asset-dependent assigns), both with
  // the asset tensors fed with their files' paths; then each signature is prepared.
  Status LoadTf1();

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
  std::vector<internal::CaptureSource> sources_;  // per object id: where captures_ came from
  std::map<int, size_t> variable_ids_;            // object id -> index in variables_
  // Checkpoint key -> the variable restored from it.
  std::map<std::string, std::shared_ptr<VariableResource>> key_to_var_;
  // The variables checkpoint while loading (null when there is none), its object graph, and per
  // object id the checkpoint's node for it (-1: none).
  std::unique_ptr<BundleReader> checkpoint_;
  tensorflow::TrackableObjectGraph checkpoint_graph_;
  std::vector<int> to_checkpoint_;
  // The main graph, with TF1 reference variables made explicit (tf1_graph.h): the
  // MetaGraphDef's own graph when it has none (every TF2 bundle), else the rewritten copy.
  const tensorflow::GraphDef* main_graph_ = nullptr;
  tensorflow::GraphDef rewritten_main_graph_;
};

// The SaverDef's save op of `mg` as a function over its main graph (null when it names none or
// it cannot be made into one): SavedModel::Save makes it on first use.
std::unique_ptr<tensorflow::FunctionDef> SaveFunction(const tensorflow::MetaGraphDef& mg);

}  // namespace kiln::exec
