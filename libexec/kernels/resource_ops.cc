// Resource variables: VarHandleOp finds or creates the variable when the graph is prepared;
// the other ops reach it through the handle tensor (a scalar holding the shared_ptr). Also the
// mutexes of tf.CriticalSection (MutexV2, MutexLock, ConsumeMutexLock; see their section).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/cpu/vector_math.h"
#include "kernels/eigen_functors.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"
#include "kiln/exec/resources.h"

namespace kiln::exec {
namespace {

using EigenCpuDevice = Eigen::DefaultDevice;
using Handle = std::shared_ptr<ResourceBase>;

// The variable a resource tensor points at.
Result<VariableResource*> VariableOf(const Tensor& handle) {
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

// The variable behind input 0 when the handle is known at prepare time, else nullptr.
VariableResource* ConstantVariable(const PrepareContext& ctx) {
  if (ctx.constant_inputs.empty() || ctx.constant_inputs[0] == nullptr) return nullptr;
  auto var = VariableOf(*ctx.constant_inputs[0]);
  return var.ok() ? *var : nullptr;
}

Status CheckVariableDType(const VariableResource& var, DType want, std::string_view op) {
  if (var.dtype() == want) return OkStatus();
  return InvalidArgument("variable '", var.name(), "' has dtype ", DTypeShortName(var.dtype()),
                         " but ", op, " uses dtype ", DTypeShortName(want));
}

// ---- VarHandleOp -----------------------------------------------------------------------------

using HandleState = TypedOpState<Tensor>;  // not initialized when prepared without resources

Status PrepareVarHandleOp(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(0));
  KILN_PREPARE_ASSIGN(ctx, DType dtype, ctx.attrs.GetType("dtype"));
  KILN_PREPARE_ASSIGN(ctx, PartialShape shape, ctx.attrs.GetShape("shape"));
  KILN_PREPARE_ASSIGN(ctx, std::string shared_name, ctx.attrs.GetString("shared_name", ""));
  const std::string name = shared_name.empty() ? std::string(ctx.node_name) : shared_name;
  Tensor handle;
  if (ctx.resources != nullptr) {
    Handle r = ctx.resources->LookupOrCreate(
        name, [&] { return std::make_shared<VariableResource>(name, dtype, shape); });
    auto* var = AsVariable(r.get());
    if (var == nullptr) return ctx.Error("resource '", name, "' exists and is not a variable");
    if (var->dtype() != dtype) {
      return ctx.Error("variable '", name, "' already exists with dtype ",
                       DTypeShortName(var->dtype()), ", the node declares ", DTypeShortName(dtype));
    }
    if (!var->shape().IsCompatibleWith(shape)) {
      return ctx.Error("variable '", name, "' already exists with shape ",
                       var->shape().ToPythonString(), ", the node declares ",
                       shape.ToPythonString());
    }
    handle = Tensor(DType::kResource, Shape());
    handle.scalar<Handle>() = std::move(r);
  }
  ctx.outputs = {TensorSpec{DType::kResource, PartialShape::Scalar()}};
  ctx.state = std::make_shared<HandleState>(std::move(handle));
  return OkStatus();
}

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

Status PrepareReadVariableOp(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType dtype, ctx.attrs.GetType("dtype"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "resource", DType::kResource));
  PartialShape shape = PartialShape::UnknownRank();
  Tensor frozen_value;
  if (VariableResource* var = ConstantVariable(ctx)) {
    KILN_PREPARE_CHECK(ctx, CheckVariableDType(*var, dtype, ctx.op));
    shape = var->shape();
    // Nothing writes a frozen variable: its value is a constant of the prepared graph (the
    // variable's own buffer, not a copy).
    if (var->frozen() && var->initialized()) {
      Result<Tensor> value = var->Read();
      if (value.ok()) {
        frozen_value = std::move(value).value();
        shape = PartialShape(frozen_value.shape());
      }
    }
  }
  ctx.outputs = {TensorSpec{dtype, shape}};
  if (frozen_value.IsInitialized()) ctx.constant_outputs = {std::move(frozen_value)};
  ctx.state = std::make_shared<TypedOpState<DType>>(dtype);
  return OkStatus();
}

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

// tf.shape of a resource variable: its current value's shape, as out_type (int32 or int64).
Status PrepareVariableShape(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", DType::kResource));
  KILN_PREPARE_ASSIGN(ctx, DType out, ctx.attrs.GetType("out_type", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "out_type", out, {DType::kInt32, DType::kInt64}));
  int64_t rank = -1;
  if (VariableResource* var = ConstantVariable(ctx); var != nullptr && !var->shape().unknown_rank())
    rank = var->shape().rank();
  ctx.outputs = {TensorSpec{out, rank < 0 ? UnknownDims(1) : PartialShape(Shape{rank})}};
  ctx.state = std::make_shared<TypedOpState<DType>>(out);
  return OkStatus();
}

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

Status PrepareAssign(PrepareContext& ctx, bool arithmetic) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType dtype, ctx.attrs.GetType("dtype"));
  if (arithmetic)
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "dtype", dtype, NumberTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "resource", DType::kResource));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "value", dtype));
  if (VariableResource* var = ConstantVariable(ctx)) {
    KILN_PREPARE_CHECK(ctx, CheckVariableDType(*var, dtype, ctx.op));
    if (!var->shape().IsCompatibleWith(ctx.inputs[1].shape)) {
      return ctx.Error("input 'value' has shape ", ctx.inputs[1].shape.ToPythonString(),
                       ", not compatible with variable '", var->name(), "' of shape ",
                       var->shape().ToPythonString());
    }
  }
  ctx.state = std::make_shared<TypedOpState<DType>>(dtype);
  return OkStatus();
}
Status PrepareAssignVariableOp(PrepareContext& ctx) { return PrepareAssign(ctx, false); }
Status PrepareAssignArithmetic(PrepareContext& ctx) { return PrepareAssign(ctx, true); }

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

Status PrepareVarIsInitializedOp(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "resource", DType::kResource));
  ctx.outputs = {TensorSpec{DType::kBool, PartialShape::Scalar()}};
  return OkStatus();
}

Status ComputeVarIsInitializedOp(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN_CTX(VariableResource * var, VariableOf(ctx.input(0)), "node '",
                            ctx.node_name(), "'");
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, DType::kBool, Shape()));
  out->scalar<bool>() = var->initialized();
  return OkStatus();
}

Status PrepareDestroyResourceOp(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, bool ignore, ctx.attrs.GetBool("ignore_lookup_error", true));
  (void)ignore;
  return ExpectInputDType(ctx, 0, "resource", DType::kResource);
}

// Resources live as long as their manager (the loaded model); destroying one early is not
// needed by anything we run.
Status ComputeDestroyResourceOp(const KernelContext&) { return OkStatus(); }

// ---- tables ----------------------------------------------------------------------------------

// ---- ResourceCountUpTo -----------------------------------------------------------------------

// Increments a scalar int32/int64 variable and returns its value before, failing with TF's
// OutOfRange "Reached limit of L" (and changing nothing) once the value has reached `limit`.
struct CountUpToState : OpState {
  DType dtype = DType::kInt64;
  int64_t limit = 0;
};

Status PrepareCountUpTo(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "resource", DType::kResource));
  auto st = std::make_shared<CountUpToState>();
  KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->dtype, {DType::kInt32, DType::kInt64}));
  KILN_PREPARE_ASSIGN(ctx, st->limit, ctx.attrs.GetInt("limit"));
  ctx.outputs = {TensorSpec{st->dtype, PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

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

// Mutexes (TF's mutex_ops.cc), what tf.CriticalSection emits: MutexV2 makes a mutex resource
// (shared by container and shared_name, as TF's ResourceHandleOp: an empty shared_name is the
// name "" of its container), MutexLock acquires it and returns a variant holding the lock,
// ConsumeMutexLock releases it. The lock is also released when the variant dies (TF releases
// only then; its ConsumeMutexLock just checks that nothing else holds the variant, and the
// executor drops the variant after its last use).
//
// A second MutexLock blocks until the lock is released, as TF's does; a call's deadline ends the
// wait. kiln runs the nodes of one call in order on one thread, so a lock that this thread holds
// can never be released while it waits: that MutexLock fails (TF would hang). The executor
// schedules a ready MutexLock only when nothing else is ready (prepared_function.cc), so a
// graph whose other critical sections TF's executor would let finish first never gets there.

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

Status PrepareMutexV2(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(0));
  KILN_PREPARE_ASSIGN(ctx, std::string container, ctx.attrs.GetString("container", ""));
  KILN_PREPARE_ASSIGN(ctx, std::string shared_name, ctx.attrs.GetString("shared_name", ""));
  const std::string name = container.empty() ? shared_name : container + "/" + shared_name;
  Handle r;
  if (ctx.resources != nullptr) {
    // Keyed by type too, as TF's resource manager is: a variable may share the name.
    r = ctx.resources->LookupOrCreate("Mutex:" + name,
                                      [&] { return std::make_shared<MutexResource>(name); });
    if (r == nullptr || r->TypeTag() != &MutexResource::kTypeTag)
      return ctx.Error("resource '", name, "' exists and is not a mutex");
  } else {
    r = std::make_shared<MutexResource>(name);  // no model: the node's own
  }
  Tensor handle(DType::kResource, Shape());
  handle.scalar<Handle>() = std::move(r);
  ctx.outputs = {TensorSpec{DType::kResource, PartialShape::Scalar()}};
  ctx.state = std::make_shared<TypedOpState<Tensor>>(std::move(handle));
  return OkStatus();
}

Status ComputeMutexV2(const KernelContext& ctx) {
  ctx.SetOutput(0, ctx.state<TypedOpState<Tensor>>().value);
  return OkStatus();
}

// ---- MutexLock, ConsumeMutexLock -------------------------------------------------------------

Status PrepareMutexLock(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "mutex", DType::kResource));
  ctx.outputs = {TensorSpec{DType::kVariant, PartialShape::Scalar()}};
  return OkStatus();
}

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

Status PrepareConsume(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "mutex_lock", DType::kVariant));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "mutex_lock", 0));
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

constexpr OpDefinition kDefs[] = {
    {"VarHandleOp", "resource", kOpStateful, PrepareVarHandleOp},
    {"ReadVariableOp", "value", kOpStateful, PrepareReadVariableOp},
    {"AssignVariableOp", "", kOpStateful, PrepareAssignVariableOp},
    {"AssignAddVariableOp", "", kOpStateful, PrepareAssignArithmetic},
    {"AssignSubVariableOp", "", kOpStateful, PrepareAssignArithmetic},
    {"VarIsInitializedOp", "is_initialized", kOpStateful, PrepareVarIsInitializedOp},
    {"VariableShape", "output", kOpStateful, PrepareVariableShape},
    {"DestroyResourceOp", "", kOpStateful, PrepareDestroyResourceOp},
    {"ResourceCountUpTo", "output", kOpStateful, PrepareCountUpTo},
    {"MutexV2", "resource", kOpStateful, PrepareMutexV2},
    {"MutexLock", "mutex_lock", kOpStateful, PrepareMutexLock},
    {"ConsumeMutexLock", "", kOpStateful, PrepareConsume},
};

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

std::span<const OpDefinition> ResourceOpDefs() { return kDefs; }
std::span<const KernelEntry> ResourceCpuKernels() { return kCpu; }

}  // namespace kiln::exec
