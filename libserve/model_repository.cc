#include "kiln/serve/model_repository.h"

#include <algorithm>
#include <charconv>
#include <system_error>

#include "kiln/exec/unsafe_ops.h"
#include "kiln/serve/log.h"
#include "kiln/serve/warmup.h"

namespace kiln::serve {
namespace fs = std::filesystem;

const char* VersionStateName(VersionState s) {
  switch (s) {
    case VersionState::kLoading:
      return "LOADING";
    case VersionState::kAvailable:
      return "AVAILABLE";
    case VersionState::kUnloading:
      return "UNLOADING";
    case VersionState::kEnd:
      return "END";
  }
  return "UNKNOWN";
}

Servable::~Servable() {
  batchers_.clear();  // drain queued batches before the model goes
}

Result<std::map<std::string, Tensor>> Servable::Run(
    const exec::Signature& signature, std::map<std::string, Tensor> inputs,
    std::chrono::steady_clock::time_point deadline) const {
  auto it = batchers_.find(&signature);
  if (it != batchers_.end()) return it->second->Run(std::move(inputs), deadline);
  exec::RunOptions options;
  options.deadline = deadline;
  return signature.Run(inputs, options);
}

ModelRepository::ModelRepository(RepositoryOptions options) : options_(std::move(options)) {}

ModelRepository::~ModelRepository() { StopPolling(); }

Status ModelRepository::SetModels(std::vector<ModelSource> models) {
  std::set<std::string> names;
  for (const auto& m : models) {
    if (m.name.empty()) return InvalidArgument("a model needs a name");
    if (!names.insert(m.name).second)
      return InvalidArgument("model '", m.name, "' is configured twice");
    if (m.policy.kind == VersionPolicy::Kind::kLatest && m.policy.num_latest < 1)
      return InvalidArgument("model '", m.name, "': latest num_versions must be >= 1");
    if (m.batching) KILN_RETURN_IF_ERROR_CTX(m.batching->Validate(), "model '", m.name, "'");
  }
  if (options_.metrics) options_.metrics->SetKnownModels(names);
  std::vector<Model> removed;  // destroyed outside the lock (batchers drain)
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = models_.begin(); it != models_.end();) {
    if (names.count(it->first)) {
      ++it;
      continue;
    }
    LogEvent("info", "model_removed", {{"model", it->first}});
    removed.push_back(std::move(it->second));
    it = models_.erase(it);
  }
  for (auto& m : models) {
    auto& slot = models_[m.name];
    slot.source = std::move(m);
  }
  return OkStatus();
}

Status ModelRepository::CheckVersionLabels(const std::vector<ModelSource>& models) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const ModelSource& m : models) {
    auto it = models_.find(m.name);
    for (const auto& [label, version] : m.labels) {
      if (it != models_.end() && it->second.loaded.count(version)) continue;
      if (options_.allow_version_labels_for_unavailable_models) {
        // Only a label that is new or keeps its version; moving one must land on a version
        // that serves, so traffic by label never goes to nothing.
        if (it == models_.end()) continue;
        const auto& old = it->second.source.labels;
        auto o = old.find(label);
        if (o == old.end() || o->second == version) continue;
      }
      return FailedPrecondition("Request to assign label to version ", version, " of model ",
                                m.name, ", which is not currently available for inference");
    }
  }
  return OkStatus();
}

Status ModelRepository::ReloadConfig(std::vector<ModelSource> models, std::string* not_available) {
  std::lock_guard<std::mutex> reload_lock(reload_mu_);
  KILN_RETURN_IF_ERROR(CheckVersionLabels(models));
  const std::vector<std::string> before = ModelNames();
  std::vector<std::string> added;
  for (const ModelSource& m : models)
    if (std::find(before.begin(), before.end(), m.name) == before.end()) added.push_back(m.name);
  KILN_RETURN_IF_ERROR(SetModels(std::move(models)));
  LogEvent("info", "config_reloaded", {{"models", std::to_string(ModelNames().size())}});
  KILN_RETURN_IF_ERROR(Poll());
  // TF Serving waits for the models the config adds and reports the ones that did not load.
  std::string missing;
  int count = 0;
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::string& name : added) {
    auto it = models_.find(name);
    if (it == models_.end() || !it->second.loaded.empty()) continue;
    std::string why = "no version found under its base path";
    if (!it->second.status.empty() && !it->second.status.rbegin()->second.status.ok())
      why = it->second.status.rbegin()->second.status.ToString();
    missing += "{name: " + name + " due to error: " + why + "}, ";
    ++count;
  }
  if (count > 0 && not_available)
    *not_available =
        std::to_string(count) + " model(s) did not become available: {" + missing + "}";
  return OkStatus();
}

namespace {

// Numbered subdirectories of base (TF Serving ignores anything else), by version, with the
// directory as named: "007" is version 7 and loads from "007". When two names give one number,
// the canonical one ("7") wins, else the first in name order.
Result<std::map<int64_t, fs::path>> ListVersions(const fs::path& base) {
  std::error_code ec;
  if (!fs::is_directory(base, ec))
    return NotFound("model base path '", base.string(), "' is not a directory");
  std::map<int64_t, fs::path> versions;
  for (fs::directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_directory(ec)) continue;
    const std::string name = it->path().filename().string();
    int64_t v = 0;
    auto r = std::from_chars(name.data(), name.data() + name.size(), v);
    // A version counts once its saved_model.pb is there: a directory still being created
    // (without it) is neither wanted nor a failure yet.
    if (r.ec != std::errc() || r.ptr != name.data() + name.size() || v < 0 ||
        !(fs::exists(it->path() / "saved_model.pb", ec) ||
          fs::exists(it->path() / "saved_model.pbtxt", ec)))
      continue;
    auto [slot, added] = versions.emplace(v, it->path());
    const std::string held = slot->second.filename().string();
    if (!added && held != std::to_string(v) && (name == std::to_string(v) || name < held))
      slot->second = it->path();
  }
  if (ec) return NotFound("cannot list '", base.string(), "': ", ec.message());
  return versions;
}

// What the files of a version directory look like now (paths, sizes, modification times): a
// failed version whose fingerprint changes is tried again at once.
uint64_t Fingerprint(const fs::path& dir) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the entries
  auto mix = [&h](const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  };
  std::error_code ec;
  std::vector<std::string> lines;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    const uintmax_t size = it->is_regular_file(e2) ? it->file_size(e2) : 0;
    const auto mtime = it->last_write_time(e2).time_since_epoch().count();
    lines.push_back(it->path().string() + "|" + std::to_string(size) + "|" + std::to_string(mtime));
  }
  std::sort(lines.begin(), lines.end());
  for (const std::string& l : lines) mix(l.data(), l.size() + 1);
  return h;
}

std::set<int64_t> Wanted(const VersionPolicy& policy, const std::map<int64_t, fs::path>& dirs) {
  std::vector<int64_t> on_disk;
  for (const auto& [v, dir] : dirs) on_disk.push_back(v);
  std::set<int64_t> want;
  switch (policy.kind) {
    case VersionPolicy::Kind::kAll:
      want.insert(on_disk.begin(), on_disk.end());
      break;
    case VersionPolicy::Kind::kLatest:
      for (int64_t i = 0; i < policy.num_latest && i < static_cast<int64_t>(on_disk.size()); ++i)
        want.insert(on_disk[on_disk.size() - 1 - i]);
      break;
    case VersionPolicy::Kind::kSpecific:
      for (int64_t v : policy.specific)
        if (std::binary_search(on_disk.begin(), on_disk.end(), v)) want.insert(v);
      break;
  }
  return want;
}

}  // namespace

Result<std::shared_ptr<const Servable>> ModelRepository::LoadVersion(const ModelSource& source,
                                                                     int64_t version,
                                                                     const fs::path& dir) {
  KILN_ASSIGN_OR_RETURN(auto model, exec::SavedModel::Load(dir, options_.load));
  std::string refused;
  for (const exec::UnsafeOp& u : exec::ScanUnsafeOps(model->meta_graph())) {
    if (options_.allowed_unsafe_ops.count(u.op)) continue;
    refused += (refused.empty() ? "" : "; ") + u.op + " (node '" + u.node + "'" +
               (u.function.empty() ? "" : " in function '" + u.function + "'") + ": " + u.why + ")";
  }
  if (!refused.empty())
    return PermissionDenied("'", dir.string(), "' uses ops that reach outside the model: ", refused,
                            "; allow them with --allowed_unsafe_ops if you trust it");
  auto servable = std::make_shared<Servable>();
  servable->name_ = source.name;
  servable->version_ = version;
  const BatchingOptions& batching = source.batching ? *source.batching : options_.batching;
  if (batching.enabled) {
    for (const std::string& name : model->SignatureNames()) {
      const exec::Signature* sig = *model->GetSignature(name);
      if (!Batcher::CanBatch(*sig)) continue;
      servable->batchers_.emplace(
          sig, std::make_unique<Batcher>(sig, batching, options_.metrics, source.name));
    }
  }
  servable->model_ = std::move(model);
  std::shared_ptr<const Servable> ready = std::move(servable);
  if (options_.enable_model_warmup) KILN_RETURN_IF_ERROR(ReplayWarmup(ready, dir).status());
  return ready;
}

Status ModelRepository::PollModel(const std::string& name) {
  ModelSource source;
  std::set<int64_t> loaded;
  std::map<int64_t, Model::Attempts> attempts;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = models_.find(name);
    if (it == models_.end()) return OkStatus();
    source = it->second.source;
    for (const auto& [v, s] : it->second.loaded) loaded.insert(v);
    attempts = it->second.attempts;
  }
  auto on_disk = ListVersions(source.base_path);
  if (!on_disk.ok()) {
    LogEvent("warning", "model_base_path_unreadable",
             {{"model", name}, {"error", on_disk.status().message()}});
    return OkStatus();  // keep serving what is loaded (a transient error must not unload)
  }
  // TF Serving's warning, on every poll: the commonest mistake is a base path that is the
  // SavedModel itself.
  if (on_disk->empty())
    LogEvent("warning", "no_versions_found",
             {{"model", name},
              {"base_path", source.base_path.string()},
              {"error", "No versions of servable " + name + " found under base path " +
                            source.base_path.string() +
                            ". Did you forget to name your leaf directory as a number (eg. "
                            "'/1/')? A version directory needs a saved_model.pb."}});
  const std::set<int64_t> want = Wanted(source.policy, *on_disk);
  // Resource-preserving: the versions no longer wanted go first.
  if (!options_.preserve_availability) UnloadUnwanted(name, want, /*only_if_successor=*/false);
  const auto now = std::chrono::steady_clock::now();
  for (int64_t v : want) {
    if (loaded.count(v)) continue;
    const fs::path& dir = on_disk->at(v);
    auto a = attempts.find(v);
    if (a != attempts.end() && a->second.count > 0) {
      // Tried before: again when its files changed (a copy finishing), else after the retry
      // interval while attempts are left.
      const bool changed = Fingerprint(dir) != a->second.fingerprint;
      if (!changed && (a->second.count > options_.max_load_retries ||
                       now - a->second.last < options_.load_retry_interval))
        continue;
      if (changed) a->second.count = 0;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = models_.find(name);
      if (it == models_.end()) return OkStatus();  // unconfigured meanwhile
      it->second.status[v] = {v, VersionState::kLoading, OkStatus()};
    }
    LogEvent("info", "version_loading", {{"model", name}, {"version", std::to_string(v)}});
    auto start = std::chrono::steady_clock::now();
    auto servable = LoadVersion(source, v, dir);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (options_.metrics) options_.metrics->CountLoad(name, servable.ok());
    const uint64_t fingerprint = servable.ok() ? 0 : Fingerprint(dir);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = models_.find(name);
    if (it == models_.end()) continue;  // unconfigured meanwhile
    if (servable.ok()) {
      it->second.loaded[v] = *servable;
      it->second.attempts.erase(v);
      it->second.status[v] = {v, VersionState::kAvailable, OkStatus()};
      LogEvent("info", "version_available",
               {{"model", name},
                {"version", std::to_string(v)},
                {"load_seconds", std::to_string(secs)}});
    } else {
      Model::Attempts& at = it->second.attempts[v];
      at.count = (attempts.count(v) ? attempts[v].count : 0) + 1;
      at.last = std::chrono::steady_clock::now();
      at.fingerprint = fingerprint;
      it->second.status[v] = {v, VersionState::kEnd, servable.status()};
      LogEvent("error", "version_load_failed",
               {{"model", name},
                {"version", std::to_string(v)},
                {"attempt", std::to_string(at.count)},
                {"error", servable.status().ToString()}});
    }
  }
  if (options_.preserve_availability) UnloadUnwanted(name, want, /*only_if_successor=*/true);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(name);
  if (it == models_.end()) return OkStatus();
  Model& m = it->second;
  // Forget failed versions that left the disk, so a re-created directory is tried again.
  for (auto a = m.attempts.begin(); a != m.attempts.end();)
    a = on_disk->count(a->first) ? std::next(a) : m.attempts.erase(a);
  if (options_.metrics)
    options_.metrics->SetLoadedVersions(name, static_cast<int64_t>(m.loaded.size()));
  return OkStatus();
}

void ModelRepository::UnloadUnwanted(const std::string& name, const std::set<int64_t>& want,
                                     bool only_if_successor) {
  std::vector<std::shared_ptr<const Servable>> unloaded;  // destroyed outside the lock
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(name);
  if (it == models_.end()) return;
  Model& m = it->second;
  // Availability: keep serving the old versions until a wanted one is up (or none is wanted
  // any more: the versions left the disk).
  if (only_if_successor && !want.empty() &&
      std::none_of(want.begin(), want.end(), [&](int64_t v) { return m.loaded.count(v) > 0; }))
    return;
  for (auto l = m.loaded.begin(); l != m.loaded.end();) {
    if (want.count(l->first)) {
      ++l;
      continue;
    }
    LogEvent("info", "version_unloaded", {{"model", name}, {"version", std::to_string(l->first)}});
    m.status[l->first] = {l->first, VersionState::kEnd, OkStatus()};
    unloaded.push_back(std::move(l->second));
    l = m.loaded.erase(l);
  }
}

Status ModelRepository::Poll() {
  std::lock_guard<std::mutex> poll_lock(poll_mu_);
  std::vector<std::string> names = ModelNames();
  for (const auto& name : names) KILN_RETURN_IF_ERROR(PollModel(name));
  return OkStatus();
}

void ModelRepository::StartPolling(std::chrono::milliseconds interval) {
  poller_.Start(interval, [this] {
    if (Status s = Poll(); !s.ok()) LogEvent("error", "poll_failed", {{"error", s.ToString()}});
  });
}

void ModelRepository::StopPolling() { poller_.Stop(); }

Result<std::shared_ptr<const Servable>> ModelRepository::Find(
    std::string_view name, std::optional<int64_t> version,
    std::optional<std::string_view> label) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(name);
  if (it == models_.end()) return NotFound("Servable not found for request: model '", name, "'");
  const Model& m = it->second;
  if (label) {
    auto l = m.source.labels.find(std::string(*label));
    if (l == m.source.labels.end())
      return NotFound("model '", name, "' has no version label '", *label, "'");
    version = l->second;
  }
  if (version) {
    auto v = m.loaded.find(*version);
    if (v == m.loaded.end())
      return NotFound("Servable not found for request: model '", name, "' version ", *version,
                      " is not available");
    return v->second;
  }
  if (m.loaded.empty())
    return NotFound("Servable not found for request: model '", name, "' has no available version");
  return m.loaded.rbegin()->second;
}

Result<std::vector<VersionStatus>> ModelRepository::Statuses(std::string_view name,
                                                             std::optional<int64_t> version) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(name);
  if (it == models_.end()) return NotFound("Could not find any versions of model '", name, "'");
  std::vector<VersionStatus> out;
  for (auto s = it->second.status.rbegin(); s != it->second.status.rend(); ++s)
    if (!version || s->first == *version) out.push_back(s->second);
  if (out.empty() && version)
    return NotFound("Could not find version ", *version, " of model '", name, "'");
  if (out.empty()) return NotFound("Could not find any versions of model '", name, "'");
  return out;
}

std::vector<std::string> ModelRepository::ModelNames() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> names;
  for (const auto& [k, m] : models_) names.push_back(k);
  return names;
}

bool ModelRepository::AllModelsAvailable() const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [k, m] : models_)
    if (m.loaded.empty()) return false;
  return !models_.empty();
}

}  // namespace kiln::serve
