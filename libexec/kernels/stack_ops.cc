// TF1 stacks (what a tf.compat.v1.while_loop's gradient saves its forward values in): StackV2
// makes a new stack each time it runs and hands out a resource handle; StackPushV2 pushes (and
// passes the value on), StackPopV2 pops, StackCloseV2 closes. The TF 1 forms Stack, StackPush,
// StackPop and StackClose take the stack as a reference (Ref(string)), here the same handle.
// Pushes and pops are ordered by the graph's edges, as in TF; a stack is mutable state shared by
// every op holding its handle, so the ops are stateful.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/array_util.h"

namespace kiln::exec {
namespace {

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

struct StackState : OpState {
  DType dtype = DType::kInvalid;
  std::string name;
};

Status PrepareStack(PrepareContext& ctx) {
  const bool v2 = ctx.op == "StackV2";
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(v2 ? 1 : 0));
  if (v2) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "max_size", DType::kInt32));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "max_size", 0));
  }
  auto st = std::make_shared<StackState>();
  KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("elem_type"));
  KILN_PREPARE_ASSIGN(ctx, st->name, ctx.attrs.GetString("stack_name", ""));
  if (st->name.empty()) st->name = std::string(ctx.node_name);
  ctx.outputs = {TensorSpec{DType::kResource, PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

Status ComputeStack(const KernelContext& ctx) {
  const auto& st = ctx.state<StackState>();
  const int64_t max_size = ctx.num_inputs() > 0 ? ctx.input(0).data<int32_t>()[0] : -1;
  KILN_ASSIGN_OR_RETURN(Tensor * handle, ctx.AllocateOutput(0, Shape()));
  handle->scalar<Handle>() =
      std::make_shared<Stack>(st.dtype, st.name, max_size < 0 ? -1 : max_size);
  return OkStatus();
}

// ---- StackPushV2, StackPush ------------------------------------------------------------------

Status PreparePush(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "handle", DType::kResource));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 1, "elem"));
  ctx.outputs = {ctx.inputs[1]};
  ctx.state = std::make_shared<TypedOpState<DType>>(t);
  return OkStatus();
}

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

Status PreparePop(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "handle", DType::kResource));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("elem_type"));
  ctx.outputs = {TensorSpec{t, PartialShape::UnknownRank()}};
  ctx.state = std::make_shared<TypedOpState<DType>>(t);
  return OkStatus();
}

Status ComputePop(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Stack * stack,
                        StackOf(ctx, ctx.input(0), ctx.state<TypedOpState<DType>>().value));
  auto value = stack->Pop();
  if (!value.ok()) return Wrap(ctx, value.status());
  ctx.SetOutput(0, std::move(*value));
  return OkStatus();
}

// ---- StackCloseV2, StackClose ----------------------------------------------------------------

Status PrepareClose(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  return ExpectInputDType(ctx, 0, "handle", DType::kResource);
}

Status ComputeClose(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Stack * stack, StackOf(ctx, ctx.input(0), DType::kInvalid));
  stack->Close();
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"StackV2", "handle", kOpStateful | kOpFreshOutputs, PrepareStack},
    {"StackPushV2", "output", kOpStateful, PreparePush},
    {"StackPopV2", "elem", kOpStateful, PreparePop},
    {"StackCloseV2", "", kOpStateful, PrepareClose},
    {"Stack", "handle", kOpStateful | kOpFreshOutputs, PrepareStack},
    {"StackPush", "output", kOpStateful, PreparePush},
    {"StackPop", "elem", kOpStateful, PreparePop},
    {"StackClose", "", kOpStateful, PrepareClose},
};

constexpr KernelEntry kCpu[] = {
    {"StackV2", ComputeStack},      {"StackPushV2", ComputePush}, {"StackPopV2", ComputePop},
    {"StackCloseV2", ComputeClose}, {"Stack", ComputeStack},      {"StackPush", ComputePush},
    {"StackPop", ComputePop},       {"StackClose", ComputeClose},
};

}  // namespace

std::span<const OpDefinition> StackOpDefs() { return kDefs; }
std::span<const KernelEntry> StackCpuKernels() { return kCpu; }

}  // namespace kiln::exec
