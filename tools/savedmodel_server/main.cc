// savedmodel-server: serves SavedModel bundles with TensorFlow Serving's flags and directory
// layout over TF Serving's REST (/v1) and gRPC APIs and KServe's V2 protocol (REST /v2 on the
// same port, gRPC on the same port as TF Serving's). SIGTERM/SIGINT: readiness goes false, new
// connections are refused, requests in flight finish, then the process exits 0.
#include <google/protobuf/stubs/logging.h>
#include <pthread.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <sstream>
#include <string_view>
#include <thread>

#include "grpc_frontend.h"
#include "kiln/core/file_util.h"
#include "kiln/exec/device.h"
#include "kiln/exec/thread_pool.h"
#include "kiln/serve/http_server.h"
#include "kiln/serve/log.h"
#include "kiln/serve/metrics.h"
#include "kiln/serve/model_repository.h"
#include "kiln/serve/rest_api.h"
#include "kiln/serve/server_config.h"
#include "kiln/serve/server_core.h"

namespace {

using namespace kiln;
using namespace kiln::serve;

struct Flags {
  int port = 8500;
  int rest_api_port = 0;
  std::string bind_address = "0.0.0.0";
  std::string model_name = "default";
  std::string model_base_path;
  std::string model_config_file;
  int model_config_file_poll_wait_seconds = 0;  // 0: read once
  int file_system_poll_wait_seconds = 1;
  int max_num_load_retries = 5;
  int64_t load_retry_interval_micros = 60'000'000;
  bool resource_preserving_reload = false;
  bool enable_batching = false;
  std::string batching_parameters_file;
  int rest_api_num_threads = 0;
  int rest_api_timeout_in_ms = 30000;
  int64_t rest_api_max_body_bytes = int64_t{64} << 20;
  int rest_api_max_connections = 4096;
  int rest_api_max_queued_requests = 0;
  int rest_api_idle_timeout_in_ms = 30000;
  int rest_api_header_timeout_in_ms = 0;  // 0: min(10 s, --rest_api_timeout_in_ms)
  int64_t rest_api_max_header_bytes = 64 << 10;
  int64_t rest_api_max_buffered_bytes = int64_t{1} << 30;
  int64_t max_json_parsed_bytes = int64_t{512} << 20;
  int grpc_max_threads = 64;
  int64_t grpc_memory_quota_bytes = 0;  // 0: max(256 MiB, 4 x the message limit)
  int threads = 0;                      // intra-op threads of every loaded model (0: all cores)
  int64_t max_tensor_bytes = int64_t{1} << 30;
  int max_json_depth = 64;
  std::vector<std::string> allowed_unsafe_ops;
  std::vector<std::string> devices;  // priority order; empty: the CPU alone
  bool cuda_graphs = false;          // LoadOptions::device_graphs
  std::string precision = "fp32";    // LoadOptions::precision
  int shutdown_grace_seconds = 30;
  bool log_requests = false;
  bool log_debug = false;
  // TF Serving's flags that kiln maps onto its own (docs/server.md, "TF Serving's flags").
  std::string monitoring_config_file;
  int tensorflow_intra_op_parallelism = 0;          // = --threads when that is not given
  int tensorflow_inter_op_parallelism = 0;          // accepted: one call's kernels run in order
  std::string saved_model_tags = "serve";           // the MetaGraphDef to load, comma-separated
  bool flush_filesystem_caches = true;              // accepted: kiln keeps no file-system cache
  bool enable_signature_method_name_check = false;  // as TF Serving's model server
  int tensorflow_session_parallelism = 0;           // the intra-op default when neither is given
  bool enable_model_warmup = true;  // replay assets.extra/tf_serving_warmup_requests
  bool allow_version_labels_for_unavailable_models = false;
};

// Every numeric flag's range, checked before anything starts: a bad value is a startup error
// (exit 1) naming the flag, never an abort inside a library.
Status CheckFlags(const Flags& f) {
  struct Range {
    const char* name;
    int64_t value;
    int64_t min;
    int64_t max;
  };
  constexpr int64_t kMax = INT64_MAX;
  const Range ranges[] = {
      {"--port", f.port, 0, 65535},
      {"--rest_api_port", f.rest_api_port, 0, 65535},
      {"--model_config_file_poll_wait_seconds", f.model_config_file_poll_wait_seconds, 0, kMax},
      {"--file_system_poll_wait_seconds", f.file_system_poll_wait_seconds, 0, kMax},
      {"--max_num_load_retries", f.max_num_load_retries, 0, kMax},
      {"--load_retry_interval_micros", f.load_retry_interval_micros, 0, kMax},
      {"--rest_api_num_threads", f.rest_api_num_threads, 0, 4096},
      {"--rest_api_timeout_in_ms", f.rest_api_timeout_in_ms, 1, kMax},
      {"--rest_api_max_body_bytes", f.rest_api_max_body_bytes, 1, kMax},
      {"--rest_api_max_connections", f.rest_api_max_connections, 1, kMax},
      {"--rest_api_max_queued_requests", f.rest_api_max_queued_requests, 0, kMax},
      {"--rest_api_idle_timeout_in_ms", f.rest_api_idle_timeout_in_ms, 1, kMax},
      {"--rest_api_header_timeout_in_ms", f.rest_api_header_timeout_in_ms, 0, kMax},
      {"--rest_api_max_header_bytes", f.rest_api_max_header_bytes, 1, kMax},
      {"--rest_api_max_buffered_bytes", f.rest_api_max_buffered_bytes, 1, kMax},
      {"--max_json_parsed_bytes", f.max_json_parsed_bytes, 1, kMax},
      // gRPC's synchronous server keeps a polling thread besides the workers: with fewer than
      // 3 threads every call is refused RESOURCE_EXHAUSTED (0 aborts inside grpc).
      {"--grpc_max_threads", f.grpc_max_threads, 3, kMax},
      {"--grpc_memory_quota_bytes", f.grpc_memory_quota_bytes, 0, kMax},
      {"--max_tensor_bytes", f.max_tensor_bytes, 1, kMax},
      {"--max_json_depth", f.max_json_depth, 1, kMax},
      {"--shutdown_grace_seconds", f.shutdown_grace_seconds, 0, kMax},
      {"--tensorflow_intra_op_parallelism", f.tensorflow_intra_op_parallelism, 0, kMax},
      {"--tensorflow_inter_op_parallelism", f.tensorflow_inter_op_parallelism, 0, kMax},
      {"--tensorflow_session_parallelism", f.tensorflow_session_parallelism, 0, kMax},
  };
  if (f.threads < 0)
    return InvalidArgument("--threads must be 0 (all cores) or more, got ", f.threads);
  for (const Range& r : ranges) {
    if (r.value >= r.min && r.value <= r.max) continue;
    if (r.max == kMax)
      return InvalidArgument(r.name, " must be ", r.min, " or more, got ", r.value);
    return InvalidArgument(r.name, " must be in [", r.min, ", ", r.max, "], got ", r.value);
  }
  return OkStatus();
}

// --threads, else TF Serving's --tensorflow_intra_op_parallelism, else its
// --tensorflow_session_parallelism (TF Serving's fallback for both); 0: all cores.
int ModelThreads(const Flags& f) {
  if (f.threads > 0) return f.threads;
  if (f.tensorflow_intra_op_parallelism > 0) return f.tensorflow_intra_op_parallelism;
  return f.tensorflow_session_parallelism;
}

// What --model_config_file or --model_base_path configure; `config_text` gets the file's text
// (what the config poller compares with).
Result<std::vector<ModelSource>> ConfiguredModels(const Flags& flags, std::string* config_text) {
  std::vector<ModelSource> sources;
  if (!flags.model_config_file.empty()) {
    KILN_ASSIGN_OR_RETURN(*config_text, ReadFileToString(flags.model_config_file));
    KILN_ASSIGN_OR_RETURN(sources, ParseModelConfigText(*config_text, flags.model_config_file));
  } else if (!flags.model_base_path.empty()) {
    ModelSource s;
    s.name = flags.model_name;
    s.base_path = flags.model_base_path;
    sources.push_back(std::move(s));
  } else {
    return InvalidArgument("give --model_base_path (with --model_name) or --model_config_file");
  }
  KILN_RETURN_IF_ERROR(AddPerModelBatching(&sources));
  return sources;
}

int Fail(const Status& s) {
  LogEvent("error", "startup_failed", {{"error", s.ToString()}});
  return 1;
}

int Serve(const Flags& flags) {
  SetDebugLogging(flags.log_debug);
  if (Status s = CheckFlags(flags); !s.ok()) return Fail(s);
  std::string config_text;
  auto sources = ConfiguredModels(flags, &config_text);
  if (!sources.ok()) return Fail(sources.status());
  std::string metrics_path;
  if (!flags.monitoring_config_file.empty()) {
    auto p = ReadPrometheusPath(flags.monitoring_config_file);
    if (!p.ok()) return Fail(p.status());
    metrics_path = *p;
  }
  if (flags.tensorflow_inter_op_parallelism > 0)
    LogEvent("info", "flag_ignored",
             {{"flag", "--tensorflow_inter_op_parallelism"},
              {"why",
               "kiln runs one call's kernels in order; concurrent requests run in "
               "parallel (intra-op threads: --threads)"}});

  Metrics metrics;
  RepositoryOptions ro;
  ro.metrics = &metrics;
  ro.load.num_threads = ModelThreads(flags);
  ro.load.tags.clear();
  for (std::string_view rest = flags.saved_model_tags; !rest.empty();) {
    const size_t comma = rest.find(',');
    std::string_view tag = rest.substr(0, comma);
    if (!tag.empty()) ro.load.tags.emplace_back(tag);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  // A server runs signatures alone: what only restored functions write (a Keras 2 model's
  // training-mode batch norm statistics) is frozen and folded too.
  ro.load.restored_functions = false;
  ro.max_load_retries = flags.max_num_load_retries;
  ro.allow_version_labels_for_unavailable_models =
      flags.allow_version_labels_for_unavailable_models;
  ro.load_retry_interval = std::chrono::milliseconds(flags.load_retry_interval_micros / 1000);
  ro.preserve_availability = !flags.resource_preserving_reload;
  ro.enable_model_warmup = flags.enable_model_warmup;
  // A device that is not there (--device gpu on a machine without one) fails here, before any
  // model loads, with the devices that exist.
  if (auto d = kiln::exec::ResolveDevices(flags.devices); !d.ok()) return Fail(d.status());
  ro.load.devices = flags.devices;
  ro.load.device_graphs = flags.cuda_graphs;
  if (auto p = kiln::exec::ParsePrecision(flags.precision); p.ok()) {
    ro.load.precision = *p;
  } else {
    return Fail(p.status());
  }
  ro.allowed_unsafe_ops.insert(flags.allowed_unsafe_ops.begin(), flags.allowed_unsafe_ops.end());
  if (flags.enable_batching) {
    if (!flags.batching_parameters_file.empty()) {
      auto b = ReadBatchingParametersFile(flags.batching_parameters_file);
      if (!b.ok()) return Fail(b.status());
      ro.batching = *b;
    }
    ro.batching.enabled = true;
  }
  ModelRepository repository(ro);
  if (Status s = repository.SetModels(*sources); !s.ok()) return Fail(s);
  if (Status s = repository.Poll(); !s.ok()) return Fail(s);
  // TF Serving refuses a label on a version that does not serve; kiln checks after the first
  // load, so labels on the versions that loaded are fine at startup.
  if (Status s = repository.CheckVersionLabels(*sources); !s.ok())
    return Fail(s.WithContext(
        "version labels (allow them with --allow_version_labels_for_unavailable_models)"));
  if (flags.file_system_poll_wait_seconds > 0)
    repository.StartPolling(std::chrono::seconds(flags.file_system_poll_wait_seconds));
  std::unique_ptr<ModelConfigFilePoller> config_poller;
  if (!flags.model_config_file.empty() && flags.model_config_file_poll_wait_seconds > 0) {
    config_poller =
        std::make_unique<ModelConfigFilePoller>(flags.model_config_file, &repository, config_text);
    config_poller->Start(std::chrono::seconds(flags.model_config_file_poll_wait_seconds));
  }

  RequestLimits limits;
  limits.max_tensor_bytes = flags.max_tensor_bytes;
  limits.max_json_depth = flags.max_json_depth;
  limits.max_json_parsed_bytes = flags.max_json_parsed_bytes;
  ServerCore core(&repository, &metrics, limits);
  core.set_method_name_check(flags.enable_signature_method_name_check);
  RestApi api(&core);
  if (!metrics_path.empty()) api.AddMetricsPath(metrics_path);

  std::unique_ptr<GrpcFrontend> grpc;
  if (flags.port > 0) {
    GrpcOptions go;
    go.address = flags.bind_address + ":" + std::to_string(flags.port);
    go.max_threads = flags.grpc_max_threads;
    go.max_message_bytes =
        static_cast<int>(std::min<int64_t>(flags.rest_api_max_body_bytes, INT32_MAX));
    go.memory_quota_bytes = static_cast<size_t>(
        flags.grpc_memory_quota_bytes > 0
            ? flags.grpc_memory_quota_bytes
            : std::max<int64_t>(int64_t{256} << 20, 4 * int64_t{go.max_message_bytes}));
    auto g = GrpcFrontend::Start(&core, go);
    if (!g.ok()) return Fail(g.status());
    grpc = std::move(*g);
    LogEvent("info", "grpc_listening", {{"address", go.address}});
  }
  std::unique_ptr<HttpServer> http;
  if (flags.rest_api_port > 0) {
    HttpServerOptions ho;
    ho.address = flags.bind_address;
    ho.port = flags.rest_api_port;
    ho.num_workers = flags.rest_api_num_threads > 0
                         ? flags.rest_api_num_threads
                         : std::max(16, 4 * static_cast<int>(std::thread::hardware_concurrency()));
    ho.max_connections = flags.rest_api_max_connections;
    ho.max_queued_requests = flags.rest_api_max_queued_requests;
    ho.max_header_bytes = static_cast<size_t>(flags.rest_api_max_header_bytes);
    ho.max_body_bytes = static_cast<size_t>(flags.rest_api_max_body_bytes);
    ho.max_buffered_bytes = static_cast<size_t>(flags.rest_api_max_buffered_bytes);
    ho.idle_timeout_ms = flags.rest_api_idle_timeout_in_ms;
    ho.header_timeout_ms = flags.rest_api_header_timeout_in_ms > 0
                               ? flags.rest_api_header_timeout_in_ms
                               : std::min(10000, flags.rest_api_timeout_in_ms);
    ho.body_timeout_ms = flags.rest_api_timeout_in_ms;
    ho.write_timeout_ms = flags.rest_api_timeout_in_ms;
    const bool log = flags.log_requests;
    auto handler = [&api, log](const HttpRequest& request) {
      HttpReply reply = api.Handle(request);
      if (log)
        LogEvent("info", "http_request",
                 {{"method", std::string(request.method)},
                  {"path", std::string(request.path)},
                  {"status", std::to_string(reply.status)}});
      return reply;
    };
    auto h = HttpServer::Start(handler, ho);
    if (!h.ok()) return Fail(h.status());
    http = std::move(*h);
    LogEvent("info", "rest_listening",
             {{"address", ho.address + ":" + std::to_string(http->port())},
              {"threads", std::to_string(ho.num_workers)}});
  }
  if (!grpc && !http) return Fail(InvalidArgument("neither --port nor --rest_api_port is set"));
  LogEvent("info", "server_started", {{"ready", core.Ready() ? "true" : "false"}});

  // Signals were blocked in every thread (main blocked them before any was created).
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  int sig = 0;
  sigwait(&set, &sig);
  LogEvent("info", "shutdown_started", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
  core.BeginShutdown();  // readiness false; new requests are answered UNAVAILABLE
  if (config_poller) config_poller->Stop();
  repository.StopPolling();
  // Stop accepting, answer what is in flight within the grace period, drop slow clients.
  if (http) http->Shutdown(std::chrono::seconds(flags.shutdown_grace_seconds));
  if (grpc) grpc->Shutdown(flags.shutdown_grace_seconds);
  LogEvent("info", "shutdown_complete");
  return 0;
}

// protobuf logs a line for every proto3 string with invalid UTF-8 it parses: a hostile gRPC
// client could fill the log with them. They go to the structured log at debug level.
void ProtobufLog(google::protobuf::LogLevel /*level*/, const char* file, int line,
                 const std::string& message) {
  LogEvent("debug", "protobuf",
           {{"file", file}, {"line", std::to_string(line)}, {"message", message}});
}

int Main(int argc, char** argv) {
  google::protobuf::SetLogHandler(&ProtobufLog);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  Flags f;
  CLI::App app{
      "Serve TensorFlow SavedModels over TF Serving's REST/gRPC APIs and KServe V2 (kiln).",
      "savedmodel-server"};
  // A flag given twice takes its last value, as TF Serving's flag parser does (an entrypoint
  // sets defaults, "$@" overrides them). List flags (--device, --allowed_unsafe_ops) append.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--port", f.port,
                 "gRPC port (TF Serving PredictionService and KServe V2); 0 = off")
      ->capture_default_str();
  app.add_option("--rest_api_port", f.rest_api_port, "REST port (/v1 and /v2 paths); 0 = off")
      ->capture_default_str();
  app.add_option("--bind_address", f.bind_address, "address both ports listen on")
      ->capture_default_str();
  app.add_option("--model_name", f.model_name, "name of the model served from --model_base_path")
      ->capture_default_str();
  app.add_option("--model_base_path", f.model_base_path,
                 "directory whose numbered subdirectories are versions of the model");
  app.add_option("--model_config_file", f.model_config_file,
                 "ModelServerConfig in protobuf text format (several models, version policies, "
                 "labels)");
  app.add_option("--model_config_file_poll_wait_seconds", f.model_config_file_poll_wait_seconds,
                 "seconds between reads of --model_config_file; a changed file is applied "
                 "(models added and removed, policies and labels); 0 = read once")
      ->capture_default_str();
  app.add_option("--max_num_load_retries", f.max_num_load_retries,
                 "retries of a version that failed to load, after the first try (0: tried "
                 "once; again at once when its files change)")
      ->capture_default_str();
  app.add_option("--load_retry_interval_micros", f.load_retry_interval_micros,
                 "wait between tries of a version that failed to load")
      ->capture_default_str();
  app.add_flag("--resource_preserving_reload", f.resource_preserving_reload,
               "unload a replaced version before loading its successor (default: keep serving "
               "it until the successor is available)");
  app.add_option("--file_system_poll_wait_seconds", f.file_system_poll_wait_seconds,
                 "seconds between scans for new or removed versions; 0 = load once")
      ->capture_default_str();
  app.add_flag("--enable_batching", f.enable_batching, "batch concurrent requests per model");
  app.add_option("--batching_parameters_file", f.batching_parameters_file,
                 "BatchingParameters in protobuf text format");
  app.add_option("--rest_api_num_threads", f.rest_api_num_threads,
                 "HTTP worker threads (default max(16, 4 x cores))");
  app.add_option("--rest_api_timeout_in_ms", f.rest_api_timeout_in_ms,
                 "how long one HTTP request body and one response may take")
      ->capture_default_str();
  app.add_option("--rest_api_max_body_bytes", f.rest_api_max_body_bytes,
                 "largest request body (HTTP 413 above; also the gRPC message limit)")
      ->capture_default_str();
  app.add_option("--rest_api_max_connections", f.rest_api_max_connections,
                 "open HTTP connections (more are answered 503 and closed)")
      ->capture_default_str();
  app.add_option("--rest_api_max_queued_requests", f.rest_api_max_queued_requests,
                 "HTTP requests waiting for a worker (more are answered 429); 0: as many as "
                 "connections");
  app.add_option("--rest_api_idle_timeout_in_ms", f.rest_api_idle_timeout_in_ms,
                 "how long a keep-alive HTTP connection may wait between requests")
      ->capture_default_str();
  app.add_option("--rest_api_header_timeout_in_ms", f.rest_api_header_timeout_in_ms,
                 "how long a request's header may take from its first byte (slow clients get 408; "
                 "default: 10 s or --rest_api_timeout_in_ms if shorter)");
  app.add_option("--rest_api_max_header_bytes", f.rest_api_max_header_bytes,
                 "largest HTTP header section (431 above)")
      ->capture_default_str();
  app.add_option("--rest_api_max_buffered_bytes", f.rest_api_max_buffered_bytes,
                 "request bytes held across all HTTP connections (503 above)")
      ->capture_default_str();
  app.add_option("--max_json_parsed_bytes", f.max_json_parsed_bytes,
                 "what one JSON body may cost once parsed, estimated before parsing (429 above)")
      ->capture_default_str();
  app.add_option("--threads", f.threads,
                 "intra-op threads of each model's kernels (0: all cores), as "
                 "savedmodel-cli run/bench --threads");
  app.add_option("--device", f.devices,
                 "devices every model runs on, in priority order, comma-separated (gpu, gpu:1, "
                 "cpu; default: cpu alone), as savedmodel-cli run/bench --device")
      ->delimiter(',')
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--precision", f.precision,
                 "what float32 computes in: fp32 (as saved), tf32, fp16 or bf16 (on a GPU), as "
                 "savedmodel-cli run/bench --precision")
      ->check(CLI::IsMember({"fp32", "tf32", "fp16", "bf16"}));
  app.add_flag("--cuda_graphs", f.cuda_graphs,
               "replay each fixed-shape call (each batch size the batcher forms) on a GPU as one "
               "CUDA graph from its third call on, as savedmodel-cli bench --cuda_graphs");
  app.add_option("--grpc_max_threads", f.grpc_max_threads, "gRPC worker threads")
      ->capture_default_str();
  app.add_option("--grpc_memory_quota_bytes", f.grpc_memory_quota_bytes,
                 "memory gRPC's transport may hold for all calls (a message being received "
                 "counts before its size is checked); calls past it fail RESOURCE_EXHAUSTED "
                 "(default: 256 MiB or 4 x --rest_api_max_body_bytes if larger)");
  app.add_option("--max_tensor_bytes", f.max_tensor_bytes,
                 "largest decoded size of one request tensor")
      ->capture_default_str();
  app.add_option("--max_json_depth", f.max_json_depth, "deepest JSON nesting accepted")
      ->capture_default_str();
  app.add_option("--allowed_unsafe_ops", f.allowed_unsafe_ops,
                 "ops that touch files or the host (see savedmodel-cli scan) that bundles may "
                 "use, comma-separated")
      ->delimiter(',')
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--shutdown_grace_seconds", f.shutdown_grace_seconds,
                 "how long requests in flight (gRPC and HTTP) may take after SIGTERM")
      ->capture_default_str();
  app.add_option("--monitoring_config_file", f.monitoring_config_file,
                 "TF Serving's MonitoringConfig in protobuf text format: prometheus_config "
                 "{ enable: true path: ... } also serves the metrics at that path");
  app.add_option("--tensorflow_intra_op_parallelism", f.tensorflow_intra_op_parallelism,
                 "TF Serving's name for --threads (used when --threads is not given)");
  app.add_option("--tensorflow_inter_op_parallelism", f.tensorflow_inter_op_parallelism,
                 "accepted for TF Serving command lines; kiln runs one call's kernels in order");
  app.add_option("--tensorflow_session_parallelism", f.tensorflow_session_parallelism,
                 "TF Serving's fallback for both parallelism flags: --threads when neither "
                 "--threads nor --tensorflow_intra_op_parallelism is given");
  app.add_option("--saved_model_tags", f.saved_model_tags,
                 "comma-separated tags of the MetaGraphDef to load from each SavedModel, as TF "
                 "Serving's flag")
      ->capture_default_str();
  app.add_flag("--flush_filesystem_caches", f.flush_filesystem_caches,
               "accepted for TF Serving command lines; kiln keeps no file-system cache");
  app.add_flag("--enable_signature_method_name_check", f.enable_signature_method_name_check,
               "predict, classify and regress check the signature's method_name, as TF "
               "Serving's flag (default false: native TF2 models write the predict method "
               "for every signature, and the outputs tell classify and regress signatures)");
  app.add_flag("--enable_model_warmup", f.enable_model_warmup,
               "replay a version's assets.extra/tf_serving_warmup_requests (TF Serving's "
               "PredictionLog records) before it serves; a failing record fails the load "
               "(default true)");
  app.add_flag("--allow_version_labels_for_unavailable_models",
               f.allow_version_labels_for_unavailable_models,
               "let a new version label name a version that is not available yet (by default a "
               "label must name an available version, as in TF Serving)");
  app.add_flag("--log_requests", f.log_requests, "log every HTTP request");
  app.add_flag("--log_debug", f.log_debug,
               "also log debug events (e.g. protobuf's parse warnings)");
  app.set_version_flag("--version", std::string("savedmodel-server (kiln) ") + KILN_VERSION);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // A bad command line exits 2, as savedmodel-cli and kiln-run do (docs/cli.md).
    return app.exit(e) == 0 ? 0 : 2;
  }
  return Serve(f);
}

}  // namespace

int main(int argc, char** argv) {
  kiln::exec::BoundOpenMpSpinning(argv);
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    LogEvent("error", "fatal", {{"error", e.what()}});
  } catch (...) {
    LogEvent("error", "fatal", {{"error", "unknown exception"}});
  }
  return 1;
}
