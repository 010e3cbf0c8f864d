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

#include "kiln/core/allocator.h"
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

// Storage for the elements of one tensor: owned memory from an allocator (non-POD elements,
// strings and handles, are constructed and destroyed here), or a view of memory someone else
// owns (a slice of an execution arena, a memory-mapped file) that the buffer keeps alive.
// A read-only view (a file mapped read-only) is never written: in-place paths check
// Tensor::BufferIsExclusive, which is false for it, and a writer gets a fresh buffer instead.
class TensorBuffer {
 public:
  // CPU memory, zero-filled; small POD tensors live inline. Aborts when out of memory, as the
  // standard containers do (kernels allocate through their context, which reports errors).
  TensorBuffer(DType dtype, int64_t num_elements);
  // From `allocator`, not initialised for POD dtypes; ok() is false when the memory could not
  // be had.
  TensorBuffer(Allocator* allocator, DType dtype, int64_t num_elements);
  // A view of POD elements at `data`. `transient` marks memory that is reused after the
  // current call (an execution arena): anything that keeps a tensor beyond the call
  // (a variable, a tensor list) copies such a buffer first.
  TensorBuffer(DType dtype, int64_t num_elements, void* data, std::shared_ptr<const void> owner,
               bool transient);
  // A read-only view of POD elements at `data` (a tensor-bundle data file mapped with
  // PROT_READ): kept alive by `owner`, never written, kept by variables without a copy.
  // `file_pages`: the bytes are a private read-only mapping of a file, so ReleasePages may give
  // their pages back (never set for memory that only the process holds).
  static std::shared_ptr<TensorBuffer> ReadOnlyView(DType dtype, int64_t num_elements,
                                                    const void* data,
                                                    std::shared_ptr<const void> owner,
                                                    bool file_pages = false);
  ~TensorBuffer();
  TensorBuffer(const TensorBuffer&) = delete;
  TensorBuffer& operator=(const TensorBuffer&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  int64_t num_elements() const { return num_elements_; }
  bool ok() const { return data_ != nullptr || bytes_ == 0; }
  bool transient() const { return transient_; }
  bool read_only() const { return read_only_; }
  // For a view of a mapped file: gives back the resident pages wholly inside it (madvise
  // MADV_DONTNEED), which the kernel reads again from the page cache or the file when touched.
  // Weights read once at prepare time (checksummed, folded, packed) and Keras's second copy of
  // every variable then stop counting in the process's memory. No effect on other buffers.
  void ReleasePages() const;
  // Whether the host can read and write the elements (false for GPU memory).
  bool host_accessible() const { return allocator_ == nullptr || allocator_->HostAccessible(); }
  Allocator* allocator() const { return allocator_; }

 private:
  void ConstructElements(bool zero_pod);
  // Small POD tensors (scalars, short vectors) live inside the buffer object itself, so
  // producing one costs a single allocation.
  static constexpr size_t kInlineBytes = 64;
  DType dtype_;
  bool transient_ = false;
  bool read_only_ = false;
  bool file_pages_ = false;  // a view of a private read-only file mapping
  int64_t num_elements_;
  size_t bytes_;
  void* data_;
  Allocator* allocator_ = nullptr;     // owner of data_ when set
  std::shared_ptr<const void> owner_;  // keeps a view's memory alive
  alignas(16) unsigned char inline_[kInlineBytes];
};

class Tensor {
 public:
  Tensor() = default;  // not initialized: dtype kInvalid, no buffer
  // Allocates on the CPU; POD elements are zero, strings empty, handles null.
  Tensor(DType dtype, const Shape& shape);
  // A tensor over an existing buffer with room for shape's elements (an arena slice).
  Tensor(DType dtype, const Shape& shape, std::shared_ptr<TensorBuffer> buffer);
  // Allocates from `allocator` (POD elements not initialised); an error naming the bytes when
  // the memory cannot be had.
  static Result<Tensor> Allocate(Allocator* allocator, DType dtype, const Shape& shape);

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

  // Element access is const-correct: a `const Tensor&` (every kernel input) reads through
  // `const T*`, so a weight mapped read-only from a bundle or plan cannot be written through
  // an input. Writing needs a non-const Tensor: an output, or a tensor the caller owns.
  const void* raw_data() const { return buffer_ ? buffer_->data() : nullptr; }
  void* raw_data() { return buffer_ ? buffer_->data() : nullptr; }
  // The buffer itself (the executor binds caller-provided output buffers with it).
  const std::shared_ptr<TensorBuffer>& buffer() const { return buffer_; }
  template <typename T>
  const T* data() const {
    KILN_DCHECK(kDTypeOf<T> == dtype_);
    return static_cast<const T*>(raw_data());
  }
  template <typename T>
  T* data() {
    KILN_DCHECK(kDTypeOf<T> == dtype_);
    return static_cast<T*>(raw_data());
  }
  template <typename T>
  std::span<const T> flat() const {
    return {data<T>(), static_cast<size_t>(NumElements())};
  }
  template <typename T>
  std::span<T> flat() {
    return {data<T>(), static_cast<size_t>(NumElements())};
  }
  template <typename T>
  const T& scalar() const {
    KILN_DCHECK(NumElements() == 1);
    return data<T>()[0];
  }
  template <typename T>
  T& scalar() {
    KILN_DCHECK(NumElements() == 1);
    return data<T>()[0];
  }

  // Same buffer, new shape with the same element count (checked by the caller).
  Tensor Reshaped(const Shape& shape) const;
  // Same buffer viewed as another POD dtype and shape of the same byte size (in-place reuse).
  Tensor BufferAs(DType dtype, const Shape& shape) const;
  // A tensor with its own buffer and the same contents.
  Tensor DeepCopy() const;
  bool SharesBufferWith(const Tensor& o) const { return buffer_ && buffer_ == o.buffer_; }
  // True when no other tensor shares the buffer and it may be written (not a read-only view):
  // a kernel, or a variable update, may then write into it in place.
  bool BufferIsExclusive() const {
    return buffer_ && buffer_.use_count() == 1 && !buffer_->read_only();
  }
  // Whether the buffer is a read-only view (a mapped bundle file): never written in place.
  bool BufferIsReadOnly() const { return buffer_ && buffer_->read_only(); }
  // Whether the buffer is reused after the current call (see TensorBuffer::transient).
  bool BufferIsTransient() const { return buffer_ && buffer_->transient(); }
  bool HostAccessible() const { return !buffer_ || buffer_->host_accessible(); }
  // The allocator that made the buffer (null for views and CPU buffers made without one).
  Allocator* BufferAllocator() const { return buffer_ ? buffer_->allocator() : nullptr; }
  // This tensor, or a deep copy when its buffer is transient: what a variable or a list stores.
  Tensor Retainable() const { return BufferIsTransient() ? DeepCopy() : *this; }

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

// Copies the elements of `from` into `to`'s buffer (host memory on both sides; same dtype and
// element count, else an error naming both).
Status CopyElements(const Tensor& from, Tensor* to);

}  // namespace kiln
