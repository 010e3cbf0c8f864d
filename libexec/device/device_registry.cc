// Devices by name, device lists, and copies between devices.
#include <algorithm>
#include <mutex>

#include "kiln/exec/device.h"

#ifdef KILN_HAVE_CUDA
#include "device/cuda/cuda_device.h"
#endif

namespace kiln::exec {
namespace {

struct Registry {
  std::mutex mu;
  std::vector<Device*> devices;  // registered ones, in order
};

Registry& GetRegistry() {
  static Registry registry;
  return registry;
}

std::string Names(const std::vector<Device*>& devices) {
  std::string s;
  for (const Device* d : devices) s += (s.empty() ? "" : ", ") + d->name();
  return s;
}

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

Status Device::BeginCapture() {
  return Unimplemented("device ", name(), " cannot record its work as a graph");
}

Result<std::unique_ptr<DeviceGraph>> Device::EndCapture() {
  return Unimplemented("device ", name(), " cannot record its work as a graph");
}

std::string Device::name() const {
  if (type_ == DeviceType::kCpu) return "cpu";
  return std::string(DeviceTypeName(type_)) + ":" + std::to_string(ordinal_);
}

Status RegisterDevice(Device* device) {
  if (device == nullptr) return InvalidArgument("RegisterDevice: null device");
  Registry& r = GetRegistry();
  std::lock_guard lock(r.mu);
  const std::string name = device->name();
  if (name == HostDevice()->name() ||
      std::any_of(r.devices.begin(), r.devices.end(),
                  [&](const Device* d) { return d->name() == name; }))
    return AlreadyExists("a device named '", name, "' is already registered");
  r.devices.push_back(device);
  return OkStatus();
}

std::vector<Device*> ListDevices() {
  Registry& r = GetRegistry();
  std::lock_guard lock(r.mu);
  std::vector<Device*> all = {HostDevice()};
#ifdef KILN_HAVE_CUDA
  const std::span<Device* const> gpus = cuda::DetectedDevices();
  all.insert(all.end(), gpus.begin(), gpus.end());
#endif
  all.insert(all.end(), r.devices.begin(), r.devices.end());
  return all;
}

Result<Device*> FindDevice(std::string_view name) {
  const std::vector<Device*> all = ListDevices();
  // "gpu" means "gpu:0", as "test" means "test:0".
  std::string full(name);
  if (full.find(':') == std::string::npos && full != "cpu") full += ":0";
  if (full == "cpu:0") full = "cpu";
  for (Device* d : all)
    if (d->name() == full) return d;
  if (name == "gpu" || name.substr(0, 4) == "gpu:") {
#ifdef KILN_HAVE_CUDA
    const std::string why(cuda::DetectionNote());
    const std::string reason = why.empty() ? "there is no GPU of that number" : why;
#else
    const std::string reason = "this build of kiln has no CUDA support (it was built without nvcc)";
#endif
    return Unavailable("device '", name, "' was asked for, but ", reason,
                       "; available devices: ", Names(all));
  }
  return InvalidArgument("unknown device '", name, "'; available devices: ", Names(all));
}

Result<std::vector<Device*>> ResolveDevices(std::span<const std::string> names) {
  std::vector<Device*> devices;
  for (const std::string& n : names) {
    KILN_ASSIGN_OR_RETURN(Device * d, FindDevice(n));
    if (std::find(devices.begin(), devices.end(), d) == devices.end()) devices.push_back(d);
  }
  if (std::find(devices.begin(), devices.end(), HostDevice()) == devices.end())
    devices.push_back(HostDevice());
  return devices;
}

Device* DeviceHolding(const Tensor& t) {
  if (const Allocator* a = t.BufferAllocator(); a != nullptr && a != HostDevice()->allocator())
    for (Device* d : ListDevices())
      if (d->allocator() == a) return d;
  return t.HostAccessible() ? HostDevice() : nullptr;
}

Result<Tensor> CopyTensor(const Tensor& t, Device* from, Device* to) {
  if (from == to) return t;
  KILN_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(to->allocator(), t.dtype(), t.shape()));
  Device* host = HostDevice();
  if (from == host) {
    KILN_RETURN_IF_ERROR(to->CopyFromHost(t, &out));
  } else if (to == host) {
    KILN_RETURN_IF_ERROR(from->CopyToHost(t, &out));
  } else {
    KILN_ASSIGN_OR_RETURN(Tensor staged, Tensor::Allocate(host->allocator(), t.dtype(), t.shape()));
    KILN_RETURN_IF_ERROR(from->CopyToHost(t, &staged));
    KILN_RETURN_IF_ERROR(to->CopyFromHost(staged, &out));
  }
  return out;
}

void MarkProfiledSpan(bool begin) {
#ifdef KILN_HAVE_CUDA
  if (!cuda::DetectedDevices().empty()) cuda::MarkProfiledSpan(begin);
#else
  (void)begin;
#endif
}

}  // namespace kiln::exec
