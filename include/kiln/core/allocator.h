// Where tensor memory comes from. Every device has one allocator; tensors remember the
// allocator that made their buffer and give the memory back to it. The CPU allocator is
// aligned heap memory; a device allocator (CUDA) hands out memory the host cannot touch.
#pragma once

#include <cstddef>
#include <string_view>

namespace kiln {

// Alignment of every tensor buffer: a cache line, and what AVX-512 loads like.
inline constexpr size_t kTensorAlignment = 64;

class Allocator {
 public:
  virtual ~Allocator() = default;
  // `bytes` rounded up to kTensorAlignment; nullptr when the memory cannot be had.
  virtual void* Allocate(size_t bytes) = 0;
  virtual void Deallocate(void* ptr, size_t bytes) = 0;
  // "cpu", "gpu:0"; for error messages.
  virtual std::string_view Name() const = 0;
  // Whether the host can read and write the memory directly.
  virtual bool HostAccessible() const { return true; }
};

// The process-wide host allocator (thread-safe).
Allocator* CpuAllocator();

// Bytes rounded up to the tensor alignment.
inline constexpr size_t AlignedBytes(size_t bytes) {
  return (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
}

}  // namespace kiln
