// Output and scratch memory for kernels (KernelContext, ScratchArena).
#include "kiln/exec/op_table.h"

namespace kiln::exec {

Allocator* KernelContext::OutputAllocator(int i, DType dtype) const {
  if (frame_.host_allocator == nullptr) return frame_.allocator;
  const bool host = !DTypeIsPod(dtype) || (i < 32 && (io_.host_outputs & (1u << i)) != 0);
  return host ? frame_.host_allocator : frame_.allocator;
}

Result<Tensor*> KernelContext::AllocateOutput(int i, DType dtype, const Shape& shape) const {
  Tensor* out = &frame_.slots[io_.out[i]];
  if (frame_.planned != nullptr) {
    const std::shared_ptr<TensorBuffer>& planned = frame_.planned[io_.out[i]];
    if (planned != nullptr && DTypeIsPod(dtype) &&
        static_cast<size_t>(shape.num_elements()) * DTypeSize(dtype) <= planned->bytes()) {
      *out = Tensor(dtype, shape, planned);
      return out;
    }
  }
  Result<Tensor> t = Tensor::Allocate(OutputAllocator(i, dtype), dtype, shape);
  if (!t.ok()) return t.status().WithContext(internal::StrCat("node '", io_.node_name, "'"));
  *out = std::move(t).value();
  return out;
}

Result<Tensor*> KernelContext::ForwardInputOrAllocateOutput(int j, int i,
                                                            const Shape& shape) const {
  const Tensor& in = input(j);
  const DType dtype = io_.out_dtypes[i];
  if (j < 32 && (io_.dying_inputs & (1u << j)) != 0 && in.BufferIsExclusive() &&
      DTypeIsPod(dtype) && DTypeIsPod(in.dtype()) &&
      static_cast<size_t>(shape.num_elements()) * DTypeSize(dtype) == in.ByteSize() &&
      in.HostAccessible() == (frame_.allocator->HostAccessible()) &&
      OutputAllocator(i, dtype) == frame_.allocator) {
    // The input's slot still holds the buffer; sharing it is safe because nothing reads that
    // slot after this step.
    Tensor* out = &frame_.slots[io_.out[i]];
    *out = in.BufferAs(dtype, shape);
    return out;
  }
  return AllocateOutput(i, dtype, shape);
}

ScratchArena::~ScratchArena() {
  for (const Block& b : blocks_) allocator_->Deallocate(b.data, b.bytes);
}

Result<void*> ScratchArena::Allocate(size_t bytes) {
  bytes = AlignedBytes(bytes == 0 ? 1 : bytes);
  if (blocks_.empty() || blocks_.back().bytes - used_ < bytes) {
    size_t grow = blocks_.empty() ? 0 : blocks_.back().bytes * 2;
    Block b{nullptr, std::max(bytes, grow)};
    b.data = allocator_->Allocate(b.bytes);
    if (b.data == nullptr)
      return ResourceExhausted("out of memory on ", allocator_->Name(), ": ", b.bytes,
                               " bytes of kernel scratch");
    blocks_.push_back(b);
    used_ = 0;
  }
  void* p = static_cast<char*>(blocks_.back().data) + used_;
  used_ += bytes;
  return p;
}

void ScratchArena::Reset() {
  used_ = 0;
  if (blocks_.size() <= 1) return;
  // Grown during this step: replace the blocks by one that fits them all next time.
  size_t total = 0;
  for (const Block& b : blocks_) {
    total += b.bytes;
    allocator_->Deallocate(b.data, b.bytes);
  }
  blocks_.clear();
  Block b{allocator_->Allocate(total), total};
  if (b.data != nullptr) blocks_.push_back(b);
}

}  // namespace kiln::exec
