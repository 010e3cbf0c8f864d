// TensorFlow Serving's configuration files: --model_config_file (ModelServerConfig in protobuf
// text format: model_config_list { config { name base_path model_version_policy
// version_labels } }, re-read with --model_config_file_poll_wait_seconds),
// --batching_parameters_file (BatchingParameters) and --monitoring_config_file. A model's own
// batching parameters may sit in <base_path>/batching_params.pbtxt (kiln's convention for
// per-model batching; same format).
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/serve/batcher.h"
#include "kiln/serve/model_repository.h"

namespace tensorflow::serving {
class ModelServerConfig;
}  // namespace tensorflow::serving

namespace kiln::serve {

// The models of a ModelServerConfig; only a model_config_list is served (TF Serving's
// HandleReloadConfigRequest refuses the rest the same way). An empty list is no models.
Result<std::vector<ModelSource>> ModelSourcesFromConfig(
    const tensorflow::serving::ModelServerConfig& config, std::string_view name = "<config>");
Result<std::vector<ModelSource>> ParseModelConfigText(std::string_view text,
                                                      std::string_view name = "<config>");
Result<std::vector<ModelSource>> ReadModelConfigFile(const std::filesystem::path& path);

// Batching on, with the file's parameters over the defaults.
Result<BatchingOptions> ParseBatchingParametersText(std::string_view text,
                                                    std::string_view name = "<batching>");
Result<BatchingOptions> ReadBatchingParametersFile(const std::filesystem::path& path);

// Reads <base_path>/batching_params.pbtxt into each source that has one.
Status AddPerModelBatching(std::vector<ModelSource>* sources);

// --monitoring_config_file (TF Serving's MonitoringConfig): where Prometheus metrics are served
// besides kiln's fixed paths; empty when prometheus_config is not enabled.
Result<std::string> ReadPrometheusPath(const std::filesystem::path& path);

// TF Serving's --model_config_file_poll_wait_seconds: reads the config file every interval and,
// when its text changed since the last config applied, reloads it (ModelRepository::
// ReloadConfig). A file that does not parse or a config that is refused is logged, the running
// config stays, and it is tried again on the next poll.
class ModelConfigFilePoller {
 public:
  // `applied_text`: the text the server started with (not reloaded again).
  ModelConfigFilePoller(std::filesystem::path path, ModelRepository* repository,
                        std::string applied_text);
  ~ModelConfigFilePoller();
  ModelConfigFilePoller(const ModelConfigFilePoller&) = delete;
  ModelConfigFilePoller& operator=(const ModelConfigFilePoller&) = delete;
  void Start(std::chrono::milliseconds interval);
  void Stop();
  // One poll: reads the file and reloads it if it changed.
  Status PollOnce();

 private:
  std::filesystem::path path_;
  ModelRepository* repository_;
  std::string applied_text_;
  PeriodicThread thread_;  // last: stops before the members its function reads go
};

}  // namespace kiln::serve
