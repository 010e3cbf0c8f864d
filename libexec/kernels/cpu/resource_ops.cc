// The CPU kernels of the resource-variable and mutex ops in kernels/resource_ops.cc. Updates
// run under the variable's lock; a float AssignAdd/AssignSub runs the vector loops, other types
// Eigen's element-wise functors.
#include "kernels/resource_ops.h"

#include <atomic>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/cpu/vector_math.h"
#include "kernels/eigen_functors.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"
#include "kiln/exec/resources.h"

namespace kiln::exec {
namespace {

using resource_ops::CheckVariableDType;
using resource_ops::CountUpToState;
using resource_ops::Handle;
using resource_ops::HandleState;
using resource_ops::MutexResource;
using resource_ops::VariableOf;

using EigenCpuDevice = Eigen::DefaultDevice;

// ---- VarHandleOp -----------------------------------------------------------------------------

Status ComputeVarHandleOp(const KernelContext& ctx) {
  const Tensor& handle = ctx.state<HandleState>().value;
  if (!handle.IsInitialized()) {
    return FailedPrecondition("node '", ctx.node_name(),
                              "': VarHandleOp was prepared without a resource manager");
  }
  ctx.SetOutput(0, handle);
  return OkStatus();
}

// ---- ReadVariableOp --------------------------------------------------------------------------

Status ComputeReadVariableOp(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN_CTX(VariableResource * var, VariableOf(ctx.input(0)), "node '",
                            ctx.node_name(), "'");
  KILN_RETURN_IF_ERROR_CTX(
      CheckVariableDType(*var, ctx.state<TypedOpState<DType>>().value, "ReadVariableOp"), "node '",
      ctx.node_name(), "'");
  KILN_ASSIGN_OR_RETURN_CTX(Tensor value, var->Read(), "node '", ctx.node_name(), "'");
  ctx.SetOutput(0, std::move(value));
  return OkStatus();
}

// ---- VariableShape ---------------------------------------------------------------------------

Status ComputeVariableShape(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN_CTX(VariableResource * var, VariableOf(ctx.input(0)), "node '",
                            ctx.node_name(), "'");
  KILN_ASSIGN_OR_RETURN_CTX(Tensor value, var->Read(), "node '", ctx.node_name(), "'");
  const DType out = ctx.state<TypedOpState<DType>>().value;
  KILN_ASSIGN_OR_RETURN(Tensor * shape, ctx.AllocateOutput(0, Shape{value.rank()}));
  for (int d = 0; d < value.rank(); ++d) {
    if (out == DType::kInt32) {
      shape->data<int32_t>()[d] = static_cast<int32_t>(value.dim(d));
    } else {
      shape->data<int64_t>()[d] = value.dim(d);
    }
  }
  return OkStatus();
}

// ---- AssignVariableOp, AssignAdd/SubVariableOp -----------------------------------------------

Status ComputeAssignVariableOp(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN_CTX(VariableResource * var, VariableOf(ctx.input(0)), "node '",
                            ctx.node_name(), "'");
  KILN_RETURN_IF_ERROR_CTX(
      CheckVariableDType(*var, ctx.state<TypedOpState<DType>>().value, "AssignVariableOp"),
      "node '", ctx.node_name(), "'");
  KILN_RETURN_IF_ERROR_CTX(var->Assign(ctx.input(1)), "node '", ctx.node_name(), "'");
  return OkStatus();
}

template <template <typename> class Fn>
Status ComputeAssignArithmetic(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN_CTX(VariableResource * var, VariableOf(ctx.input(0)), "node '",
                            ctx.node_name(), "'");
  KILN_RETURN_IF_ERROR_CTX(
      CheckVariableDType(*var, ctx.state<TypedOpState<DType>>().value, "the update"), "node '",
      ctx.node_name(), "'");
  const Tensor& delta = ctx.input(1);
  if (!var->frozen() && DTypeIsPod(var->dtype())) {
    // In place when no reader holds the value (an optimizer's update of a large kernel would
    // otherwise allocate and fault in a new buffer every step), else into a fresh one; under
    // the variable's lock either way.
    VariableResource* const vars[] = {var};
    KILN_RETURN_IF_ERROR_CTX(
        VariableResource::UpdateMany(
            vars,
            [&](std::span<const Tensor> cur, std::vector<Tensor>* next) -> Status {
              const Tensor& current = cur[0];
              Tensor& out = (*next)[0];
              if (current.shape() != delta.shape()) {
                return InvalidArgument("cannot update variable '", var->name(), "' of shape ",
                                       current.shape().ToString(), " with a value of shape ",
                                       delta.shape().ToString(), ": shapes must be equal");
              }
              if (current.dtype() == DType::kFloat) {
                constexpr bool kAdd = std::is_same_v<Fn<float>, functor::AddFn<float>>;
                const auto op = kAdd ? vmath::BinOp::kAdd : vmath::BinOp::kSub;
                ctx.threads().ParallelFor(current.NumElements(), 16384, [&](int64_t b, int64_t e) {
                  vmath::Binary(op, current.data<float>() + b, delta.data<float>() + b,
                                out.data<float>() + b, e - b);
                });
                return OkStatus();
              }
              const BroadcastPlan plan =
                  MakeBroadcastPlan(current.shape(), delta.shape(), current.shape());
              return Dispatch<NumberTypes>(current.dtype(), [&](auto tag) {
                using T = typename decltype(tag)::type;
                using C = ComputeType<T>;
                static const EigenCpuDevice device;
                functor::BinaryFunctor<EigenCpuDevice, Fn<C>, C>()(
                    device, plan, ComputeData<T>(current), ComputeData<T>(delta),
                    MutableComputeData<T>(&out));
                return OkStatus();
              });
            }),
        "node '", ctx.node_name(), "'");
    return OkStatus();
  }
  // Under the variable's lock, so concurrent updates are never lost.
  KILN_RETURN_IF_ERROR_CTX(var->Update([&](const Tensor& current) -> Result<Tensor> {
    if (current.shape() != delta.shape()) {
      return InvalidArgument("cannot update variable '", var->name(), "' of shape ",
                             current.shape().ToString(), " with a value of shape ",
                             delta.shape().ToString(), ": shapes must be equal");
    }
    Tensor next(current.dtype(), current.shape());
    const BroadcastPlan plan = MakeBroadcastPlan(current.shape(), delta.shape(), current.shape());
    KILN_RETURN_IF_ERROR(Dispatch<NumberTypes>(current.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ComputeType<T>;
      static const EigenCpuDevice device;
      functor::BinaryFunctor<EigenCpuDevice, Fn<C>, C>()(device, plan, ComputeData<T>(current),
                                                         ComputeData<T>(delta),
                                                         MutableComputeData<T>(&next));
      return OkStatus();
    }));
    return next;
  }),
                           "node '", ctx.node_name(), "'");
  return OkStatus();
}

// ---- VarIsInitializedOp, DestroyResourceOp ---------------------------------------------------

Status ComputeVarIsInitializedOp(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN_CTX(VariableResource * var, VariableOf(ctx.input(0)), "node '",
                            ctx.node_name(), "'");
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, DType::kBool, Shape()));
  out->scalar<bool>() = var->initialized();
  return OkStatus();
}

// Resources live as long as their manager (the loaded model); destroying one early is not
// needed by anything we run.
Status ComputeDestroyResourceOp(const KernelContext&) { return OkStatus(); }

// ---- ResourceCountUpTo -----------------------------------------------------------------------

Status ComputeCountUpTo(const KernelContext& ctx) {
  const auto& st = ctx.state<CountUpToState>();
  KILN_ASSIGN_OR_RETURN_CTX(VariableResource * var, VariableOf(ctx.input(0)), "node '",
                            ctx.node_name(), "'");
  KILN_RETURN_IF_ERROR_CTX(CheckVariableDType(*var, st.dtype, "ResourceCountUpTo"), "node '",
                           ctx.node_name(), "'");
  int64_t before = 0;
  VariableResource* const vars[] = {var};
  KILN_RETURN_IF_ERROR_CTX(
      VariableResource::UpdateMany(
          vars,
          [&](std::span<const Tensor> cur, std::vector<Tensor>* next) -> Status {
            if (cur[0].rank() != 0)
              return InvalidArgument("variable '", var->name(), "' must be a scalar, got shape ",
                                     cur[0].shape().ToString());
            const bool i32 = st.dtype == DType::kInt32;
            before = i32 ? cur[0].data<int32_t>()[0] : cur[0].data<int64_t>()[0];
            if (before >= st.limit) return OutOfRange("Reached limit of ", st.limit);
            if (i32) {
              (*next)[0].data<int32_t>()[0] = static_cast<int32_t>(before + 1);
            } else {
              (*next)[0].data<int64_t>()[0] = before + 1;
            }
            return OkStatus();
          }),
      "node '", ctx.node_name(), "'");
  if (st.dtype == DType::kInt32) {
    ctx.SetOutput(0, Tensor::Scalar<int32_t>(static_cast<int32_t>(before)));
  } else {
    ctx.SetOutput(0, Tensor::Scalar<int64_t>(before));
  }
  return OkStatus();
}

// ---- MutexV2, MutexLock, ConsumeMutexLock ----------------------------------------------------

// The value of a MutexLock output: holds the mutex until consumed or destroyed.
class MutexLockVariant final : public VariantBase {
 public:
  explicit MutexLockVariant(std::shared_ptr<MutexResource> mutex) : mutex_(std::move(mutex)) {}
  ~MutexLockVariant() override { Release(); }
  MutexLockVariant(const MutexLockVariant&) = delete;
  MutexLockVariant& operator=(const MutexLockVariant&) = delete;

  // Releasing changes the mutex, not the value: a const variant may do it, once.
  void Release() const {
    if (!released_.exchange(true)) mutex_->Unlock();
  }

  std::string TypeName() const override { return "SharedPtrVariant"; }
  std::string DebugString() const override {
    return "lock of " + mutex_->DebugString() + (released_ ? " (released)" : "");
  }

 private:
  std::shared_ptr<MutexResource> mutex_;
  mutable std::atomic<bool> released_{false};
};

// ---- MutexV2 ---------------------------------------------------------------------------------

Status ComputeMutexV2(const KernelContext& ctx) {
  ctx.SetOutput(0, ctx.state<TypedOpState<Tensor>>().value);
  return OkStatus();
}

// ---- MutexLock, ConsumeMutexLock -------------------------------------------------------------

Status ComputeMutexLock(const KernelContext& ctx) {
  const Tensor& h = ctx.input(0);
  const Handle r = h.NumElements() == 1 ? h.scalar<Handle>() : nullptr;
  if (r == nullptr || r->TypeTag() != &MutexResource::kTypeTag)
    return ctx.Error("input 'mutex': expected a mutex handle (MutexV2), got ",
                     r == nullptr ? h.DebugString() : r->DebugString());
  auto mutex = std::static_pointer_cast<MutexResource>(r);
  KILN_RETURN_IF_ERROR_CTX(mutex->Lock(ctx.env().deadline), "node '", ctx.node_name(), "'");
  Tensor lock(DType::kVariant, Shape());
  lock.scalar<std::shared_ptr<const VariantBase>>() =
      std::make_shared<const MutexLockVariant>(std::move(mutex));
  ctx.SetOutput(0, std::move(lock));
  return OkStatus();
}

Status ComputeConsume(const KernelContext& ctx) {
  const Tensor& t = ctx.input(0);
  if (t.rank() != 0)
    return ctx.Error("Expected input to be a scalar, saw shape: ", t.shape().ToString());
  const auto& v = t.scalar<std::shared_ptr<const VariantBase>>();
  const auto* lock = dynamic_cast<const MutexLockVariant*>(v.get());
  if (lock == nullptr)
    return ctx.Error("Expected input to contain a SharedLockReleaser object, but saw variant: '",
                     v == nullptr ? std::string() : v->DebugString(), "'");
  lock->Release();
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"VarHandleOp", ComputeVarHandleOp},
    {"ReadVariableOp", ComputeReadVariableOp},
    {"AssignVariableOp", ComputeAssignVariableOp},
    {"AssignAddVariableOp", ComputeAssignArithmetic<functor::AddFn>},
    {"AssignSubVariableOp", ComputeAssignArithmetic<functor::SubFn>},
    {"VarIsInitializedOp", ComputeVarIsInitializedOp},
    {"VariableShape", ComputeVariableShape},
    {"DestroyResourceOp", ComputeDestroyResourceOp},
    {"ResourceCountUpTo", ComputeCountUpTo},
    {"MutexV2", ComputeMutexV2},
    {"MutexLock", ComputeMutexLock},
    {"ConsumeMutexLock", ComputeConsume},
};

}  // namespace

std::span<const KernelEntry> ResourceCpuKernels() { return kCpu; }

}  // namespace kiln::exec
