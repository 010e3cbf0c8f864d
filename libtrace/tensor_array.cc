// TensorArray over TensorList ops, with the attrs TensorFlow 2 writes (tensor_array.h).
#include "kiln/trace/tensor_array.h"

#include <vector>

#include "kiln/trace/op_builder.h"
#include "kiln/trace/ops.h"

namespace kiln::trace {
namespace {

// TensorFlow's element-shape encoding: -1 for an unknown rank, else the dims (-1 unknown).
Value ShapeValue(const PartialShape& shape) {
  if (shape.unknown_rank()) return Scalar<int32_t>(-1);
  Tensor t(DType::kInt32, Shape{shape.rank()});
  for (int i = 0; i < shape.rank(); ++i) t.flat<int32_t>()[i] = static_cast<int32_t>(shape.dim(i));
  return Constant(t);
}

}  // namespace

TensorArray::TensorArray(DType dtype, const Value& size, PartialShape element_shape,
                         bool dynamic_size)
    : dtype_(dtype), element_shape_(element_shape), dynamic_size_(dynamic_size) {
  handle_ = OpBuilder("TensorListReserve", "TensorArrayV2")
                .Input(ShapeValue(element_shape_))
                .Input(size)
                .Attr("element_dtype", dtype)
                .Attr("shape_type", DType::kInt32)
                .BuildOne();
}

TensorArray::TensorArray(DType dtype, int32_t size, PartialShape element_shape, bool dynamic_size)
    : TensorArray(dtype, Scalar<int32_t>(size), element_shape, dynamic_size) {}

TensorArray TensorArray::Unstack(const Value& tensor) {
  TensorArray ta;
  if (!tensor.ok()) {
    ta.handle_ = tensor;
    return ta;
  }
  ta.dtype_ = tensor.dtype();
  if (!tensor.shape().unknown_rank() && tensor.shape().rank() >= 1) {
    std::vector<int64_t> dims(tensor.shape().dims().begin() + 1, tensor.shape().dims().end());
    Result<PartialShape> s = PartialShape::FromDims(dims);
    if (s.ok()) ta.element_shape_ = *s;
  }
  ta.handle_ = OpBuilder("TensorListFromTensor", "TensorArrayUnstack")
                   .Input(tensor)
                   .Input(ShapeValue(ta.element_shape_))
                   .Attr("element_dtype", ta.dtype_)
                   .Attr("shape_type", DType::kInt32)
                   .BuildOne();
  return ta;
}

TensorArray TensorArray::WithHandle(const Value& handle) const {
  TensorArray ta = *this;
  ta.handle_ = handle;
  if (handle.ok() && handle.dtype() != DType::kVariant) {
    ta.handle_ =
        Value::Error(InvalidArgument("TensorArray::WithHandle: expected a variant "
                                     "handle, got ",
                                     DTypeShortName(handle.dtype())));
  }
  return ta;
}

TensorArray TensorArray::Write(const Value& index, const Value& value) const {
  TensorArray ta = *this;
  if (value.ok()) {
    // The element shape is learnt from the writes, as TensorFlow's TensorArray does.
    Result<PartialShape> merged = element_shape_.MergeWith(value.shape());
    if (!merged.ok()) {
      ta.handle_ = Value::Error(InvalidArgument(
          "TensorArray::Write: the value has shape ", value.shape().ToPythonString(),
          ", the array holds elements of shape ", element_shape_.ToPythonString()));
      return ta;
    }
    ta.element_shape_ = *merged;
  }
  OpBuilder op("TensorListSetItem", "TensorArrayV2Write");
  op.Input(handle_).Input(index).Input(value).Attr("element_dtype", dtype_);
  if (dynamic_size_) op.Attr("resize_if_index_out_of_bounds", true);
  ta.handle_ = op.BuildOne();
  return ta;
}

TensorArray TensorArray::Write(int32_t index, const Value& value) const {
  return Write(Scalar<int32_t>(index), value);
}

Value TensorArray::Read(const Value& index) const {
  return OpBuilder("TensorListGetItem", "TensorArrayV2Read")
      .Input(handle_)
      .Input(index)
      .Input(ShapeValue(element_shape_))
      .Attr("element_dtype", dtype_)
      .BuildOne();
}

Value TensorArray::Read(int32_t index) const { return Read(Scalar<int32_t>(index)); }

Value TensorArray::Stack() const {
  return OpBuilder("TensorListStack", "TensorArrayV2Stack")
      .Input(handle_)
      .Input(ShapeValue(element_shape_))
      .Attr("element_dtype", dtype_)
      .BuildOne();
}

Value TensorArray::Size() const {
  return OpBuilder("TensorListLength", "TensorArrayV2Size").Input(handle_).BuildOne();
}

}  // namespace kiln::trace
