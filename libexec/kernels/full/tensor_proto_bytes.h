// A tensor as serialized TensorProto bytes, both ways, the way TensorFlow's SerializeTensor and
// ParseTensor write and read them (Tensor::AsProtoTensorContent, Tensor::FromProto). Used by the
// CPU kernels of the serialize and sparse serialize ops (kernels/cpu/full/serialize_ops.cc,
// kernels/cpu/full/sparse_serialize_ops.cc; full runtime: it needs protobuf).
#pragma once

#include <string>
#include <string_view>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"

namespace kiln::exec {

// dtype, shape, and the values in tensor_content for numbers (even one). Strings go in
// string_val (SerializeTensor: Tensor::AsProtoField) or, with `string_content`, in
// tensor_content as TF's string list (the sparse serialize ops: Tensor::AsProtoTensorContent).
// Unimplemented for resource and variant tensors.
Status SerializeTensorProto(const Tensor& t, bool string_content, std::string* out);

// TensorProto bytes back to a tensor: either form (tensor_content, or the typed value fields
// with TF's filling rules), strings from string_val or TF's tensor_content string list. The
// error says what is wrong with the bytes.
Result<Tensor> ParseTensorProto(std::string_view bytes);

}  // namespace kiln::exec
