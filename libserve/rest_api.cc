#include "kiln/serve/rest_api.h"

#include <google/protobuf/util/json_util.h>

#include <charconv>
#include <optional>

#include "json_util.h"
#include "kiln/serve/rest_predict.h"
#include "kiln/serve/v2_codec.h"
#include "tensorflow/saved_model.pb.h"
#include "tensorflow_serving/apis/get_model_metadata.pb.h"

namespace kiln::serve {
namespace {

using json_util::Json;

constexpr char kServerName[] = "kiln";
constexpr char kServerVersion[] = KILN_VERSION;

HttpReply V1Error(const Status& s) {
  return {HttpStatusFor(s), "application/json", RestErrorBody(s.message()), {}};
}
HttpReply V2Error(const Status& s) {
  return {HttpStatusFor(s), "application/json", V2ErrorBody(s.message()), {}};
}

std::optional<int64_t> ParseVersion(std::string_view s) {
  int64_t v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

// The request's deadline from its headers: X-Request-Timeout-Ms (ours), or
// X-Envoy-Expected-Rq-Timeout-Ms, which Envoy (Istio, KServe's ingress) sets to the time it
// will wait, so a request the proxy has given up on is not run. Counted from its arrival.
Result<Deadline> RequestDeadline(const HttpRequest& request) {
  if (!request.header) return kNoDeadline;
  for (const char* name : {"X-Request-Timeout-Ms", "X-Envoy-Expected-Rq-Timeout-Ms"}) {
    const std::string value = request.header(name);
    if (value.empty()) continue;
    auto ms = ParseVersion(value);
    if (!ms) return InvalidArgument(name, " '", value, "' is not a whole number of milliseconds");
    const auto start = request.received == std::chrono::steady_clock::time_point{}
                           ? std::chrono::steady_clock::now()
                           : request.received;
    // 0 means "no time left", not "no deadline".
    return *ms == 0 ? start : DeadlineAfter(start, *ms);
  }
  return kNoDeadline;
}

// Splits "a/b/c" into its parts.
std::vector<std::string_view> Split(std::string_view s) {
  std::vector<std::string_view> parts;
  while (!s.empty()) {
    size_t slash = s.find('/');
    parts.push_back(s.substr(0, slash));
    if (slash == std::string_view::npos) break;
    s.remove_prefix(slash + 1);
  }
  return parts;
}

// GET /v1/models/{m}[/versions/{v}]: TF Serving's GetModelStatusResponse as JSON.
HttpReply ModelStatus(ServerCore* core, std::string_view model, std::optional<int64_t> version) {
  auto statuses = core->repository().Statuses(model, version);
  if (!statuses.ok()) return V1Error(statuses.status());
  std::string out = "{\n \"model_version_status\": [";
  bool first = true;
  for (const VersionStatus& s : *statuses) {
    out += first ? "\n  {" : ",\n  {";
    first = false;
    out += "\n   \"version\": \"" + std::to_string(s.version) + "\",\n   \"state\": \"" +
           VersionStateName(s.state) + "\",\n   \"status\": {\n    \"error_code\": \"" +
           std::string(StatusCodeName(s.status.code())) + "\",\n    \"error_message\": ";
    json_util::AppendString(&out, s.status.message());
    out += "\n   }\n  }";
  }
  out += "\n ]\n}\n";
  return {200, "application/json", out, {}};
}

// GET .../metadata: model_spec and the SignatureDefMap in proto3 JSON, as TF Serving answers.
HttpReply ModelMetadata(ServerCore* core, std::string_view model, std::optional<int64_t> version,
                        std::optional<std::string_view> label) {
  auto servable = core->repository().Find(model, version, label);
  if (!servable.ok()) return V1Error(servable.status());
  tensorflow::serving::SignatureDefMap map;
  for (const auto& [k, v] : (*servable)->model().meta_graph().signature_def())
    if (k != "__saved_model_init_op") (*map.mutable_signature_def())[k] = v;
  std::string sigs;
  google::protobuf::util::JsonPrintOptions opts;
  opts.add_whitespace = true;
  opts.preserve_proto_field_names = true;
  if (!google::protobuf::util::MessageToJsonString(map, &sigs, opts).ok())
    return V1Error(Internal("cannot write the signatures as JSON"));
  std::string out = "{\n\"model_spec\":{\n \"name\": ";
  json_util::AppendString(&out, model);
  out += ",\n \"signature_name\": \"\",\n \"version\": \"" +
         std::to_string((*servable)->version()) +
         "\"\n}\n,\n\"metadata\": {\"signature_def\": " + sigs + "}\n}\n";
  return {200, "application/json", out, {}};
}

HttpReply ClassifyOrRegress(ServerCore* core, bool classify, std::string_view model,
                            std::optional<int64_t> version, std::optional<std::string_view> label,
                            std::string_view body, RequestScope* scope) {
  auto request = DecodeRestExamples(body, core->limits());
  if (!request.ok()) return scope->set_status(request.status()), V1Error(request.status());
  auto target = core->Resolve(model, version, label, request->signature_name);
  if (!target.ok()) return scope->set_status(target.status()), V1Error(target.status());
  std::string out = "{\"results\": [";  // TF Serving's kClassifyRegressResponseKey
  if (classify) {
    auto r = ServerCore::Classify(*target, std::move(request->examples));
    if (!r.ok()) return scope->set_status(r.status()), V1Error(r.status());
    for (size_t i = 0; i < r->rows.size(); ++i) {
      out += i ? ", [" : "[";
      for (size_t j = 0; j < r->rows[i].size(); ++j) {
        out += j ? ", [" : "[";
        json_util::AppendString(&out, r->rows[i][j].first);
        out += ", ";
        Tensor score = Tensor::Scalar<float>(r->rows[i][j].second);
        json_util::AppendElement(&out, score, 0, false);
        out += "]";
      }
      out += "]";
    }
  } else {
    auto r = ServerCore::Regress(*target, std::move(request->examples));
    if (!r.ok()) return scope->set_status(r.status()), V1Error(r.status());
    for (size_t i = 0; i < r->size(); ++i) {
      if (i) out += ", ";
      Tensor v = Tensor::Scalar<float>((*r)[i]);
      json_util::AppendElement(&out, v, 0, false);
    }
  }
  out += "]}";
  return {200, "application/json", out, {}};
}

}  // namespace

HttpReply RestApi::Handle(const HttpRequest& request) const {
  std::string_view path = request.path;
  // Inference (V1 ":predict"-style verbs, V2 ".../infer") is POST; everything else is GET.
  const bool v1 = path.substr(0, 4) == "/v1/";
  const bool v2 = path == "/v2" || path.substr(0, 4) == "/v2/";
  const bool known = v1 || v2 || IsMetricsPath(path);
  bool post = v1 && path.find(':') != std::string_view::npos;
  if (v2 && path.size() > 4) {
    const std::vector<std::string_view> parts = Split(path.substr(4));
    post = parts.size() >= 3 && parts[0] == "models" && parts.back() == "infer" &&
           (parts.size() == 3 || (parts.size() == 5 && parts[2] == "versions"));
  }
  const std::string_view allowed = post ? "POST" : "GET";
  if (known && request.method != allowed) {
    HttpReply reply = V1Error(InvalidArgument("method ", request.method, " is not allowed on ",
                                              path, "; it takes ", allowed));
    reply.status = 405;
    reply.headers.emplace_back("Allow", post ? "POST" : "GET, HEAD");
    return reply;
  }
  if (IsMetricsPath(path))
    return {200, "text/plain; version=0.0.4", core_->metrics().Prometheus(), {}};
  if (path.substr(0, 4) == "/v1/") return HandleV1(request, path.substr(4));
  if (path == "/v2" || path == "/v2/") return HandleV2(request, "");
  if (path.substr(0, 4) == "/v2/") return HandleV2(request, path.substr(4));
  return V1Error(NotFound("no such path: ", path));
}

HttpReply RestApi::HandleV1(const HttpRequest& request, std::string_view rest) const {
  // models/{m}[/versions/{v}|/labels/{l}][/metadata|:predict|:classify|:regress]
  std::string_view verb;
  if (size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
    verb = rest.substr(colon + 1);
    rest = rest.substr(0, colon);
  }
  std::vector<std::string_view> parts = Split(rest);
  bool metadata = false;
  if (!parts.empty() && parts.back() == "metadata") {
    metadata = true;
    parts.pop_back();
  }
  if (parts.size() < 2 || parts[0] != "models" || parts[1].empty() ||
      (parts.size() != 2 && parts.size() != 4))
    return V1Error(InvalidArgument("Malformed request: ", request.method, " ", request.path));
  const std::string_view model = parts[1];
  std::optional<int64_t> version;
  std::optional<std::string_view> label;
  if (parts.size() == 4) {
    if (parts[2] == "versions") {
      version = ParseVersion(parts[3]);
      if (!version)
        return V1Error(
            InvalidArgument("Malformed request: version '", parts[3], "' is not a number"));
    } else if (parts[2] == "labels") {
      label = parts[3];
    } else {
      return V1Error(InvalidArgument("Malformed request: ", request.method, " ", request.path));
    }
  }
  if (verb.empty()) {
    if (request.method != "GET")
      return V1Error(InvalidArgument("Malformed request: ", request.method, " ", request.path,
                                     " (POST needs :predict, :classify or :regress)"));
    if (metadata) return ModelMetadata(core_, model, version, label);
    if (label) {
      auto s = core_->repository().Find(model, std::nullopt, label);
      if (!s.ok()) return V1Error(s.status());
      version = (*s)->version();
    }
    return ModelStatus(core_, model, version);
  }
  if (request.method != "POST" || metadata)
    return V1Error(InvalidArgument("Malformed request: ", request.method, " ", request.path));
  RequestScope scope(&core_->metrics(), "rest_v1");
  scope.set_model(model);
  if (verb == "classify" || verb == "regress")
    return ClassifyOrRegress(core_, verb == "classify", model, version, label, request.body,
                             &scope);
  if (verb != "predict") {
    Status s = InvalidArgument("Malformed request: unknown method ':", verb, "'");
    scope.set_status(s);
    return V1Error(s);
  }
  auto fail = [&](const Status& s) {
    scope.set_status(s);
    return V1Error(s);
  };
  auto deadline = RequestDeadline(request);
  if (!deadline.ok()) return fail(deadline.status());
  RestPredictDecoder decoder(core_->limits());
  if (Status s = decoder.Parse(request.body); !s.ok()) return fail(s);
  auto target = core_->Resolve(model, version, label, decoder.signature_name());
  if (!target.ok()) return fail(target.status());
  if (Status s = ServerCore::CheckPredictMethod(*target); !s.ok()) return fail(s);
  auto req = decoder.Decode(*target->signature);
  if (!req.ok()) return fail(req.status());
  auto outputs = core_->Run(*target, std::move(req->inputs), *deadline);
  if (!outputs.ok()) return fail(outputs.status());
  auto body = EncodeRestPredictResponse(*outputs, req->format);
  if (!body.ok()) return fail(body.status());
  return {200, "application/json", std::move(*body), {}};
}

namespace {

std::string V2Shape(const PartialShape& s) {
  if (s.unknown_rank()) return "[-1]";
  std::string out = "[";
  for (int i = 0; i < s.rank(); ++i) out += (i ? "," : "") + std::to_string(s.dim(i));
  return out + "]";
}

std::string V2TensorList(std::span<const exec::SignatureArg> args) {
  std::string out = "[";
  for (size_t i = 0; i < args.size(); ++i) {
    auto dt = DTypeToV2(args[i].spec.dtype);
    out += i ? ",{\"name\":" : "{\"name\":";
    json_util::AppendString(&out, args[i].key);
    out += ",\"datatype\":\"" + (dt.ok() ? *dt : std::string("BYTES")) +
           "\",\"shape\":" + V2Shape(args[i].spec.shape) + "}";
  }
  return out + "]";
}

}  // namespace

HttpReply RestApi::HandleV2(const HttpRequest& request, std::string_view rest) const {
  if (rest.empty()) {
    return {200,
            "application/json",
            std::string("{\"name\":\"") + kServerName + "\",\"version\":\"" + kServerVersion +
                "\",\"extensions\":[\"binary_tensor_data\"]}",
            {}};
  }
  if (rest == "health/live") return {200, "application/json", "{\"live\":true}", {}};
  if (rest == "health/ready") {
    const bool ready = core_->Ready();
    return {ready ? 200 : 503,
            "application/json",
            std::string("{\"ready\":") + (ready ? "true" : "false") + "}",
            {}};
  }
  std::vector<std::string_view> parts = Split(rest);
  if (parts.size() < 2 || parts[0] != "models" || parts[1].empty())
    return V2Error(NotFound("no such path: ", request.path));
  const std::string_view model = parts[1];
  std::optional<int64_t> version;
  size_t i = 2;
  if (parts.size() >= 4 && parts[2] == "versions") {
    version = ParseVersion(parts[3]);
    if (!version) return V2Error(InvalidArgument("version '", parts[3], "' is not a number"));
    i = 4;
  }
  const std::string_view action = i < parts.size() ? parts[i] : std::string_view();
  if (i + 1 < parts.size()) return V2Error(NotFound("no such path: ", request.path));
  if (action == "ready") {
    const bool ready = !core_->ShuttingDown() && core_->repository().Find(model, version).ok();
    return {ready ? 200 : 400,
            "application/json",
            std::string("{\"ready\":") + (ready ? "true" : "false") + "}",
            {}};
  }
  if (action.empty()) {
    auto target = core_->Resolve(model, version, std::nullopt, "");
    if (!target.ok()) return V2Error(target.status());
    std::string versions = "[";
    auto statuses = core_->repository().Statuses(model);
    bool first = true;
    if (statuses.ok()) {
      for (auto it = statuses->rbegin(); it != statuses->rend(); ++it) {
        if (it->state != VersionState::kAvailable) continue;
        versions += (first ? "\"" : ",\"") + std::to_string(it->version) + "\"";
        first = false;
      }
    }
    versions += "]";
    std::string out = "{\"name\":";
    json_util::AppendString(&out, model);
    out += ",\"versions\":" + versions + ",\"platform\":\"tensorflow_savedmodel\",\"inputs\":" +
           V2TensorList(target->signature->inputs()) +
           ",\"outputs\":" + V2TensorList(target->signature->outputs()) + "}";
    return {200, "application/json", out, {}};
  }
  if (action != "infer" || request.method != "POST")
    return V2Error(NotFound("no such path: ", request.method, " ", request.path));

  RequestScope scope(&core_->metrics(), "rest_v2");
  scope.set_model(model);
  auto fail = [&](const Status& s) {
    scope.set_status(s);
    return V2Error(s);
  };
  int64_t json_length = -1;
  if (std::string h = request.header ? request.header("Inference-Header-Content-Length") : "";
      !h.empty()) {
    auto v = ParseVersion(h);
    if (!v)
      return fail(InvalidArgument("Inference-Header-Content-Length '", h, "' is not a number"));
    json_length = *v;
  }
  // An unknown model is 404 whatever the body holds.
  if (auto found = core_->repository().Find(model, version); !found.ok())
    return fail(found.status());
  auto deadline = RequestDeadline(request);
  if (!deadline.ok()) return fail(deadline.status());
  auto req = DecodeV2RestRequest(request.body, json_length, core_->limits());
  if (!req.ok()) return fail(req.status());
  auto target = core_->Resolve(model, version, std::nullopt, req->signature_name);
  if (!target.ok()) return fail(target.status());
  auto outputs = core_->Run(*target, std::move(req->inputs), *deadline);
  if (!outputs.ok()) return fail(outputs.status());
  std::vector<std::pair<std::string, Tensor>> answer;
  if (req->outputs.empty()) {
    for (auto& [k, t] : *outputs) answer.emplace_back(k, std::move(t));
  } else {
    for (const std::string& name : req->outputs) {
      auto it = outputs->find(name);
      if (it == outputs->end())
        return fail(InvalidArgument("unknown output '", name, "' of signature '",
                                    target->signature->name(), "'"));
      answer.emplace_back(name, it->second);
    }
  }
  auto reply = EncodeV2RestResponse(model, std::to_string(target->servable->version()), req->id,
                                    answer, *req);
  if (!reply.ok()) return fail(reply.status());
  HttpReply r{200,
              reply->json_length >= 0 ? "application/octet-stream" : "application/json",
              std::move(reply->body),
              {}};
  if (reply->json_length >= 0)
    r.headers.emplace_back("Inference-Header-Content-Length", std::to_string(reply->json_length));
  return r;
}

}  // namespace kiln::serve
