// Server metrics in Prometheus' text exposition format (version 0.0.4): request counts by
// protocol, model and status, latency and batch-size histograms, queue depth, loaded versions.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::serve {

class Metrics {
 public:
  Metrics();
  // protocol: "rest_v1", "rest_v2", "grpc_tfs", "grpc_v2"; code: "OK", "INVALID_ARGUMENT", ...
  void CountRequest(std::string_view protocol, std::string_view model, std::string_view code);
  void ObserveLatency(std::string_view protocol, std::string_view model, double seconds);
  void ObserveBatchSize(std::string_view model, int64_t rows);
  void AddQueueDepth(std::string_view model, int64_t delta);
  void SetLoadedVersions(std::string_view model, int64_t versions);
  void CountLoad(std::string_view model, bool ok);
  std::string Prometheus() const;
  // The configured models: requests name other models under the label kUnknownModel, so a
  // client cannot add label values (series) by naming models that do not exist.
  void SetKnownModels(const std::set<std::string>& names);
  static constexpr std::string_view kUnknownModel = "_unknown";

 private:
  struct Histogram {
    std::vector<uint64_t> counts;  // one per bucket bound, then +Inf
    double sum = 0;
    uint64_t count = 0;
  };
  static void Observe(const std::vector<double>& bounds, Histogram* h, double v);
  // `model` when configured, else kUnknownModel (under mu_).
  std::string_view ModelLabel(std::string_view model) const;
  mutable std::mutex mu_;
  std::vector<double> latency_bounds_;
  std::vector<double> batch_bounds_;
  std::map<std::string, uint64_t> requests_;  // label text -> count
  std::map<std::string, Histogram> latency_;
  std::map<std::string, Histogram> batch_;
  std::map<std::string, int64_t> queue_;
  std::map<std::string, int64_t> versions_;
  std::map<std::string, uint64_t> loads_;
  std::set<std::string, std::less<>> known_models_;
  bool models_set_ = false;  // before SetKnownModels (unit tests), every name is a label
};

}  // namespace kiln::serve
