// The CPU kernels of the ops in kernels/broadcast_args_ops.cc (for shape vectors known only when
// they run).
#include "kernels/broadcast_args_ops.h"

#include <cstdint>
#include <vector>

#include "kernels/array_util.h"

namespace kiln::exec {
namespace {

using broadcast_args::Broadcast;
using broadcast_args::Outputs;
using broadcast_args::WriteVector;

Status ComputeBroadcastArgs(const KernelContext& ctx) {
  const Tensor& s0 = ctx.input(0);
  const Tensor& s1 = ctx.input(1);
  if (s0.rank() != 1 || s1.rank() != 1) {
    return ctx.Error("inputs 's0' and 's1' must be vectors, got shapes ", s0.shape().ToString(),
                     " and ", s1.shape().ToString());
  }
  auto r = Broadcast(IndexValues(s0), IndexValues(s1));
  if (!r.ok()) return Wrap(ctx, r.status());
  const std::vector<std::vector<int64_t>> values = Outputs(ctx.num_outputs() == 1, *r);
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    KILN_ASSIGN_OR_RETURN(Tensor * out,
                          ctx.AllocateOutput(i, Shape{static_cast<int64_t>(values[i].size())}));
    Status s = WriteVector(values[i], out);
    if (!s.ok()) return Wrap(ctx, s);
  }
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"BroadcastArgs", ComputeBroadcastArgs},
    {"BroadcastGradientArgs", ComputeBroadcastArgs},
};

}  // namespace

std::span<const KernelEntry> BroadcastArgsCpuKernels() { return kCpu; }

}  // namespace kiln::exec
