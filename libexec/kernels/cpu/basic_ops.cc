// The CPU kernels of Const (and HostConst), Placeholder, identities, ToBool and NoOp
// (kernels/basic_ops.cc).
#include <algorithm>
#include <string>

#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

// ---- Const -----------------------------------------------------------------------------------

using ConstState = TypedOpState<Tensor>;

Status ComputeConst(const KernelContext& ctx) {
  ctx.SetOutput(0, ctx.state<ConstState>().value);
  return OkStatus();
}

// ---- Placeholder -----------------------------------------------------------------------------

Status ComputePlaceholder(const KernelContext& ctx) {
  return InvalidArgument("placeholder '", ctx.node_name(), "' was not fed");
}

// ---- Identity, StopGradient, Snapshot --------------------------------------------------------

Status ComputeIdentity(const KernelContext& ctx) {
  ctx.SetOutput(0, ctx.input(0));  // shares the buffer: kernels never write their inputs
  return OkStatus();
}

Status ComputeSnapshot(const KernelContext& ctx) {
  ctx.SetOutput(0, ctx.input(0).DeepCopy());
  return OkStatus();
}

// ---- IdentityN -------------------------------------------------------------------------------

Status ComputeIdentityN(const KernelContext& ctx) {
  for (int i = 0; i < ctx.num_inputs(); ++i) ctx.SetOutput(i, ctx.input(i));
  return OkStatus();
}

// ---- ToBool ----------------------------------------------------------------------------------

Status ComputeToBool(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{}));
  bool truth = x.NumElements() > 0;
  if (x.rank() == 0) {
    if (x.dtype() == DType::kString) {
      truth = !x.data<std::string>()[0].empty();
    } else {
      // Any non-zero byte: every numeric zero (and -0.0 only for floats) is all zero bytes.
      const auto* b = static_cast<const unsigned char*>(x.raw_data());
      truth = std::any_of(b, b + DTypeSize(x.dtype()), [](unsigned char c) { return c != 0; });
      if (FloatAndComplexTypes::Contains(x.dtype())) {  // -0.0 is false too
        KILN_RETURN_IF_ERROR(Dispatch<FloatAndComplexTypes>(x.dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          truth = ComputeData<T>(x)[0] != ComputeType<T>(0);
          return OkStatus();
        }));
      }
    }
  }
  out->data<bool>()[0] = truth;
  return OkStatus();
}

// ---- NoOp ------------------------------------------------------------------------------------

Status ComputeNoOp(const KernelContext&) { return OkStatus(); }

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"Const", ComputeConst},
    {"Placeholder", ComputePlaceholder},
    {"Identity", ComputeIdentity},
    {"IdentityN", ComputeIdentityN},
    {"NoOp", ComputeNoOp},
    {"StopGradient", ComputeIdentity},
    {"Snapshot", ComputeSnapshot},
    {"HostConst", ComputeConst},
    {"GuaranteeConst", ComputeIdentity},
    {"DeepCopy", ComputeSnapshot},
    {"ToBool", ComputeToBool},
};

}  // namespace

std::span<const KernelEntry> BasicCpuKernels() { return kCpu; }

}  // namespace kiln::exec
