#include "kiln/serve/proto_codec.h"

#include <string>
#include <type_traits>
#include <vector>

#include "kiln/core/proto_convert.h"
#include "kiln/serve/v2_codec.h"
#include "kserve/grpc_predict_v2.pb.h"
#include "tensorflow/example.pb.h"
#include "tensorflow/framework.pb.h"
#include "tensorflow_serving/apis/input.pb.h"

namespace kiln::serve {

namespace {

// Extends the typed value field of `dtype` to `n` values by repeating its last (or a zero).
void PadValues(tensorflow::TensorProto* p, DType dtype, int64_t n) {
  auto pad = [n](auto* field) {
    using V = std::remove_cvref_t<decltype(field->Get(0))>;
    const V last = field->empty() ? V{} : field->Get(field->size() - 1);
    while (field->size() < n) field->Add(last);
  };
  switch (dtype) {
    case DType::kFloat:
      return pad(p->mutable_float_val());
    case DType::kDouble:
      return pad(p->mutable_double_val());
    case DType::kInt64:
      return pad(p->mutable_int64_val());
    case DType::kBool:
      return pad(p->mutable_bool_val());
    case DType::kHalf:
    case DType::kBFloat16:
      return pad(p->mutable_half_val());
    case DType::kUInt32:
      return pad(p->mutable_uint32_val());
    case DType::kUInt64:
      return pad(p->mutable_uint64_val());
    case DType::kString: {
      auto* field = p->mutable_string_val();
      const std::string last = field->empty() ? std::string() : field->Get(field->size() - 1);
      while (field->size() < n) *field->Add() = last;
      return;
    }
    default:  // the int_val types
      return pad(p->mutable_int_val());
  }
}

}  // namespace

Result<Tensor> TensorFromRequestProto(const tensorflow::TensorProto& proto,
                                      const RequestLimits& limits, std::string_view what) {
  KILN_ASSIGN_OR_RETURN_CTX(DType dtype, DTypeFromProto(proto.dtype()), what);
  if (dtype == DType::kInvalid || dtype == DType::kResource || dtype == DType::kVariant)
    return InvalidArgument(what, ": dtype ", DTypeEnumName(dtype), " cannot be sent");
  if (proto.tensor_shape().unknown_rank())
    return InvalidArgument(what, ": the tensor shape must be known");
  std::vector<int64_t> dims;
  for (const auto& d : proto.tensor_shape().dim()) {
    if (dims.size() >= static_cast<size_t>(kMaxRank))
      return InvalidArgument(what, ": rank above the supported maximum of ", kMaxRank);
    dims.push_back(d.size());
  }
  KILN_ASSIGN_OR_RETURN(Shape shape, CheckedShape(dims, dtype, limits, what));
  const int64_t n = shape.num_elements();
  int64_t have = -1;
  if (DTypeIsPod(dtype) && !proto.tensor_content().empty()) {
    const uint64_t want = static_cast<uint64_t>(n) * DTypeSize(dtype);
    if (proto.tensor_content().size() != want)
      return InvalidArgument(what, ": tensor_content has ", proto.tensor_content().size(),
                             " bytes but shape ", shape.ToString(), " of ", DTypeShortName(dtype),
                             " needs ", want);
    have = n;
  } else {
    switch (dtype) {
      case DType::kFloat:
        have = proto.float_val_size();
        break;
      case DType::kDouble:
        have = proto.double_val_size();
        break;
      case DType::kInt32:
      case DType::kInt16:
      case DType::kInt8:
      case DType::kUInt8:
      case DType::kUInt16:
      case DType::kQInt8:
      case DType::kQUInt8:
      case DType::kQInt16:
      case DType::kQUInt16:
      case DType::kQInt32:
        have = proto.int_val_size();
        break;
      case DType::kInt64:
        have = proto.int64_val_size();
        break;
      case DType::kBool:
        have = proto.bool_val_size();
        break;
      case DType::kString:
        have = proto.string_val_size();
        break;
      case DType::kHalf:
      case DType::kBFloat16:
        have = proto.half_val_size();
        break;
      case DType::kUInt32:
        have = proto.uint32_val_size();
        break;
      case DType::kUInt64:
        have = proto.uint64_val_size();
        break;
      default:
        return InvalidArgument(what, ": ", DTypeShortName(dtype),
                               " values must be sent in tensor_content");
    }
  }
  if (have > n)
    return InvalidArgument(what, ": ", have, " values for shape ", shape.ToString(), " (", n,
                           " elements)");
  if (have < n) {
    // TensorFlow's Tensor::FromProto (and so TF Serving) repeats the last value to fill the
    // shape (zeros when there is none): tf.make_tensor_proto(2.0, shape=[1, 2]) is [[2, 2]].
    tensorflow::TensorProto filled = proto;
    PadValues(&filled, dtype, n);
    KILN_ASSIGN_OR_RETURN_CTX(Tensor t, TensorFromProto(filled), what);
    return t;
  }
  KILN_ASSIGN_OR_RETURN_CTX(Tensor t, TensorFromProto(proto), what);
  return t;
}

namespace {

template <typename Field, typename T>
Status FillTyped(const Field& field, Tensor* t, std::string_view what) {
  if (field.size() != t->NumElements())
    return InvalidArgument(what, ": contents has ", field.size(), " values but shape ",
                           t->shape().ToString(), " needs ", t->NumElements());
  T* out = t->data<T>();
  for (int i = 0; i < field.size(); ++i) out[i] = static_cast<T>(field.Get(i));
  return OkStatus();
}

Status FillContents(const inference::InferTensorContents& c, Tensor* t, std::string_view what) {
  switch (t->dtype()) {
    case DType::kBool:
      return FillTyped<decltype(c.bool_contents()), bool>(c.bool_contents(), t, what);
    case DType::kInt8:
      return FillTyped<decltype(c.int_contents()), int8_t>(c.int_contents(), t, what);
    case DType::kInt16:
      return FillTyped<decltype(c.int_contents()), int16_t>(c.int_contents(), t, what);
    case DType::kInt32:
      return FillTyped<decltype(c.int_contents()), int32_t>(c.int_contents(), t, what);
    case DType::kInt64:
      return FillTyped<decltype(c.int64_contents()), int64_t>(c.int64_contents(), t, what);
    case DType::kUInt8:
      return FillTyped<decltype(c.uint_contents()), uint8_t>(c.uint_contents(), t, what);
    case DType::kUInt16:
      return FillTyped<decltype(c.uint_contents()), uint16_t>(c.uint_contents(), t, what);
    case DType::kUInt32:
      return FillTyped<decltype(c.uint_contents()), uint32_t>(c.uint_contents(), t, what);
    case DType::kUInt64:
      return FillTyped<decltype(c.uint64_contents()), uint64_t>(c.uint64_contents(), t, what);
    case DType::kFloat:
      return FillTyped<decltype(c.fp32_contents()), float>(c.fp32_contents(), t, what);
    case DType::kDouble:
      return FillTyped<decltype(c.fp64_contents()), double>(c.fp64_contents(), t, what);
    case DType::kString: {
      if (c.bytes_contents_size() != t->NumElements())
        return InvalidArgument(what, ": contents has ", c.bytes_contents_size(),
                               " values but shape ", t->shape().ToString(), " needs ",
                               t->NumElements());
      for (int i = 0; i < c.bytes_contents_size(); ++i)
        t->data<std::string>()[i] = c.bytes_contents(i);
      return OkStatus();
    }
    default:
      return InvalidArgument(what, ": ", DTypeShortName(t->dtype()),
                             " must be sent in raw_input_contents");
  }
}

}  // namespace

Result<V2InferRequest> DecodeV2GrpcRequest(const inference::ModelInferRequest& request,
                                           const RequestLimits& limits) {
  V2InferRequest req;
  req.id = request.id();
  auto sig = request.parameters().find("signature_name");
  if (sig != request.parameters().end()) req.signature_name = sig->second.string_param();
  const bool raw = request.raw_input_contents_size() > 0;
  if (raw && request.raw_input_contents_size() != request.inputs_size())
    return InvalidArgument("raw_input_contents has ", request.raw_input_contents_size(),
                           " entries for ", request.inputs_size(), " inputs");
  for (int i = 0; i < request.inputs_size(); ++i) {
    const auto& in = request.inputs(i);
    const std::string what = "input '" + in.name() + "'";
    if (req.inputs.count(in.name())) return InvalidArgument(what, " is given twice");
    KILN_ASSIGN_OR_RETURN_CTX(DType dtype, DTypeFromV2(in.datatype()), what);
    std::vector<int64_t> dims(in.shape().begin(), in.shape().end());
    KILN_ASSIGN_OR_RETURN(Shape shape, CheckedShape(dims, dtype, limits, what));
    if (raw) {
      KILN_ASSIGN_OR_RETURN(Tensor t,
                            TensorFromV2Bytes(request.raw_input_contents(i), dtype, shape, what));
      req.inputs.emplace(in.name(), std::move(t));
      continue;
    }
    Tensor t(dtype, Shape());
    // Count check before allocating the full tensor.
    const auto& c = in.contents();
    const int64_t have = c.bool_contents_size() + c.int_contents_size() + c.int64_contents_size() +
                         c.uint_contents_size() + c.uint64_contents_size() +
                         c.fp32_contents_size() + c.fp64_contents_size() + c.bytes_contents_size();
    if (have != shape.num_elements())
      return InvalidArgument(what, ": contents has ", have, " values but shape ", shape.ToString(),
                             " needs ", shape.num_elements());
    t = Tensor(dtype, shape);
    KILN_RETURN_IF_ERROR(FillContents(c, &t, what));
    req.inputs.emplace(in.name(), std::move(t));
  }
  for (const auto& out : request.outputs()) req.outputs.push_back(out.name());
  return req;
}

Status EncodeV2GrpcResponse(std::string_view model_name, std::string_view model_version,
                            std::string_view id,
                            const std::vector<std::pair<std::string, Tensor>>& outputs,
                            inference::ModelInferResponse* response) {
  response->set_model_name(std::string(model_name));
  response->set_model_version(std::string(model_version));
  response->set_id(std::string(id));
  for (const auto& [name, t] : outputs) {
    auto* out = response->add_outputs();
    out->set_name(name);
    KILN_ASSIGN_OR_RETURN_CTX(std::string datatype, DTypeToV2(t.dtype()), "output '", name, "'");
    out->set_datatype(datatype);
    for (int i = 0; i < t.rank(); ++i) out->add_shape(t.dim(i));
    response->add_raw_output_contents(TensorToV2Bytes(t));
  }
  return OkStatus();
}

Result<std::vector<std::string>> SerializedExamples(const tensorflow::serving::Input& input) {
  std::vector<std::string> out;
  if (input.has_example_list()) {
    for (const auto& ex : input.example_list().examples()) out.push_back(ex.SerializeAsString());
  } else if (input.has_example_list_with_context()) {
    const auto& l = input.example_list_with_context();
    for (const auto& ex : l.examples()) {
      tensorflow::Example merged = l.context();
      for (const auto& [k, f] : ex.features().feature())
        (*merged.mutable_features()->mutable_feature())[k] = f;
      out.push_back(merged.SerializeAsString());
    }
  } else {
    return InvalidArgument("the request's input holds no example_list");
  }
  return out;
}

}  // namespace kiln::serve
