// TensorFlow Serving's model repository: each model has a base path whose numbered
// subdirectories are versions; a version policy (latest N, all, specific) picks which to
// serve; labels name versions; a poller loads new versions and unloads removed ones.
//
// Hot reload never drops or fails a request: a request holds a shared_ptr to the version it
// runs on, so unloading only removes the version from the index; it is destroyed when its last
// request finishes. A new version is loaded (outside the index lock) before the version it
// replaces is unloaded, so there is always one to answer.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/exec/saved_model.h"
#include "kiln/serve/batcher.h"
#include "kiln/serve/metrics.h"
#include "kiln/serve/periodic_thread.h"

namespace kiln::serve {

struct VersionPolicy {
  enum class Kind { kLatest, kAll, kSpecific };
  Kind kind = Kind::kLatest;
  int64_t num_latest = 1;
  std::vector<int64_t> specific;
};

struct ModelSource {
  std::string name;
  std::filesystem::path base_path;
  VersionPolicy policy;
  std::map<std::string, int64_t> labels;
  std::optional<BatchingOptions> batching;  // per-model override of the server default
};

struct RepositoryOptions {
  exec::LoadOptions load;
  BatchingOptions batching;                  // the default for every model
  std::set<std::string> allowed_unsafe_ops;  // ops ScanUnsafeOps reports that may still load
  // A version that fails to load is tried again after load_retry_interval, max_load_retries
  // times after the first failure (TF Serving's --max_num_load_retries: 0 tries once; and
  // --load_retry_interval_micros), and afresh whenever its files change (a copy finishing).
  int max_load_retries = 5;
  std::chrono::milliseconds load_retry_interval{60000};
  // Availability-preserving (TF Serving's default policy): a version that is no longer wanted
  // is unloaded only once a wanted one is available, so a bad new version never takes the
  // model offline. Resource-preserving: unload first, then load (peak memory of one version).
  bool preserve_availability = true;
  // TF Serving's --allow_version_labels_for_unavailable_models: a label that is new (or keeps
  // its version) may name a version that is not available yet. Without it a label must name
  // an available version.
  bool allow_version_labels_for_unavailable_models = false;
  // TF Serving's --enable_model_warmup: a version's assets.extra/tf_serving_warmup_requests is
  // replayed before it serves, and a request of it that fails fails the load (warmup.h).
  bool enable_model_warmup = true;
  Metrics* metrics = nullptr;
};

// One loaded version. Immutable once published.
class Servable {
 public:
  const std::string& name() const { return name_; }
  int64_t version() const { return version_; }
  const exec::SavedModel& model() const { return *model_; }
  // Runs through the signature's batcher when batching is on and the signature can batch.
  Result<std::map<std::string, Tensor>> Run(const exec::Signature& signature,
                                            std::map<std::string, Tensor> inputs,
                                            std::chrono::steady_clock::time_point deadline =
                                                std::chrono::steady_clock::time_point::max()) const;
  ~Servable();

 private:
  friend class ModelRepository;
  std::string name_;
  int64_t version_ = 0;
  std::unique_ptr<exec::SavedModel> model_;
  std::map<const exec::Signature*, std::unique_ptr<Batcher>> batchers_;
};

enum class VersionState { kLoading, kAvailable, kUnloading, kEnd };
const char* VersionStateName(VersionState s);  // "LOADING", "AVAILABLE", ... as TF Serving

struct VersionStatus {
  int64_t version = 0;
  VersionState state = VersionState::kEnd;
  Status status;  // why a load failed
};

class ModelRepository {
 public:
  explicit ModelRepository(RepositoryOptions options);
  ~ModelRepository();

  // Replaces the configured models; Poll applies the change.
  Status SetModels(std::vector<ModelSource> models);
  // TF Serving's rule for version labels, checked against what is loaded now: a label must name
  // an available version (unless allow_version_labels_for_unavailable_models and the label is
  // new or keeps its version). FailedPrecondition with TF Serving's message otherwise.
  Status CheckVersionLabels(const std::vector<ModelSource>& models) const;
  // TF Serving's ServerCore::ReloadConfig: checks the labels, replaces the configured models
  // (removed ones are unloaded, their requests in flight finish) and polls once, loading what
  // the new policies want. A refused config changes nothing. When a model the config adds has
  // no available version after that poll, the config stays applied and `not_available` says
  // which (TF Serving answers that UNKNOWN); the poller keeps trying them.
  Status ReloadConfig(std::vector<ModelSource> models, std::string* not_available = nullptr);
  // One pass: list each base path, load the versions the policy wants, unload the others.
  // Errors of single versions are recorded in their status, not returned.
  Status Poll();
  // Polls every `interval` on a thread of its own until StopPolling or destruction.
  void StartPolling(std::chrono::milliseconds interval);
  void StopPolling();

  // The version to serve: `version` if given, else the label's version, else the highest
  // available. NotFound names the model/version/label and what exists.
  Result<std::shared_ptr<const Servable>> Find(std::string_view name,
                                               std::optional<int64_t> version = {},
                                               std::optional<std::string_view> label = {}) const;
  Result<std::vector<VersionStatus>> Statuses(std::string_view name,
                                              std::optional<int64_t> version = {}) const;
  std::vector<std::string> ModelNames() const;
  // Every configured model has at least one available version.
  bool AllModelsAvailable() const;

 private:
  struct Model {
    ModelSource source;
    std::map<int64_t, std::shared_ptr<const Servable>> loaded;
    std::map<int64_t, VersionStatus> status;
    struct Attempts {
      int count = 0;
      std::chrono::steady_clock::time_point last;
      uint64_t fingerprint = 0;  // of the version's files when it last failed
    };
    std::map<int64_t, Attempts> attempts;
  };
  Result<std::shared_ptr<const Servable>> LoadVersion(const ModelSource& source, int64_t version,
                                                      const std::filesystem::path& dir);
  Status PollModel(const std::string& name);
  // Unloads the loaded versions not in `want`; with only_if_successor, only once one of `want`
  // is loaded (or `want` is empty).
  void UnloadUnwanted(const std::string& name, const std::set<int64_t>& want,
                      bool only_if_successor);

  RepositoryOptions options_;
  mutable std::mutex mu_;  // guards models_
  std::map<std::string, Model, std::less<>> models_;
  std::mutex poll_mu_;     // one poll at a time
  std::mutex reload_mu_;   // one ReloadConfig at a time
  PeriodicThread poller_;  // last: stops before the members its function reads go
};

}  // namespace kiln::serve
