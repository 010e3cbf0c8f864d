// The value a TensorList variant tensor holds (TF 2 stores tf.TensorArray as these). A list is
// immutable: ops that change it build a new list, copying the vector of tensors, whose
// buffers stay shared. An element may be unset (a reserved slot nobody wrote yet).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kiln/core/shape.h"
#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec {

class TensorList final : public VariantBase {
 public:
  static constexpr const char* kTypeName = "tensorflow::TensorList";

  TensorList(DType element_dtype, PartialShape element_shape, std::vector<Tensor> tensors,
             int64_t max_num_elements = -1)
      : element_dtype_(element_dtype),
        element_shape_(element_shape),
        tensors_(std::move(tensors)),
        max_num_elements_(max_num_elements) {
    // A list outlives the call that made it: it must not hold arena memory.
    for (Tensor& t : tensors_) t = t.Retainable();
  }

  DType element_dtype() const { return element_dtype_; }
  const PartialShape& element_shape() const { return element_shape_; }
  const std::vector<Tensor>& tensors() const { return tensors_; }
  int64_t size() const { return static_cast<int64_t>(tensors_.size()); }
  // -1: unbounded (EmptyTensorList's max_num_elements).
  int64_t max_num_elements() const { return max_num_elements_; }

  std::string TypeName() const override { return kTypeName; }
  std::string DebugString() const override;

  // A scalar DT_VARIANT tensor holding `list`.
  static Tensor Wrap(std::shared_ptr<const TensorList> list);
  // The list held by `t`; errors name `input` ("input 'input_handle': ...").
  static Result<const TensorList*> From(const Tensor& t, std::string_view input);

 private:
  DType element_dtype_;
  PartialShape element_shape_;
  std::vector<Tensor> tensors_;
  int64_t max_num_elements_;
};

// Helpers of the TensorList op families (tensor_list_ops.cc, tensor_list_bulk_ops.cc).
namespace tensor_list {

// An element_shape input in TF's encoding: a scalar -1 is an unknown rank, a vector holds the
// dims with -1 for unknown ones. Errors name `input`.
Result<PartialShape> ShapeFromTensor(const Tensor& t, std::string_view input);
// The shape an element_shape input gives at prepare time: known when it is a constant.
PartialShape ConstantShape(const PrepareContext& ctx, int i);
// Input i is an int32 or int64 shape.
Status ExpectShapeInput(const PrepareContext& ctx, int i, std::string_view name);
// A scalar int32/int64 input's value.
Result<int64_t> ScalarInt(const Tensor& t, std::string_view input);
// `n` tensors of a POD `dtype` and `shape` for a list's items, not initialised: one allocation
// holds all their elements (64-byte aligned each) and buffers. Per-item allocations were a
// tenth of a small recurrent model's call. The items share one owner, so none is exclusive:
// in-place paths copy before writing. Errors name `what`.
Result<std::vector<Tensor>> AllocateItems(DType dtype, const Shape& shape, int64_t n,
                                          std::string_view what);

}  // namespace tensor_list

}  // namespace kiln::exec
