#include "executor/placement.h"

namespace kiln::exec {

Result<Placement> PlaceNode(std::span<Device* const> devices, const PrepareContext& ctx) {
  for (size_t d = 0; d < devices.size(); ++d) {
    const KernelEntry* k = devices[d]->FindKernel(ctx.op);
    if (k != nullptr && (k->supports == nullptr || k->supports(ctx)))
      return Placement{static_cast<int>(d), k};
  }
  std::string names;
  for (const Device* d : devices) names += (names.empty() ? "" : ", ") + d->name();
  return Unimplemented("op '", ctx.op, "' (node '", ctx.node_name, "') has no kernel on ",
                       devices.size() == 1 ? "" : "any of ", names, " for these inputs");
}

namespace {

bool HostOnly(DType dtype) { return !DTypeIsPod(dtype); }

}  // namespace

int InputDevice(const KernelEntry& kernel, int device, int host, int i, DType dtype) {
  const bool on_host = HostOnly(dtype) || (i < 32 && (kernel.host_inputs & (1u << i)) != 0);
  return on_host ? host : device;
}

int OutputDevice(const KernelEntry& kernel, int device, int host, int j, DType dtype) {
  const bool on_host = HostOnly(dtype) || (j < 32 && (kernel.host_outputs & (1u << j)) != 0);
  return on_host ? host : device;
}

Status CopyCompute(const KernelContext& ctx) {
  const auto& st = ctx.state<CopyState>();
  const Tensor& in = ctx.input(0);
  Device* host = HostDevice();
  // An argument the caller gave in the destination's memory (PrepareOptions::devices) is
  // already there.
  if (st.to != host && in.BufferAllocator() == st.to->allocator()) {
    ctx.SetOutput(0, in);
    return OkStatus();
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, in.dtype(), in.shape()));
  if (st.from == host) return st.to->CopyFromHost(in, out);
  if (st.to == host) return st.from->CopyToHost(in, out);
  KILN_ASSIGN_OR_RETURN(Tensor staged, Tensor::Allocate(host->allocator(), in.dtype(), in.shape()));
  KILN_RETURN_IF_ERROR(st.from->CopyToHost(in, &staged));
  return st.to->CopyFromHost(staged, out);
}

}  // namespace kiln::exec
