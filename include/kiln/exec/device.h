// Devices: where kernels run and tensors live. Each device has an allocator and one kernel
// table (op_table.h looks kernels up by (device type, op)). The CPU device always exists; a
// CUDA device exists when the build has CUDA and the machine has a GPU.
#pragma once

#include <string>
#include <string_view>

#include "kiln/core/allocator.h"
#include "kiln/core/status.h"
#include "kiln/core/tensor.h"

namespace kiln::exec {

// The one list of device types: X(enumerator, name).
#define KILN_DEVICE_TYPES(X) \
  X(kCpu, "cpu")             \
  X(kGpu, "gpu")

enum class DeviceType {
#define KILN_X(e, name) e,
  KILN_DEVICE_TYPES(KILN_X)
#undef KILN_X
};
inline constexpr int kNumDeviceTypes = 0
#define KILN_X(e, name) +1
    KILN_DEVICE_TYPES(KILN_X)
#undef KILN_X
    ;

std::string_view DeviceTypeName(DeviceType type);

class Device {
 public:
  Device(DeviceType type, int ordinal) : type_(type), ordinal_(ordinal) {}
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  DeviceType type() const { return type_; }
  int ordinal() const { return ordinal_; }
  // "cpu", "gpu:0".
  std::string name() const;
  virtual Allocator* allocator() = 0;

  // Copies between host tensors and tensors in this device's memory (same dtype and size).
  virtual Status CopyFromHost(const Tensor& host, Tensor* device_tensor) = 0;
  virtual Status CopyToHost(const Tensor& device_tensor, Tensor* host) = 0;

 private:
  DeviceType type_;
  int ordinal_;
};

// The CPU device (process-wide).
Device* CpuDevice();

// "cpu", "gpu" (= "gpu:0") or "gpu:N". An unknown name, or a GPU on a build or machine
// without one, is an error that says which devices exist.
Result<Device*> FindDevice(std::string_view name);

}  // namespace kiln::exec
