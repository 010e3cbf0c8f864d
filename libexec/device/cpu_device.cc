// The CPU device and device lookup by name.
#include <cstring>

#include "kiln/exec/device.h"

namespace kiln::exec {
namespace {

class CpuDeviceImpl final : public Device {
 public:
  CpuDeviceImpl() : Device(DeviceType::kCpu, 0) {}
  Allocator* allocator() override { return CpuAllocator(); }
  Status CopyFromHost(const Tensor& host, Tensor* device_tensor) override {
    return Copy(host, device_tensor);
  }
  Status CopyToHost(const Tensor& device_tensor, Tensor* host) override {
    return Copy(device_tensor, host);
  }

 private:
  static Status Copy(const Tensor& from, Tensor* to) {
    if (from.dtype() != to->dtype() || from.NumElements() != to->NumElements())
      return InvalidArgument("copy between tensors of different dtype or size: ",
                             from.DebugString(), " to ", to->DebugString());
    *to = from.DeepCopy().Reshaped(to->shape());
    return OkStatus();
  }
};

}  // namespace

std::string_view DeviceTypeName(DeviceType type) {
  switch (type) {
#define KILN_X(e, name) \
  case DeviceType::e:   \
    return name;
    KILN_DEVICE_TYPES(KILN_X)
#undef KILN_X
  }
  return "unknown";
}

std::string Device::name() const {
  if (type_ == DeviceType::kCpu) return "cpu";
  return std::string(DeviceTypeName(type_)) + ":" + std::to_string(ordinal_);
}

Device* CpuDevice() {
  static CpuDeviceImpl device;
  return &device;
}

Result<Device*> FindDevice(std::string_view name) {
  if (name == "cpu" || name == "cpu:0") return CpuDevice();
  if (name == "gpu" || name.substr(0, 4) == "gpu:")
    return Unavailable("device '", name,
                       "' was asked for, but this build of kiln has no GPU support; "
                       "available devices: cpu");
  return InvalidArgument("unknown device '", name, "'; expected 'cpu', 'gpu' or 'gpu:N'");
}

}  // namespace kiln::exec
