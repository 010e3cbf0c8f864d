// What the definitions of the resource-variable and mutex ops (kernels/resource_ops.cc) and
// their CPU kernels (kernels/cpu/resource_ops.cc) share: reaching a variable through its handle,
// the nodes' state, and the mutex resource that MutexV2 makes and MutexLock holds.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "kernels/kernel_util.h"
#include "kiln/core/tensor.h"
#include "kiln/exec/resources.h"

namespace kiln::exec::resource_ops {

using Handle = std::shared_ptr<ResourceBase>;

// The variable a resource tensor points at.
inline Result<VariableResource*> VariableOf(const Tensor& handle) {
  if (handle.dtype() != DType::kResource || handle.NumElements() != 1) {
    return InvalidArgument("input 'resource': expected a resource handle scalar, got ",
                           handle.DebugString());
  }
  const Handle& r = handle.scalar<Handle>();
  if (r == nullptr) return InvalidArgument("input 'resource': the handle is null");
  auto* var = AsVariable(r.get());
  if (var == nullptr) {
    return InvalidArgument("input 'resource': ", r->DebugString(), " is not a variable");
  }
  return var;
}

inline Status CheckVariableDType(const VariableResource& var, DType want, std::string_view op) {
  if (var.dtype() == want) return OkStatus();
  return InvalidArgument("variable '", var.name(), "' has dtype ", DTypeShortName(var.dtype()),
                         " but ", op, " uses dtype ", DTypeShortName(want));
}

using HandleState = TypedOpState<Tensor>;  // not initialized when prepared without resources

// ResourceCountUpTo: the variable's dtype and the attr 'limit'.
struct CountUpToState : OpState {
  DType dtype = DType::kInt64;
  int64_t limit = 0;
};

// A mutex of tf.CriticalSection (kernels/resource_ops.cc says how its ops use it).
class MutexResource final : public ResourceBase {
 public:
  explicit MutexResource(std::string name) : name_(std::move(name)) {}

  std::string DebugString() const override { return "Mutex " + name_; }
  const void* TypeTag() const override { return &kTypeTag; }
  static constexpr char kTypeTag = 'M';

  // Waits until the mutex is free (or `deadline`), then holds it.
  Status Lock(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mu_);
    if (locked_ && holder_ == std::this_thread::get_id())
      return FailedPrecondition("mutex '", name_,
                                "' is already held on this thread (a lock not yet consumed): "
                                "waiting for it would deadlock");
    const auto free = [this] { return !locked_; };
    if (deadline == std::chrono::steady_clock::time_point::max()) {
      cv_.wait(lock, free);
    } else if (!cv_.wait_until(lock, deadline, free)) {
      return DeadlineExceeded("the call's deadline passed while waiting for mutex '", name_, "'");
    }
    locked_ = true;
    holder_ = std::this_thread::get_id();
    return OkStatus();
  }

  void Unlock() {
    {
      std::lock_guard lock(mu_);
      locked_ = false;
      holder_ = std::thread::id();
    }
    cv_.notify_all();
  }

 private:
  std::string name_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool locked_ = false;
  std::thread::id holder_;
};

}  // namespace kiln::exec::resource_ops
