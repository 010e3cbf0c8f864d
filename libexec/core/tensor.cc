#include "kiln/core/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>
#include <new>
#include <vector>

#include "core/tensor_summary.h"
#include "core/text_escape.h"
#include "kiln/core/file_util.h"
#include "kiln/core/float8.h"

namespace kiln {
namespace {

template <typename T>
void ConstructAll(void* p, int64_t n) {
  T* t = static_cast<T*>(p);
  for (int64_t i = 0; i < n; ++i) new (t + i) T();
}
template <typename T>
void DestroyAll(void* p, int64_t n) {
  T* t = static_cast<T*>(p);
  for (int64_t i = 0; i < n; ++i) t[i].~T();
}

size_t ElementStorage(DType t) {
  switch (t) {
    case DType::kString:
      return sizeof(std::string);
    case DType::kResource:
      return sizeof(std::shared_ptr<ResourceBase>);
    case DType::kVariant:
      return sizeof(std::shared_ptr<const VariantBase>);
    default:
      return DTypeSize(t);
  }
}

// Large buffers freed are kept for the next request of the same size, up to kCachedBytes in all
// (the largest go first), so a steady call reuses the memory the previous call freed: glibc
// returns large blocks to the system at free (munmap, or trimming the heap's top) and the next
// call faults every page back in, zeroed (an LSTM's loop at batch 64: 13 % of its time in the
// kernel). Peak memory is unchanged (what is cached was in use); memory stays mapped after a
// call, as TensorFlow's and ONNX Runtime's arenas keep it. Sanitizer builds skip the cache so
// that a use after free of a large buffer is still caught.
class HeapAllocator final : public Allocator {
 public:
  void* Allocate(size_t bytes) override {
    const size_t size = AlignedBytes(bytes == 0 ? 1 : bytes);
    if (kCaching && size >= kCachedMinBytes) {
      std::lock_guard lock(mu_);
      if (auto it = cached_.find(size); it != cached_.end()) {
        void* p = it->second.back();  // the most recently freed: likeliest still in cache
        it->second.pop_back();
        if (it->second.empty()) cached_.erase(it);
        cached_total_ -= size;
        return p;
      }
    }
    return ::operator new(size, std::align_val_t(kTensorAlignment), std::nothrow);
  }
  void Deallocate(void* ptr, size_t bytes) override {
    const size_t size = AlignedBytes(bytes == 0 ? 1 : bytes);
    if (kCaching && size >= kCachedMinBytes && size <= kCachedBytes) {
      std::vector<void*> evicted;
      {
        std::lock_guard lock(mu_);
        cached_[size].push_back(ptr);
        cached_total_ += size;
        while (cached_total_ > kCachedBytes) {  // the largest go first
          auto largest = std::prev(cached_.end());
          evicted.push_back(largest->second.back());
          largest->second.pop_back();
          cached_total_ -= largest->first;
          if (largest->second.empty()) cached_.erase(largest);
        }
      }
      for (void* p : evicted) ::operator delete(p, std::align_val_t(kTensorAlignment));
      return;
    }
    ::operator delete(ptr, std::align_val_t(kTensorAlignment));
  }
  std::string_view Name() const override { return "cpu"; }

 private:
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  static constexpr bool kCaching = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  static constexpr bool kCaching = false;
#else
  static constexpr bool kCaching = true;
#endif
#else
  static constexpr bool kCaching = true;
#endif
  static constexpr size_t kCachedMinBytes = size_t{256} << 10;
  static constexpr size_t kCachedBytes = size_t{256} << 20;
  std::mutex mu_;
  std::map<size_t, std::vector<void*>> cached_;  // by size
  size_t cached_total_ = 0;
};

}  // namespace

Allocator* CpuAllocator() {
  // Never destroyed: buffers of static tensors are given back after static destruction begins.
  static auto* allocator = new HeapAllocator;
  return allocator;
}

TensorBuffer::TensorBuffer(DType dtype, int64_t num_elements)
    : dtype_(dtype), num_elements_(num_elements) {
  bytes_ = static_cast<size_t>(num_elements) * ElementStorage(dtype);
  if (DTypeIsPod(dtype) && bytes_ <= kInlineBytes) {
    data_ = inline_;
  } else {
    allocator_ = CpuAllocator();
    data_ = allocator_->Allocate(bytes_);
    if (data_ == nullptr) {
      std::fprintf(stderr, "kiln: out of memory allocating %zu bytes for a tensor\n", bytes_);
      std::abort();
    }
  }
  ConstructElements(/*zero_pod=*/true);
}

TensorBuffer::TensorBuffer(Allocator* allocator, DType dtype, int64_t num_elements)
    : dtype_(dtype), num_elements_(num_elements), allocator_(allocator) {
  bytes_ = static_cast<size_t>(num_elements) * ElementStorage(dtype);
  data_ = allocator_->Allocate(bytes_);
  if (data_ != nullptr) ConstructElements(/*zero_pod=*/false);
}

TensorBuffer::TensorBuffer(DType dtype, int64_t num_elements, void* data,
                           std::shared_ptr<const void> owner, bool transient)
    : dtype_(dtype),
      transient_(transient),
      num_elements_(num_elements),
      bytes_(static_cast<size_t>(num_elements) * DTypeSize(dtype)),
      data_(data),
      owner_(std::move(owner)) {
  KILN_DCHECK(DTypeIsPod(dtype));
}

std::shared_ptr<TensorBuffer> TensorBuffer::ReadOnlyView(DType dtype, int64_t num_elements,
                                                         const void* data,
                                                         std::shared_ptr<const void> owner,
                                                         bool file_pages) {
  // The view type holds a mutable pointer for writable views; nothing writes through this one
  // (BufferIsExclusive is false for it), and a PROT_READ mapping would fault if anything did.
  auto buffer = std::make_shared<TensorBuffer>(dtype, num_elements, const_cast<void*>(data),
                                               std::move(owner), /*transient=*/false);
  buffer->read_only_ = true;
  buffer->file_pages_ = file_pages;
  return buffer;
}

void TensorBuffer::ReleasePages() const {
  if (file_pages_) ReleaseMappedPages(data_, bytes_);
}

void TensorBuffer::ConstructElements(bool zero_pod) {
  switch (dtype_) {
    case DType::kString:
      ConstructAll<std::string>(data_, num_elements_);
      break;
    case DType::kResource:
      ConstructAll<std::shared_ptr<ResourceBase>>(data_, num_elements_);
      break;
    case DType::kVariant:
      ConstructAll<std::shared_ptr<const VariantBase>>(data_, num_elements_);
      break;
    default:
      if (zero_pod && bytes_ > 0) std::memset(data_, 0, bytes_);
  }
}

TensorBuffer::~TensorBuffer() {
  if (data_ == nullptr) return;
  switch (dtype_) {
    case DType::kString:
      DestroyAll<std::string>(data_, num_elements_);
      break;
    case DType::kResource:
      DestroyAll<std::shared_ptr<ResourceBase>>(data_, num_elements_);
      break;
    case DType::kVariant:
      DestroyAll<std::shared_ptr<const VariantBase>>(data_, num_elements_);
      break;
    default:
      break;
  }
  if (allocator_ != nullptr) allocator_->Deallocate(data_, bytes_);
}

Tensor::Tensor(DType dtype, const Shape& shape)
    : dtype_(dtype),
      shape_(shape),
      buffer_(std::make_shared<TensorBuffer>(dtype, shape.num_elements())) {}

Tensor::Tensor(DType dtype, const Shape& shape, std::shared_ptr<TensorBuffer> buffer)
    : dtype_(dtype), shape_(shape), buffer_(std::move(buffer)) {
  KILN_DCHECK(buffer_ == nullptr ||
              static_cast<size_t>(shape.num_elements()) * DTypeSize(dtype) <= buffer_->bytes() ||
              !DTypeIsPod(dtype));
}

Result<Tensor> Tensor::Allocate(Allocator* allocator, DType dtype, const Shape& shape) {
  auto buffer = std::make_shared<TensorBuffer>(allocator, dtype, shape.num_elements());
  if (!buffer->ok())
    return ResourceExhausted("out of memory on ", allocator->Name(), ": ", buffer->bytes(),
                             " bytes for a ", DTypeShortName(dtype), " tensor of shape ",
                             shape.ToString());
  return Tensor(dtype, shape, std::move(buffer));
}

Tensor Tensor::Reshaped(const Shape& shape) const {
  KILN_DCHECK(shape.num_elements() == NumElements());
  Tensor t = *this;
  t.shape_ = shape;
  return t;
}

Tensor Tensor::BufferAs(DType dtype, const Shape& shape) const {
  KILN_DCHECK(DTypeIsPod(dtype) &&
              static_cast<size_t>(shape.num_elements()) * DTypeSize(dtype) == ByteSize());
  Tensor t = *this;
  t.dtype_ = dtype;
  t.shape_ = shape;
  return t;
}

Tensor Tensor::DeepCopy() const {
  if (!buffer_) return *this;
  Tensor t(dtype_, shape_);
  [[maybe_unused]] const Status st = CopyElements(*this, &t);
  KILN_DCHECK(st.ok());
  return t;
}

Status CopyElements(const Tensor& from, Tensor* to) {
  if (from.dtype() != to->dtype() || from.NumElements() != to->NumElements())
    return InvalidArgument("copy between tensors of different dtype or size: ", from.DebugString(),
                           " to ", to->DebugString());
  if (!from.HostAccessible() || !to->HostAccessible())
    return InvalidArgument("CopyElements: ", from.DebugString(), " to ", to->DebugString(),
                           " needs host memory on both sides");
  const int64_t n = from.NumElements();
  switch (from.dtype()) {
    case DType::kString:
      std::copy_n(from.data<std::string>(), n, to->data<std::string>());
      break;
    case DType::kResource:
      std::copy_n(from.data<std::shared_ptr<ResourceBase>>(), n,
                  to->data<std::shared_ptr<ResourceBase>>());
      break;
    case DType::kVariant:
      std::copy_n(from.data<std::shared_ptr<const VariantBase>>(), n,
                  to->data<std::shared_ptr<const VariantBase>>());
      break;
    default:
      // The elements' bytes, not the buffer's: a tensor may view the start of a larger buffer
      // (an output in a planned or caller-bound buffer sized for another dtype or shape).
      if (n > 0)
        std::memcpy(to->raw_data(), from.raw_data(),
                    static_cast<size_t>(n) * DTypeSize(from.dtype()));
  }
  return OkStatus();
}

namespace {

// Shortest of %.6g / %.9g that reads back exactly, as TF's StrCat(float) does.
std::string FormatFloat(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  if (std::strtof(buf, nullptr) != v) std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}
std::string FormatDouble(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  if (std::strtod(buf, nullptr) != v) std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}
float HalfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

std::string FormatElement(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat:
      return FormatFloat(t.data<float>()[i]);
    case DType::kDouble:
      return FormatDouble(t.data<double>()[i]);
    case DType::kHalf:
      return FormatFloat(HalfToFloat(t.data<Half>()[i].bits));
    case DType::kBFloat16: {
      uint32_t bits = static_cast<uint32_t>(t.data<BFloat16>()[i].bits) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return FormatFloat(f);
    }
    case DType::kFloat8E5M2:
      return FormatFloat(static_cast<float>(F8E5M2::Decode(t.data<Float8E5M2>()[i].bits)));
    case DType::kFloat8E4M3FN:
      return FormatFloat(static_cast<float>(F8E4M3FN::Decode(t.data<Float8E4M3FN>()[i].bits)));
    case DType::kInt32:
      return std::to_string(t.data<int32_t>()[i]);
    case DType::kInt64:
      return std::to_string(t.data<int64_t>()[i]);
    case DType::kInt16:
      return std::to_string(t.data<int16_t>()[i]);
    case DType::kInt8:
      return std::to_string(t.data<int8_t>()[i]);
    case DType::kUInt8:
      return std::to_string(t.data<uint8_t>()[i]);
    case DType::kUInt16:
      return std::to_string(t.data<uint16_t>()[i]);
    case DType::kUInt32:
      return std::to_string(t.data<uint32_t>()[i]);
    case DType::kUInt64:
      return std::to_string(t.data<uint64_t>()[i]);
    case DType::kBool:
      return t.data<bool>()[i] ? "True" : "False";
    case DType::kQInt8:
      return std::to_string(t.data<QInt8>()[i].value);
    case DType::kQUInt8:
      return std::to_string(t.data<QUInt8>()[i].value);
    case DType::kQInt16:
      return std::to_string(t.data<QInt16>()[i].value);
    case DType::kQUInt16:
      return std::to_string(t.data<QUInt16>()[i].value);
    case DType::kQInt32:
      return std::to_string(t.data<QInt32>()[i].value);
    case DType::kString:
      return "\"" + CEscape(t.data<std::string>()[i]) + "\"";
    case DType::kComplex64: {
      auto c = t.data<std::complex<float>>()[i];
      return "(" + FormatFloat(c.real()) + "," + FormatFloat(c.imag()) + ")";
    }
    case DType::kComplex128: {
      auto c = t.data<std::complex<double>>()[i];
      return "(" + FormatDouble(c.real()) + "," + FormatDouble(c.imag()) + ")";
    }
    case DType::kResource: {
      const auto& r = t.data<std::shared_ptr<ResourceBase>>()[i];
      return r ? "<" + r->DebugString() + ">" : "<null resource>";
    }
    case DType::kVariant: {
      const auto& v = t.data<std::shared_ptr<const VariantBase>>()[i];
      return v ? "<" + v->DebugString() + ">" : "<null variant>";
    }
    case DType::kInvalid:
      break;
  }
  return "?";
}

void PrintDimSpacing(int dim, int num_dims, std::string* out) {
  if (dim == num_dims - 1) {
    *out += ' ';
    return;
  }
  out->append(static_cast<size_t>(num_dims - dim - 1), '\n');
  out->append(static_cast<size_t>(dim) + 1, ' ');
}

// TensorFlow's PrintOneDimV2: `ends` elements at each end of every dimension.
void PrintOneDim(const Tensor& t, int dim, int64_t ends, int64_t index, std::string* out) {
  const int num_dims = t.rank();
  if (dim == num_dims) {
    *out += FormatElement(t, index);
    return;
  }
  *out += '[';
  const int64_t count = t.dim(dim);
  const int64_t start_of_end = std::max(ends, count - ends);
  int64_t per_iter = 1;
  for (int i = dim + 1; i < num_dims; ++i) per_iter *= t.dim(i);
  for (int64_t i = 0; i < ends && i < count; ++i) {
    if (i > 0) PrintDimSpacing(dim, num_dims, out);
    PrintOneDim(t, dim + 1, ends, index + per_iter * i, out);
  }
  if (count > 2 * ends) {
    PrintDimSpacing(dim, num_dims, out);
    *out += "...";
  }
  for (int64_t i = start_of_end; i < count; ++i) {
    PrintDimSpacing(dim, num_dims, out);
    PrintOneDim(t, dim + 1, ends, index + per_iter * i, out);
  }
  *out += ']';
}

// TensorFlow's PrintOneDim (print_v2 false): the first `limit` elements in row-major order,
// "..." where a row is cut short.
void PrintOneDimV1(const Tensor& t, int dim, int64_t limit, int64_t* index, std::string* out) {
  if (*index >= limit) return;
  const int64_t count = t.dim(dim);
  if (dim == t.rank() - 1) {
    for (int64_t i = 0; i < count; ++i) {
      if (*index >= limit) {
        if (dim != 0) *out += "...";
        return;
      }
      if (i > 0) *out += ' ';
      const int64_t at = (*index)++;
      if (t.dtype() == DType::kBool) {
        *out += t.data<bool>()[at] ? "1" : "0";
      } else if (t.dtype() == DType::kString) {
        *out += CEscape(t.data<std::string>()[at]);
      } else {
        *out += FormatElement(t, at);
      }
    }
    return;
  }
  for (int64_t i = 0; i < count; ++i) {
    const bool open = *index < limit;
    if (open) *out += '[';
    PrintOneDimV1(t, dim + 1, limit, index, out);
    if (open || *index < limit) *out += ']';
  }
}

}  // namespace

std::string SummarizeValueV1(const Tensor& t, int64_t max_entries) {
  const int64_t n = t.NumElements();
  const int64_t limit = max_entries < 0 ? n : std::min(max_entries, n);
  std::string out;
  int64_t index = 0;
  // A scalar prints as its one element (TF's shape.empty() branch).
  PrintOneDimV1(t.rank() == 0 ? t.Reshaped(Shape{1}) : t, 0, limit, &index, &out);
  if (n > limit) out += "...";
  return out;
}

std::string Tensor::SummarizeValue(int summarize) const {
  if (!buffer_) return "<uninitialized tensor>";
  const int64_t n = NumElements();
  if (n == 0) {
    std::string s;
    for (int i = 0; i < rank(); ++i) s += '[';
    for (int i = 0; i < rank(); ++i) s += ']';
    return s;
  }
  int64_t ends = summarize < 0 ? n : summarize;
  std::string out;
  PrintOneDim(*this, 0, ends, 0, &out);
  return out;
}

std::string Tensor::DebugString() const {
  if (dtype_ == DType::kInvalid) return "Tensor<uninitialized>";
  return "Tensor<" + DTypeShortName(dtype_) + " " + shape_.ToString() + ">";
}

bool TensorsEqual(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  switch (a.dtype()) {
    case DType::kString:
      return std::equal(a.data<std::string>(), a.data<std::string>() + a.NumElements(),
                        b.data<std::string>());
    case DType::kResource:
      return std::equal(a.data<std::shared_ptr<ResourceBase>>(),
                        a.data<std::shared_ptr<ResourceBase>>() + a.NumElements(),
                        b.data<std::shared_ptr<ResourceBase>>());
    case DType::kVariant:
      return std::equal(a.data<std::shared_ptr<const VariantBase>>(),
                        a.data<std::shared_ptr<const VariantBase>>() + a.NumElements(),
                        b.data<std::shared_ptr<const VariantBase>>());
    default: {
      // The elements' bytes (a buffer may be larger than the tensor viewing it).
      const size_t bytes = static_cast<size_t>(a.NumElements()) * DTypeSize(a.dtype());
      return bytes == 0 || std::memcmp(a.raw_data(), b.raw_data(), bytes) == 0;
    }
  }
}

}  // namespace kiln
