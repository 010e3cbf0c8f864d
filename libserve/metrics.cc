#include "kiln/serve/metrics.h"

#include <cstdio>

namespace kiln::serve {
namespace {

// Label values escaped as the exposition format asks (backslash, quote, newline).
std::string Escape(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

}  // namespace

Metrics::Metrics()
    : latency_bounds_{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                      0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10},
      batch_bounds_{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024} {}

void Metrics::Observe(const std::vector<double>& bounds, Histogram* h, double v) {
  if (h->counts.empty()) h->counts.assign(bounds.size() + 1, 0);
  size_t i = 0;
  while (i < bounds.size() && v > bounds[i]) ++i;
  ++h->counts[i];
  h->sum += v;
  ++h->count;
}

void Metrics::SetKnownModels(const std::set<std::string>& names) {
  std::lock_guard<std::mutex> lock(mu_);
  known_models_.clear();
  known_models_.insert(names.begin(), names.end());
  models_set_ = true;
}

std::string_view Metrics::ModelLabel(std::string_view model) const {
  if (!models_set_ || known_models_.count(model) > 0) return model;
  return kUnknownModel;
}

void Metrics::CountRequest(std::string_view protocol, std::string_view model,
                           std::string_view code) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string key = "protocol=\"" + Escape(protocol) + "\",model=\"" +
                          Escape(ModelLabel(model)) + "\",code=\"" + Escape(code) + "\"";
  ++requests_[key];
}

void Metrics::ObserveLatency(std::string_view protocol, std::string_view model, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string key =
      "protocol=\"" + Escape(protocol) + "\",model=\"" + Escape(ModelLabel(model)) + "\"";
  Observe(latency_bounds_, &latency_[key], seconds);
}

void Metrics::ObserveBatchSize(std::string_view model, int64_t rows) {
  std::string key = "model=\"" + Escape(model) + "\"";
  std::lock_guard<std::mutex> lock(mu_);
  Observe(batch_bounds_, &batch_[key], static_cast<double>(rows));
}

void Metrics::AddQueueDepth(std::string_view model, int64_t delta) {
  std::string key = "model=\"" + Escape(model) + "\"";
  std::lock_guard<std::mutex> lock(mu_);
  queue_[key] += delta;
}

void Metrics::SetLoadedVersions(std::string_view model, int64_t versions) {
  std::string key = "model=\"" + Escape(model) + "\"";
  std::lock_guard<std::mutex> lock(mu_);
  versions_[key] = versions;
}

void Metrics::CountLoad(std::string_view model, bool ok) {
  std::string key =
      "model=\"" + Escape(model) + "\",result=\"" + std::string(ok ? "ok" : "error") + "\"";
  std::lock_guard<std::mutex> lock(mu_);
  ++loads_[key];
}

std::string Metrics::Prometheus() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  out += "# HELP kiln_requests_total Requests answered, by protocol, model and status code.\n";
  out += "# TYPE kiln_requests_total counter\n";
  for (const auto& [k, v] : requests_) out += "kiln_requests_total{" + k + "} " + Num(v) + "\n";
  auto histogram = [&out](const char* name, const char* help, const std::vector<double>& bounds,
                          const std::map<std::string, Histogram>& hs) {
    out += std::string("# HELP ") + name + " " + help + "\n";
    out += std::string("# TYPE ") + name + " histogram\n";
    for (const auto& [k, h] : hs) {
      uint64_t cum = 0;
      for (size_t i = 0; i <= bounds.size(); ++i) {
        cum += h.counts[i];
        out += std::string(name) + "_bucket{" + k + ",le=\"" +
               (i < bounds.size() ? Num(bounds[i]) : std::string("+Inf")) + "\"} " + Num(cum) +
               "\n";
      }
      out += std::string(name) + "_sum{" + k + "} " + Num(h.sum) + "\n";
      out += std::string(name) + "_count{" + k + "} " + Num(h.count) + "\n";
    }
  };
  histogram("kiln_request_latency_seconds", "Request latency from decoded request to response.",
            latency_bounds_, latency_);
  histogram("kiln_batch_size", "Rows in each batch the dynamic batcher ran.", batch_bounds_,
            batch_);
  out += "# HELP kiln_queue_depth Requests waiting in a model's batching queue.\n";
  out += "# TYPE kiln_queue_depth gauge\n";
  for (const auto& [k, v] : queue_) out += "kiln_queue_depth{" + k + "} " + Num(v) + "\n";
  out += "# HELP kiln_model_versions_loaded Versions of a model that are available.\n";
  out += "# TYPE kiln_model_versions_loaded gauge\n";
  for (const auto& [k, v] : versions_)
    out += "kiln_model_versions_loaded{" + k + "} " + Num(v) + "\n";
  out += "# HELP kiln_model_loads_total Version loads attempted, by result.\n";
  out += "# TYPE kiln_model_loads_total counter\n";
  for (const auto& [k, v] : loads_) out += "kiln_model_loads_total{" + k + "} " + Num(v) + "\n";
  return out;
}

}  // namespace kiln::serve
