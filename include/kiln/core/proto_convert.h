// Conversions between core types and TensorFlow's protos (TensorProto, TensorShapeProto,
// DataType). Parsing validates: a negative dimension, a wrong byte count or an unknown dtype
// is an error that says so.
#pragma once

#include "kiln/core/dtype.h"
#include "kiln/core/shape.h"
#include "kiln/core/status.h"
#include "kiln/core/tensor.h"

namespace tensorflow {
class TensorProto;
class TensorShapeProto;
}  // namespace tensorflow

namespace kiln {

// DTypeFromProto and DTypeToProto are in dtype.h (the protobuf-free runtime has them too).

Result<PartialShape> PartialShapeFromProto(const tensorflow::TensorShapeProto& proto);
Result<Shape> ShapeFromProto(const tensorflow::TensorShapeProto& proto);  // fully defined
void PartialShapeToProto(const PartialShape& shape, tensorflow::TensorShapeProto* proto);
void ShapeToProto(const Shape& shape, tensorflow::TensorShapeProto* proto);

// Implements TensorFlow's filling rules (tensor_content wins; a short typed field repeats its
// last value; no values means zeros).
Result<Tensor> TensorFromProto(const tensorflow::TensorProto& proto);
// Deterministic encoding: a single element goes in the typed field (as TF writes scalars),
// more elements in tensor_content; strings in string_val.
Status TensorToProto(const Tensor& tensor, tensorflow::TensorProto* proto);

}  // namespace kiln
