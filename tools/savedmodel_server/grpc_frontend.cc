#include "grpc_frontend.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/support/server_interceptor.h>

#include <charconv>
#include <chrono>
#include <optional>
#include <set>

#include "kiln/core/proto_convert.h"
#include "kiln/serve/log.h"
#include "kiln/serve/proto_codec.h"
#include "kiln/serve/server_config.h"
#include "kiln/serve/v2_codec.h"
#include "kserve/grpc_predict_v2.grpc.pb.h"
#include "tensorflow/saved_model.pb.h"
#include "tensorflow_serving/apis/model_service.grpc.pb.h"
#include "tensorflow_serving/apis/prediction_service.grpc.pb.h"

namespace kiln::serve {
namespace {

grpc::Status ToGrpc(const Status& s) {
  grpc::StatusCode code = grpc::StatusCode::UNKNOWN;
  switch (s.code()) {
    case StatusCode::kOk:
      return grpc::Status::OK;
    case StatusCode::kInvalidArgument:
      code = grpc::StatusCode::INVALID_ARGUMENT;
      break;
    case StatusCode::kNotFound:
      code = grpc::StatusCode::NOT_FOUND;
      break;
    case StatusCode::kAlreadyExists:
      code = grpc::StatusCode::ALREADY_EXISTS;
      break;
    case StatusCode::kFailedPrecondition:
      code = grpc::StatusCode::FAILED_PRECONDITION;
      break;
    case StatusCode::kOutOfRange:
      code = grpc::StatusCode::OUT_OF_RANGE;
      break;
    case StatusCode::kUnimplemented:
      code = grpc::StatusCode::UNIMPLEMENTED;
      break;
    case StatusCode::kDataLoss:
      code = grpc::StatusCode::DATA_LOSS;
      break;
    case StatusCode::kPermissionDenied:
      code = grpc::StatusCode::PERMISSION_DENIED;
      break;
    case StatusCode::kResourceExhausted:
      code = grpc::StatusCode::RESOURCE_EXHAUSTED;
      break;
    case StatusCode::kUnavailable:
      code = grpc::StatusCode::UNAVAILABLE;
      break;
    case StatusCode::kInternal:
      code = grpc::StatusCode::INTERNAL;
      break;
    case StatusCode::kDeadlineExceeded:
      code = grpc::StatusCode::DEADLINE_EXCEEDED;
      break;
  }
  return grpc::Status(code, s.message());
}

// The call's deadline as the client set it (grpc-timeout), on the steady clock.
Deadline DeadlineOf(const grpc::ServerContext* context) {
  const auto now = std::chrono::system_clock::now();
  const auto left = context->deadline() - now;
  if (left > std::chrono::hours(24 * 365)) return kNoDeadline;  // none set: "infinite future"
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(left);
}

struct Spec {
  std::string name;
  std::optional<int64_t> version;
  std::optional<std::string> label;
  std::string signature;
};

Spec SpecOf(const tensorflow::serving::ModelSpec& ms) {
  Spec s{ms.name(), {}, {}, ms.signature_name()};
  if (ms.has_version()) s.version = ms.version().value();
  if (ms.version_choice_case() == tensorflow::serving::ModelSpec::kVersionLabel)
    s.label = ms.version_label();
  return s;
}

void FillSpec(const ServerCore::Target& t, const std::string& signature,
              tensorflow::serving::ModelSpec* out) {
  out->set_name(t.servable->name());
  out->mutable_version()->set_value(t.servable->version());
  out->set_signature_name(signature.empty() ? kDefaultSignature : signature);
}

class PredictionService final : public tensorflow::serving::PredictionService::Service {
 public:
  explicit PredictionService(ServerCore* core) : core_(core) {}

  grpc::Status Predict(grpc::ServerContext* context, const tensorflow::serving::PredictRequest* req,
                       tensorflow::serving::PredictResponse* resp) override {
    RequestScope scope(&core_->metrics(), "grpc_tfs");
    scope.set_model(req->model_spec().name());
    Status s = DoPredict(*req, DeadlineOf(context), resp);
    scope.set_status(s);
    return ToGrpc(s);
  }

  grpc::Status GetModelMetadata(grpc::ServerContext*,
                                const tensorflow::serving::GetModelMetadataRequest* req,
                                tensorflow::serving::GetModelMetadataResponse* resp) override {
    if (req->metadata_field_size() != 1 || req->metadata_field(0) != "signature_def")
      return ToGrpc(InvalidArgument(
          "GetModelMetadataRequest must ask for metadata_field 'signature_def' (and only it)"));
    Spec spec = SpecOf(req->model_spec());
    auto servable = core_->repository().Find(
        spec.name, spec.version,
        spec.label ? std::optional<std::string_view>(*spec.label) : std::nullopt);
    if (!servable.ok()) return ToGrpc(servable.status());
    tensorflow::serving::SignatureDefMap map;
    for (const auto& [k, v] : (*servable)->model().meta_graph().signature_def())
      if (k != "__saved_model_init_op") (*map.mutable_signature_def())[k] = v;
    resp->mutable_model_spec()->set_name(spec.name);
    resp->mutable_model_spec()->mutable_version()->set_value((*servable)->version());
    (*resp->mutable_metadata())["signature_def"].PackFrom(map);
    return grpc::Status::OK;
  }

  grpc::Status Classify(grpc::ServerContext*, const tensorflow::serving::ClassificationRequest* req,
                        tensorflow::serving::ClassificationResponse* resp) override {
    RequestScope scope(&core_->metrics(), "grpc_tfs");
    scope.set_model(req->model_spec().name());
    Status s = [&]() -> Status {
      Spec spec = SpecOf(req->model_spec());
      KILN_ASSIGN_OR_RETURN(auto target, Resolve(spec));
      KILN_ASSIGN_OR_RETURN(auto examples, SerializedExamples(req->input()));
      KILN_ASSIGN_OR_RETURN(auto result, ServerCore::Classify(target, std::move(examples)));
      FillSpec(target, spec.signature, resp->mutable_model_spec());
      for (const auto& row : result.rows) {
        auto* c = resp->mutable_result()->add_classifications();
        for (const auto& [label, score] : row) {
          auto* cls = c->add_classes();
          cls->set_label(label);
          cls->set_score(score);
        }
      }
      return OkStatus();
    }();
    scope.set_status(s);
    return ToGrpc(s);
  }

  grpc::Status Regress(grpc::ServerContext*, const tensorflow::serving::RegressionRequest* req,
                       tensorflow::serving::RegressionResponse* resp) override {
    RequestScope scope(&core_->metrics(), "grpc_tfs");
    scope.set_model(req->model_spec().name());
    Status s = [&]() -> Status {
      Spec spec = SpecOf(req->model_spec());
      KILN_ASSIGN_OR_RETURN(auto target, Resolve(spec));
      KILN_ASSIGN_OR_RETURN(auto examples, SerializedExamples(req->input()));
      KILN_ASSIGN_OR_RETURN(auto values, ServerCore::Regress(target, std::move(examples)));
      FillSpec(target, spec.signature, resp->mutable_model_spec());
      for (float v : values) resp->mutable_result()->add_regressions()->set_value(v);
      return OkStatus();
    }();
    scope.set_status(s);
    return ToGrpc(s);
  }

  // TF Serving's MultiInference: classify and regress signatures of one model over one input,
  // all from the version the first task resolves to.
  grpc::Status MultiInference(grpc::ServerContext*,
                              const tensorflow::serving::MultiInferenceRequest* req,
                              tensorflow::serving::MultiInferenceResponse* resp) override {
    RequestScope scope(&core_->metrics(), "grpc_tfs");
    if (req->tasks_size() > 0) scope.set_model(req->tasks(0).model_spec().name());
    Status s = DoMultiInference(*req, resp);
    scope.set_status(s);
    return ToGrpc(s);
  }

 private:
  Status DoMultiInference(const tensorflow::serving::MultiInferenceRequest& req,
                          tensorflow::serving::MultiInferenceResponse* resp) {
    if (req.tasks_size() == 0) return InvalidArgument("Found no tasks in MultiInferenceRequest.");
    std::set<std::string> signatures;
    for (const auto& task : req.tasks()) {
      const auto& ms = task.model_spec();
      if (ms.name().empty()) return InvalidArgument("Found ModelSpec with an empty model name.");
      if (ms.name() != req.tasks(0).model_spec().name())
        return InvalidArgument(
            "All ModelSpecs in a MultiInferenceRequest must access the same model name.");
      const std::string sig = ms.signature_name().empty() ? kDefaultSignature : ms.signature_name();
      if (!signatures.insert(sig).second)
        return InvalidArgument("Duplicate evaluation of signature: ", sig);
      if (task.method_name() != kClassifyMethod && task.method_name() != kRegressMethod)
        return Unimplemented("Unsupported signature method_name: ", task.method_name());
    }
    KILN_ASSIGN_OR_RETURN(auto examples, SerializedExamples(req.input()));
    std::vector<ServerCore::Target> targets;
    std::optional<int64_t> version;
    for (const auto& task : req.tasks()) {
      Spec spec = SpecOf(task.model_spec());
      if (version) {  // the first task's version for every task, even if a newer one loads
        spec.version = version;
        spec.label.reset();
      }
      KILN_ASSIGN_OR_RETURN(auto target, Resolve(spec));
      version = target.servable->version();
      targets.push_back(std::move(target));
    }
    for (int i = 0; i < req.tasks_size(); ++i) {
      const auto& task = req.tasks(i);
      const ServerCore::Target& target = targets[i];
      auto* result = resp->add_results();
      FillSpec(target, task.model_spec().signature_name(), result->mutable_model_spec());
      if (task.method_name() == kClassifyMethod) {
        KILN_ASSIGN_OR_RETURN(auto classes, ServerCore::Classify(target, examples));
        for (const auto& row : classes.rows) {
          auto* c = result->mutable_classification_result()->add_classifications();
          for (const auto& [label, score] : row) {
            auto* cls = c->add_classes();
            cls->set_label(label);
            cls->set_score(score);
          }
        }
      } else {
        KILN_ASSIGN_OR_RETURN(auto values, ServerCore::Regress(target, examples));
        for (float v : values) result->mutable_regression_result()->add_regressions()->set_value(v);
      }
    }
    return OkStatus();
  }

  Result<ServerCore::Target> Resolve(const Spec& spec) {
    return core_->Resolve(spec.name, spec.version,
                          spec.label ? std::optional<std::string_view>(*spec.label) : std::nullopt,
                          spec.signature);
  }

  Status DoPredict(const tensorflow::serving::PredictRequest& req, Deadline deadline,
                   tensorflow::serving::PredictResponse* resp) {
    Spec spec = SpecOf(req.model_spec());
    KILN_ASSIGN_OR_RETURN(auto target, Resolve(spec));
    KILN_RETURN_IF_ERROR(ServerCore::CheckPredictMethod(target));
    std::map<std::string, Tensor> inputs;
    for (const auto& [key, proto] : req.inputs()) {
      KILN_ASSIGN_OR_RETURN(Tensor t,
                            TensorFromRequestProto(proto, core_->limits(), "input '" + key + "'"));
      inputs.emplace(key, std::move(t));
    }
    KILN_ASSIGN_OR_RETURN(auto outputs, core_->Run(target, std::move(inputs), deadline));
    std::set<std::string> filter(req.output_filter().begin(), req.output_filter().end());
    for (const auto& f : filter)
      if (!outputs.count(f))
        return InvalidArgument("output_filter names '", f,
                               "', which is not an output of signature '", target.signature->name(),
                               "'");
    for (const auto& [key, t] : outputs) {
      if (!filter.empty() && !filter.count(key)) continue;
      KILN_RETURN_IF_ERROR_CTX(TensorToProto(t, &(*resp->mutable_outputs())[key]), "output '", key,
                               "'");
    }
    FillSpec(target, spec.signature, resp->mutable_model_spec());
    return OkStatus();
  }

  ServerCore* core_;
};

class InferenceService final : public inference::GRPCInferenceService::Service {
 public:
  explicit InferenceService(ServerCore* core) : core_(core) {}

  grpc::Status ServerLive(grpc::ServerContext*, const inference::ServerLiveRequest*,
                          inference::ServerLiveResponse* resp) override {
    resp->set_live(true);
    return grpc::Status::OK;
  }
  grpc::Status ServerReady(grpc::ServerContext*, const inference::ServerReadyRequest*,
                           inference::ServerReadyResponse* resp) override {
    resp->set_ready(core_->Ready());
    return grpc::Status::OK;
  }
  grpc::Status ModelReady(grpc::ServerContext*, const inference::ModelReadyRequest* req,
                          inference::ModelReadyResponse* resp) override {
    auto version = ParseVersion(req->version());
    if (!version.ok()) return ToGrpc(version.status());
    resp->set_ready(!core_->ShuttingDown() && core_->repository().Find(req->name(), *version).ok());
    return grpc::Status::OK;
  }
  grpc::Status ServerMetadata(grpc::ServerContext*, const inference::ServerMetadataRequest*,
                              inference::ServerMetadataResponse* resp) override {
    resp->set_name("kiln");
    resp->set_version("0.1.0");
    resp->add_extensions("binary_tensor_data");
    return grpc::Status::OK;
  }
  grpc::Status ModelMetadata(grpc::ServerContext*, const inference::ModelMetadataRequest* req,
                             inference::ModelMetadataResponse* resp) override {
    auto version = ParseVersion(req->version());
    if (!version.ok()) return ToGrpc(version.status());
    auto target = core_->Resolve(req->name(), *version, std::nullopt, "");
    if (!target.ok()) return ToGrpc(target.status());
    resp->set_name(req->name());
    resp->set_platform("tensorflow_savedmodel");
    auto statuses = core_->repository().Statuses(req->name());
    if (statuses.ok())
      for (auto it = statuses->rbegin(); it != statuses->rend(); ++it)
        if (it->state == VersionState::kAvailable) resp->add_versions(std::to_string(it->version));
    auto fill = [](std::span<const exec::SignatureArg> args, auto add) {
      for (const auto& a : args) {
        auto* m = add();
        m->set_name(a.key);
        auto dt = DTypeToV2(a.spec.dtype);
        m->set_datatype(dt.ok() ? *dt : "BYTES");
        if (a.spec.shape.unknown_rank()) {
          m->add_shape(-1);
        } else {
          for (int i = 0; i < a.spec.shape.rank(); ++i) m->add_shape(a.spec.shape.dim(i));
        }
      }
    };
    fill(target->signature->inputs(), [resp] { return resp->add_inputs(); });
    fill(target->signature->outputs(), [resp] { return resp->add_outputs(); });
    return grpc::Status::OK;
  }
  grpc::Status ModelInfer(grpc::ServerContext* context, const inference::ModelInferRequest* req,
                          inference::ModelInferResponse* resp) override {
    RequestScope scope(&core_->metrics(), "grpc_v2");
    scope.set_model(req->model_name());
    Status s = DoInfer(*req, DeadlineOf(context), resp);
    scope.set_status(s);
    return ToGrpc(s);
  }

 private:
  static Result<std::optional<int64_t>> ParseVersion(const std::string& v) {
    if (v.empty()) return std::optional<int64_t>();
    int64_t n = 0;
    auto r = std::from_chars(v.data(), v.data() + v.size(), n);
    if (r.ec != std::errc() || r.ptr != v.data() + v.size() || n < 0)
      return InvalidArgument("model version '", v, "' is not a number");
    return std::optional<int64_t>(n);
  }

  Status DoInfer(const inference::ModelInferRequest& req, Deadline deadline,
                 inference::ModelInferResponse* resp) {
    KILN_ASSIGN_OR_RETURN(auto version, ParseVersion(req.model_version()));
    KILN_ASSIGN_OR_RETURN(auto decoded, DecodeV2GrpcRequest(req, core_->limits()));
    KILN_ASSIGN_OR_RETURN(auto target, core_->Resolve(req.model_name(), version, std::nullopt,
                                                      decoded.signature_name));
    KILN_ASSIGN_OR_RETURN(auto outputs, core_->Run(target, std::move(decoded.inputs), deadline));
    std::vector<std::pair<std::string, Tensor>> answer;
    if (decoded.outputs.empty()) {
      for (auto& [k, t] : outputs) answer.emplace_back(k, std::move(t));
    } else {
      for (const auto& name : decoded.outputs) {
        auto it = outputs.find(name);
        if (it == outputs.end())
          return InvalidArgument("unknown output '", name, "' of signature '",
                                 target.signature->name(), "'");
        answer.emplace_back(name, it->second);
      }
    }
    return EncodeV2GrpcResponse(req.model_name(), std::to_string(target.servable->version()),
                                req.id(), answer, resp);
  }

  ServerCore* core_;
};

// grpc++'s synchronous handlers answer a request that does not parse as its protobuf with
// INTERNAL and no message; that is the client's error, so it becomes INVALID_ARGUMENT with
// one. (kiln's own handlers never answer INTERNAL without a message.)
class ParseErrorStatus final : public grpc::experimental::Interceptor {
 public:
  explicit ParseErrorStatus(std::string method) : method_(std::move(method)) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS)) {
      const grpc::Status s = methods->GetSendStatus();
      if (s.error_code() == grpc::StatusCode::INTERNAL && s.error_message().empty())
        methods->ModifySendStatus(
            grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                         "the request message of " + method_ + " is not a valid protobuf message"));
    }
    methods->Proceed();
  }

 private:
  std::string method_;
};

class ParseErrorStatusFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new ParseErrorStatus(info->method());
  }
};

// TF Serving's ModelService: GetModelStatus, what clients poll for readiness and rollouts (the
// REST /v1/models/{m} answer as a message).
class ModelService final : public tensorflow::serving::ModelService::Service {
 public:
  explicit ModelService(ServerCore* core) : core_(core) {}

  grpc::Status GetModelStatus(grpc::ServerContext*,
                              const tensorflow::serving::GetModelStatusRequest* req,
                              tensorflow::serving::GetModelStatusResponse* resp) override {
    using tensorflow::serving::ModelVersionStatus;
    Spec spec = SpecOf(req->model_spec());
    std::optional<int64_t> version = spec.version;
    if (spec.label) {
      auto servable = core_->repository().Find(spec.name, std::nullopt, *spec.label);
      if (!servable.ok()) return ToGrpc(servable.status());
      version = (*servable)->version();
    }
    auto statuses = core_->repository().Statuses(spec.name, version);
    if (!statuses.ok()) return ToGrpc(statuses.status());
    for (const VersionStatus& vs : *statuses) {
      ModelVersionStatus* out = resp->add_model_version_status();
      out->set_version(vs.version);
      switch (vs.state) {
        case VersionState::kLoading:
          out->set_state(ModelVersionStatus::LOADING);
          break;
        case VersionState::kAvailable:
          out->set_state(ModelVersionStatus::AVAILABLE);
          break;
        case VersionState::kUnloading:
          out->set_state(ModelVersionStatus::UNLOADING);
          break;
        case VersionState::kEnd:
          out->set_state(ModelVersionStatus::END);
          break;
      }
      // TensorFlow's error codes are gRPC's numbers.
      out->mutable_status()->set_error_code(static_cast<int>(ToGrpc(vs.status).error_code()));
      out->mutable_status()->set_error_message(std::string(vs.status.message()));
    }
    return grpc::Status::OK;
  }

  // TF Serving's ServerCore::ReloadConfig through its RPC: a ModelConfigList replaces the
  // configured models (ModelRepository::ReloadConfig). The answer carries the status twice, in
  // the call's status and in the response, as TF Serving's does.
  grpc::Status HandleReloadConfigRequest(grpc::ServerContext*,
                                         const tensorflow::serving::ReloadConfigRequest* req,
                                         tensorflow::serving::ReloadConfigResponse* resp) override {
    grpc::Status status = Reload(req->config());
    if (!status.ok())
      LogEvent("error", "config_reload_failed", {{"error", status.error_message()}});
    resp->mutable_status()->set_error_code(static_cast<int>(status.error_code()));
    resp->mutable_status()->set_error_message(status.error_message());
    return status;
  }

 private:
  grpc::Status Reload(const tensorflow::serving::ModelServerConfig& config) {
    if (config.config_case() != tensorflow::serving::ModelServerConfig::kModelConfigList)
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "ServerModelConfig type not supported by HandleReloadConfigRequest. "
                          "Only ModelConfigList is currently supported");
    auto sources = ModelSourcesFromConfig(config, "ReloadConfigRequest");
    if (!sources.ok()) return ToGrpc(sources.status());
    if (Status s = AddPerModelBatching(&*sources); !s.ok()) return ToGrpc(s);
    std::string not_available;
    if (Status s = core_->repository().ReloadConfig(std::move(*sources), &not_available); !s.ok())
      return ToGrpc(s);
    // Applied, but a model it adds did not load: TF Serving answers UNKNOWN.
    if (!not_available.empty()) return grpc::Status(grpc::StatusCode::UNKNOWN, not_available);
    return grpc::Status::OK;
  }

  ServerCore* core_;
};

}  // namespace

struct GrpcFrontend::Impl {
  std::unique_ptr<PredictionService> tfs;
  std::unique_ptr<ModelService> models;
  std::unique_ptr<InferenceService> v2;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
};

GrpcFrontend::GrpcFrontend() : impl_(std::make_unique<Impl>()) {}
GrpcFrontend::~GrpcFrontend() { Shutdown(0); }

Result<std::unique_ptr<GrpcFrontend>> GrpcFrontend::Start(ServerCore* core,
                                                          const GrpcOptions& options) {
  std::unique_ptr<GrpcFrontend> f(new GrpcFrontend());
  f->impl_->tfs = std::make_unique<PredictionService>(core);
  f->impl_->v2 = std::make_unique<InferenceService>(core);
  f->impl_->models = std::make_unique<ModelService>(core);
  grpc::ServerBuilder builder;
  // grpc sets SO_REUSEPORT by default: a second server on the same port would start and take
  // part of the traffic. Off, binding a port in use fails as the REST listener does.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddListeningPort(options.address, grpc::InsecureServerCredentials(), &f->impl_->port);
  builder.RegisterService(f->impl_->tfs.get());
  builder.RegisterService(f->impl_->v2.get());
  builder.RegisterService(f->impl_->models.get());
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.SetMaxSendMessageSize(-1);
  // grpc++ 1.51 checks the receive limit only once a message is whole (grpc/grpc#43012); the
  // memory quota bounds what its transport may buffer meanwhile: past it, the connection's
  // streams are cancelled with RESOURCE_EXHAUSTED.
  grpc::ResourceQuota quota("kiln");
  if (options.max_threads < 3)  // a poller and a worker at least (grpc aborts at 0)
    return InvalidArgument("gRPC needs 3 threads or more, got ", options.max_threads);
  quota.SetMaxThreads(options.max_threads);
  quota.Resize(options.memory_quota_bytes);
  builder.SetResourceQuota(quota);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> creators;
  creators.push_back(std::make_unique<ParseErrorStatusFactory>());
  builder.experimental().SetInterceptorCreators(std::move(creators));
  f->impl_->server = builder.BuildAndStart();
  if (!f->impl_->server || f->impl_->port == 0)
    return Unavailable("cannot listen for gRPC on ", options.address,
                       " (is the port in use by another process?)");
  return f;
}

int GrpcFrontend::port() const { return impl_->port; }

void GrpcFrontend::Shutdown(int grace_seconds) {
  if (!impl_->server) return;
  impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(grace_seconds));
  impl_->server->Wait();
  impl_->server.reset();
}

}  // namespace kiln::serve
