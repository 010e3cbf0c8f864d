#include "kiln/core/proto_convert.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "tensorflow/framework.pb.h"

namespace kiln {

Result<PartialShape> PartialShapeFromProto(const tensorflow::TensorShapeProto& proto) {
  if (proto.unknown_rank()) {
    if (proto.dim_size() > 0) return InvalidArgument("shape has unknown_rank set and also dims");
    return PartialShape::UnknownRank();
  }
  std::vector<int64_t> dims;
  dims.reserve(proto.dim_size());
  for (const auto& d : proto.dim()) dims.push_back(d.size());
  return PartialShape::FromDims(dims);
}

Result<Shape> ShapeFromProto(const tensorflow::TensorShapeProto& proto) {
  KILN_ASSIGN_OR_RETURN(PartialShape p, PartialShapeFromProto(proto));
  return p.ToShape();
}

void PartialShapeToProto(const PartialShape& shape, tensorflow::TensorShapeProto* proto) {
  proto->Clear();
  if (shape.unknown_rank()) {
    proto->set_unknown_rank(true);
    return;
  }
  for (int64_t d : shape.dims()) proto->add_dim()->set_size(d);
}

void ShapeToProto(const Shape& shape, tensorflow::TensorShapeProto* proto) {
  PartialShapeToProto(PartialShape(shape), proto);
}

namespace {

// Fills n elements of T from a repeated field with TF's rule: the last value repeats; none
// means zeros.
template <typename T, typename Field, typename Conv>
Status FillFromField(const Field& field, Tensor* t, Conv conv) {
  const int64_t n = t->NumElements();
  T* out = t->data<T>();
  if (field.size() > n)
    return InvalidArgument("tensor proto has ", field.size(), " values for ", n, " elements");
  if (field.empty()) return OkStatus();  // zeros already
  for (int64_t i = 0; i < n; ++i)
    out[i] = conv(field.Get(static_cast<int>(std::min<int64_t>(i, field.size() - 1))));
  return OkStatus();
}

// float8_val (a bytes field, one byte per element) as FillFromField reads a repeated field.
struct ByteField {
  const std::string& bytes;
  int size() const { return static_cast<int>(bytes.size()); }
  bool empty() const { return bytes.empty(); }
  uint8_t Get(int i) const { return static_cast<uint8_t>(bytes[static_cast<size_t>(i)]); }
};

}  // namespace

Result<Tensor> TensorFromProto(const tensorflow::TensorProto& proto) {
  KILN_ASSIGN_OR_RETURN(DType dtype, DTypeFromProto(proto.dtype()));
  if (dtype == DType::kInvalid) return InvalidArgument("tensor proto has dtype DT_INVALID");
  KILN_ASSIGN_OR_RETURN_CTX(Shape shape, ShapeFromProto(proto.tensor_shape()),
                            "tensor proto shape");
  // Refused before allocating: a proto may declare a huge shape with one value (TF's filling
  // rule repeats it). 2 GiB is protobuf's own message limit, so every tensor a real proto can
  // spell out in full fits.
  constexpr int64_t kMaxDecodedBytes = int64_t{1} << 31;
  const int64_t elem = DTypeIsPod(dtype) ? static_cast<int64_t>(DTypeSize(dtype))
                                         : static_cast<int64_t>(sizeof(std::string));
  int64_t count = 1;
  for (int64_t d : shape.dims()) {
    if (d != 0 && count > kMaxDecodedBytes / std::max<int64_t>(elem, 1) / d)
      return InvalidArgument("tensor proto of shape ", shape.ToString(), " and dtype ",
                             DTypeShortName(dtype), " would take more than ", kMaxDecodedBytes,
                             " bytes");
    count *= d;
  }
  // TF's filling rule lets a few bytes declare a large tensor (grappler writes constant fills
  // that way); a fill past 256 MiB that expands its proto more than 4x is a memory bomb.
  constexpr int64_t kMaxFilledBytes = int64_t{256} << 20;
  const int64_t decoded = count * elem;
  if (decoded > kMaxFilledBytes && decoded / 4 > static_cast<int64_t>(proto.ByteSizeLong()))
    return InvalidArgument("tensor proto of shape ", shape.ToString(), " and dtype ",
                           DTypeShortName(dtype), " expands ", proto.ByteSizeLong(),
                           " bytes of values to ", decoded, " bytes; refused");
  Tensor t(dtype, shape);
  const int64_t n = shape.num_elements();
  if (DTypeIsPod(dtype) && !proto.tensor_content().empty()) {
    const size_t want = static_cast<size_t>(n) * DTypeSize(dtype);
    if (proto.tensor_content().size() != want)
      return InvalidArgument("tensor_content has ", proto.tensor_content().size(), " bytes; a ",
                             DTypeShortName(dtype), " tensor of shape ", shape.ToString(),
                             " needs ", want);
    std::memcpy(t.raw_data(), proto.tensor_content().data(), want);
    return t;
  }
  auto same = [](auto v) { return v; };
  switch (dtype) {
    case DType::kFloat:
      KILN_RETURN_IF_ERROR(FillFromField<float>(proto.float_val(), &t, same));
      break;
    case DType::kDouble:
      KILN_RETURN_IF_ERROR(FillFromField<double>(proto.double_val(), &t, same));
      break;
    case DType::kInt32:
      KILN_RETURN_IF_ERROR(FillFromField<int32_t>(proto.int_val(), &t, same));
      break;
    case DType::kInt16:
      KILN_RETURN_IF_ERROR(FillFromField<int16_t>(
          proto.int_val(), &t, [](int32_t v) { return static_cast<int16_t>(v); }));
      break;
    case DType::kInt8:
      KILN_RETURN_IF_ERROR(FillFromField<int8_t>(proto.int_val(), &t,
                                                 [](int32_t v) { return static_cast<int8_t>(v); }));
      break;
    case DType::kUInt8:
      KILN_RETURN_IF_ERROR(FillFromField<uint8_t>(
          proto.int_val(), &t, [](int32_t v) { return static_cast<uint8_t>(v); }));
      break;
    case DType::kUInt16:
      KILN_RETURN_IF_ERROR(FillFromField<uint16_t>(
          proto.int_val(), &t, [](int32_t v) { return static_cast<uint16_t>(v); }));
      break;
    case DType::kInt64:
      KILN_RETURN_IF_ERROR(FillFromField<int64_t>(proto.int64_val(), &t, same));
      break;
    case DType::kUInt32:
      KILN_RETURN_IF_ERROR(FillFromField<uint32_t>(proto.uint32_val(), &t, same));
      break;
    case DType::kUInt64:
      KILN_RETURN_IF_ERROR(FillFromField<uint64_t>(proto.uint64_val(), &t, same));
      break;
    case DType::kBool:
      KILN_RETURN_IF_ERROR(FillFromField<bool>(proto.bool_val(), &t, same));
      break;
    // TF keeps the quantized types' scalars in int_val, as their integer.
    case DType::kQInt8:
      KILN_RETURN_IF_ERROR(FillFromField<QInt8>(
          proto.int_val(), &t, [](int32_t v) { return QInt8{static_cast<int8_t>(v)}; }));
      break;
    case DType::kQUInt8:
      KILN_RETURN_IF_ERROR(FillFromField<QUInt8>(
          proto.int_val(), &t, [](int32_t v) { return QUInt8{static_cast<uint8_t>(v)}; }));
      break;
    case DType::kQInt16:
      KILN_RETURN_IF_ERROR(FillFromField<QInt16>(
          proto.int_val(), &t, [](int32_t v) { return QInt16{static_cast<int16_t>(v)}; }));
      break;
    case DType::kQUInt16:
      KILN_RETURN_IF_ERROR(FillFromField<QUInt16>(
          proto.int_val(), &t, [](int32_t v) { return QUInt16{static_cast<uint16_t>(v)}; }));
      break;
    case DType::kQInt32:
      KILN_RETURN_IF_ERROR(
          FillFromField<QInt32>(proto.int_val(), &t, [](int32_t v) { return QInt32{v}; }));
      break;
    case DType::kHalf:
      KILN_RETURN_IF_ERROR(FillFromField<Half>(
          proto.half_val(), &t, [](int32_t v) { return Half{static_cast<uint16_t>(v)}; }));
      break;
    case DType::kBFloat16:
      KILN_RETURN_IF_ERROR(FillFromField<BFloat16>(
          proto.half_val(), &t, [](int32_t v) { return BFloat16{static_cast<uint16_t>(v)}; }));
      break;
    case DType::kFloat8E5M2:
      KILN_RETURN_IF_ERROR(FillFromField<Float8E5M2>(ByteField{proto.float8_val()}, &t,
                                                     [](uint8_t v) { return Float8E5M2{v}; }));
      break;
    case DType::kFloat8E4M3FN:
      KILN_RETURN_IF_ERROR(FillFromField<Float8E4M3FN>(ByteField{proto.float8_val()}, &t,
                                                       [](uint8_t v) { return Float8E4M3FN{v}; }));
      break;
    case DType::kString:
      KILN_RETURN_IF_ERROR(FillFromField<std::string>(proto.string_val(), &t,
                                                      [](const std::string& v) { return v; }));
      break;
    case DType::kComplex64: {
      if (proto.scomplex_val_size() % 2)
        return InvalidArgument("scomplex_val has an odd number of values");
      const int64_t have = proto.scomplex_val_size() / 2;
      if (have > n)
        return InvalidArgument("tensor proto has ", have, " values for ", n, " elements");
      for (int64_t i = 0; have > 0 && i < n; ++i) {
        int64_t j = std::min(i, have - 1);
        t.data<std::complex<float>>()[i] = {proto.scomplex_val(2 * j),
                                            proto.scomplex_val(2 * j + 1)};
      }
      break;
    }
    case DType::kComplex128: {
      if (proto.dcomplex_val_size() % 2)
        return InvalidArgument("dcomplex_val has an odd number of values");
      const int64_t have = proto.dcomplex_val_size() / 2;
      if (have > n)
        return InvalidArgument("tensor proto has ", have, " values for ", n, " elements");
      for (int64_t i = 0; have > 0 && i < n; ++i) {
        int64_t j = std::min(i, have - 1);
        t.data<std::complex<double>>()[i] = {proto.dcomplex_val(2 * j),
                                             proto.dcomplex_val(2 * j + 1)};
      }
      break;
    }
    case DType::kResource:
    case DType::kVariant:
      return Unimplemented("constant tensors of dtype ", DTypeEnumName(dtype),
                           " are not supported");
    case DType::kInvalid:
      break;
  }
  return t;
}

Status TensorToProto(const Tensor& tensor, tensorflow::TensorProto* proto) {
  proto->Clear();
  proto->set_dtype(static_cast<tensorflow::DataType>(DTypeToProto(tensor.dtype())));
  ShapeToProto(tensor.shape(), proto->mutable_tensor_shape());
  const int64_t n = tensor.NumElements();
  const DType dt = tensor.dtype();
  if (dt == DType::kString) {
    for (int64_t i = 0; i < n; ++i) proto->add_string_val(tensor.data<std::string>()[i]);
    return OkStatus();
  }
  if (!DTypeIsPod(dt))
    return Unimplemented("cannot encode a ", DTypeEnumName(dt), " tensor as a TensorProto");
  if (n != 1) {
    if (n > 0) proto->set_tensor_content(tensor.raw_data(), tensor.ByteSize());
    return OkStatus();
  }
  switch (dt) {
    case DType::kFloat:
      proto->add_float_val(tensor.data<float>()[0]);
      break;
    case DType::kDouble:
      proto->add_double_val(tensor.data<double>()[0]);
      break;
    case DType::kInt32:
      proto->add_int_val(tensor.data<int32_t>()[0]);
      break;
    case DType::kInt16:
      proto->add_int_val(tensor.data<int16_t>()[0]);
      break;
    case DType::kInt8:
      proto->add_int_val(tensor.data<int8_t>()[0]);
      break;
    case DType::kUInt8:
      proto->add_int_val(tensor.data<uint8_t>()[0]);
      break;
    case DType::kUInt16:
      proto->add_int_val(tensor.data<uint16_t>()[0]);
      break;
    case DType::kInt64:
      proto->add_int64_val(tensor.data<int64_t>()[0]);
      break;
    case DType::kUInt32:
      proto->add_uint32_val(tensor.data<uint32_t>()[0]);
      break;
    case DType::kUInt64:
      proto->add_uint64_val(tensor.data<uint64_t>()[0]);
      break;
    case DType::kBool:
      proto->add_bool_val(tensor.data<bool>()[0]);
      break;
    case DType::kHalf:
      proto->add_half_val(tensor.data<Half>()[0].bits);
      break;
    case DType::kBFloat16:
      proto->add_half_val(tensor.data<BFloat16>()[0].bits);
      break;
    case DType::kFloat8E5M2:
    case DType::kFloat8E4M3FN:
      proto->set_float8_val(tensor.raw_data(), 1);
      break;
    default:
      proto->set_tensor_content(tensor.raw_data(), tensor.ByteSize());
  }
  return OkStatus();
}

}  // namespace kiln
