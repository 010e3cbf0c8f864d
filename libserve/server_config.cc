#include "kiln/serve/server_config.h"

#include <google/protobuf/message.h>

#include <system_error>

#include "kiln/core/file_util.h"
#include "kiln/core/text_proto.h"
#include "kiln/serve/log.h"
#include "tensorflow_serving/config/model_server_config.pb.h"

namespace kiln::serve {
namespace {

Status ParseText(std::string_view text, std::string_view name, google::protobuf::Message* msg) {
  const Status parsed = ParseTextProto(std::string(text), msg);
  if (!parsed.ok())
    return InvalidArgument(name, ": not a ", msg->GetTypeName(),
                           " in protobuf text format: ", parsed.message());
  return OkStatus();
}

// model_type is TF Serving's deprecated spelling of model_platform; it refuses both at once.
Status CheckPlatform(const tensorflow::serving::ModelConfig& c, std::string_view name) {
  using tensorflow::serving::ModelType;
  if (c.model_type() != ModelType::MODEL_TYPE_UNSPECIFIED) {
    if (!c.model_platform().empty())
      return InvalidArgument(name, ": model '", c.name(),
                             "' sets both model_type (deprecated) and model_platform; set "
                             "model_platform only");
    if (c.model_type() != ModelType::TENSORFLOW)
      return InvalidArgument(name, ": model '", c.name(), "' has model_type ",
                             tensorflow::serving::ModelType_Name(c.model_type()),
                             "; only TENSORFLOW SavedModels are served");
  }
  if (!c.model_platform().empty() && c.model_platform() != "tensorflow")
    return InvalidArgument(name, ": model '", c.name(), "' has model_platform '",
                           c.model_platform(), "'; only 'tensorflow' SavedModels are served");
  return OkStatus();
}

}  // namespace

Result<std::vector<ModelSource>> ModelSourcesFromConfig(
    const tensorflow::serving::ModelServerConfig& config, std::string_view name) {
  if (config.config_case() != tensorflow::serving::ModelServerConfig::kModelConfigList)
    return InvalidArgument(name,
                           ": ServerModelConfig type not supported. Only ModelConfigList is "
                           "currently supported");
  std::vector<ModelSource> out;
  for (const auto& c : config.model_config_list().config()) {
    ModelSource s;
    s.name = c.name();
    s.base_path = c.base_path();
    if (s.name.empty() || s.base_path.empty())
      return InvalidArgument(name, ": every config needs a name and a base_path");
    KILN_RETURN_IF_ERROR(CheckPlatform(c, name));
    const auto& p = c.model_version_policy();
    if (p.has_all()) {
      s.policy.kind = VersionPolicy::Kind::kAll;
    } else if (p.has_specific()) {
      s.policy.kind = VersionPolicy::Kind::kSpecific;
      s.policy.specific.assign(p.specific().versions().begin(), p.specific().versions().end());
      if (s.policy.specific.empty())
        return InvalidArgument(name, ": model '", s.name, "': specific policy lists no versions");
    } else if (p.has_latest()) {
      s.policy.num_latest = p.latest().num_versions() == 0 ? 1 : p.latest().num_versions();
    }
    for (const auto& [label, version] : c.version_labels()) s.labels[label] = version;
    out.push_back(std::move(s));
  }
  return out;
}

Result<std::vector<ModelSource>> ParseModelConfigText(std::string_view text,
                                                      std::string_view name) {
  tensorflow::serving::ModelServerConfig config;
  KILN_RETURN_IF_ERROR(ParseText(text, name, &config));
  KILN_ASSIGN_OR_RETURN(auto out, ModelSourcesFromConfig(config, name));
  if (out.empty()) return InvalidArgument(name, ": model_config_list has no models");
  return out;
}

Result<std::vector<ModelSource>> ReadModelConfigFile(const std::filesystem::path& path) {
  KILN_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParseModelConfigText(text, path.string());
}

Result<BatchingOptions> ParseBatchingParametersText(std::string_view text, std::string_view name) {
  tensorflow::serving::BatchingParameters p;
  KILN_RETURN_IF_ERROR(ParseText(text, name, &p));
  BatchingOptions o;
  o.enabled = true;
  if (p.has_max_batch_size()) o.max_batch_size = p.max_batch_size().value();
  if (p.has_batch_timeout_micros()) o.batch_timeout_micros = p.batch_timeout_micros().value();
  if (p.has_max_enqueued_batches()) o.max_enqueued_batches = p.max_enqueued_batches().value();
  if (p.has_num_batch_threads())
    o.num_batch_threads = static_cast<int>(std::min<int64_t>(p.num_batch_threads().value(), 1024));
  o.allowed_batch_sizes.assign(p.allowed_batch_sizes().begin(), p.allowed_batch_sizes().end());
  if (p.has_enable_large_batch_splitting())
    o.enable_large_batch_splitting = p.enable_large_batch_splitting().value();
  if (p.has_max_execution_batch_size())
    o.max_execution_batch_size = p.max_execution_batch_size().value();
  KILN_RETURN_IF_ERROR_CTX(o.Validate(), name);
  return o;
}

Result<BatchingOptions> ReadBatchingParametersFile(const std::filesystem::path& path) {
  KILN_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParseBatchingParametersText(text, path.string());
}

Status AddPerModelBatching(std::vector<ModelSource>* sources) {
  for (auto& s : *sources) {
    const auto file = s.base_path / "batching_params.pbtxt";
    std::error_code ec;
    if (!std::filesystem::exists(file, ec)) continue;
    KILN_ASSIGN_OR_RETURN(s.batching, ReadBatchingParametersFile(file));
  }
  return OkStatus();
}

Result<std::string> ReadPrometheusPath(const std::filesystem::path& path) {
  KILN_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  tensorflow::serving::MonitoringConfig config;
  KILN_RETURN_IF_ERROR(ParseText(text, path.string(), &config));
  const auto& p = config.prometheus_config();
  if (!p.enable()) return std::string();
  const std::string where = p.path().empty() ? "/monitoring/prometheus/metrics" : p.path();
  if (where.front() != '/')
    return InvalidArgument(path.string(), ": prometheus_config path '", where,
                           "' must start with '/'");
  return where;
}

ModelConfigFilePoller::ModelConfigFilePoller(std::filesystem::path path,
                                             ModelRepository* repository, std::string applied_text)
    : path_(std::move(path)), repository_(repository), applied_text_(std::move(applied_text)) {}

ModelConfigFilePoller::~ModelConfigFilePoller() { Stop(); }

Status ModelConfigFilePoller::PollOnce() {
  KILN_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path_));
  if (text == applied_text_) return OkStatus();
  KILN_ASSIGN_OR_RETURN(auto sources, ParseModelConfigText(text, path_.string()));
  KILN_RETURN_IF_ERROR(AddPerModelBatching(&sources));
  std::string not_available;
  KILN_RETURN_IF_ERROR_CTX(repository_->ReloadConfig(std::move(sources), &not_available),
                           path_.string());
  applied_text_ = std::move(text);
  if (!not_available.empty())
    LogEvent("warning", "config_models_not_available",
             {{"file", path_.string()}, {"error", not_available}});
  return OkStatus();
}

void ModelConfigFilePoller::Start(std::chrono::milliseconds interval) {
  thread_.Start(interval, [this] {
    // TF Serving logs a failed reload on every poll and keeps the running config.
    if (Status s = PollOnce(); !s.ok())
      LogEvent("error", "config_reload_failed", {{"error", s.ToString()}});
  });
}

void ModelConfigFilePoller::Stop() { thread_.Stop(); }

}  // namespace kiln::serve
