// SavedModel::Load and LoadFromProto: the load's steps in order, the meta graph, the serving plan.
#include "loader/saved_model_loader.h"

#include <algorithm>
#include <iostream>
#include <optional>
#include <set>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "kiln/exec/device.h"
#include "kiln/exec/resources.h"
#include "kiln/exec/saved_model.h"
#include "kiln/exec/serving_plan.h"
#include "kiln/plan_generated.h"
#include "loader/loader_common.h"
#include "loader/object_graph.h"
#include "loader/saved_model_access.h"
#include "loader/tf1_graph.h"
#include "plan/plan_model_load.h"
#include "plan/plan_reader.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::exec {

const tensorflow::MetaGraphDef* FindMetaGraph(const tensorflow::SavedModel& proto,
                                              const std::vector<std::string>& tags) {
  std::set<std::string> want(tags.begin(), tags.end());
  for (const auto& mg : proto.meta_graphs()) {
    const auto& t = mg.meta_info_def().tags();
    if (std::set<std::string>(t.begin(), t.end()) == want) return &mg;
  }
  return nullptr;
}

namespace {

std::string TagsString(const google::protobuf::RepeatedPtrField<std::string>& tags) {
  std::vector<std::string> sorted(tags.begin(), tags.end());
  std::sort(sorted.begin(), sorted.end());
  std::string s = "[";
  for (size_t i = 0; i < sorted.size(); ++i) s += (i ? ", '" : "'") + sorted[i] + "'";
  return s + "]";
}

}  // namespace

Result<std::unique_ptr<SavedModel>> SavedModelLoader::Load() {
  model_ = Access::New();
  core().dir = dir_;
  core().threads = std::make_unique<ThreadPool>(options_.num_threads);
  // oneDNN fixes a primitive's thread count when the primitive is made (at prepare time, here):
  // the model's setting must hold while preparing, not only while running.
  core().threads->ApplyToCallingThread();
  Access::set_tags(*model_, options_.tags);
  KILN_ASSIGN_OR_RETURN_CTX(devices_, ResolveDevices(options_.devices), "loading '", dir_.string(),
                            "'");
  if ((options_.precision == Precision::kFloat16 || options_.precision == Precision::kBFloat16) &&
      devices_.size() < 2)
    return InvalidArgument("loading '", dir_.string(), "': precision ",
                           PrecisionName(options_.precision),
                           " runs float32 models in half precision on an accelerator; this load "
                           "has only the host (name one with --device, e.g. gpu)");
  if (given_proto_) {
    Access::proto(*model_) = std::move(given_proto_);
  } else {
    KILN_RETURN_IF_ERROR(OpenPlan());
    if (plan_ != nullptr && plan_->root().model() != nullptr) {
      auto loaded = LoadFromPlanModel();
      if (loaded.ok() && *loaded) return std::move(model_);
      if (!loaded.ok()) {
        // Start again from the protobuf, keeping what the plan's failure said.
        core().Clear();
        plan_status().functions_from_plan = 0;
        KILN_RETURN_IF_ERROR(PlanUnusable(loaded.status().message()));
      }
    }
    KILN_ASSIGN_OR_RETURN(Access::proto(*model_), ReadSavedModelProto(dir_));
  }
  KILN_RETURN_IF_ERROR(SelectMetaGraph());
  const auto& mg = meta_graph();
  core().resources = std::make_unique<ResourceManager>();
  core().library = std::make_unique<FunctionLibrary>(mg.graph_def().library());
  main_graph_ = &MainGraph(mg.graph_def(), &rewritten_main_graph_);
  if (!mg.has_object_graph_def()) {
    plan_facts().self_contained = false;
    plan_facts().not_self_contained = "it is a TF1 bundle (its signatures run the main graph)";
    KILN_RETURN_IF_ERROR(LoadTf1());
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
  if (options_.freeze_variables) FreezeUnwrittenVariables();
  KILN_RETURN_IF_ERROR(LoadSignatures());
  if (LoadsRestoredFunctions()) KILN_RETURN_IF_ERROR(LoadFunctions());
  KILN_RETURN_IF_ERROR(RegisterMainGraphVariables());
  return std::move(model_);
}

Status SavedModelLoader::SelectMetaGraph() {
  std::set<std::string> want(options_.tags.begin(), options_.tags.end());
  const tensorflow::SavedModel& proto = *Access::proto(*model_);
  Access::meta_graph(*model_) = FindMetaGraph(proto, options_.tags);
  if (Access::meta_graph(*model_) != nullptr) return OkStatus();
  std::string available;
  for (const auto& mg : proto.meta_graphs()) {
    const auto& tags = mg.meta_info_def().tags();
    available += (available.empty() ? "" : ", ") + TagsString(tags);
  }
  std::vector<std::string> w(want.begin(), want.end());
  google::protobuf::RepeatedPtrField<std::string> wf(w.begin(), w.end());
  return NotFound("'", dir_.string(), "' has no MetaGraphDef with tag-set ", TagsString(wf),
                  "; available tag-sets: ", available.empty() ? "none" : available);
}

Result<bool> SavedModelLoader::LoadFromPlanModel() {
  KILN_ASSIGN_OR_RETURN(std::optional<int> from_plan,
                        LoadPlanModel(*plan_, options_, /*restore_uncaptured=*/true, &core()));
  if (!from_plan.has_value()) return false;
  plan_status().functions_from_plan += *from_plan;
  Access::set_loaded_from_plan(*model_);
  return true;
}

Status SavedModelLoader::OpenPlan() {
  PlanStatus& st = plan_status();
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
  KILN_ASSIGN_OR_RETURN(const std::vector<Device*> devices, ResolveDevices(options_.devices));
  std::string stale = (*plan)->StaleReason(dir_, options_.tags, options_.freeze_variables, devices,
                                           options_.precision);
  if (!stale.empty()) return PlanUnusable("the plan is stale: " + stale);
  plan_ = *plan;
  // What compile measured on these devices: first calls need not measure it again.
  plan_->ImportTuning(devices);
  return OkStatus();
}

Status SavedModelLoader::PlanUnusable(const std::string& why) {
  plan_.reset();
  PlanStatus& st = plan_status();
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

Result<std::shared_ptr<const PreparedFunction>> SavedModelLoader::PrepareFunction(
    const tensorflow::FunctionDef& fdef, std::span<const TensorSpec> specs, PrepareOptions popts) {
  popts.keep_graph = options_.keep_graphs;
  popts.device_graphs = options_.device_graphs;
  popts.results_on_device = options_.results_on_device;
  popts.precision = options_.precision;
  if (plan_ != nullptr) {
    const std::string& name = fdef.signature().name();
    if (const plan::Function* pfn =
            plan_->Find(name, specs, FrozenVariableArgs(popts.known_args))) {
      auto prepared = plan_->Prepare(*pfn, *core().library, specs, popts);
      if (prepared.ok()) {
        ++plan_status().functions_from_plan;
        return prepared;
      }
      KILN_RETURN_IF_ERROR(PlanUnusable(prepared.status().message()));
    } else {
      ++plan_status().functions_not_in_plan;
      if (options_.plan == PlanUse::kRequire)
        return FailedPrecondition("the serving plan of '", dir_.string(), "' has no function '",
                                  name, "' for these argument specs; compile the bundle again");
    }
  }
  return PreparedFunction::Prepare(fdef, *core().library, specs, popts);
}

SavedModel::SavedModel() : plan_facts_(std::make_unique<internal::PlanFacts>()) {}
SavedModel::~SavedModel() = default;

namespace {

// A load's prepare passes (the first look before the half-precision and fusion rewrites) make
// and free copies of weights. glibc keeps freed heap pages (its mmap threshold grows after large
// frees, so later large blocks come from the heap), and the model's resident memory would carry
// them for its lifetime: a Keras mixed-precision ResNet50 held 145 MB more than its float32 twin
// after load. Give them back once per load.
void ReleaseFreedHeap() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace

Result<std::unique_ptr<SavedModel>> SavedModel::Load(const std::filesystem::path& dir,
                                                     const LoadOptions& options) {
  SavedModelLoader loader(dir, options);
  Result<std::unique_ptr<SavedModel>> model = loader.Load();
  ReleaseFreedHeap();
  return model;
}

Result<std::unique_ptr<SavedModel>> SavedModel::LoadFromProto(
    std::unique_ptr<tensorflow::SavedModel> proto, const std::filesystem::path& dir,
    const LoadOptions& options) {
  if (!proto) return InvalidArgument("LoadFromProto: no proto");
  SavedModelLoader loader(dir, options);
  loader.given_proto_ = std::move(proto);
  loader.given_variables_optional_ = true;
  Result<std::unique_ptr<SavedModel>> model = loader.Load();
  ReleaseFreedHeap();
  return model;
}

const tensorflow::SavedModel& SavedModel::proto() const {
  std::call_once(proto_once_, [this] {
    if (proto_ != nullptr) return;
    auto proto = ReadSavedModelProto(core_.dir);
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
    return FailedPrecondition("'", core_.dir.string(),
                              "' was loaded from its serving plan, which has no save op; load it "
                              "with LoadOptions::plan = PlanUse::kIgnore to save its variables");
  std::call_once(save_once_, [this] { save_fdef_ = SaveFunction(meta_graph()); });
  if (save_fdef_ == nullptr)
    return FailedPrecondition("'", core_.dir.string(),
                              "' has no save op (its SaverDef names none)");
  PrepareOptions popts;
  popts.resources = core_.resources.get();
  popts.keep_stateful = false;
  const std::vector<TensorSpec> specs = {TensorSpec{DType::kString, PartialShape::Scalar()}};
  KILN_ASSIGN_OR_RETURN_CTX(auto fn,
                            PreparedFunction::Prepare(*save_fdef_, *core_.library, specs, popts),
                            "preparing the save op of '", core_.dir.string(), "'");
  std::vector<Tensor> args = {Tensor::StringScalar(prefix.string())};
  std::vector<Tensor> outs;
  RunOptions run;
  run.threads = core_.threads.get();
  KILN_RETURN_IF_ERROR_CTX(fn->Run(args, &outs, run), "saving the variables of '",
                           core_.dir.string(), "' to '", prefix.string(), "'");
  return OkStatus();
}

}  // namespace kiln::exec
