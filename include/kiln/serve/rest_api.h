// The REST API of savedmodel-server, independent of the HTTP library: TensorFlow Serving's
// /v1 paths, KServe V2's /v2 paths and the Prometheus metrics, from (method, path, headers,
// body) to (status, headers, body). The HTTP front end only moves bytes.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/serve/http_server.h"
#include "kiln/serve/server_core.h"

namespace kiln::serve {

class RestApi {
 public:
  explicit RestApi(ServerCore* core) : core_(core) {}
  // Prometheus metrics are always at /monitoring/prometheus/metrics and /metrics; this adds
  // the path a --monitoring_config_file names (TF Serving's prometheus_config.path).
  void AddMetricsPath(std::string path) { metrics_path_ = std::move(path); }
  HttpReply Handle(const HttpRequest& request) const;

 private:
  bool IsMetricsPath(std::string_view path) const {
    return path == "/monitoring/prometheus/metrics" || path == "/metrics" ||
           (!metrics_path_.empty() && path == metrics_path_);
  }
  HttpReply HandleV1(const HttpRequest& request, std::string_view rest) const;
  HttpReply HandleV2(const HttpRequest& request, std::string_view rest) const;
  ServerCore* core_;
  std::string metrics_path_;
};

}  // namespace kiln::serve
