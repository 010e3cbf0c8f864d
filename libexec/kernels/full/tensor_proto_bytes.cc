#include "kernels/full/tensor_proto_bytes.h"

#include <cstring>
#include <limits>
#include <vector>

#include "kiln/core/proto_convert.h"
#include "tensorflow/framework.pb.h"

namespace kiln::exec {
namespace {

// TF's string list in tensor_content (port::EncodeStringList): every length as a varint32,
// then the bytes of every string.
Status DecodeStringContent(std::string_view b, Tensor* t) {
  const int64_t n = t->NumElements();
  std::vector<uint32_t> lengths(static_cast<size_t>(n));
  size_t pos = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t v = 0;
    int shift = 0;
    for (;;) {
      if (pos >= b.size() || shift > 28)
        return InvalidArgument("bad string list in tensor_content");
      const uint8_t c = static_cast<uint8_t>(b[pos++]);
      v |= static_cast<uint32_t>(c & 0x7f) << shift;
      shift += 7;
      if ((c & 0x80) == 0) break;
    }
    lengths[static_cast<size_t>(i)] = v;
  }
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t len = lengths[static_cast<size_t>(i)];
    if (len > b.size() - pos) return InvalidArgument("truncated string list in tensor_content");
    t->data<std::string>()[i] = std::string(b.substr(pos, len));
    pos += len;
  }
  if (pos != b.size()) return InvalidArgument("trailing bytes after the string list");
  return OkStatus();
}

void AppendVarint32(size_t n, std::string* out) {
  auto v = static_cast<uint32_t>(n);
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

}  // namespace

Status SerializeTensorProto(const Tensor& t, bool string_content, std::string* out) {
  const DType dt = t.dtype();
  if (dt != DType::kString && !DTypeIsPod(dt))
    return Unimplemented("serializing a ", DTypeShortName(dt), " tensor is not supported");
  tensorflow::TensorProto proto;
  proto.set_dtype(static_cast<tensorflow::DataType>(DTypeToProto(dt)));
  ShapeToProto(t.shape(), proto.mutable_tensor_shape());
  if (dt == DType::kString && string_content) {
    std::string content;
    for (const std::string& s : t.flat<std::string>()) AppendVarint32(s.size(), &content);
    for (const std::string& s : t.flat<std::string>()) content += s;
    if (!content.empty()) proto.set_tensor_content(std::move(content));
  } else if (dt == DType::kString) {
    for (const std::string& s : t.flat<std::string>()) proto.add_string_val(s);
  } else if (t.NumElements() > 0) {
    proto.set_tensor_content(t.raw_data(), t.ByteSize());
  }
  if (!proto.SerializeToString(out)) return Internal("could not serialize a TensorProto");
  return OkStatus();
}

Result<Tensor> ParseTensorProto(std::string_view bytes) {
  tensorflow::TensorProto proto;
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    return InvalidArgument("a TensorProto of ", bytes.size(), " bytes is too large");
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return InvalidArgument("could not parse the bytes as a TensorProto");
  if (proto.dtype() == tensorflow::DT_STRING && !proto.tensor_content().empty()) {
    KILN_ASSIGN_OR_RETURN(Shape shape, ShapeFromProto(proto.tensor_shape()));
    if (shape.num_elements() > static_cast<int64_t>(proto.tensor_content().size()))
      return InvalidArgument("tensor_content is too short for ", shape.num_elements(), " strings");
    Tensor t(DType::kString, shape);
    KILN_RETURN_IF_ERROR(DecodeStringContent(proto.tensor_content(), &t));
    return t;
  }
  return TensorFromProto(proto);
}

}  // namespace kiln::exec
