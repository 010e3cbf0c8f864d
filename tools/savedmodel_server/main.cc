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
#include <thread>

#include "grpc_frontend.h"
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
};

int Fail(const Status& s) {
  LogEvent("error", "startup_failed", {{"error", s.ToString()}});
  return 1;
}

int Serve(const Flags& flags) {
  SetDebugLogging(flags.log_debug);
  std::vector<ModelSource> sources;
  if (!flags.model_config_file.empty()) {
    auto parsed = ReadModelConfigFile(flags.model_config_file);
    if (!parsed.ok()) return Fail(parsed.status());
    sources = std::move(*parsed);
  } else if (!flags.model_base_path.empty()) {
    ModelSource s;
    s.name = flags.model_name;
    s.base_path = flags.model_base_path;
    sources.push_back(std::move(s));
  } else {
    return Fail(
        InvalidArgument("give --model_base_path (with --model_name) or --model_config_file"));
  }
  if (Status s = AddPerModelBatching(&sources); !s.ok()) return Fail(s);

  Metrics metrics;
  RepositoryOptions ro;
  ro.metrics = &metrics;
  if (flags.threads < 0) {
    return Fail(InvalidArgument("--threads must be 0 (all cores) or more, got ", flags.threads));
  }
  ro.load.num_threads = flags.threads;
  if (flags.max_num_load_retries < 0 || flags.load_retry_interval_micros < 0)
    return Fail(
        InvalidArgument("--max_num_load_retries and --load_retry_interval_micros must be "
                        "0 or more"));
  ro.max_load_attempts = flags.max_num_load_retries;
  ro.load_retry_interval = std::chrono::milliseconds(flags.load_retry_interval_micros / 1000);
  ro.preserve_availability = !flags.resource_preserving_reload;
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
  if (Status s = repository.SetModels(sources); !s.ok()) return Fail(s);
  if (Status s = repository.Poll(); !s.ok()) return Fail(s);
  if (flags.file_system_poll_wait_seconds > 0)
    repository.StartPolling(std::chrono::seconds(flags.file_system_poll_wait_seconds));

  RequestLimits limits;
  limits.max_tensor_bytes = flags.max_tensor_bytes;
  limits.max_json_depth = flags.max_json_depth;
  limits.max_json_parsed_bytes = flags.max_json_parsed_bytes;
  ServerCore core(&repository, &metrics, limits);
  RestApi api(&core);

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
  app.add_option("--max_num_load_retries", f.max_num_load_retries,
                 "tries of a version that fails to load (again at once when its files change)")
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
      ->delimiter(',');
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
      ->delimiter(',');
  app.add_option("--shutdown_grace_seconds", f.shutdown_grace_seconds,
                 "how long requests in flight (gRPC and HTTP) may take after SIGTERM")
      ->capture_default_str();
  app.add_flag("--log_requests", f.log_requests, "log every HTTP request");
  app.add_flag("--log_debug", f.log_debug,
               "also log debug events (e.g. protobuf's parse warnings)");
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
