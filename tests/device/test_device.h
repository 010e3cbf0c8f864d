// The test device: a second, CPU-backed device that exists only in the tests, so placement,
// host-memory arguments and copy steps are exercised before any GPU is there. Its memory comes
// from its own allocator, which fills new and freed blocks with 0xFF (NaN for floats) and
// tracks every live block; its kernels are a subset of the CPU's that first check that every
// input lives where the kernel reads it (device memory, or host memory for host arguments),
// so a missing or misplaced copy fails the run instead of passing by accident.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kiln/exec/device.h"

namespace kiln::testing {

class TestDevice;

// The process's test device ("test:0"), registered with exec::RegisterDevice on first use.
TestDevice* GetTestDevice();

class TestDevice final : public exec::Device {
 public:
  TestDevice();
  ~TestDevice() override;
  Allocator* allocator() override;
  std::span<const exec::KernelEntry> kernels() const override;
  Status CopyFromHost(const Tensor& host, Tensor* to) override;
  Status CopyToHost(const Tensor& from, Tensor* host) override;
  // Says it can record while a test sets `claims_capture` (so the executor plans device
  // graphs for it), but every recording fails: its kernels run on the host at once.
  bool CanCapture() const override { return claims_capture; }
  bool claims_capture = false;

  // Whether `p` points into a live block of this device's memory.
  bool Owns(const void* p) const;
  int64_t live_bytes() const;
  int64_t copies_to_device() const { return to_device_; }
  int64_t copies_to_host() const { return to_host_; }
  // Kernels of this device that ran (every call of every op).
  int64_t kernel_calls() const { return kernel_calls_; }
  void CountKernelCall() { ++kernel_calls_; }

 private:
  class PoisonAllocator;
  PoisonAllocator* allocator_;
  std::int64_t to_device_ = 0, to_host_ = 0, kernel_calls_ = 0;
};

}  // namespace kiln::testing
