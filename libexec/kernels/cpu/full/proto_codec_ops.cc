// The CPU kernels of DecodeProtoV2, EncodeProto and DecodeJSONExample
// (kernels/full/proto_codec_ops.cc): records parsed and written with the protobuf library's
// reflection over the message type the definition prepared.
#include "kernels/full/proto_codec_ops.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/type_resolver.h>
#include <google/protobuf/util/type_resolver_util.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel_util.h"
#include "tensorflow/example.pb.h"

namespace kiln::exec {
namespace {

namespace pb = google::protobuf;
using FD = pb::FieldDescriptor;

using proto_codec::ProtoState;

// ---- DecodeProtoV2 ---------------------------------------------------------------------------

int Count(const pb::Message& m, const FD* f) {
  const pb::Reflection* r = m.GetReflection();
  if (f->is_repeated()) return r->FieldSize(m, f);
  return r->HasField(m, f) ? 1 : 0;
}

// Value j of field f (0 for a singular field), or its default when absent, into out[at].
void StoreValue(const pb::Message& m, const FD* f, int j, bool present, Tensor* out, int64_t at) {
  const pb::Reflection* r = m.GetReflection();
  const bool rep = f->is_repeated();
  auto put = [&](auto v) {
    switch (out->dtype()) {
      case DType::kDouble:
        out->data<double>()[at] = static_cast<double>(v);
        break;
      case DType::kFloat:
        out->data<float>()[at] = static_cast<float>(v);
        break;
      case DType::kInt32:
        out->data<int32_t>()[at] = static_cast<int32_t>(v);
        break;
      case DType::kInt64:
        out->data<int64_t>()[at] = static_cast<int64_t>(v);
        break;
      case DType::kUInt32:
        out->data<uint32_t>()[at] = static_cast<uint32_t>(v);
        break;
      case DType::kUInt64:
        out->data<uint64_t>()[at] = static_cast<uint64_t>(v);
        break;
      case DType::kBool:
        out->data<bool>()[at] = static_cast<bool>(v);
        break;
      default:
        break;
    }
  };
  switch (f->cpp_type()) {
    case FD::CPPTYPE_INT32:
      put(!present ? f->default_value_int32()
          : rep    ? r->GetRepeatedInt32(m, f, j)
                   : r->GetInt32(m, f));
      break;
    case FD::CPPTYPE_INT64:
      put(!present ? f->default_value_int64()
          : rep    ? r->GetRepeatedInt64(m, f, j)
                   : r->GetInt64(m, f));
      break;
    case FD::CPPTYPE_UINT32:
      put(!present ? f->default_value_uint32()
          : rep    ? r->GetRepeatedUInt32(m, f, j)
                   : r->GetUInt32(m, f));
      break;
    case FD::CPPTYPE_UINT64:
      put(!present ? f->default_value_uint64()
          : rep    ? r->GetRepeatedUInt64(m, f, j)
                   : r->GetUInt64(m, f));
      break;
    case FD::CPPTYPE_DOUBLE:
      put(!present ? f->default_value_double()
          : rep    ? r->GetRepeatedDouble(m, f, j)
                   : r->GetDouble(m, f));
      break;
    case FD::CPPTYPE_FLOAT:
      put(!present ? f->default_value_float()
          : rep    ? r->GetRepeatedFloat(m, f, j)
                   : r->GetFloat(m, f));
      break;
    case FD::CPPTYPE_BOOL:
      put(!present ? f->default_value_bool()
          : rep    ? r->GetRepeatedBool(m, f, j)
                   : r->GetBool(m, f));
      break;
    case FD::CPPTYPE_ENUM:
      put(!present ? f->default_value_enum()->number()
          : rep    ? r->GetRepeatedEnumValue(m, f, j)
                   : r->GetEnumValue(m, f));
      break;
    case FD::CPPTYPE_STRING:
      out->data<std::string>()[at] = !present ? f->default_value_string()
                                     : rep    ? r->GetRepeatedString(m, f, j)
                                              : r->GetString(m, f);
      break;
    case FD::CPPTYPE_MESSAGE:
      out->data<std::string>()[at] = !present ? std::string()
                                     : rep    ? r->GetRepeatedMessage(m, f, j).SerializeAsString()
                                              : r->GetMessage(m, f).SerializeAsString();
      break;
  }
}

Status ComputeDecodeProto(const KernelContext& ctx) {
  const auto& st = ctx.state<ProtoState>();
  const Tensor& bytes = ctx.input(0);
  if (bytes.rank() >= kMaxRank)
    return ctx.Error("input 'bytes' has rank ", bytes.rank(), "; at most ", kMaxRank - 1);
  const int64_t n = bytes.NumElements();
  const auto nf = static_cast<int64_t>(st.fields.size());
  std::vector<std::unique_ptr<pb::Message>> msgs(n);
  for (int64_t i = 0; i < n; ++i) {
    msgs[i].reset(st.prototype->New());
    const std::string& rec = bytes.data<std::string>()[i];
    const bool ok = st.text ? pb::TextFormat::ParseFromString(rec, msgs[i].get())
                            : msgs[i]->ParseFromString(rec);
    if (!ok)
      return DataLoss("Unable to parse ", st.text ? "text" : "binary", " protobuf of type ",
                      st.prototype->GetTypeName(), " (record ", i, " of input 'bytes')");
  }
  Shape sizes_shape = bytes.shape();
  sizes_shape.AddDim(nf);
  KILN_ASSIGN_OR_RETURN(Tensor * sizes, ctx.AllocateOutput(0, sizes_shape));
  for (int64_t k = 0; k < nf; ++k) {
    const FD* f = st.fields[k];
    int64_t longest = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int c = Count(*msgs[i], f);
      sizes->data<int32_t>()[i * nf + k] = c;
      longest = std::max<int64_t>(longest, c);
    }
    Shape shape = bytes.shape();
    shape.AddDim(longest);
    KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(static_cast<int>(k) + 1, shape));
    for (int64_t i = 0; i < n; ++i) {
      const int c = sizes->data<int32_t>()[i * nf + k];
      for (int64_t j = 0; j < longest; ++j)
        StoreValue(*msgs[i], f, static_cast<int>(j), j < c, out, i * longest + j);
    }
  }
  return OkStatus();
}

// ---- EncodeProto -----------------------------------------------------------------------------

// Adds (or sets) value `at` of `in` to field f of m.
void AddValue(pb::Message* m, const FD* f, const Tensor& in, int64_t at) {
  const pb::Reflection* r = m->GetReflection();
  const bool rep = f->is_repeated();
  auto num = [&]() -> double {
    switch (in.dtype()) {
      case DType::kDouble:
        return in.data<double>()[at];
      case DType::kFloat:
        return in.data<float>()[at];
      default:
        return 0;
    }
  };
  auto integer = [&]() -> int64_t {
    switch (in.dtype()) {
      case DType::kInt32:
        return in.data<int32_t>()[at];
      case DType::kInt64:
        return in.data<int64_t>()[at];
      case DType::kUInt32:
        return in.data<uint32_t>()[at];
      case DType::kUInt64:
        return static_cast<int64_t>(in.data<uint64_t>()[at]);
      case DType::kBool:
        return in.data<bool>()[at] ? 1 : 0;
      default:
        return 0;
    }
  };
  switch (f->cpp_type()) {
    case FD::CPPTYPE_INT32: {
      const auto v = static_cast<int32_t>(integer());
      rep ? r->AddInt32(m, f, v) : r->SetInt32(m, f, v);
      break;
    }
    case FD::CPPTYPE_INT64:
      rep ? r->AddInt64(m, f, integer()) : r->SetInt64(m, f, integer());
      break;
    case FD::CPPTYPE_UINT32: {
      const auto v = static_cast<uint32_t>(integer());
      rep ? r->AddUInt32(m, f, v) : r->SetUInt32(m, f, v);
      break;
    }
    case FD::CPPTYPE_UINT64: {
      const auto v = static_cast<uint64_t>(integer());
      rep ? r->AddUInt64(m, f, v) : r->SetUInt64(m, f, v);
      break;
    }
    case FD::CPPTYPE_DOUBLE:
      rep ? r->AddDouble(m, f, num()) : r->SetDouble(m, f, num());
      break;
    case FD::CPPTYPE_FLOAT: {
      const auto v = static_cast<float>(num());
      rep ? r->AddFloat(m, f, v) : r->SetFloat(m, f, v);
      break;
    }
    case FD::CPPTYPE_BOOL:
      rep ? r->AddBool(m, f, integer() != 0) : r->SetBool(m, f, integer() != 0);
      break;
    case FD::CPPTYPE_ENUM: {
      const auto v = static_cast<int>(integer());
      rep ? r->AddEnumValue(m, f, v) : r->SetEnumValue(m, f, v);
      break;
    }
    case FD::CPPTYPE_STRING:
      rep ? r->AddString(m, f, in.data<std::string>()[at])
          : r->SetString(m, f, in.data<std::string>()[at]);
      break;
    case FD::CPPTYPE_MESSAGE:
      break;  // EncodeMessage parses the bytes into the submessage
  }
}

Status ComputeEncodeProto(const KernelContext& ctx) {
  const auto& st = ctx.state<ProtoState>();
  const Tensor& sizes = ctx.input(0);
  const auto nf = static_cast<int64_t>(st.fields.size());
  if (sizes.rank() < 1 || sizes.dim(sizes.rank() - 1) != nf)
    return ctx.Error("input 'sizes' must have shape [..., ", nf, "], got ",
                     sizes.shape().ToString());
  const Shape batch = *Shape::FromDims(sizes.shape().dims().first(sizes.rank() - 1));
  const int64_t n = batch.num_elements();
  for (int64_t k = 0; k < nf; ++k) {
    const Tensor& v = ctx.input(static_cast<int>(k) + 1);
    bool ok = v.rank() == batch.rank() + 1;
    for (int d = 0; ok && d < batch.rank(); ++d) ok = v.dim(d) == batch.dim(d);
    if (!ok)
      return ctx.Error("values:", k, " must have shape ", batch.ToString(),
                       " plus one dimension of values, got ", v.shape().ToString());
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, batch));
  for (int64_t i = 0; i < n; ++i) {
    std::unique_ptr<pb::Message> m(st.prototype->New());
    for (int64_t k = 0; k < nf; ++k) {
      const FD* f = st.fields[k];
      const Tensor& v = ctx.input(static_cast<int>(k) + 1);
      const int64_t width = v.dim(v.rank() - 1);
      const int32_t count = sizes.data<int32_t>()[i * nf + k];
      if (count < 0 || count > width)
        return ctx.Error("sizes[", i, ", ", k, "] = ", count, " is not between 0 and the ", width,
                         " values of field ", f->name());
      if (count > 1 && !f->is_repeated())
        return ctx.Error("field ", f->name(), " is not repeated but sizes[", i, ", ", k,
                         "] = ", count);
      for (int32_t j = 0; j < count; ++j) {
        if (f->cpp_type() == FD::CPPTYPE_MESSAGE) {
          const pb::Reflection* r = m->GetReflection();
          // Types of this program's own protos come from its generated factory.
          pb::MessageFactory* factory = st.own_pool ? st.factory.get() : nullptr;
          pb::Message* sub = f->is_repeated() ? r->AddMessage(m.get(), f, factory)
                                              : r->MutableMessage(m.get(), f, factory);
          if (!sub->ParseFromString(v.data<std::string>()[i * width + j]))
            return ctx.Error("values:", k, " holds bytes that are not a serialized ",
                             f->message_type()->full_name());
        } else {
          AddValue(m.get(), f, v, i * width + j);
        }
      }
    }
    out->data<std::string>()[i] = m->SerializeAsString();
  }
  return OkStatus();
}

// ---- DecodeJSONExample -----------------------------------------------------------------------

// Each JSON string (tf.train.Example in protobuf's JSON mapping) to the binary Example, written by
// protobuf's JSON-to-binary converter as TF's kernel writes it, so the bytes are TF's.
Status ComputeDecodeJsonExample(const KernelContext& ctx) {
  // The generated pool holds tensorflow.Example (this file links example.pb); resolving types
  // from it only reads, so one resolver serves every call.
  static const std::unique_ptr<pb::util::TypeResolver> resolver(
      pb::util::NewTypeResolverForDescriptorPool(
          "type.googleapis.com", tensorflow::Example::descriptor()->file()->pool()));
  const Tensor& in = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, in.shape()));
  for (int64_t i = 0; i < in.NumElements(); ++i) {
    const auto status =
        pb::util::JsonToBinaryString(resolver.get(), "type.googleapis.com/tensorflow.Example",
                                     in.data<std::string>()[i], &out->data<std::string>()[i]);
    if (!status.ok())
      return ctx.Error("Error while parsing JSON (element ", i, "): ", status.ToString());
  }
  return OkStatus();
}

constexpr KernelEntry kCpu[] = {
    {"DecodeProtoV2", ComputeDecodeProto},
    {"DecodeJSONExample", ComputeDecodeJsonExample},
    {"EncodeProto", ComputeEncodeProto},
};

}  // namespace

std::span<const KernelEntry> ProtoCodecCpuKernels() { return kCpu; }

}  // namespace kiln::exec
