// EagerPyFunc, PyFunc, PyFuncStateless: run a host callback registered in this process (see
// host_callback.h).
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/host_callback.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

std::mutex& RegistryMutex() {
  static std::mutex* const mu = new std::mutex();
  return *mu;
}

std::map<std::string, std::weak_ptr<const HostCallbackEntry>>& Registry() {
  static auto* const registry = new std::map<std::string, std::weak_ptr<const HostCallbackEntry>>();
  return *registry;
}

struct HostCallbackState : OpState {
  std::shared_ptr<const HostCallbackEntry> entry;
  std::vector<DType> tout;
};

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

Status ComputeEagerPyFunc(const KernelContext& ctx) {
  const auto& st = ctx.state<HostCallbackState>();
  std::vector<Tensor> inputs;
  inputs.reserve(ctx.num_inputs());
  for (int i = 0; i < ctx.num_inputs(); ++i) inputs.push_back(ctx.input(i));
  std::vector<Tensor> outputs;
  Status s = st.entry->fn(inputs, &outputs);
  if (!s.ok()) return ctx.Error("host callback '", st.entry->name, "' failed: ", s.message());
  if (outputs.size() != st.tout.size()) {
    return ctx.Error("host callback '", st.entry->name, "' returned ", outputs.size(),
                     " tensor(s), expected ", st.tout.size());
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].IsInitialized() || outputs[i].dtype() != st.tout[i]) {
      return ctx.Error("host callback '", st.entry->name, "' output ", i, ": expected dtype ",
                       DTypeShortName(st.tout[i]), ", got ",
                       outputs[i].IsInitialized() ? DTypeShortName(outputs[i].dtype()) : "none");
    }
    ctx.SetOutput(static_cast<int>(i), std::move(outputs[i]));
  }
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

constexpr KernelEntry kCpu[] = {
    {"EagerPyFunc", ComputeEagerPyFunc},
    {"PyFunc", ComputeEagerPyFunc},
    {"PyFuncStateless", ComputeEagerPyFunc},
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
std::span<const KernelEntry> HostCallbackCpuKernels() { return kCpu; }

}  // namespace kiln::exec
