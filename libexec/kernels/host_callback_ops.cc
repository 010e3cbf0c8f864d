// EagerPyFunc, PyFunc, PyFuncStateless: run a host callback registered in this process (see
// host_callback.h).
// The registry is defined here; the CPU kernel is in kernels/cpu/host_callback_ops.cc.
#include "kernels/host_callback_ops.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kernels/host_callback.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using host_callback::HostCallbackState;

std::mutex& RegistryMutex() {
  static std::mutex* const mu = new std::mutex();
  return *mu;
}

std::map<std::string, std::weak_ptr<const HostCallbackEntry>>& Registry() {
  static auto* const registry = new std::map<std::string, std::weak_ptr<const HostCallbackEntry>>();
  return *registry;
}

Status PrepareEagerPyFunc(PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, std::string token, ctx.attrs.GetString("token"));
  KILN_PREPARE_ASSIGN(ctx, std::vector<DType> tin, ctx.attrs.GetTypeList("Tin"));
  KILN_PREPARE_ASSIGN(ctx, std::vector<DType> tout, ctx.attrs.GetTypeList("Tout"));
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(static_cast<int>(tin.size())));
  for (size_t i = 0; i < tin.size(); ++i) {
    KILN_RETURN_IF_ERROR(
        ExpectInputDType(ctx, static_cast<int>(i), internal::StrCat("input:", i), tin[i]));
  }
  auto state = std::make_shared<HostCallbackState>();
  state->entry = FindHostCallback(token);
  if (state->entry == nullptr) {
    return ctx.Error("host callback '", token,
                     "' is not registered in this process: a graph that calls C++ code of the "
                     "program that traced it cannot run anywhere else (it cannot be saved)");
  }
  state->tout = tout;
  for (DType t : tout) ctx.outputs.push_back(TensorSpec{t, PartialShape::UnknownRank()});
  ctx.state = std::move(state);
  return OkStatus();
}

// PyFunc and PyFuncStateless (tf.numpy_function, tf.compat.v1.py_func) have EagerPyFunc's
// attrs and call their token's callback the same way; a graph TF wrote holds Python tokens no
// kiln process registers, so it gets the error above, as it would in another TF process.
constexpr OpDefinition kDefs[] = {
    {"EagerPyFunc", "output", kOpStateful, PrepareEagerPyFunc},
    {"PyFunc", "output", kOpStateful, PrepareEagerPyFunc},
    {"PyFuncStateless", "output", kOpNone, PrepareEagerPyFunc},
};

}  // namespace

std::shared_ptr<const HostCallbackEntry> RegisterHostCallback(std::string name, HostCallbackFn fn) {
  static std::atomic<int64_t> counter{0};
  auto entry = std::make_shared<HostCallbackEntry>();
  entry->name = std::move(name);
  entry->token = "kiln_host_callback_" + std::to_string(counter++);
  entry->fn = std::move(fn);
  std::lock_guard lock(RegistryMutex());
  auto& registry = Registry();
  for (auto it = registry.begin(); it != registry.end();) {  // drop ended registrations
    it = it->second.expired() ? registry.erase(it) : std::next(it);
  }
  registry[entry->token] = entry;
  return entry;
}

std::shared_ptr<const HostCallbackEntry> FindHostCallback(const std::string& token) {
  std::lock_guard lock(RegistryMutex());
  auto it = Registry().find(token);
  return it == Registry().end() ? nullptr : it->second.lock();
}

std::span<const OpDefinition> HostCallbackOpDefs() { return kDefs; }

}  // namespace kiln::exec
