// The CPU kernel of EagerPyFunc, PyFunc and PyFuncStateless (kernels/host_callback_ops.cc):
// calls the registered host callback and checks what it returns.
#include "kernels/host_callback_ops.h"

#include <utility>
#include <vector>

#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using host_callback::HostCallbackState;

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

constexpr KernelEntry kCpu[] = {
    {"EagerPyFunc", ComputeEagerPyFunc},
    {"PyFunc", ComputeEagerPyFunc},
    {"PyFuncStateless", ComputeEagerPyFunc},
};

}  // namespace

std::span<const KernelEntry> HostCallbackCpuKernels() { return kCpu; }

}  // namespace kiln::exec
