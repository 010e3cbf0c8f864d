// The CPU kernels of the TensorList ops in kernels/tensor_list_ops.cc. Changed lists are new
// lists sharing the element buffers; unset elements read (and stack) as zeros where the element
// shape is fully known.
#include "kernels/tensor_list_ops.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/tensor_list.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace tensor_list {

Result<int64_t> ScalarInt(const Tensor& t, std::string_view input) {
  if (t.rank() != 0)
    return InvalidArgument("input '", input, "' must be a scalar, got shape ",
                           t.shape().ToString());
  if (t.dtype() == DType::kInt32) return t.scalar<int32_t>();
  if (t.dtype() == DType::kInt64) return t.scalar<int64_t>();
  return InvalidArgument("input '", input, "': expected int32, got ", DTypeShortName(t.dtype()));
}

}  // namespace tensor_list

namespace {

using tensor_list::ScalarInt;
using tensor_list::ShapeFromTensor;
using tensor_list_ops::ListState;

const ListState& StateOf(const KernelContext& ctx) { return ctx.state<ListState>(); }

Status CheckElementDType(const KernelContext& ctx, const TensorList& list) {
  const DType want = StateOf(ctx).element_dtype;
  if (list.element_dtype() == want) return OkStatus();
  return ctx.Error("the list holds ", DTypeShortName(list.element_dtype()),
                   " elements, the op's element_dtype is ", DTypeShortName(want));
}

Status CheckIndex(const KernelContext& ctx, int64_t index, const TensorList& list) {
  if (index >= 0 && index < list.size()) return OkStatus();
  return ctx.Error("index ", index, " is out of range for a list of size ", list.size());
}

Status CheckItemShape(const KernelContext& ctx, const Tensor& item, const TensorList& list) {
  if (list.element_shape().IsCompatibleWith(item.shape())) return OkStatus();
  return ctx.Error("item of shape ", item.shape().ToString(),
                   " is not compatible with the list's element shape ",
                   list.element_shape().ToPythonString());
}

// Element `i`, or zeros when it was never set and the element shape is fully known.
Result<Tensor> ElementOrZeros(const KernelContext& ctx, const TensorList& list, int64_t i,
                              const PartialShape& requested) {
  const Tensor& t = list.tensors()[i];
  if (t.IsInitialized()) return t;
  auto shape = list.element_shape().MergeWith(requested);
  if (!shape.ok())
    return ctx.Error("element_shape ", requested.ToPythonString(),
                     " is not compatible with the list's element shape ",
                     list.element_shape().ToPythonString());
  if (!shape->IsFullyDefined())
    return ctx.Error("element ", i, " was never set and its shape ", shape->ToPythonString(),
                     " is not fully defined, so it cannot be read as zeros");
  KILN_ASSIGN_OR_RETURN(Shape s, shape->ToShape());
  return Tensor(list.element_dtype(), s);
}

// ---- EmptyTensorList, TensorListReserve ------------------------------------------------------

Status ComputeEmptyTensorList(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN_CTX(PartialShape shape, ShapeFromTensor(ctx.input(0), "element_shape"),
                            "node '", ctx.node_name(), "'");
  KILN_ASSIGN_OR_RETURN_CTX(int64_t max, ScalarInt(ctx.input(1), "max_num_elements"), "node '",
                            ctx.node_name(), "'");
  ctx.SetOutput(0, TensorList::Wrap(std::make_shared<const TensorList>(
                       StateOf(ctx).element_dtype, shape, std::vector<Tensor>(), max)));
  return OkStatus();
}

Status ComputeTensorListReserve(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN_CTX(PartialShape shape, ShapeFromTensor(ctx.input(0), "element_shape"),
                            "node '", ctx.node_name(), "'");
  KILN_ASSIGN_OR_RETURN_CTX(int64_t n, ScalarInt(ctx.input(1), "num_elements"), "node '",
                            ctx.node_name(), "'");
  if (n < 0) return ctx.Error("num_elements must not be negative, got ", n);
  ctx.SetOutput(0, TensorList::Wrap(std::make_shared<const TensorList>(
                       StateOf(ctx).element_dtype, shape, std::vector<Tensor>(n))));
  return OkStatus();
}

// ---- TensorListSetItem, TensorListGetItem ----------------------------------------------------

Status ComputeSetItem(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN_CTX(const TensorList* list, TensorList::From(ctx.input(0), "input_handle"),
                            "node '", ctx.node_name(), "'");
  KILN_RETURN_IF_ERROR(CheckElementDType(ctx, *list));
  KILN_ASSIGN_OR_RETURN_CTX(int64_t index, ScalarInt(ctx.input(1), "index"), "node '",
                            ctx.node_name(), "'");
  const Tensor& item = ctx.input(2);
  std::vector<Tensor> tensors = list->tensors();  // shares the element buffers
  if (StateOf(ctx).resize && index >= list->size()) {
    tensors.resize(index + 1);
  } else {
    KILN_RETURN_IF_ERROR(CheckIndex(ctx, index, *list));
  }
  KILN_RETURN_IF_ERROR(CheckItemShape(ctx, item, *list));
  tensors[index] = item;
  ctx.SetOutput(0, TensorList::Wrap(std::make_shared<const TensorList>(
                       list->element_dtype(), list->element_shape(), std::move(tensors),
                       list->max_num_elements())));
  return OkStatus();
}

Status ComputeGetItem(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN_CTX(const TensorList* list, TensorList::From(ctx.input(0), "input_handle"),
                            "node '", ctx.node_name(), "'");
  KILN_RETURN_IF_ERROR(CheckElementDType(ctx, *list));
  KILN_ASSIGN_OR_RETURN_CTX(int64_t index, ScalarInt(ctx.input(1), "index"), "node '",
                            ctx.node_name(), "'");
  KILN_RETURN_IF_ERROR(CheckIndex(ctx, index, *list));
  KILN_ASSIGN_OR_RETURN_CTX(PartialShape requested, ShapeFromTensor(ctx.input(2), "element_shape"),
                            "node '", ctx.node_name(), "'");
  KILN_ASSIGN_OR_RETURN(Tensor item, ElementOrZeros(ctx, *list, index, requested));
  ctx.SetOutput(0, std::move(item));
  return OkStatus();
}

// ---- TensorListLength, TensorListElementShape ------------------------------------------------

Status ComputeLength(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN_CTX(const TensorList* list, TensorList::From(ctx.input(0), "input_handle"),
                            "node '", ctx.node_name(), "'");
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, DType::kInt32, Shape()));
  out->scalar<int32_t>() = static_cast<int32_t>(list->size());
  return OkStatus();
}

Status ComputeElementShape(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN_CTX(const TensorList* list, TensorList::From(ctx.input(0), "input_handle"),
                            "node '", ctx.node_name(), "'");
  const PartialShape& s = list->element_shape();
  const DType dt = StateOf(ctx).element_dtype;
  KILN_ASSIGN_OR_RETURN(Tensor * out_ptr,
                        ctx.AllocateOutput(0, dt, s.unknown_rank() ? Shape() : Shape{s.rank()}));
  Tensor& out = *out_ptr;
  auto fill = [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (s.unknown_rank()) {
      out.scalar<T>() = -1;
    } else {
      for (int i = 0; i < s.rank(); ++i) out.data<T>()[i] = static_cast<T>(s.dim(i));
    }
    return OkStatus();
  };
  return Dispatch<TypeList<int32_t, int64_t>>(dt, fill);
}

// ---- TensorListStack, TensorListFromTensor ---------------------------------------------------

Status ComputeStack(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN_CTX(const TensorList* list, TensorList::From(ctx.input(0), "input_handle"),
                            "node '", ctx.node_name(), "'");
  KILN_RETURN_IF_ERROR(CheckElementDType(ctx, *list));
  const int64_t n = list->size();
  const int64_t want = StateOf(ctx).num_elements;
  if (want >= 0 && want != n)
    return ctx.Error("attr num_elements is ", want, ", but the list has ", n, " elements");
  KILN_ASSIGN_OR_RETURN_CTX(PartialShape requested, ShapeFromTensor(ctx.input(1), "element_shape"),
                            "node '", ctx.node_name(), "'");
  auto merged = list->element_shape().MergeWith(requested);
  if (!merged.ok())
    return ctx.Error("element_shape ", requested.ToPythonString(),
                     " is not compatible with the list's element shape ",
                     list->element_shape().ToPythonString());
  PartialShape elem = *merged;
  for (int64_t i = 0; i < n; ++i) {
    const Tensor& t = list->tensors()[i];
    if (!t.IsInitialized()) continue;
    if (!elem.IsCompatibleWith(t.shape()))
      return ctx.Error("element ", i, " has shape ", t.shape().ToString(),
                       ", not compatible with the element shape ", elem.ToPythonString(),
                       " of the others");
    elem = *elem.MergeWith(PartialShape(t.shape()));
  }
  if (!elem.IsFullyDefined())
    return ctx.Error("cannot stack ", n == 0 ? "an empty list" : "a list with unset elements",
                     " whose element shape ", elem.ToPythonString(), " is not fully defined");
  if (elem.rank() + 1 > kMaxRank)
    return ctx.Error("stacking elements of rank ", elem.rank(), " exceeds the maximum rank ",
                     kMaxRank);
  Shape out_shape;
  out_shape.AddDim(n);
  for (int64_t d : elem.dims()) out_shape.AddDim(d);
  KILN_ASSIGN_OR_RETURN(Tensor * out_ptr, ctx.AllocateOutput(0, list->element_dtype(), out_shape));
  Tensor& out = *out_ptr;
  const int64_t per = out_shape.num_elements() / std::max<int64_t>(n, 1);
  for (int64_t i = 0; i < n && per > 0; ++i) {
    const Tensor& t = list->tensors()[i];
    if (t.IsInitialized()) {
      CopyElementRange(t, 0, &out, i * per, per);
    } else if (DTypeIsPod(out.dtype())) {  // unset elements stack as zeros, as in TF
      const size_t sz = DTypeSize(out.dtype());
      std::memset(static_cast<char*>(out.raw_data()) + i * per * sz, 0, per * sz);
    }
  }
  return OkStatus();
}

Status ComputeFromTensor(const KernelContext& ctx) {
  const Tensor& t = ctx.input(0);
  if (t.rank() == 0) return ctx.Error("input 'tensor' must have rank at least 1, got a scalar");
  KILN_ASSIGN_OR_RETURN_CTX(PartialShape elem, ShapeFromTensor(ctx.input(1), "element_shape"),
                            "node '", ctx.node_name(), "'");
  Shape item_shape;
  for (int d = 1; d < t.rank(); ++d) item_shape.AddDim(t.dim(d));
  if (!elem.IsCompatibleWith(item_shape))
    return ctx.Error("element_shape ", elem.ToPythonString(),
                     " is not compatible with the slices of input 'tensor' of shape ",
                     t.shape().ToString());
  const int64_t n = t.dim(0);
  const int64_t per = item_shape.num_elements();
  // POD items share one block (tensor_list::AllocateItems); strings and handles each get their
  // own buffer. Not zero-filled first: every element is written by the copy.
  std::vector<Tensor> tensors;
  if (DTypeIsPod(t.dtype())) {
    KILN_ASSIGN_OR_RETURN_CTX(tensors,
                              tensor_list::AllocateItems(t.dtype(), item_shape, n, "the list"),
                              "node '", ctx.node_name(), "'");
  } else {
    tensors.reserve(n);
    for (int64_t i = 0; i < n; ++i) {
      KILN_ASSIGN_OR_RETURN_CTX(Tensor item,
                                Tensor::Allocate(CpuAllocator(), t.dtype(), item_shape), "node '",
                                ctx.node_name(), "'");
      tensors.push_back(std::move(item));
    }
  }
  for (int64_t i = 0; i < n; ++i) CopyElementRange(t, i * per, &tensors[i], 0, per);
  ctx.SetOutput(
      0, TensorList::Wrap(std::make_shared<const TensorList>(t.dtype(), elem, std::move(tensors))));
  return OkStatus();
}

// ---- TensorListPushBack, TensorListPopBack ---------------------------------------------------

Status ComputePushBack(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN_CTX(const TensorList* list, TensorList::From(ctx.input(0), "input_handle"),
                            "node '", ctx.node_name(), "'");
  KILN_RETURN_IF_ERROR(CheckElementDType(ctx, *list));
  const Tensor& item = ctx.input(1);
  KILN_RETURN_IF_ERROR(CheckItemShape(ctx, item, *list));
  if (list->max_num_elements() >= 0 && list->size() >= list->max_num_elements())
    return ctx.Error("cannot push onto a full list: it holds its maximum of ",
                     list->max_num_elements(), " elements");
  std::vector<Tensor> tensors;
  tensors.reserve(list->size() + 1);
  tensors = list->tensors();
  tensors.push_back(item);
  ctx.SetOutput(0, TensorList::Wrap(std::make_shared<const TensorList>(
                       list->element_dtype(), list->element_shape(), std::move(tensors),
                       list->max_num_elements())));
  return OkStatus();
}

Status ComputePopBack(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN_CTX(const TensorList* list, TensorList::From(ctx.input(0), "input_handle"),
                            "node '", ctx.node_name(), "'");
  KILN_RETURN_IF_ERROR(CheckElementDType(ctx, *list));
  if (list->size() == 0) return ctx.Error("cannot pop from an empty list");
  KILN_ASSIGN_OR_RETURN_CTX(PartialShape requested, ShapeFromTensor(ctx.input(1), "element_shape"),
                            "node '", ctx.node_name(), "'");
  KILN_ASSIGN_OR_RETURN(Tensor item, ElementOrZeros(ctx, *list, list->size() - 1, requested));
  std::vector<Tensor> tensors(list->tensors().begin(), list->tensors().end() - 1);
  ctx.SetOutput(0, TensorList::Wrap(std::make_shared<const TensorList>(
                       list->element_dtype(), list->element_shape(), std::move(tensors),
                       list->max_num_elements())));
  ctx.SetOutput(1, std::move(item));
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"EmptyTensorList", ComputeEmptyTensorList}, {"TensorListReserve", ComputeTensorListReserve},
    {"TensorListSetItem", ComputeSetItem},       {"TensorListGetItem", ComputeGetItem},
    {"TensorListLength", ComputeLength},         {"TensorListElementShape", ComputeElementShape},
    {"TensorListStack", ComputeStack},           {"TensorListFromTensor", ComputeFromTensor},
    {"TensorListPushBack", ComputePushBack},     {"TensorListPopBack", ComputePopBack},
};

}  // namespace

std::span<const KernelEntry> TensorListCpuKernels() { return kCpu; }

}  // namespace kiln::exec
