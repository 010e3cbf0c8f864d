// What every protocol front end shares: resolving a model/version/label/signature, running it
// (through the batcher when configured), recording metrics, readiness and shutdown state, and
// the TF Serving classify/regress conventions over serialized tf.Examples.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/serve/limits.h"
#include "kiln/serve/metrics.h"
#include "kiln/serve/model_repository.h"

namespace kiln::serve {

inline constexpr char kDefaultSignature[] = "serving_default";
inline constexpr char kPredictMethod[] = "tensorflow/serving/predict";
inline constexpr char kClassifyMethod[] = "tensorflow/serving/classify";
inline constexpr char kRegressMethod[] = "tensorflow/serving/regress";

// When a request must be answered by; a request still queued or running then fails with
// DEADLINE_EXCEEDED (HTTP 504) instead of using the model for an answer nobody waits for.
using Deadline = std::chrono::steady_clock::time_point;
inline constexpr Deadline kNoDeadline = Deadline::max();
// The deadline `timeout_ms` after `start`; none for timeout_ms <= 0.
Deadline DeadlineAfter(std::chrono::steady_clock::time_point start, int64_t timeout_ms);

// HTTP status for a Status code, as TF Serving's REST API maps them (400, 404, 403, 429, 501,
// 503, 504, 500).
int HttpStatusFor(const Status& status);

class ServerCore {
 public:
  ServerCore(ModelRepository* repository, Metrics* metrics, RequestLimits limits);
  // TF Serving's --enable_signature_method_name_check: the targets Resolve gives check it.
  void set_method_name_check(bool on) { method_name_check_ = on; }

  ModelRepository& repository() { return *repository_; }
  Metrics& metrics() { return *metrics_; }
  const RequestLimits& limits() const { return limits_; }

  // Ready: not shutting down and every configured model has an available version.
  bool Ready() const;
  void BeginShutdown() { shutting_down_ = true; }
  bool ShuttingDown() const { return shutting_down_; }

  struct Target {
    std::shared_ptr<const Servable> servable;
    const exec::Signature* signature = nullptr;
    std::string method_name;  // the SignatureDef's method_name
    // Whether the APIs check method_name (TF Serving's --enable_signature_method_name_check,
    // off by default there and here: native TF2 models write the predict method for all).
    bool check_method_name = false;
  };
  // signature_name "" means serving_default.
  Result<Target> Resolve(std::string_view model, std::optional<int64_t> version,
                         std::optional<std::string_view> label,
                         std::string_view signature_name) const;
  // The signature of one servable ("" means serving_default): what Resolve does once it has
  // found the version, and what warm-up uses on a version that is not published yet.
  static Result<Target> TargetOf(std::shared_ptr<const Servable> servable,
                                 std::string_view signature_name);
  // Refuses at once when `deadline` has passed; the model stops at it (between kernels).
  Result<std::map<std::string, Tensor>> Run(const Target& target,
                                            std::map<std::string, Tensor> inputs,
                                            Deadline deadline = kNoDeadline) const;

  // Predict (TF Serving's): with the check on, the signature's method_name must be predict,
  // classify or regress.
  static Status CheckPredictMethod(const Target& target);
  // Classify/Regress (TF Serving's conventions): with the check on, the signature's
  // method_name must match; its one input takes the serialized tf.Examples as a string vector;
  // classify answers "classes" and/or "scores" ([N, K]), regress answers "outputs" ([N] or
  // [N, 1]).
  struct Classification {
    std::vector<std::vector<std::pair<std::string, float>>> rows;  // label ("" if none), score
  };
  static Result<Classification> Classify(const Target& target,
                                         std::vector<std::string> serialized_examples);
  static Result<std::vector<float>> Regress(const Target& target,
                                            std::vector<std::string> serialized_examples);

 private:
  static Result<Tensor> ExamplesTensor(const Target& target, std::string_view method,
                                       std::vector<std::string> serialized);
  ModelRepository* repository_;
  Metrics* metrics_;
  RequestLimits limits_;
  bool method_name_check_ = false;
  std::atomic<bool> shutting_down_{false};
};

// Records one request's latency and outcome in the metrics when it goes out of scope.
class RequestScope {
 public:
  RequestScope(Metrics* metrics, std::string protocol);
  ~RequestScope();
  void set_model(std::string_view model) { model_ = model; }
  void set_status(const Status& status) { code_ = std::string(StatusCodeName(status.code())); }

 private:
  Metrics* metrics_;
  std::string protocol_;
  std::string model_;
  std::string code_ = "OK";
  std::chrono::steady_clock::time_point start_;
};

}  // namespace kiln::serve
