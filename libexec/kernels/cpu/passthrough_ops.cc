// The CPU kernels of the ops in kernels/passthrough_ops.cc. None of them copies: the output is
// the input tensor itself.
#include "kernels/passthrough_ops.h"

#include "kernels/array_util.h"

namespace kiln::exec {
namespace {

using passthrough::BracketShape;
using passthrough::ShapeState;

// ---- PlaceholderV2 ---------------------------------------------------------------------------

// A fed placeholder is replaced by an argument before anything runs; reaching the kernel means
// the graph needs a value nobody gave (TF: "You must feed a value for placeholder tensor").
Status ComputePlaceholderV2(const KernelContext& ctx) {
  return InvalidArgument("placeholder '", ctx.node_name(), "' was not fed");
}

// ---- PreventGradient -------------------------------------------------------------------------

Status ComputeForward(const KernelContext& ctx) {
  ctx.SetOutput(0, ctx.input(0));
  return OkStatus();
}

// ---- EnsureShape -----------------------------------------------------------------------------

Status ComputeEnsureShape(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const PartialShape& want = ctx.state<ShapeState>().value;
  if (!want.IsCompatibleWith(x.shape())) {
    return ctx.Error("shape of tensor ", BracketShape(PartialShape(x.shape())),
                     " is not compatible with expected shape ", BracketShape(want));
  }
  ctx.SetOutput(0, x);
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"PlaceholderV2", ComputePlaceholderV2},
    {"PlaceholderWithDefault", ComputeForward},
    {"PreventGradient", ComputeForward},
    {"EnsureShape", ComputeEnsureShape},
};

}  // namespace

std::span<const KernelEntry> PassthroughCpuKernels() { return kCpu; }

}  // namespace kiln::exec
