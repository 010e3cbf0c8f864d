// The CPU kernels of the TF1 reference-variable ops in kernels/ref_variable_ops.cc: the Assign
// ops write the variable under its lock and pass the handle on as their output_ref.
#include "kernels/ref_variable_ops.h"

#include "kernels/eigen_functors.h"
#include "kernels/type_lists.h"
#include "kernels/variable_util.h"

namespace kiln::exec {
namespace {

using ref_variable::AssignState;

// ---- VariableV2 ------------------------------------------------------------------------------

Status ComputeVariableV2(const KernelContext& ctx) {
  ctx.SetOutput(0, ctx.state<TypedOpState<Tensor>>().value);
  return OkStatus();
}

// ---- Assign, AssignAdd, AssignSub ------------------------------------------------------------

Status ComputeAssign(const KernelContext& ctx) {
  const auto& st = ctx.state<AssignState>();
  auto var = VariableFromHandle(ctx.input(0), "ref");
  if (!var.ok()) return Wrap(ctx, var.status());
  Status s = ExpectVariableDType(**var, st.dtype);
  if (s.ok())
    s = st.validate_shape ? (*var)->Assign(ctx.input(1)) : (*var)->AssignAnyShape(ctx.input(1));
  if (!s.ok()) return Wrap(ctx, s);
  ctx.SetOutput(0, ctx.input(0));
  return OkStatus();
}

template <template <typename> class Fn>
Status ComputeAssignUpdate(const KernelContext& ctx) {
  const auto& st = ctx.state<AssignState>();
  auto var = VariableFromHandle(ctx.input(0), "ref");
  if (!var.ok()) return Wrap(ctx, var.status());
  const Tensor& delta = ctx.input(1);
  Status s = ExpectVariableDType(**var, st.dtype);
  if (s.ok()) {
    s = (*var)->Update([&](const Tensor& cur) -> Result<Tensor> {
      if (cur.shape() != delta.shape())
        return InvalidArgument("variable '", (*var)->name(), "' has shape ", cur.shape().ToString(),
                               ", the value has shape ", delta.shape().ToString(),
                               ": they must be equal");
      Tensor next(cur.dtype(), cur.shape());
      KILN_RETURN_IF_ERROR(Dispatch<RealTypes>(cur.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        using C = ComputeType<T>;
        const C* a = ComputeData<T>(cur);
        const C* b = ComputeData<T>(delta);
        C* o = MutableComputeData<T>(&next);
        const Fn<C> fn;
        for (int64_t i = 0; i < cur.NumElements(); ++i) o[i] = fn(a[i], b[i]);
        return OkStatus();
      }));
      return next;
    });
  }
  if (!s.ok()) return Wrap(ctx, s);
  ctx.SetOutput(0, ctx.input(0));
  return OkStatus();
}

constexpr KernelEntry kCpu[] = {
    {"VariableV2", ComputeVariableV2},
    {"Assign", ComputeAssign},
    {"AssignAdd", ComputeAssignUpdate<functor::AddFn>},
    {"AssignSub", ComputeAssignUpdate<functor::SubFn>},
};

}  // namespace

std::span<const KernelEntry> RefVariableCpuKernels() { return kCpu; }

}  // namespace kiln::exec
