// TensorArray: tf.TensorArray's counterpart, stored the way TensorFlow 2 stores it: a
// scalar DT_VARIANT tensor list changed by TensorList ops (TensorListReserve, SetItem, GetItem,
// Stack, FromTensor, Length), so a bundle using it is a valid SavedModel.
//
// An array is a value: Write returns the new array and leaves this one as it was (the seed's
// `arr = arr.write(i, v)`; dropping the result drops the write, hence [[nodiscard]]). Works
// while tracing and eagerly. Inside WhileLoop / ForRange, pass the array as a loop variable
// (it converts to its handle Value) and rebind it in the body with WithHandle:
//
//   TensorArray states(DType::kFloat, n);
//   KILN_ASSIGN_OR_RETURN(Values out, ForRange(Scalar(0), n, Scalar(1),
//       [&](const Value& i, const Values& v) -> Result<Values> {
//         return Values{states.WithHandle(v[0]).Write(i, x)};
//       }, {states}));
//   Value stacked = states.WithHandle(out[0]).Stack();
#pragma once

#include <cstdint>

#include "kiln/core/dtype.h"
#include "kiln/core/shape.h"
#include "kiln/core/status.h"
#include "kiln/trace/value.h"

namespace kiln::trace {

class TensorArray {
 public:
  // An invalid array (status() says why).
  TensorArray() = default;
  // TensorListReserve: `size` elements of `dtype` (unset until written). `size` is an int32
  // scalar; the element shape is learnt from the first write when not given.
  TensorArray(DType dtype, const Value& size, PartialShape element_shape = {},
              bool dynamic_size = false);
  TensorArray(DType dtype, int32_t size, PartialShape element_shape = {},
              bool dynamic_size = false);
  // TensorListFromTensor: the rows of `tensor` (tf.TensorArray.unstack).
  static TensorArray Unstack(const Value& tensor);

  Status status() const { return handle_.status(); }
  DType dtype() const { return dtype_; }
  const PartialShape& element_shape() const { return element_shape_; }
  // The DT_VARIANT list (a loop variable, a function output).
  const Value& handle() const { return handle_; }
  operator const Value&() const { return handle_; }  // NOLINT: Values{array} in loops
  // The same array (dtype, element shape) over another handle: a loop variable in a body.
  TensorArray WithHandle(const Value& handle) const;

  // TensorListSetItem. `index` is an int32 scalar.
  [[nodiscard]] TensorArray Write(const Value& index, const Value& value) const;
  [[nodiscard]] TensorArray Write(int32_t index, const Value& value) const;
  // TensorListGetItem.
  Value Read(const Value& index) const;
  Value Read(int32_t index) const;
  // TensorListStack: the elements stacked along a new first axis.
  Value Stack() const;
  // TensorListLength (int32).
  Value Size() const;

 private:
  DType dtype_ = DType::kInvalid;
  PartialShape element_shape_;  // unknown rank until known
  bool dynamic_size_ = false;
  Value handle_ = Value::Error(FailedPrecondition("an empty TensorArray"));
};

}  // namespace kiln::trace
