// The CUDA device (cuda_device.h): detection, the stream-ordered memory pool, copies.
#include "device/cuda/cuda_device.h"

#include <cuda_profiler_api.h>
#include <dlfcn.h>

#include <cstdint>
#include <limits>

#include "device/cuda/cublaslt_api.h"
#include "device/cuda/cudnn_api.h"
#include "kernels/cuda/cuda_kernels.h"

namespace kiln::exec::cuda {

Status Check(cudaError_t err, std::string_view what) {
  if (err == cudaSuccess) return OkStatus();
  const std::string text =
      internal::StrCat(what, ": ", cudaGetErrorName(err), " (", cudaGetErrorString(err), ")");
  if (err == cudaErrorMemoryAllocation) return ResourceExhausted(text);
  return Internal(text);
}

namespace {

// The recording a thread has under way: on which device, on which stream.
struct ThreadCapture {
  const CudaDevice* device = nullptr;
  cudaStream_t stream = nullptr;
};
thread_local ThreadCapture t_capture;

}  // namespace

// Memory from the device's default pool, ordered on the calling thread's stream of the device
// (stream()). The pool keeps what it was given (release threshold: unlimited), so after the
// first calls nothing reaches the driver; while a thread records, its allocations and frees
// become the graph's own.
class CudaDevice::PoolAllocator final : public Allocator {
 public:
  explicit PoolAllocator(const CudaDevice* device)
      : device_(device), name_("gpu:" + std::to_string(device->ordinal())) {}
  void* Allocate(size_t bytes) override {
    void* p = nullptr;
    if (cudaSetDevice(device_->ordinal()) != cudaSuccess) return nullptr;
    if (cudaMallocAsync(&p, AlignedBytes(bytes == 0 ? 1 : bytes), device_->stream()) !=
        cudaSuccess) {
      (void)cudaGetLastError();  // an out-of-memory is the caller's error, not the next call's
      return nullptr;
    }
    return p;
  }
  void Deallocate(void* ptr, size_t /*bytes*/) override {
    if (ptr == nullptr) return;
    (void)cudaSetDevice(device_->ordinal());
    (void)cudaFreeAsync(ptr, device_->stream());
  }
  std::string_view Name() const override { return name_; }
  bool HostAccessible() const override { return false; }

 private:
  const CudaDevice* device_;
  std::string name_;
};

// Page-locked host memory: copies to and from it need no staging, so a recorded call can read
// its arguments and write its results there.
class CudaDevice::PinnedAllocator final : public Allocator {
 public:
  explicit PinnedAllocator(int ordinal) : name_("gpu:" + std::to_string(ordinal) + " pinned") {}
  void* Allocate(size_t bytes) override {
    void* p = nullptr;
    if (cudaHostAlloc(&p, AlignedBytes(bytes == 0 ? 1 : bytes), cudaHostAllocPortable) !=
        cudaSuccess) {
      (void)cudaGetLastError();
      return nullptr;
    }
    return p;
  }
  void Deallocate(void* ptr, size_t /*bytes*/) override {
    if (ptr != nullptr) (void)cudaFreeHost(ptr);
  }
  std::string_view Name() const override { return name_; }
  bool HostAccessible() const override { return true; }

 private:
  std::string name_;
};

CudaDevice::CudaDevice(int ordinal, cudaStream_t stream, const cudaDeviceProp& props)
    : Device(DeviceType::kGpu, ordinal),
      stream_(stream),
      props_(props),
      allocator_(std::make_unique<PoolAllocator>(this)),
      pinned_(std::make_unique<PinnedAllocator>(ordinal)) {}

bool CudaDevice::Capturing() const { return t_capture.device == this; }

cudaStream_t CudaDevice::stream() const { return Capturing() ? t_capture.stream : stream_; }

Allocator* CudaDevice::staging_allocator() { return pinned_.get(); }

namespace {

class CudaGraph final : public DeviceGraph {
 public:
  CudaGraph(const CudaDevice* device, cudaGraphExec_t exec) : device_(device), exec_(exec) {}
  ~CudaGraph() override { (void)cudaGraphExecDestroy(exec_); }
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;
  Status Replay() override {
    KILN_RETURN_IF_ERROR(device_->Activate());
    KILN_RETURN_IF_ERROR(
        Check(cudaGraphLaunch(exec_, device_->stream()), device_->name() + ": cudaGraphLaunch"));
    return device_->Synchronize();
  }

 private:
  const CudaDevice* device_;
  cudaGraphExec_t exec_;
};

}  // namespace

Status CudaDevice::BeginCapture() {
  if (t_capture.device != nullptr)
    return FailedPrecondition(name(), ": this thread is recording already");
  KILN_RETURN_IF_ERROR(Activate());
  // What this thread queued before (the arena, the weights) is done before the recording
  // starts: the graph then depends on nothing queued outside it.
  KILN_RETURN_IF_ERROR(Synchronize());
  cudaStream_t s = nullptr;
  KILN_RETURN_IF_ERROR(Check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
                             name() + ": cudaStreamCreateWithFlags"));
  const cudaError_t err = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  if (err != cudaSuccess) {
    (void)cudaStreamDestroy(s);
    return Check(err, name() + ": cudaStreamBeginCapture");
  }
  t_capture = {this, s};
  return OkStatus();
}

Result<std::unique_ptr<DeviceGraph>> CudaDevice::EndCapture() {
  if (t_capture.device != this) return FailedPrecondition(name(), ": this thread is not recording");
  cudaStream_t s = t_capture.stream;
  t_capture = {};
  cudaGraph_t graph = nullptr;
  cudaError_t err = cudaStreamEndCapture(s, &graph);
  cudaGraphExec_t exec = nullptr;
  // AutoFreeOnLaunch: memory the recorded work allocated and did not free goes back at the
  // next launch, so a graph can always be launched again.
  if (err == cudaSuccess)
    err = cudaGraphInstantiateWithFlags(&exec, graph, cudaGraphInstantiateFlagAutoFreeOnLaunch);
  if (graph != nullptr) (void)cudaGraphDestroy(graph);
  (void)cudaStreamDestroy(s);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return Check(err, name() + ": recording a CUDA graph");
  }
  return std::unique_ptr<DeviceGraph>(new CudaGraph(this, exec));
}

CudaDevice::~CudaDevice() = default;  // lives for the process: tensors may outlive it

Result<std::unique_ptr<CudaDevice>> CudaDevice::Create(int ordinal) {
  const std::string where = "gpu:" + std::to_string(ordinal);
  KILN_RETURN_IF_ERROR(Check(cudaSetDevice(ordinal), where + ": cudaSetDevice"));
  cudaDeviceProp props{};
  KILN_RETURN_IF_ERROR(
      Check(cudaGetDeviceProperties(&props, ordinal), where + ": cudaGetDeviceProperties"));
  cudaMemPool_t pool = nullptr;
  KILN_RETURN_IF_ERROR(
      Check(cudaDeviceGetDefaultMemPool(&pool, ordinal), where + ": cudaDeviceGetDefaultMemPool"));
  uint64_t keep = std::numeric_limits<uint64_t>::max();
  KILN_RETURN_IF_ERROR(Check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep),
                             where + ": cudaMemPoolSetAttribute"));
  cudaStream_t stream = nullptr;
  KILN_RETURN_IF_ERROR(Check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
                             where + ": cudaStreamCreateWithFlags"));
  return std::unique_ptr<CudaDevice>(new CudaDevice(ordinal, stream, props));
}

Allocator* CudaDevice::allocator() { return allocator_.get(); }

std::span<const KernelEntry> CudaDevice::kernels() const { return CudaKernelTable(); }

Status CudaDevice::Activate() const { return Check(cudaSetDevice(ordinal()), "cudaSetDevice"); }

Status CudaDevice::Synchronize() const {
  KILN_RETURN_IF_ERROR(Activate());
  const cudaError_t err = cudaStreamSynchronize(stream_);
  if (err == cudaSuccess) return OkStatus();
  return Check(err, name() + ": cudaStreamSynchronize");
}

Status CudaDevice::CopyFromHost(const Tensor& host, Tensor* to) {
  if (host.dtype() != to->dtype() || host.NumElements() != to->NumElements() ||
      !DTypeIsPod(host.dtype()))
    return InvalidArgument("copy to ", name(), ": ", host.DebugString(), " into ",
                           to->DebugString());
  if (host.ByteSize() == 0) return OkStatus();
  KILN_RETURN_IF_ERROR(Activate());
  // From pageable memory the runtime stages the bytes before returning, so `host` may go.
  const cudaError_t err = cudaMemcpyAsync(to->raw_data(), host.raw_data(), host.ByteSize(),
                                          cudaMemcpyHostToDevice, stream());
  if (err == cudaSuccess) return OkStatus();
  return Check(err, "copy of " + host.DebugString() + " to " + name());
}

Status CudaDevice::CopyToHost(const Tensor& from, Tensor* host) {
  if (from.dtype() != host->dtype() || from.NumElements() != host->NumElements() ||
      !DTypeIsPod(from.dtype()))
    return InvalidArgument("copy from ", name(), ": ", from.DebugString(), " into ",
                           host->DebugString());
  if (from.ByteSize() == 0) return OkStatus();
  KILN_RETURN_IF_ERROR(Activate());
  cudaError_t err = cudaMemcpyAsync(host->raw_data(), from.raw_data(), from.ByteSize(),
                                    cudaMemcpyDeviceToHost, stream());
  if (err != cudaSuccess) return Check(err, "copy of " + from.DebugString() + " from " + name());
  if (Capturing()) return OkStatus();  // recorded: the replay waits for it
  // The error of any kernel queued before the copy surfaces here too.
  err = cudaStreamSynchronize(stream_);
  if (err == cudaSuccess) return OkStatus();
  return Check(err, name() + ": running the queued kernels");
}

Result<void*> CudaDevice::BlasLtHandle() {
  std::lock_guard lock(handles_mu_);
  if (blaslt_ != nullptr) return blaslt_;
  KILN_ASSIGN_OR_RETURN(const BlasLtApi* api, BlasLt());
  KILN_RETURN_IF_ERROR(Activate());
  cublasLtHandle_t handle = nullptr;
  KILN_RETURN_IF_ERROR(CheckBlas(api->cublasLtCreate(&handle), "cublasLtCreate"));
  blaslt_ = handle;
  return blaslt_;
}

Result<void*> CudaDevice::DnnHandle() {
  std::lock_guard lock(handles_mu_);
  if (dnn_ != nullptr) return dnn_;
  KILN_ASSIGN_OR_RETURN(const DnnApi* api, Dnn());
  KILN_RETURN_IF_ERROR(Activate());
  cudnnHandle_t handle = nullptr;
  KILN_RETURN_IF_ERROR(CheckDnn(api->cudnnCreate(&handle), "cudnnCreate"));
  KILN_RETURN_IF_ERROR(CheckDnn(api->cudnnSetStream(handle, stream_), "cudnnSetStream"));
  dnn_ = handle;
  return dnn_;
}

namespace {

struct Detected {
  std::vector<std::unique_ptr<CudaDevice>> owned;
  std::vector<Device*> devices;
  std::string note;
};

Detected Detect() {
  Detected d;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    // Without a driver CUDA says its version is "insufficient": say what is missing instead.
    void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (driver == nullptr) driver = dlopen("libcuda.so.1", RTLD_LAZY);
    if (driver == nullptr) {
      d.note = "this machine has no NVIDIA driver (libcuda.so.1 was not found)";
    } else {
      d.note = internal::StrCat("CUDA found no GPU (", cudaGetErrorName(err), ": ",
                                cudaGetErrorString(err), ")");
    }
    return d;
  }
  for (int i = 0; i < count; ++i) {
    Result<std::unique_ptr<CudaDevice>> dev = CudaDevice::Create(i);
    if (!dev.ok()) {
      d.note += (d.note.empty() ? "" : "; ") + dev.status().message();
      continue;
    }
    d.devices.push_back(dev->get());
    d.owned.push_back(std::move(*dev));
  }
  if (count == 0) d.note = "CUDA reports no GPU";
  return d;
}

const Detected& GetDetected() {
  // Never destroyed: tensors and prepared models may hold device memory until exit.
  static const Detected* detected = new Detected(Detect());
  return *detected;
}

}  // namespace

std::span<Device* const> DetectedDevices() { return GetDetected().devices; }
std::string_view DetectionNote() { return GetDetected().note; }

void MarkProfiledSpan(bool begin) {
  // Without a profiler attached these do nothing; their errors are not the caller's.
  (void)(begin ? cudaProfilerStart() : cudaProfilerStop());
  (void)cudaGetLastError();
}

}  // namespace kiln::exec::cuda
