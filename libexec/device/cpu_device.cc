// The CPU device: the host. Its memory is the process's heap and its kernels are the CPU table.
#include "kiln/exec/device.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec {
namespace {

class CpuDeviceImpl final : public Device {
 public:
  CpuDeviceImpl() : Device(DeviceType::kCpu, 0) {}
  Allocator* allocator() override { return CpuAllocator(); }
  std::span<const KernelEntry> kernels() const override { return KernelTable(DeviceType::kCpu); }
  Status CopyFromHost(const Tensor& host, Tensor* to) override { return CopyElements(host, to); }
  Status CopyToHost(const Tensor& from, Tensor* host) override { return CopyElements(from, host); }
};

}  // namespace

Device* HostDevice() {
  static CpuDeviceImpl device;
  return &device;
}

}  // namespace kiln::exec
