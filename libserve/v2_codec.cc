#include "kiln/serve/v2_codec.h"

#include <algorithm>
#include <cstring>

#include "json_util.h"

namespace kiln::serve {

using json_util::Json;

namespace {

struct V2Type {
  const char* name;
  DType dtype;
};
constexpr V2Type kV2Types[] = {
    {"BOOL", DType::kBool},     {"UINT8", DType::kUInt8},   {"UINT16", DType::kUInt16},
    {"UINT32", DType::kUInt32}, {"UINT64", DType::kUInt64}, {"INT8", DType::kInt8},
    {"INT16", DType::kInt16},   {"INT32", DType::kInt32},   {"INT64", DType::kInt64},
    {"FP16", DType::kHalf},     {"FP32", DType::kFloat},    {"FP64", DType::kDouble},
    {"BF16", DType::kBFloat16}, {"BYTES", DType::kString},
};

uint32_t ReadLE32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;  // little-endian hosts only (x86-64, aarch64)
}

// Counts the leaves of a (possibly nested) JSON list.
int64_t CountLeaves(const Json& v) {
  if (!v.is_array()) return 1;
  int64_t n = 0;
  for (const Json& e : v) n += CountLeaves(e);
  return n;
}

Status FillFlat(const Json& v, Tensor* t, int64_t* index, std::string_view what) {
  if (!v.is_array()) return json_util::SetElement(v, t, (*index)++, what);
  for (const Json& e : v) KILN_RETURN_IF_ERROR(FillFlat(e, t, index, what));
  return OkStatus();
}

Result<std::vector<int64_t>> ShapeOf(const Json& input, std::string_view what) {
  if (!input.contains("shape") || !input["shape"].is_array())
    return InvalidArgument(what, ": 'shape' must be a list of integers");
  std::vector<int64_t> dims;
  for (const Json& d : input["shape"]) {
    if (!d.is_number_integer()) return InvalidArgument(what, ": 'shape' must be integers");
    if (dims.size() >= static_cast<size_t>(kMaxRank))
      return InvalidArgument(what, ": rank above the supported maximum of ", kMaxRank);
    dims.push_back(d.get<int64_t>());
  }
  return dims;
}

bool BoolParam(const Json& obj, const char* key) {
  if (!obj.is_object() || !obj.contains("parameters") || !obj["parameters"].is_object())
    return false;
  const Json& p = obj["parameters"];
  return p.contains(key) && p[key].is_boolean() && p[key].get<bool>();
}

}  // namespace

Result<DType> DTypeFromV2(std::string_view datatype) {
  for (const V2Type& t : kV2Types)
    if (datatype == t.name) return t.dtype;
  return InvalidArgument("unknown datatype '", datatype,
                         "' (expected BOOL, UINT8..UINT64, INT8..INT64, FP16, FP32, FP64, BF16 "
                         "or BYTES)");
}

Result<std::string> DTypeToV2(DType dtype) {
  for (const V2Type& t : kV2Types)
    if (dtype == t.dtype) return std::string(t.name);
  return InvalidArgument("dtype ", DTypeShortName(dtype), " has no V2 datatype");
}

std::string TensorToV2Bytes(const Tensor& t) {
  if (t.dtype() != DType::kString)
    return std::string(static_cast<const char*>(t.raw_data()), t.ByteSize());
  std::string out;
  for (const std::string& s : t.flat<std::string>()) {
    const uint32_t n = static_cast<uint32_t>(s.size());
    out.append(reinterpret_cast<const char*>(&n), 4);
    out += s;
  }
  return out;
}

Result<Tensor> TensorFromV2Bytes(std::string_view bytes, DType dtype, const Shape& shape,
                                 std::string_view what) {
  const int64_t n = shape.num_elements();
  if (dtype != DType::kString) {
    const uint64_t want = static_cast<uint64_t>(n) * DTypeSize(dtype);
    if (bytes.size() != want)
      return InvalidArgument(what, ": ", bytes.size(), " bytes of data for shape ",
                             shape.ToString(), " of ", DTypeShortName(dtype), " (expected ", want,
                             ")");
    Tensor t(dtype, shape);
    if (want) std::memcpy(t.raw_data(), bytes.data(), want);
    if (dtype == DType::kBool) {
      auto* b = static_cast<uint8_t*>(t.raw_data());
      for (int64_t i = 0; i < n; ++i) b[i] = b[i] != 0;
    }
    return t;
  }
  // Each string costs at least its 4-byte length, so n is bounded by the data before allocating.
  if (static_cast<uint64_t>(n) > bytes.size() / 4)
    return InvalidArgument(what, ": ", bytes.size(), " bytes cannot hold ", n,
                           " BYTES elements (4-byte length each)");
  Tensor t(dtype, shape);
  size_t pos = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (bytes.size() - pos < 4)
      return InvalidArgument(what, ": BYTES data ends inside the length of element ", i);
    const uint32_t len = ReadLE32(bytes.data() + pos);
    pos += 4;
    if (bytes.size() - pos < len)
      return InvalidArgument(what, ": BYTES element ", i, " claims ", len, " bytes but ",
                             bytes.size() - pos, " remain");
    t.data<std::string>()[i].assign(bytes.data() + pos, len);
    pos += len;
  }
  if (pos != bytes.size())
    return InvalidArgument(what, ": ", bytes.size() - pos, " bytes left over after ", n,
                           " BYTES elements");
  return t;
}

Result<V2InferRequest> DecodeV2RestRequest(std::string_view body, int64_t json_length,
                                           const RequestLimits& limits) {
  if (json_length > static_cast<int64_t>(body.size()))
    return InvalidArgument("Inference-Header-Content-Length ", json_length,
                           " is larger than the body (", body.size(), " bytes)");
  std::string_view header = json_length >= 0 ? body.substr(0, json_length) : body;
  std::string_view binary = json_length >= 0 ? body.substr(json_length) : std::string_view();
  KILN_ASSIGN_OR_RETURN(Json doc, json_util::Parse(header, limits));
  if (!doc.is_object()) return InvalidArgument("the request body must be a JSON object");
  V2InferRequest req;
  if (doc.contains("id")) {
    if (!doc["id"].is_string()) return InvalidArgument("'id' must be a string");
    req.id = doc["id"].get<std::string>();
  }
  if (doc.contains("parameters")) {
    const Json& p = doc["parameters"];
    if (!p.is_object()) return InvalidArgument("'parameters' must be an object");
    req.all_binary = BoolParam(doc, "binary_data_output");
    if (p.contains("signature_name")) {
      if (!p["signature_name"].is_string())
        return InvalidArgument("parameters.signature_name must be a string");
      req.signature_name = p["signature_name"].get<std::string>();
    }
  }
  if (!doc.contains("inputs") || !doc["inputs"].is_array())
    return InvalidArgument("'inputs' must be a list of tensors");
  size_t binary_pos = 0;
  for (const Json& in : doc["inputs"]) {
    if (!in.is_object() || !in.contains("name") || !in["name"].is_string())
      return InvalidArgument("every input needs a 'name'");
    const std::string name = in["name"].get<std::string>();
    const std::string what = "input '" + name + "'";
    if (req.inputs.count(name)) return InvalidArgument(what, " is given twice");
    if (!in.contains("datatype") || !in["datatype"].is_string())
      return InvalidArgument(what, ": 'datatype' must be a string");
    KILN_ASSIGN_OR_RETURN_CTX(DType dtype, DTypeFromV2(in["datatype"].get<std::string>()), what);
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ShapeOf(in, what));
    KILN_ASSIGN_OR_RETURN(Shape shape, CheckedShape(dims, dtype, limits, what));
    const int64_t n = shape.num_elements();
    const Json* params = in.contains("parameters") ? &in["parameters"] : nullptr;
    if (params && params->is_object() && params->contains("binary_data_size")) {
      const Json& size = (*params)["binary_data_size"];
      if (!size.is_number_unsigned())
        return InvalidArgument(what, ": binary_data_size must be a non-negative integer");
      const uint64_t len = size.get<uint64_t>();
      if (len > binary.size() - binary_pos)
        return InvalidArgument(what, ": binary_data_size ", len, " runs past the end of the ",
                               binary.size(), " bytes of binary data");
      KILN_ASSIGN_OR_RETURN(Tensor t,
                            TensorFromV2Bytes(binary.substr(binary_pos, len), dtype, shape, what));
      binary_pos += len;
      req.inputs.emplace(name, std::move(t));
      continue;
    }
    if (!in.contains("data"))
      return InvalidArgument(what, ": no 'data' and no binary_data_size parameter");
    const Json& data = in["data"];
    const int64_t have = CountLeaves(data);
    if (have != n)
      return InvalidArgument(what, ": 'data' has ", have, " elements but shape ", shape.ToString(),
                             " needs ", n);
    if (dtype == DType::kHalf || dtype == DType::kBFloat16)
      return InvalidArgument(what, ": ", in["datatype"].get<std::string>(),
                             " tensors must be sent as binary data");
    Tensor t(dtype, shape);
    int64_t index = 0;
    KILN_RETURN_IF_ERROR(FillFlat(data, &t, &index, what));
    req.inputs.emplace(name, std::move(t));
  }
  if (binary_pos != binary.size())
    return InvalidArgument(binary.size() - binary_pos,
                           " bytes of binary data are not claimed by any input");
  if (doc.contains("outputs")) {
    if (!doc["outputs"].is_array()) return InvalidArgument("'outputs' must be a list");
    for (const Json& out : doc["outputs"]) {
      if (!out.is_object() || !out.contains("name") || !out["name"].is_string())
        return InvalidArgument("every requested output needs a 'name'");
      const std::string name = out["name"].get<std::string>();
      req.outputs.push_back(name);
      req.binary_output[name] = BoolParam(out, "binary_data");
    }
  }
  return req;
}

Result<V2RestResponse> EncodeV2RestResponse(
    std::string_view model_name, std::string_view model_version, std::string_view id,
    const std::vector<std::pair<std::string, Tensor>>& outputs, const V2InferRequest& request) {
  V2RestResponse r;
  std::string binary;
  std::string& out = r.body;
  out += "{\"model_name\":";
  json_util::AppendString(&out, model_name);
  out += ",\"model_version\":";
  json_util::AppendString(&out, model_version);
  if (!id.empty()) {
    out += ",\"id\":";
    json_util::AppendString(&out, id);
  }
  out += ",\"outputs\":[";
  bool first = true;
  for (const auto& [name, t] : outputs) {
    KILN_ASSIGN_OR_RETURN_CTX(std::string datatype, DTypeToV2(t.dtype()), "output '", name, "'");
    if (!first) out.push_back(',');
    first = false;
    out += "{\"name\":";
    json_util::AppendString(&out, name);
    out += ",\"datatype\":\"" + datatype + "\",\"shape\":[";
    for (int i = 0; i < t.rank(); ++i) out += (i ? "," : "") + std::to_string(t.dim(i));
    out += "]";
    auto it = request.binary_output.find(name);
    const bool as_binary = request.all_binary ||
                           (it != request.binary_output.end() && it->second) ||
                           t.dtype() == DType::kHalf || t.dtype() == DType::kBFloat16;
    if (as_binary) {
      std::string bytes = TensorToV2Bytes(t);
      out += ",\"parameters\":{\"binary_data_size\":" + std::to_string(bytes.size()) + "}}";
      binary += bytes;
    } else {
      out += ",\"data\":";
      json_util::AppendFlat(&out, t, false);
      out += "}";
    }
  }
  out += "]}";
  if (!binary.empty() || request.all_binary ||
      std::any_of(request.binary_output.begin(), request.binary_output.end(),
                  [](const auto& kv) { return kv.second; })) {
    r.json_length = static_cast<int64_t>(out.size());
    out += binary;
  }
  return r;
}

std::string V2ErrorBody(std::string_view message) {
  std::string out = "{\"error\":";
  json_util::AppendString(&out, message);
  out += "}";
  return out;
}

}  // namespace kiln::serve
