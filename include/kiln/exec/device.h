// Devices: where kernels run and tensors live. A device has an allocator, copies to and from
// host memory, and its own kernel table (op_table.h's KernelEntry rows). The executor places
// every node on the first device of a load's device list whose table has a kernel for it and
// inserts copy steps where a tensor crosses devices. The CPU device is the host and always
// exists; a CUDA device exists when the build has CUDA and the machine has a GPU; other
// devices (the tests' poisoning device) are registered at run time.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/allocator.h"
#include "kiln/core/status.h"
#include "kiln/core/tensor.h"

namespace kiln::exec {

// The one list of device types: X(enumerator, name).
#define KILN_DEVICE_TYPES(X) \
  X(kCpu, "cpu")             \
  X(kGpu, "gpu")             \
  X(kTest, "test") /* a CPU-backed device with its own memory, made by tests */

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

struct KernelEntry;

// Work recorded on a device (a CUDA graph): Replay queues all of it again, on the memory it was
// recorded with, and waits until it is done.
class DeviceGraph {
 public:
  virtual ~DeviceGraph() = default;
  virtual Status Replay() = 0;
};

class Device {
 public:
  Device(DeviceType type, int ordinal) : type_(type), ordinal_(ordinal) {}
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  DeviceType type() const { return type_; }
  int ordinal() const { return ordinal_; }
  // "cpu", "gpu:0", "test:0".
  std::string name() const;
  virtual Allocator* allocator() = 0;
  // This device's kernels, sorted by op (std::sort by KernelEntry::op).
  virtual std::span<const KernelEntry> kernels() const = 0;
  // The kernel for `op`, or nullptr.
  const KernelEntry* FindKernel(std::string_view op) const;

  // Copies between a host tensor and a tensor in this device's memory. `to` is already
  // allocated with the same dtype and element count; only its elements are written.
  virtual Status CopyFromHost(const Tensor& host, Tensor* to) = 0;
  virtual Status CopyToHost(const Tensor& from, Tensor* host) = 0;
  // Waits until the work queued on this device is done: a result left in its memory
  // (PrepareOptions::results_on_device) is then ready for readers outside kiln. Copies to the
  // host wait by themselves.
  virtual Status Synchronize() const { return OkStatus(); }

  // Recording (executor/device_graph.cc replays fixed-shape calls this way). Between
  // BeginCapture and EndCapture, what the calling thread queues on this device is recorded,
  // not run (copies to the host do not wait); other threads' work runs as usual. Devices that
  // cannot record say false and return errors.
  virtual bool CanCapture() const { return false; }
  virtual Status BeginCapture();
  virtual Result<std::unique_ptr<DeviceGraph>> EndCapture();
  // Host memory this device copies to and from directly (page-locked), for the buffers a
  // recording reads and writes; null where host memory is all alike.
  virtual Allocator* staging_allocator() { return nullptr; }

 private:
  DeviceType type_;
  int ordinal_;
};

// The host: the CPU device (process-wide). Arguments, results, constants and host-memory
// kernel arguments live in its memory.
Device* HostDevice();
inline Device* CpuDevice() { return HostDevice(); }

// Makes a device findable by name (FindDevice, ListDevices) for the rest of the process: how
// tests add their device and how a device library outside libexec plugs in. The device must
// outlive every model placed on it. An error when its name is taken.
Status RegisterDevice(Device* device);

// Every device of this process: the host first, then registered and detected ones.
std::vector<Device*> ListDevices();

// "cpu", "gpu" (= "gpu:0"), "gpu:N", or a registered device's name. An unknown name, or a GPU
// on a build or machine without one, is an error that says which devices exist.
Result<Device*> FindDevice(std::string_view name);

// A load's device list from names, in priority order; empty means the host alone. The host
// is appended when the list lacks it, so ops no other device has still run.
Result<std::vector<Device*>> ResolveDevices(std::span<const std::string> names);

// The device of this process whose memory holds `t` (whose allocator made its buffer), or the
// host. Null for a tensor in memory the host cannot read that no device of this process made.
Device* DeviceHolding(const Tensor& t);

// Copies `t` into `to`'s memory (a new tensor from its allocator), through the host when
// neither side is it: how the executor's copy steps and the single-op runner move tensors.
Result<Tensor> CopyTensor(const Tensor& t, Device* from, Device* to);

// Opens (begin) or closes the span a device profiler records when told to wait for the program
// (Nsight Compute's --profile-from-start off): how `bench` shows the profiler its timed calls
// alone, without the first call's algorithm search. Does nothing where no GPU was found.
void MarkProfiledSpan(bool begin);

}  // namespace kiln::exec
