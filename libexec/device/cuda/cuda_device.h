// The CUDA device: one per GPU the process sees. Its memory is a stream-ordered pool
// (cudaMallocAsync on the device's stream, kept by the pool between calls, so a steady call
// asks the driver for nothing); every kernel, copy and free of the device is ordered on that
// one stream, so memory the executor releases between steps is never reused early. Copies to
// the host wait for the stream. cuBLASLt is loaded when first needed (cublaslt_api.h), so a
// kiln program runs, without a GPU, on a machine that has no CUDA libraries at all.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/exec/device.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::cuda {

// OK, or an error naming `what` and CUDA's own words for `err`.
Status Check(cudaError_t err, std::string_view what);

class CudaDevice final : public Device {
 public:
  // The device `ordinal`, its stream and its memory pool; an error when CUDA cannot use it.
  static Result<std::unique_ptr<CudaDevice>> Create(int ordinal);
  ~CudaDevice() override;

  Allocator* allocator() override;
  std::span<const KernelEntry> kernels() const override;
  Status CopyFromHost(const Tensor& host, Tensor* to) override;
  Status CopyToHost(const Tensor& from, Tensor* host) override;
  // CUDA graphs: the calling thread's work goes to a stream of its own in capture mode while it
  // records (stream() names that stream on that thread alone), so other callers' work on the
  // device's stream is never recorded into it.
  bool CanCapture() const override { return true; }
  Status BeginCapture() override;
  Result<std::unique_ptr<DeviceGraph>> EndCapture() override;
  Allocator* staging_allocator() override;

  // Makes this device current on the calling thread (each kernel does, first).
  Status Activate() const;
  // Where the calling thread queues this device's work: its stream, or the thread's capture
  // stream while it records.
  cudaStream_t stream() const;
  const cudaDeviceProp& properties() const { return props_; }
  // The device's cuBLASLt handle (created on first use); an error when libcublasLt cannot be
  // loaded, which keeps matrix products on the CPU (see CudaKernelTable's `supports`).
  Result<void*> BlasLtHandle();
  // The device's cuDNN handle, bound to its stream (created on first use); an error when
  // libcudnn cannot be loaded, which keeps convolutions on the CPU.
  Result<void*> DnnHandle();
  // cuDNN handles are not to be used by two threads at once: calls on this device's hold it.
  std::mutex& dnn_mutex() { return dnn_call_mu_; }
  // Waits for everything queued on the device's stream.
  Status Synchronize() const override;

 private:
  CudaDevice(int ordinal, cudaStream_t stream, const cudaDeviceProp& props);
  class PoolAllocator;
  class PinnedAllocator;
  bool Capturing() const;
  cudaStream_t stream_;
  cudaDeviceProp props_;
  std::unique_ptr<PoolAllocator> allocator_;
  std::unique_ptr<PinnedAllocator> pinned_;
  std::mutex handles_mu_;
  void* blaslt_ = nullptr;  // cublasLtHandle_t
  void* dnn_ = nullptr;     // cudnnHandle_t
  std::mutex dnn_call_mu_;
};

// The CUDA device behind a kernel context (the executor places CUDA kernels on it alone).
inline CudaDevice& DeviceOf(const KernelContext& ctx) {
  return *static_cast<CudaDevice*>(ctx.device());
}

// The GPUs of this process, found once: empty when the build has no CUDA, the machine no
// driver or no GPU. ListDevices lists them after the host.
std::span<Device* const> DetectedDevices();

// Why DetectedDevices is empty ("no CUDA driver: ..."), for error messages; empty when a GPU
// was found.
std::string_view DetectionNote();

// cudaProfilerStart or cudaProfilerStop (device.h's MarkProfiledSpan).
void MarkProfiledSpan(bool begin);

}  // namespace kiln::exec::cuda
