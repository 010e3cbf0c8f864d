// Loading a model from its serving plan's model section (plan_model.h): the variables by
// checkpoint key, then every signature and restored method prepared from the plan's graphs.
// Compiled with and without KILN_NO_PROTOBUF, as the plan reader it uses is.
#include "kiln/exec/plan_model.h"

#include <algorithm>
#include <optional>

#include "kiln/exec/device.h"
#include "kiln/exec/resources.h"
#include "kiln/exec/serving_plan.h"
#include "kiln/exec/tensor_bundle.h"
#include "kiln/plan_generated.h"
#include "loader/loader_common.h"
#include "plan/plan_model_load.h"
#include "plan/plan_reader.h"

namespace kiln::exec {
namespace {

class PlanModelLoader {
 public:
  PlanModelLoader(const ServingPlan& plan, const LoadOptions& options, bool restore_uncaptured,
                  LoadedModel* core)
      : plan_(plan),
        dir_(core->dir),
        options_(options),
        threads_(core->threads.get()),
        restore_uncaptured_(restore_uncaptured),
        core_(*core) {}

  // A load of signatures alone runs the function prepared as such a load freezes (plan.fbs).
  static int32_t SignatureFunction(const plan::Signature& ps, bool methods) {
    return !methods && ps.alone_function() >= 0 ? ps.alone_function() : ps.function();
  }

  Result<std::optional<int>> Load() {
    int functions_from_plan = 0;
    KILN_ASSIGN_OR_RETURN(devices_, ResolveDevices(options_.devices));
    const plan::Plan& root = plan_.root();
    if (root.model() == nullptr) return std::optional<int>();
    const plan::Model& pm = *root.model();
    auto size_of = [](const auto* v) { return v == nullptr ? size_t{0} : size_t{v->size()}; };
    if (options_.signatures.empty()) {
      if (!pm.complete()) return std::optional<int>();
    } else {
      for (const std::string& want : options_.signatures) {
        bool found = false;
        for (size_t i = 0; i < size_of(pm.signatures()); ++i)
          found |= pm.signatures()->Get(i)->key()->string_view() == want;
        if (!found) return std::optional<int>();
      }
    }
    core_.resources = std::make_unique<ResourceManager>();
    core_.library = std::make_unique<FunctionLibrary>();
    // Variables, restored by checkpoint key.
    std::unique_ptr<BundleReader> reader;
    const auto prefix = dir_ / "variables" / "variables";
    if (std::filesystem::exists(prefix.string() + ".index")) {
      BundleReadOptions read_options;
      read_options.verify_checksums = options_.verify_checksums;
      read_options.threads = threads_;
      KILN_ASSIGN_OR_RETURN_CTX(reader, BundleReader::Open(prefix, read_options),
                                "restoring variables of '", dir_.string(), "'");
    }
    // Which variables the functions this load prepares capture (a serving load restores only
    // those; see PlanModel::Load).
    std::vector<char> captured(size_of(pm.variables()), 0);
    auto mark = [&](const auto* captures) {
      for (size_t c = 0; c < size_of(captures); ++c) {
        const int v = captures->Get(c)->variable();
        if (v >= 0 && static_cast<size_t>(v) < captured.size()) captured[v] = 1;
      }
    };
    // And which of those each function was prepared with frozen (its reads folded): this load
    // freezes them as compile's did, so each function prepares to what the plan recorded.
    std::vector<char> frozen(size_of(pm.variables()), 0);
    auto mark_frozen = [&](int32_t function, const auto* captures) {
      const plan::Function& fn = *root.functions()->Get(function);
      const size_t lead = size_of(fn.prepared_dtypes()) - size_of(captures);  // checked sizes
      for (size_t i = 0; i < size_of(fn.frozen_args()); ++i) {
        const int32_t a = fn.frozen_args()->Get(i);
        if (a < static_cast<int32_t>(lead) || static_cast<size_t>(a) >= lead + size_of(captures))
          continue;
        const int v = captures->Get(a - lead)->variable();
        if (v >= 0 && static_cast<size_t>(v) < frozen.size()) frozen[v] = 1;
      }
    };
    const bool methods = options_.signatures.empty() && options_.restored_functions;
    for (size_t i = 0; i < size_of(pm.signatures()); ++i) {
      const plan::Signature& ps = *pm.signatures()->Get(i);
      if (!WantsSignature(options_, ps.key()->string_view())) continue;
      mark(ps.captures());
      mark_frozen(SignatureFunction(ps, methods), ps.captures());
    }
    if (methods)
      for (size_t m = 0; m < size_of(pm.methods()); ++m)
        for (size_t c = 0; c < size_of(pm.methods()->Get(m)->concretes()); ++c) {
          const plan::Concrete& pc = *pm.methods()->Get(m)->concretes()->Get(c);
          mark(pc.captures());
          mark_frozen(pc.function(), pc.captures());
        }
    for (size_t i = 0; i < size_of(pm.variables()); ++i) {
      const plan::Variable& pv = *pm.variables()->Get(i);
      KILN_ASSIGN_OR_RETURN(DType dtype, DTypeFromProto(pv.dtype()));
      PartialShape shape = PartialShape::UnknownRank();
      if (pv.shape() != nullptr && !pv.shape()->unknown_rank()) {
        std::vector<int64_t> dims;
        if (pv.shape()->dims() != nullptr)
          dims.assign(pv.shape()->dims()->begin(), pv.shape()->dims()->end());
        KILN_ASSIGN_OR_RETURN(shape, PartialShape::FromDims(dims));
      }
      auto var = std::make_shared<VariableResource>(pv.path()->str(), dtype, shape);
      const std::string key = pv.checkpoint_key() ? pv.checkpoint_key()->str() : "";
      const bool restore = captured[i] != 0 || restore_uncaptured_;
      if (restore && !key.empty() && reader != nullptr && reader->Contains(key)) {
        KILN_ASSIGN_OR_RETURN_CTX(Tensor value, reader->Read(key), "restoring variable '",
                                  pv.path()->str(), "'");
        KILN_RETURN_IF_ERROR_CTX(var->Assign(value), "restoring variable '", pv.path()->str(),
                                 "' from checkpoint key '", key, "'");
      }
      if (pm.variables_frozen() || frozen[i] != 0) var->Freeze();
      core_.variables.push_back({var->name(), var, pv.trainable()});
    }
    auto captures_of = [&](const auto* list, std::vector<Tensor>* out) -> Status {
      for (size_t i = 0; i < size_of(list); ++i) {
        const plan::Capture& c = *list->Get(i);
        if (c.variable() >= 0) {
          out->push_back(ResourceTensor(core_.variables[c.variable()].resource));
        } else if (c.constant() >= 0) {
          KILN_ASSIGN_OR_RETURN(Tensor t, plan_.ConstantTensor(c.constant()));
          out->push_back(std::move(t));
        } else {
          KILN_ASSIGN_OR_RETURN(std::string path, AssetPath(dir_, c.asset()->str()));
          out->push_back(Tensor::StringScalar(path));
        }
      }
      return OkStatus();
    };
    auto arg_of = [](const plan::SignatureArg& a) {
      SignatureArg s;
      s.key = a.key()->str();
      s.tensor_name = a.tensor_name() ? a.tensor_name()->str() : "";
      s.spec.dtype = static_cast<DType>(a.dtype());
      s.spec.shape = ServingPlan::ShapeOf(a.shape());
      return s;
    };
    for (size_t i = 0; i < size_of(pm.signatures()); ++i) {
      const plan::Signature& ps = *pm.signatures()->Get(i);
      if (!WantsSignature(options_, ps.key()->string_view())) continue;
      const plan::Function& fn = *root.functions()->Get(SignatureFunction(ps, methods));
      Signature::Parts sig;
      sig.name = ps.key()->str();
      for (size_t a = 0; a < size_of(ps.inputs()); ++a)
        sig.inputs.push_back(arg_of(*ps.inputs()->Get(a)));
      for (size_t a = 0; a < size_of(ps.outputs()); ++a)
        sig.outputs.push_back(arg_of(*ps.outputs()->Get(a)));
      sig.input_to_arg.assign(ps.input_to_arg()->begin(), ps.input_to_arg()->end());
      sig.output_from_ret.assign(ps.output_from_ret()->begin(), ps.output_from_ret()->end());
      KILN_RETURN_IF_ERROR(captures_of(ps.captures(), &sig.captures));
      const std::vector<TensorSpec> specs = ServingPlan::PreparedSpecs(fn);
      PrepareOptions popts;
      popts.resources = core_.resources.get();
      popts.devices = devices_;
      popts.device_graphs = options_.device_graphs;
      popts.precision = options_.precision;
      popts.results_on_device = options_.results_on_device;
      popts.known_args = KnownCaptures(specs.size() - sig.captures.size(), sig.captures);
      KILN_ASSIGN_OR_RETURN_CTX(sig.function, plan_.Prepare(fn, *core_.library, specs, popts),
                                "loading signature '", sig.name, "' of '", dir_.string(),
                                "' from its plan");
      ++functions_from_plan;
      const std::string key = sig.name;
      KILN_ASSIGN_OR_RETURN_CTX(Signature made, Signature::Make(std::move(sig), threads_),
                                "loading '", dir_.string(), "' from its plan");
      core_.signatures.emplace(key, std::move(made));
    }
    if (methods) {
      for (size_t m = 0; m < size_of(pm.methods()); ++m) {
        const plan::Method& pmeth = *pm.methods()->Get(m);
        RestoredFunction::Parts rf;
        rf.name = pmeth.name()->str();
        for (size_t c = 0; c < size_of(pmeth.concretes()); ++c) {
          const plan::Concrete& pc = *pmeth.concretes()->Get(c);
          const plan::Function& fn = *root.functions()->Get(pc.function());
          RestoredFunction::Concrete conc;
          conc.function_name = fn.name()->str();
          for (size_t a = 0; a < size_of(pc.arg_names()); ++a) {
            conc.arg_names.push_back(pc.arg_names()->Get(a)->str());
            conc.arg_specs.push_back(TensorSpec{static_cast<DType>(pc.arg_dtypes()->Get(a)),
                                                ServingPlan::ShapeOf(pc.arg_shapes()->Get(a))});
          }
          KILN_RETURN_IF_ERROR(captures_of(pc.captures(), &conc.captures));
          const std::vector<TensorSpec> specs = ServingPlan::PreparedSpecs(fn);
          PrepareOptions popts;
          popts.resources = core_.resources.get();
          popts.devices = devices_;
          popts.device_graphs = options_.device_graphs;
          popts.precision = options_.precision;
          popts.results_on_device = options_.results_on_device;
          popts.known_args = KnownCaptures(conc.arg_specs.size(), conc.captures);
          KILN_ASSIGN_OR_RETURN_CTX(conc.function, plan_.Prepare(fn, *core_.library, specs, popts),
                                    "loading restored function '", rf.name, "' of '", dir_.string(),
                                    "' from its plan");
          ++functions_from_plan;
          rf.concretes.push_back(std::move(conc));
        }
        const std::string name = rf.name;
        KILN_ASSIGN_OR_RETURN_CTX(RestoredFunction made,
                                  RestoredFunction::Make(std::move(rf), threads_), "loading '",
                                  dir_.string(), "' from its plan");
        core_.functions.emplace(name, std::move(made));
      }
    }
    return std::optional<int>(functions_from_plan);
  }

 private:
  const ServingPlan& plan_;
  const std::filesystem::path& dir_;
  const LoadOptions& options_;
  std::vector<Device*> devices_;  // options_.devices, resolved
  const ThreadPool* threads_;
  bool restore_uncaptured_;
  LoadedModel& core_;
};

}  // namespace

Result<std::optional<int>> LoadPlanModel(const ServingPlan& plan, const LoadOptions& options,
                                         bool restore_uncaptured, LoadedModel* core) {
  return PlanModelLoader(plan, options, restore_uncaptured, core).Load();
}

PlanModel::PlanModel() = default;
PlanModel::~PlanModel() = default;

Result<std::unique_ptr<PlanModel>> PlanModel::Load(const std::filesystem::path& dir,
                                                   const LoadOptions& options) {
  const std::filesystem::path path = dir / kPlanPath;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return NotFound("'", dir.string(), "' has no serving plan (", kPlanPath,
                    "); make one with `savedmodel-cli compile --dir ", dir.string(), "`");
  auto threads = std::make_unique<ThreadPool>(options.num_threads);
  // oneDNN fixes a primitive's thread count when the primitive is made (at prepare time).
  threads->ApplyToCallingThread();
  KILN_ASSIGN_OR_RETURN_CTX(std::shared_ptr<const ServingPlan> plan,
                            ServingPlan::Open(path, options.verify_checksums), "loading '",
                            dir.string(), "' from its serving plan");
  KILN_ASSIGN_OR_RETURN(const std::vector<Device*> devices, ResolveDevices(options.devices));
  const std::string stale =
      plan->StaleReason(dir, options.tags, options.freeze_variables, devices, options.precision);
  if (!stale.empty())
    return FailedPrecondition("the serving plan of '", dir.string(), "' is stale: ", stale,
                              "; compile it again (`savedmodel-cli compile --dir ", dir.string(),
                              "`)");
  plan->ImportTuning(devices);
  std::unique_ptr<PlanModel> model(new PlanModel());
  model->core_.dir = dir;
  model->core_.threads = std::move(threads);
  KILN_ASSIGN_OR_RETURN(std::optional<int> from_plan,
                        LoadPlanModel(*plan, options, /*restore_uncaptured=*/false, &model->core_));
  if (!from_plan.has_value()) {
    const plan::Model* pm = plan->root().model();
    if (pm == nullptr)
      return FailedPrecondition(
          "the serving plan of '", dir.string(),
          "' has no model section, so it cannot be loaded without saved_model.pb (`savedmodel-cli "
          "compile` says why)");
    if (options.signatures.empty())
      return FailedPrecondition("the serving plan of '", dir.string(),
                                "' was compiled for some signatures, not every method");
    std::string have;
    if (pm->signatures() != nullptr)
      for (const plan::Signature* sig : *pm->signatures())
        have += (have.empty() ? "'" : ", '") + sig->key()->str() + "'";
    std::string want;
    for (const std::string& k : options.signatures) want += (want.empty() ? "'" : ", '") + k + "'";
    return NotFound("the serving plan of '", dir.string(), "' has no signature ", want,
                    "; it has: ", have.empty() ? "none" : have);
  }
  model->functions_from_plan_ = *from_plan;
  return model;
}

}  // namespace kiln::exec
