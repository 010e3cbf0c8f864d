// A dense tensor: dtype, shape and a reference-counted buffer. Copies share the buffer
// (cheap, like TF's Tensor); kernels write into freshly allocated outputs, so sharing is safe.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kiln/core/dtype.h"
#include "kiln/core/shape.h"
#include "kiln/core/status.h"

namespace kiln {

// Stateful objects that DT_RESOURCE tensors point at (variables, ...).
class ResourceBase {
 public:
  virtual ~ResourceBase() = default;
  virtual std::string DebugString() const = 0;
  // Identifies the concrete type without RTTI lookups on hot paths (see AsVariable).
  virtual const void* TypeTag() const = 0;
};

// Values that DT_VARIANT tensors hold (tensor lists, ...). Immutable once built.
class VariantBase {
 public:
  virtual ~VariantBase() = default;
  virtual std::string TypeName() const = 0;
  virtual std::string DebugString() const = 0;
};

// Storage for the elements of one tensor. Non-POD elements (std::string, shared_ptr) are
// constructed and destroyed here.
class TensorBuffer {
 public:
  TensorBuffer(DType dtype, int64_t num_elements);
  ~TensorBuffer();
  TensorBuffer(const TensorBuffer&) = delete;
  TensorBuffer& operator=(const TensorBuffer&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  // Small POD tensors (scalars, short vectors) live inside the buffer object itself, so
  // producing one costs a single allocation.
  static constexpr size_t kInlineBytes = 64;
  DType dtype_;
  int64_t num_elements_;
  size_t bytes_;
  void* data_;
  alignas(16) unsigned char inline_[kInlineBytes];
};

class Tensor {
 public:
  Tensor() = default;  // not initialized: dtype kInvalid, no buffer
  // Allocates; POD elements are zero, strings empty, handles null.
  Tensor(DType dtype, const Shape& shape);

  template <typename T>
  static Tensor Scalar(T value) {
    Tensor t(kDTypeOf<T>, Shape());
    t.data<T>()[0] = std::move(value);
    return t;
  }
  static Tensor StringScalar(std::string value) { return Scalar<std::string>(std::move(value)); }
  // Fails when values.size() does not equal the shape's element count.
  template <typename T>
  static Result<Tensor> FromVector(const std::vector<T>& values, const Shape& shape) {
    if (static_cast<int64_t>(values.size()) != shape.num_elements())
      return InvalidArgument("FromVector: ", values.size(), " values for shape ", shape.ToString(),
                             " (", shape.num_elements(), " elements)");
    Tensor t(kDTypeOf<T>, shape);
    std::copy(values.begin(), values.end(), t.data<T>());
    return t;
  }

  bool IsInitialized() const { return buffer_ != nullptr || dtype_ != DType::kInvalid; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int rank() const { return shape_.rank(); }
  int64_t dim(int i) const { return shape_.dim(i); }
  int64_t NumElements() const { return shape_.num_elements(); }
  // Bytes of the element storage (for POD dtypes: NumElements() * DTypeSize(dtype)).
  size_t ByteSize() const { return buffer_ ? buffer_->bytes() : 0; }

  void* raw_data() const { return buffer_ ? buffer_->data() : nullptr; }
  template <typename T>
  T* data() const {
    KILN_DCHECK(kDTypeOf<T> == dtype_);
    return static_cast<T*>(raw_data());
  }
  template <typename T>
  std::span<T> flat() const {
    return {data<T>(), static_cast<size_t>(NumElements())};
  }
  template <typename T>
  T& scalar() const {
    KILN_DCHECK(NumElements() == 1);
    return data<T>()[0];
  }

  // Same buffer, new shape with the same element count (checked by the caller).
  Tensor Reshaped(const Shape& shape) const;
  // A tensor with its own buffer and the same contents.
  Tensor DeepCopy() const;
  bool SharesBufferWith(const Tensor& o) const { return buffer_ && buffer_ == o.buffer_; }

  // Values as TensorFlow prints them (tf.print / StringFormat): "6", "[1 2 3]",
  // "[[1 2]\n [3 4]]", with at most `summarize` elements per dimension at each end
  // (-1 = all) and "..." between.
  std::string SummarizeValue(int summarize = 3) const;
  // "Tensor<float32 (2, 3)>" for error messages and logs.
  std::string DebugString() const;

 private:
  DType dtype_ = DType::kInvalid;
  Shape shape_;
  std::shared_ptr<TensorBuffer> buffer_;
};

// Compares dtype, shape and element values exactly.
bool TensorsEqual(const Tensor& a, const Tensor& b);

}  // namespace kiln
