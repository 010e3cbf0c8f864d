#include "kiln/serve/rest_predict.h"

#include <cmath>
#include <limits>
#include <vector>

#include "json_util.h"
#include "kiln/serve/base64.h"
#include "tensorflow/example.pb.h"

namespace kiln::serve {

using json_util::Json;

struct RestPredictDecoder::ParsedBody {
  explicit ParsedBody(Json d) noexcept : doc(std::move(d)) {}
  Json doc;
};

Status RestPredictDecoder::Parse(std::string_view body) {
  KILN_ASSIGN_OR_RETURN(Json doc, json_util::Parse(body, limits_));
  if (!doc.is_object()) return InvalidArgument("the request body must be a JSON object");
  const bool has_instances = doc.contains("instances");
  const bool has_inputs = doc.contains("inputs");
  if (has_instances == has_inputs)
    return InvalidArgument(
        "the request must have exactly one of 'instances' (row format) or 'inputs' (columnar "
        "format)");
  for (const auto& item : doc.items()) {
    if (item.key() != "instances" && item.key() != "inputs" && item.key() != "signature_name")
      return InvalidArgument("unknown key '", item.key(),
                             "' in the request (expected 'signature_name' and 'instances' or "
                             "'inputs')");
  }
  if (doc.contains("signature_name")) {
    if (!doc["signature_name"].is_string())
      return InvalidArgument("'signature_name' must be a string");
    signature_name_ = doc["signature_name"].get<std::string>();
  }
  parsed_ = std::make_shared<const ParsedBody>(std::move(doc));
  return OkStatus();
}

namespace {

// Decodes one JSON value (nested lists) as the tensor for `arg`.
Result<Tensor> DecodeColumn(const Json& v, const exec::SignatureArg& arg,
                            const RequestLimits& limits) {
  const std::string what = "input '" + arg.key + "'";
  std::vector<int64_t> dims;
  KILN_RETURN_IF_ERROR(json_util::InferShape(v, &dims, what));
  KILN_ASSIGN_OR_RETURN(Shape shape, CheckedShape(dims, arg.spec.dtype, limits, what));
  if (!DTypeIsPod(arg.spec.dtype) && arg.spec.dtype != DType::kString)
    return Unimplemented(what, ": ", DTypeShortName(arg.spec.dtype),
                         " inputs cannot be sent as JSON");
  Tensor t(arg.spec.dtype, shape);
  int64_t index = 0;
  KILN_RETURN_IF_ERROR(json_util::Fill(v, dims, 0, &t, &index, what));
  return t;
}

// Row format: instance values for `arg` stacked on a new dimension 0.
Result<Tensor> DecodeRows(const std::vector<const Json*>& rows, const exec::SignatureArg& arg,
                          const RequestLimits& limits) {
  const std::string what = "input '" + arg.key + "'";
  std::vector<int64_t> inner;
  KILN_RETURN_IF_ERROR(json_util::InferShape(*rows[0], &inner, what));
  std::vector<int64_t> dims{static_cast<int64_t>(rows.size())};
  dims.insert(dims.end(), inner.begin(), inner.end());
  KILN_ASSIGN_OR_RETURN(Shape shape, CheckedShape(dims, arg.spec.dtype, limits, what));
  if (!DTypeIsPod(arg.spec.dtype) && arg.spec.dtype != DType::kString)
    return Unimplemented(what, ": ", DTypeShortName(arg.spec.dtype),
                         " inputs cannot be sent as JSON");
  Tensor t(arg.spec.dtype, shape);
  int64_t index = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    Status s = json_util::Fill(*rows[r], inner, 0, &t, &index, what);
    if (!s.ok())
      return InvalidArgument("instance ", r, ": ", s.message(),
                             " (every instance must have the shape of the first)");
  }
  return t;
}

}  // namespace

Result<RestPredictRequest> RestPredictDecoder::Decode(
    std::string_view signature_name, std::span<const exec::SignatureArg> inputs) const {
  if (!parsed_) return FailedPrecondition("RestPredictDecoder::Decode before Parse");
  const Json& doc = parsed_->doc;
  RestPredictRequest req;
  req.signature_name = signature_name_;
  auto named = [](const Json& v) { return v.is_object() && !json_util::IsB64(v); };
  auto check_keys = [&](const Json& obj, std::string_view where) -> Status {
    for (const auto& item : obj.items()) {
      bool known = false;
      for (const auto& a : inputs) known = known || a.key == item.key();
      if (!known) {
        std::string names;
        for (const auto& a : inputs) names += (names.empty() ? "'" : ", '") + a.key + "'";
        return InvalidArgument(where, ": '", item.key(), "' is not an input of signature '",
                               signature_name, "' (inputs: ", names, ")");
      }
    }
    for (const auto& a : inputs) {
      if (!obj.contains(a.key))
        return InvalidArgument(where, ": missing input '", a.key, "' of signature '",
                               signature_name, "'");
    }
    return OkStatus();
  };

  if (doc.contains("inputs")) {
    req.format = RestFormat::kColumnar;
    const Json& v = doc["inputs"];
    if (named(v)) {
      KILN_RETURN_IF_ERROR(check_keys(v, "'inputs'"));
      for (const auto& a : inputs) {
        KILN_ASSIGN_OR_RETURN(Tensor t, DecodeColumn(v[a.key], a, limits_));
        req.inputs.emplace(a.key, std::move(t));
      }
    } else {
      if (inputs.size() != 1)
        return InvalidArgument("'inputs' is a bare value but signature '", signature_name, "' has ",
                               inputs.size(), " inputs; send an object keyed by name");
      KILN_ASSIGN_OR_RETURN(Tensor t, DecodeColumn(v, inputs[0], limits_));
      req.inputs.emplace(inputs[0].key, std::move(t));
    }
    return req;
  }

  req.format = RestFormat::kRow;
  const Json& instances = doc["instances"];
  if (!instances.is_array() || instances.empty())
    return InvalidArgument("'instances' must be a non-empty list");
  if (static_cast<int64_t>(instances.size()) > limits_.max_batch_rows)
    return InvalidArgument("'instances' has ", instances.size(), " entries; the limit is ",
                           limits_.max_batch_rows);
  const bool by_name = named(instances[0]);
  if (!by_name && inputs.size() != 1)
    return InvalidArgument("instances are bare values but signature '", signature_name, "' has ",
                           inputs.size(), " inputs; send objects keyed by name");
  for (size_t i = 0; i < instances.size(); ++i) {
    if (named(instances[i]) != by_name)
      return InvalidArgument("instance ", i, " is ", by_name ? "not " : "",
                             "an object, unlike instance 0");
    if (by_name) KILN_RETURN_IF_ERROR(check_keys(instances[i], "instance " + std::to_string(i)));
  }
  for (const auto& a : inputs) {
    std::vector<const Json*> rows;
    rows.reserve(instances.size());
    for (const Json& inst : instances) rows.push_back(by_name ? &inst[a.key] : &inst);
    KILN_ASSIGN_OR_RETURN(Tensor t, DecodeRows(rows, a, limits_));
    req.inputs.emplace(a.key, std::move(t));
  }
  return req;
}

namespace {
bool EndsWithBytes(const std::string& key) {
  return key.size() >= 6 && key.compare(key.size() - 6, 6, "_bytes") == 0;
}
}  // namespace

Result<std::string> EncodeRestPredictResponse(const std::map<std::string, Tensor>& outputs,
                                              RestFormat format) {
  std::string out;
  if (format == RestFormat::kColumnar) {
    out += "{\"outputs\": ";
    if (outputs.size() == 1) {
      const auto& [key, t] = *outputs.begin();
      json_util::AppendNested(&out, t, 0, 0, EndsWithBytes(key));
    } else {
      out.push_back('{');
      bool first = true;
      for (const auto& [key, t] : outputs) {
        if (!first) out += ", ";
        first = false;
        json_util::AppendString(&out, key);
        out += ": ";
        json_util::AppendNested(&out, t, 0, 0, EndsWithBytes(key));
      }
      out.push_back('}');
    }
    out += "}";
    return out;
  }
  int64_t batch = -1;
  for (const auto& [key, t] : outputs) {
    if (t.rank() < 1)
      return InvalidArgument("output '", key,
                             "' is a scalar; row format needs outputs with a batch dimension (use "
                             "the columnar 'inputs' format)");
    if (batch >= 0 && t.dim(0) != batch)
      return InvalidArgument("outputs have different batch sizes (", batch, " and ", t.dim(0),
                             " for '", key, "'); use the columnar 'inputs' format");
    batch = t.dim(0);
  }
  out += "{\"predictions\": [";
  for (int64_t r = 0; r < batch; ++r) {
    if (r) out += ", ";
    if (outputs.size() == 1) {
      const auto& [key, t] = *outputs.begin();
      json_util::AppendNested(&out, t, 1, r * (t.NumElements() / std::max<int64_t>(batch, 1)),
                              EndsWithBytes(key));
      continue;
    }
    out.push_back('{');
    bool first = true;
    for (const auto& [key, t] : outputs) {
      if (!first) out += ", ";
      first = false;
      json_util::AppendString(&out, key);
      out += ": ";
      json_util::AppendNested(&out, t, 1, r * (t.NumElements() / std::max<int64_t>(batch, 1)),
                              EndsWithBytes(key));
    }
    out.push_back('}');
  }
  out += "]}";
  return out;
}

std::string RestErrorBody(std::string_view message) {
  std::string out = "{\"error\": ";
  json_util::AppendString(&out, message);
  out += "}";
  return out;
}

namespace {

// A JSON feature value as TF Serving's REST classify/regress reads it (json_tensor.cc's
// AddValueToFeature): the first value sets the list's kind and every other must match it:
// integers and true/false to int64_list (a number above int64's range is refused), decimals and
// bare NaN/Infinity to float_list (a finite one beyond float's range is refused), strings and
// {"b64": ...} to bytes_list. [] is a feature of no kind, which parses as an empty row.
Status JsonToFeature(const Json& v, tensorflow::Feature* f, std::string_view what) {
  enum class Kind { kNone, kInt64, kFloat, kBytes };
  Kind kind = Kind::kNone;
  auto check_kind = [&](Kind k) -> Status {
    if (kind != Kind::kNone && kind != k) {
      static constexpr const char* kNames[] = {"", "int64", "float", "bytes"};
      return InvalidArgument(what, ": unexpected element type, expecting ",
                             kNames[static_cast<int>(kind)],
                             " as the feature's first value (a list holds one kind)");
    }
    kind = k;
    return OkStatus();
  };
  auto add = [&](const Json& e) -> Status {
    if (auto x = json_util::NonFiniteNumber(e)) {
      KILN_RETURN_IF_ERROR(check_kind(Kind::kFloat));
      f->mutable_float_list()->add_value(static_cast<float>(*x));
    } else if (e.is_boolean()) {
      KILN_RETURN_IF_ERROR(check_kind(Kind::kInt64));
      f->mutable_int64_list()->add_value(e.get<bool>() ? 1 : 0);
    } else if (e.is_number_float()) {
      KILN_RETURN_IF_ERROR(check_kind(Kind::kFloat));
      const double x = e.get<double>();
      if (std::isfinite(x) && std::abs(x) > static_cast<double>(std::numeric_limits<float>::max()))
        return InvalidArgument(what, ": cannot convert ", e.dump(),
                               " to float without loss of precision");
      f->mutable_float_list()->add_value(static_cast<float>(x));
    } else if (e.is_number_unsigned() &&
               e.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return InvalidArgument(what, ": ", e.dump(),
                             " is above int64's range (only int64 is "
                             "supported)");
    } else if (e.is_number()) {
      KILN_RETURN_IF_ERROR(check_kind(Kind::kInt64));
      f->mutable_int64_list()->add_value(e.get<int64_t>());
    } else if (e.is_string()) {
      KILN_RETURN_IF_ERROR(check_kind(Kind::kBytes));
      f->mutable_bytes_list()->add_value(e.get<std::string>());
    } else if (json_util::IsB64(e)) {
      KILN_RETURN_IF_ERROR(check_kind(Kind::kBytes));
      KILN_ASSIGN_OR_RETURN_CTX(std::string b, Base64Decode(e.begin()->get<std::string>()), what);
      f->mutable_bytes_list()->add_value(std::move(b));
    } else {
      return InvalidArgument(what,
                             ": feature values must be numbers, true/false, strings or "
                             "{\"b64\": ...}, got ",
                             e.type_name());
    }
    return OkStatus();
  };
  if (!v.is_array()) return add(v);
  for (const Json& e : v) KILN_RETURN_IF_ERROR(add(e));
  return OkStatus();
}

// A JSON object of features as a serialized tf.train.Example.
Result<std::string> JsonToExample(const Json& obj, std::string_view what) {
  if (!obj.is_object()) return InvalidArgument(what, " must be an object of features");
  tensorflow::Example ex;
  auto& features = *ex.mutable_features()->mutable_feature();
  for (const auto& item : obj.items()) {
    const std::string where = std::string(what) + " feature '" + item.key() + "'";
    KILN_RETURN_IF_ERROR(JsonToFeature(item.value(), &features[item.key()], where));
  }
  return ex.SerializeAsString();
}

}  // namespace

Result<RestExamplesRequest> DecodeRestExamples(std::string_view body, const RequestLimits& limits) {
  KILN_ASSIGN_OR_RETURN(Json doc, json_util::Parse(body, limits));
  if (!doc.is_object()) return InvalidArgument("the request body must be a JSON object");
  RestExamplesRequest out;
  if (doc.contains("signature_name")) {
    if (!doc["signature_name"].is_string())
      return InvalidArgument("'signature_name' must be a string");
    out.signature_name = doc["signature_name"].get<std::string>();
  }
  if (!doc.contains("examples") || !doc["examples"].is_array() || doc["examples"].empty())
    return InvalidArgument("'examples' must be a non-empty list");
  // TF Serving serializes the context once and appends each serialized example to it: parsed,
  // an example's feature replaces the context's of the same name (the last entry wins).
  std::string context;
  if (doc.contains("context")) {
    KILN_ASSIGN_OR_RETURN(context, JsonToExample(doc["context"], "context"));
  }
  const Json& examples = doc["examples"];
  out.examples.reserve(examples.size());
  for (size_t i = 0; i < examples.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(std::string ex,
                          JsonToExample(examples[i], "example " + std::to_string(i)));
    out.examples.push_back(context + ex);
  }
  return out;
}

}  // namespace kiln::serve
