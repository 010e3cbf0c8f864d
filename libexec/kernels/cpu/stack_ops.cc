// The CPU kernels of the TF1 stack ops in kernels/stack_ops.cc, and the stack they share through
// its resource handle: mutable state, pushed and popped in the order of the graph's edges.
#include "kernels/stack_ops.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kernels/array_util.h"

namespace kiln::exec {
namespace {

using stack_ops::StackState;

using Handle = std::shared_ptr<ResourceBase>;

class Stack final : public ResourceBase {
 public:
  Stack(DType dtype, std::string name, int64_t max_size)
      : dtype_(dtype), name_(std::move(name)), max_size_(max_size) {}

  std::string DebugString() const override {
    return internal::StrCat("Stack '", name_, "' dtype=", DTypeShortName(dtype_));
  }
  const void* TypeTag() const override { return &kTypeTag; }
  static constexpr char kTypeTag = 'S';

  DType dtype() const { return dtype_; }

  Status Push(const Tensor& value) {
    std::lock_guard lock(mu_);
    KILN_RETURN_IF_ERROR(CheckOpen());
    if (max_size_ >= 0 && static_cast<int64_t>(items_.size()) >= max_size_) {
      return InvalidArgument("Stack[", name_, "] overflowed its max_size (", max_size_, ")");
    }
    if (static_cast<int64_t>(items_.size()) >= kMaxItems) {
      return ResourceExhausted("Stack[", name_, "] holds ", kMaxItems, " values already");
    }
    items_.push_back(value.Retainable());
    return OkStatus();
  }

  Result<Tensor> Pop() {
    std::lock_guard lock(mu_);
    KILN_RETURN_IF_ERROR(CheckOpen());
    if (items_.empty()) return InvalidArgument("Stack[", name_, "] is empty.");
    Tensor t = std::move(items_.back());
    items_.pop_back();
    return t;
  }

  void Close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    items_.clear();
  }

 private:
  // A graph's pushes are bounded by its loop's trip count; this bounds a runaway one.
  static constexpr int64_t kMaxItems = int64_t{1} << 24;

  Status CheckOpen() const {
    if (closed_) return InvalidArgument("Stack[", name_, "] has already been closed.");
    return OkStatus();
  }

  DType dtype_;
  std::string name_;
  int64_t max_size_;  // -1: unbounded
  std::mutex mu_;
  std::vector<Tensor> items_;
  bool closed_ = false;
};

Result<Stack*> StackOf(const KernelContext& ctx, const Tensor& handle, DType want) {
  if (handle.dtype() != DType::kResource || handle.NumElements() != 1) {
    return ctx.Error("input 'handle': expected a stack's resource handle, got ",
                     handle.DebugString());
  }
  ResourceBase* r = handle.scalar<Handle>().get();
  if (r == nullptr || r->TypeTag() != &Stack::kTypeTag) {
    return ctx.Error("input 'handle' is not a stack (",
                     r == nullptr ? std::string("null") : r->DebugString(), ")");
  }
  auto* stack = static_cast<Stack*>(r);
  if (want != DType::kInvalid && stack->dtype() != want) {
    return ctx.Error("the stack holds ", DTypeShortName(stack->dtype()), " values, the op uses ",
                     DTypeShortName(want));
  }
  return stack;
}

// ---- StackV2, Stack --------------------------------------------------------------------------

Status ComputeStack(const KernelContext& ctx) {
  const auto& st = ctx.state<StackState>();
  const int64_t max_size = ctx.num_inputs() > 0 ? ctx.input(0).data<int32_t>()[0] : -1;
  KILN_ASSIGN_OR_RETURN(Tensor * handle, ctx.AllocateOutput(0, Shape()));
  handle->scalar<Handle>() =
      std::make_shared<Stack>(st.dtype, st.name, max_size < 0 ? -1 : max_size);
  return OkStatus();
}

// ---- StackPushV2, StackPush ------------------------------------------------------------------

// The pushed value is also the output (TF's kernel forwards it).
Status ComputePush(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Stack * stack,
                        StackOf(ctx, ctx.input(0), ctx.state<TypedOpState<DType>>().value));
  Status s = stack->Push(ctx.input(1));
  if (!s.ok()) return Wrap(ctx, s);
  ctx.SetOutput(0, ctx.input(1));
  return OkStatus();
}

// ---- StackPopV2, StackPop --------------------------------------------------------------------

Status ComputePop(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Stack * stack,
                        StackOf(ctx, ctx.input(0), ctx.state<TypedOpState<DType>>().value));
  auto value = stack->Pop();
  if (!value.ok()) return Wrap(ctx, value.status());
  ctx.SetOutput(0, std::move(*value));
  return OkStatus();
}

// ---- StackCloseV2, StackClose ----------------------------------------------------------------

Status ComputeClose(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Stack * stack, StackOf(ctx, ctx.input(0), DType::kInvalid));
  stack->Close();
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"StackV2", ComputeStack},      {"StackPushV2", ComputePush}, {"StackPopV2", ComputePop},
    {"StackCloseV2", ComputeClose}, {"Stack", ComputeStack},      {"StackPush", ComputePush},
    {"StackPop", ComputePop},       {"StackClose", ComputeClose},
};

}  // namespace

std::span<const KernelEntry> StackCpuKernels() { return kCpu; }

}  // namespace kiln::exec
