#include "kiln/serve/server_core.h"

#include "tensorflow/saved_model.pb.h"

namespace kiln::serve {

int HttpStatusFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
    case StatusCode::kFailedPrecondition:
    case StatusCode::kOutOfRange:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
      return 409;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kResourceExhausted:
      return 429;
    case StatusCode::kUnimplemented:
      return 501;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kDeadlineExceeded:
      return 504;
    case StatusCode::kDataLoss:
    case StatusCode::kInternal:
      return 500;
  }
  return 500;
}

ServerCore::ServerCore(ModelRepository* repository, Metrics* metrics, RequestLimits limits)
    : repository_(repository), metrics_(metrics), limits_(limits) {}

bool ServerCore::Ready() const { return !shutting_down_ && repository_->AllModelsAvailable(); }

Result<ServerCore::Target> ServerCore::Resolve(std::string_view model,
                                               std::optional<int64_t> version,
                                               std::optional<std::string_view> label,
                                               std::string_view signature_name) const {
  if (shutting_down_) return Unavailable("the server is shutting down");
  KILN_ASSIGN_OR_RETURN(auto servable, repository_->Find(model, version, label));
  KILN_ASSIGN_OR_RETURN(Target t, TargetOf(std::move(servable), signature_name));
  t.check_method_name = method_name_check_;
  return t;
}

Status ServerCore::CheckPredictMethod(const Target& target) {
  const std::string& m = target.method_name;
  if (!target.check_method_name || m == kPredictMethod || m == kClassifyMethod ||
      m == kRegressMethod)
    return OkStatus();
  return InvalidArgument("Expected prediction signature method_name to be one of {", kPredictMethod,
                         ", ", kClassifyMethod, ", ", kRegressMethod, "}. Was: ", m);
}

Result<ServerCore::Target> ServerCore::TargetOf(std::shared_ptr<const Servable> servable,
                                                std::string_view signature_name) {
  Target t;
  t.servable = std::move(servable);
  const std::string sig = signature_name.empty() ? kDefaultSignature : std::string(signature_name);
  auto s = t.servable->model().GetSignature(sig);
  if (!s.ok())
    return FailedPrecondition("Serving signature name: \"", sig,
                              "\" not found in signature def of model '", t.servable->name(),
                              "' version ", t.servable->version(), " (", s.status().message(), ")");
  t.signature = *s;
  const auto& defs = t.servable->model().meta_graph().signature_def();
  auto def = defs.find(sig);
  if (def != defs.end()) t.method_name = def->second.method_name();
  return t;
}

Deadline DeadlineAfter(std::chrono::steady_clock::time_point start, int64_t timeout_ms) {
  if (timeout_ms <= 0) return kNoDeadline;
  // Beyond a year is no deadline (and keeps the sum from overflowing).
  if (timeout_ms > int64_t{365} * 24 * 3600 * 1000) return kNoDeadline;
  return start + std::chrono::milliseconds(timeout_ms);
}

Result<std::map<std::string, Tensor>> ServerCore::Run(const Target& target,
                                                      std::map<std::string, Tensor> inputs,
                                                      Deadline deadline) const {
  if (deadline != kNoDeadline && std::chrono::steady_clock::now() >= deadline)
    return DeadlineExceeded("the request's deadline passed before model '", target.servable->name(),
                            "' could run it");
  return target.servable->Run(*target.signature, std::move(inputs), deadline);
}

Result<Tensor> ServerCore::ExamplesTensor(const Target& target, std::string_view method,
                                          std::vector<std::string> serialized) {
  const exec::Signature& sig = *target.signature;
  const bool classify = method == kClassifyMethod;
  if (target.check_method_name && target.method_name != method)
    return InvalidArgument("Expected ", classify ? "classification" : "regression",
                           " signature method_name to be ", method, ". Was: ", target.method_name,
                           " (signature '", sig.name(), "')");
  // Without the check (TF Serving's default), the outputs tell whether the signature answers
  // this API, before anything runs.
  bool answers = false;
  for (const auto& out : sig.outputs())
    answers |= classify ? out.key == "classes" || out.key == "scores" : out.key == "outputs";
  if (!answers)
    return InvalidArgument(
        "signature '", sig.name(), "' (method_name '", target.method_name, "') has ",
        classify ? "neither a 'classes' nor a 'scores' output" : "no 'outputs' output",
        ", which the ", classify ? "classify" : "regress", " API answers");
  // TF Serving also refuses a signature whose input key is not "inputs", a classify signature
  // of more than two outputs and a regress signature of more than one; kiln serves them (what
  // it reads is unambiguous: the one input, and "classes"/"scores" or "outputs"), docs/server.md.
  if (sig.inputs().size() != 1 || sig.inputs()[0].spec.dtype != DType::kString)
    return InvalidArgument("signature '", sig.name(),
                           "' must take exactly one string input (the serialized tf.Examples)");
  if (serialized.empty()) return InvalidArgument("the request holds no examples");
  Tensor t(DType::kString, Shape{static_cast<int64_t>(serialized.size())});
  for (size_t i = 0; i < serialized.size(); ++i)
    t.data<std::string>()[i] = std::move(serialized[i]);
  return t;
}

Result<ServerCore::Classification> ServerCore::Classify(
    const Target& target, std::vector<std::string> serialized_examples) {
  const size_t n = serialized_examples.size();
  KILN_ASSIGN_OR_RETURN(Tensor in,
                        ExamplesTensor(target, kClassifyMethod, std::move(serialized_examples)));
  KILN_ASSIGN_OR_RETURN(
      auto out, target.servable->Run(*target.signature, {{target.signature->inputs()[0].key, in}}));
  const Tensor* classes = out.count("classes") ? &out.at("classes") : nullptr;
  const Tensor* scores = out.count("scores") ? &out.at("scores") : nullptr;
  if (!classes && !scores)
    return InvalidArgument("classify signature '", target.signature->name(),
                           "' answers neither 'classes' nor 'scores'");
  auto check = [&](const Tensor* t, DType dtype, const char* key) -> Status {
    if (!t) return OkStatus();
    if (t->dtype() != dtype || t->rank() != 2 || t->dim(0) != static_cast<int64_t>(n))
      return InvalidArgument("classify output '", key, "' is ", t->DebugString(), "; expected ",
                             DTypeShortName(dtype), " of shape (", n, ", K)");
    return OkStatus();
  };
  KILN_RETURN_IF_ERROR(check(classes, DType::kString, "classes"));
  KILN_RETURN_IF_ERROR(check(scores, DType::kFloat, "scores"));
  if (classes && scores && classes->dim(1) != scores->dim(1))
    return InvalidArgument("classify outputs 'classes' and 'scores' differ in K");
  const int64_t k = classes ? classes->dim(1) : scores->dim(1);
  Classification c;
  c.rows.resize(n);
  for (size_t r = 0; r < n; ++r) {
    for (int64_t j = 0; j < k; ++j) {
      const int64_t i = static_cast<int64_t>(r) * k + j;
      c.rows[r].emplace_back(classes ? classes->data<std::string>()[i] : std::string(),
                             scores ? scores->data<float>()[i] : 0.f);
    }
  }
  return c;
}

Result<std::vector<float>> ServerCore::Regress(const Target& target,
                                               std::vector<std::string> serialized_examples) {
  const size_t n = serialized_examples.size();
  KILN_ASSIGN_OR_RETURN(Tensor in,
                        ExamplesTensor(target, kRegressMethod, std::move(serialized_examples)));
  KILN_ASSIGN_OR_RETURN(
      auto out, target.servable->Run(*target.signature, {{target.signature->inputs()[0].key, in}}));
  if (!out.count("outputs"))
    return InvalidArgument("regress signature '", target.signature->name(),
                           "' has no 'outputs' output");
  const Tensor& t = out.at("outputs");
  if (t.dtype() != DType::kFloat || t.NumElements() != static_cast<int64_t>(n) || t.rank() < 1 ||
      t.rank() > 2 || t.dim(0) != static_cast<int64_t>(n))
    return InvalidArgument("regress output 'outputs' is ", t.DebugString(),
                           "; expected float32 of shape (", n, ") or (", n, ", 1)");
  return std::vector<float>(t.data<float>(), t.data<float>() + n);
}

RequestScope::RequestScope(Metrics* metrics, std::string protocol)
    : metrics_(metrics), protocol_(std::move(protocol)), start_(std::chrono::steady_clock::now()) {}

RequestScope::~RequestScope() {
  if (!metrics_) return;
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  metrics_->CountRequest(protocol_, model_, code_);
  metrics_->ObserveLatency(protocol_, model_, secs);
}

}  // namespace kiln::serve
