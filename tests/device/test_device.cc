#include "device/test_device.h"

#include <array>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "kiln/exec/op_table.h"

namespace kiln::testing {

class TestDevice::PoisonAllocator final : public Allocator {
 public:
  void* Allocate(size_t bytes) override {
    bytes = AlignedBytes(bytes == 0 ? 1 : bytes);
    void* p = std::aligned_alloc(kTensorAlignment, bytes);
    if (p == nullptr) return nullptr;
    std::memset(p, 0xFF, bytes);
    std::lock_guard lock(mu_);
    blocks_.emplace(static_cast<const char*>(p), bytes);
    live_ += static_cast<int64_t>(bytes);
    return p;
  }
  void Deallocate(void* ptr, size_t bytes) override {
    if (ptr == nullptr) return;
    {
      std::lock_guard lock(mu_);
      auto it = blocks_.find(static_cast<const char*>(ptr));
      if (it == blocks_.end()) std::abort();  // not ours: a bug the tests must see
      live_ -= static_cast<int64_t>(it->second);
      std::memset(ptr, 0xFF, it->second);
      blocks_.erase(it);
    }
    (void)bytes;
    std::free(ptr);
  }
  std::string_view Name() const override { return "test:0"; }
  bool Owns(const void* p) const {
    const char* c = static_cast<const char*>(p);
    std::lock_guard lock(mu_);
    auto it = blocks_.upper_bound(c);
    if (it == blocks_.begin()) return false;
    --it;
    return c >= it->first && c < it->first + it->second;
  }
  int64_t live() const {
    std::lock_guard lock(mu_);
    return live_;
  }

 private:
  mutable std::mutex mu_;
  std::map<const char*, size_t> blocks_;
  int64_t live_ = 0;
};

namespace {

// The subset of ops the test device runs, with TF's host-memory arguments for its GPU kernels.
struct Row {
  std::string_view op;
  uint32_t host_inputs;
  uint32_t host_outputs;
};
constexpr Row kRows[] = {
    {"Add", 0, 0},
    {"AddV2", 0, 0},
    {"BiasAdd", 0, 0},
    {"Cast", 0, 0},
    {"ExpandDims", 1u << 1, 0},
    {"MatMul", 0, 0},
    {"Maximum", 0, 0},
    {"Mean", 1u << 1, 0},
    {"Mul", 0, 0},
    {"Neg", 0, 0},
    {"Pack", 0, 0},
    {"RealDiv", 0, 0},
    {"Relu", 0, 0},
    {"Reshape", 1u << 1, 0},
    {"Shape", 0, 1u << 0},
    {"Sigmoid", 0, 0},
    {"Softmax", 0, 0},
    {"Square", 0, 0},
    {"Sub", 0, 0},
    {"Sum", 1u << 1, 0},
    {"Tanh", 0, 0},
    {"Transpose", 1u << 1, 0},
    {"_FusedMatMul", 0, 0},
};
constexpr size_t kNumRows = sizeof(kRows) / sizeof(kRows[0]);

// What the device's kernels take: float32 and int32 in device memory (a float64 MatMul goes to
// the next device in the list, as an op a GPU has no kernel for would).
bool Supports(const exec::PrepareContext& ctx) {
  auto ok = [](DType t) { return t == DType::kFloat || t == DType::kInt32; };
  for (const exec::TensorSpec& s : ctx.outputs)
    if (!ok(s.dtype)) return false;
  return true;
}

std::array<exec::ComputeFn, kNumRows> g_cpu{};

// Kernel K: checks where its inputs live, runs the CPU kernel, checks where outputs landed.
template <size_t K>
Status Checked(const exec::KernelContext& ctx) {
  TestDevice* dev = GetTestDevice();
  const Row& row = kRows[K];
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor& t = ctx.input(i);
    if (!DTypeIsPod(t.dtype()) || t.ByteSize() == 0) continue;
    const bool host = i < 32 && (row.host_inputs & (1u << i)) != 0;
    if (dev->Owns(t.raw_data()) == host)
      return Internal("test device: ", row.op, " input ", i, " of node '", ctx.node_name(),
                      "' is in ", host ? "device" : "host", " memory; the kernel reads it on the ",
                      host ? "host" : "device");
  }
  dev->CountKernelCall();
  return g_cpu[K](ctx);
}

template <size_t... K>
std::vector<exec::KernelEntry> MakeTable(std::index_sequence<K...>) {
  std::vector<exec::KernelEntry> table;
  ((g_cpu[K] = exec::FindCpuKernel(kRows[K].op)), ...);
  (table.push_back(exec::KernelEntry{kRows[K].op, &Checked<K>, kRows[K].host_inputs,
                                     kRows[K].host_outputs, &Supports, nullptr}),
   ...);
  return table;
}

}  // namespace

TestDevice::TestDevice() : Device(exec::DeviceType::kTest, 0), allocator_(new PoisonAllocator()) {}
TestDevice::~TestDevice() = default;  // lives for the process: tensors may outlive it

Allocator* TestDevice::allocator() { return allocator_; }

std::span<const exec::KernelEntry> TestDevice::kernels() const {
  static const std::vector<exec::KernelEntry> table =
      MakeTable(std::make_index_sequence<kNumRows>());  // kRows is sorted by op
  return table;
}

Status TestDevice::CopyFromHost(const Tensor& host, Tensor* to) {
  if (!Owns(to->raw_data()) && to->ByteSize() > 0)
    return Internal("test device: CopyFromHost into memory that is not the device's");
  ++to_device_;
  return CopyElements(host, to);
}

Status TestDevice::CopyToHost(const Tensor& from, Tensor* host) {
  if (!Owns(from.raw_data()) && from.ByteSize() > 0)
    return Internal("test device: CopyToHost from memory that is not the device's");
  ++to_host_;
  return CopyElements(from, host);
}

bool TestDevice::Owns(const void* p) const { return allocator_->Owns(p); }
int64_t TestDevice::live_bytes() const { return allocator_->live(); }

TestDevice* GetTestDevice() {
  static TestDevice* device = [] {
    auto* d = new TestDevice();  // never destroyed: models may hold its tensors until exit
    if (!exec::RegisterDevice(d).ok()) std::abort();
    return d;
  }();
  return device;
}

}  // namespace kiln::testing
