// TensorList ops: how TF 2 graphs hold tf.TensorArray (and lists built in loops). A list is a
// scalar DT_VARIANT tensor holding an immutable TensorList; ops that change it return a new
// list sharing the element buffers. Element shapes given as tensors use TF's encoding: a
// scalar -1 is an unknown rank, a vector holds the dims with -1 for unknown ones.
// The TensorList value itself (tensor_list.h) is defined here too; the CPU kernels are in
// kernels/cpu/tensor_list_ops.cc.
#include "kernels/tensor_list_ops.h"

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/tensor_list.h"

namespace kiln::exec {

// ---- TensorList ------------------------------------------------------------------------------

std::string TensorList::DebugString() const {
  return internal::StrCat("TensorList<", DTypeShortName(element_dtype_),
                          ", element_shape=", element_shape_.ToPythonString(),
                          ", size=", tensors_.size(), ">");
}

Tensor TensorList::Wrap(std::shared_ptr<const TensorList> list) {
  Tensor t(DType::kVariant, Shape());
  t.scalar<std::shared_ptr<const VariantBase>>() = std::move(list);
  return t;
}

Result<const TensorList*> TensorList::From(const Tensor& t, std::string_view input) {
  if (t.dtype() != DType::kVariant || t.rank() != 0)
    return InvalidArgument("input '", input,
                           "': expected a scalar variant holding a TensorList, got ",
                           t.DebugString());
  const auto& v = t.scalar<std::shared_ptr<const VariantBase>>();
  if (v == nullptr) return InvalidArgument("input '", input, "': the variant is empty");
  const auto* list = dynamic_cast<const TensorList*>(v.get());
  if (list == nullptr)
    return InvalidArgument("input '", input, "': expected a TensorList, got ", v->TypeName());
  return list;
}

namespace tensor_list {

// ---- element shapes as tensors ---------------------------------------------------------------

Result<PartialShape> ShapeFromTensor(const Tensor& t, std::string_view input) {
  std::vector<int64_t> dims;
  if (t.dtype() == DType::kInt32) {
    for (int32_t d : t.flat<int32_t>()) dims.push_back(d);
  } else if (t.dtype() == DType::kInt64) {
    for (int64_t d : t.flat<int64_t>()) dims.push_back(d);
  } else {
    return InvalidArgument("input '", input, "': expected an int32 or int64 shape, got ",
                           DTypeShortName(t.dtype()));
  }
  if (t.rank() == 0) {
    if (dims[0] != -1)
      return InvalidArgument("input '", input, "': a scalar shape must be -1 (unknown rank), got ",
                             dims[0]);
    return PartialShape::UnknownRank();
  }
  if (t.rank() != 1)
    return InvalidArgument("input '", input, "': expected a shape vector, got shape ",
                           t.shape().ToString());
  KILN_ASSIGN_OR_RETURN_CTX(PartialShape s, PartialShape::FromDims(dims), "input '", input, "'");
  return s;
}

// The shape an element_shape input gives at prepare time: known when it is a constant.
PartialShape ConstantShape(const PrepareContext& ctx, int i) {
  if (i >= static_cast<int>(ctx.constant_inputs.size()) || ctx.constant_inputs[i] == nullptr)
    return PartialShape::UnknownRank();
  auto s = ShapeFromTensor(*ctx.constant_inputs[i], "element_shape");
  return s.ok() ? *s : PartialShape::UnknownRank();
}

Status ExpectShapeInput(const PrepareContext& ctx, int i, std::string_view name) {
  DType t = ctx.inputs[i].dtype;
  if (t == DType::kInt32 || t == DType::kInt64) return OkStatus();
  return ctx.Error("input '", name, "': expected dtype int32 or int64, got ", DTypeShortName(t));
}

// ---- items in one block ----------------------------------------------------------------------

namespace {

struct ItemBlock {
  ~ItemBlock() {
    buffers.reset();  // the views go before the memory they view
    std::free(memory);
  }
  void* memory = nullptr;
  std::unique_ptr<std::optional<TensorBuffer>[]> buffers;
};

}  // namespace

Result<std::vector<Tensor>> AllocateItems(DType dtype, const Shape& shape, int64_t n,
                                          std::string_view what) {
  KILN_DCHECK(DTypeIsPod(dtype));
  std::vector<Tensor> items;
  if (n <= 0) return items;
  const int64_t elements = shape.num_elements();
  const size_t stride = (DTypeSize(dtype) * static_cast<size_t>(elements) + 63) / 64 * 64;
  auto block = std::make_shared<ItemBlock>();
  if (stride > 0) {
    block->memory = std::aligned_alloc(64, stride * static_cast<size_t>(n));
    if (block->memory == nullptr)
      return ResourceExhausted("out of memory for ", what, ": ", n, " items of shape ",
                               shape.ToString());
  }
  block->buffers = std::make_unique<std::optional<TensorBuffer>[]>(static_cast<size_t>(n));
  items.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    std::optional<TensorBuffer>& b = block->buffers[static_cast<size_t>(i)];
    b.emplace(dtype, elements, static_cast<char*>(block->memory) + i * stride, nullptr,
              /*transient=*/false);
    items.emplace_back(dtype, shape, std::shared_ptr<TensorBuffer>(block, &*b));
  }
  return items;
}

}  // namespace tensor_list

namespace {

using tensor_list::ConstantShape;
using tensor_list::ExpectShapeInput;
using tensor_list_ops::ListState;

TensorSpec ListSpec() { return TensorSpec{DType::kVariant, PartialShape::Scalar()}; }

Status ReadElementDType(PrepareContext& ctx, std::shared_ptr<ListState>* state) {
  *state = std::make_shared<ListState>();
  KILN_PREPARE_ASSIGN(ctx, (*state)->element_dtype, ctx.attrs.GetType("element_dtype"));
  return OkStatus();
}

// ---- EmptyTensorList, TensorListReserve ------------------------------------------------------

Status PrepareNewList(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  std::shared_ptr<ListState> state;
  KILN_RETURN_IF_ERROR(ReadElementDType(ctx, &state));
  KILN_RETURN_IF_ERROR(ExpectShapeInput(ctx, 0, "element_shape"));
  const std::string_view count = ctx.op == "EmptyTensorList" ? "max_num_elements" : "num_elements";
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, count, DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, count, 0));
  ctx.outputs = {ListSpec()};
  ctx.state = std::move(state);
  return OkStatus();
}

// ---- TensorListSetItem, TensorListGetItem ----------------------------------------------------

Status PrepareSetItem(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  std::shared_ptr<ListState> state;
  KILN_RETURN_IF_ERROR(ReadElementDType(ctx, &state));
  KILN_PREPARE_ASSIGN(ctx, state->resize,
                      ctx.attrs.GetBool("resize_if_index_out_of_bounds", false));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input_handle", DType::kVariant));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "index", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "item", state->element_dtype));
  ctx.outputs = {ListSpec()};
  ctx.state = std::move(state);
  return OkStatus();
}

Status PrepareGetItem(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  std::shared_ptr<ListState> state;
  KILN_RETURN_IF_ERROR(ReadElementDType(ctx, &state));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input_handle", DType::kVariant));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "index", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectShapeInput(ctx, 2, "element_shape"));
  ctx.outputs = {TensorSpec{state->element_dtype, ConstantShape(ctx, 2)}};
  ctx.state = std::move(state);
  return OkStatus();
}

// ---- TensorListLength, TensorListElementShape ------------------------------------------------

Status PrepareLength(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input_handle", DType::kVariant));
  ctx.outputs = {TensorSpec{DType::kInt32, PartialShape::Scalar()}};
  return OkStatus();
}

Status PrepareElementShape(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input_handle", DType::kVariant));
  auto state = std::make_shared<ListState>();
  KILN_PREPARE_ASSIGN(ctx, state->element_dtype, ctx.attrs.GetType("shape_type", DType::kInt32));
  KILN_RETURN_IF_ERROR(
      ExpectAttrDTypeIn(ctx, "shape_type", state->element_dtype, {DType::kInt32, DType::kInt64}));
  ctx.outputs = {TensorSpec{state->element_dtype, PartialShape::UnknownRank()}};
  ctx.state = std::move(state);
  return OkStatus();
}

// ---- TensorListStack, TensorListFromTensor ---------------------------------------------------

Status PrepareStack(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  std::shared_ptr<ListState> state;
  KILN_RETURN_IF_ERROR(ReadElementDType(ctx, &state));
  KILN_PREPARE_ASSIGN(ctx, state->num_elements, ctx.attrs.GetInt("num_elements", -1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input_handle", DType::kVariant));
  KILN_RETURN_IF_ERROR(ExpectShapeInput(ctx, 1, "element_shape"));
  PartialShape elem = ConstantShape(ctx, 1);
  PartialShape out = PartialShape::UnknownRank();
  if (!elem.unknown_rank() && elem.rank() < kMaxRank) {
    std::vector<int64_t> dims = {state->num_elements < 0 ? -1 : state->num_elements};
    dims.insert(dims.end(), elem.dims().begin(), elem.dims().end());
    auto s = PartialShape::FromDims(dims);
    if (s.ok()) out = *s;
  }
  ctx.outputs = {TensorSpec{state->element_dtype, out}};
  ctx.state = std::move(state);
  return OkStatus();
}

Status PrepareFromTensor(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  std::shared_ptr<ListState> state;
  KILN_RETURN_IF_ERROR(ReadElementDType(ctx, &state));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "tensor", state->element_dtype));
  KILN_RETURN_IF_ERROR(ExpectShapeInput(ctx, 1, "element_shape"));
  const PartialShape& in = ctx.inputs[0].shape;
  if (!in.unknown_rank() && in.rank() == 0)
    return ctx.Error("input 'tensor' must have rank at least 1, got a scalar");
  ctx.outputs = {ListSpec()};
  ctx.state = std::move(state);
  return OkStatus();
}

// ---- TensorListPushBack, TensorListPopBack ---------------------------------------------------

Status PreparePushBack(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  std::shared_ptr<ListState> state;
  KILN_RETURN_IF_ERROR(ReadElementDType(ctx, &state));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input_handle", DType::kVariant));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "tensor", state->element_dtype));
  ctx.outputs = {ListSpec()};
  ctx.state = std::move(state);
  return OkStatus();
}

Status PreparePopBack(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  std::shared_ptr<ListState> state;
  KILN_RETURN_IF_ERROR(ReadElementDType(ctx, &state));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input_handle", DType::kVariant));
  KILN_RETURN_IF_ERROR(ExpectShapeInput(ctx, 1, "element_shape"));
  ctx.outputs = {ListSpec(), TensorSpec{state->element_dtype, ConstantShape(ctx, 1)}};
  ctx.state = std::move(state);
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"EmptyTensorList", "handle", kOpNone, PrepareNewList},
    {"TensorListReserve", "handle", kOpNone, PrepareNewList},
    {"TensorListSetItem", "output_handle", kOpNone, PrepareSetItem},
    {"TensorListGetItem", "item", kOpNone, PrepareGetItem},
    {"TensorListLength", "length", kOpFreshOutputs, PrepareLength},
    {"TensorListElementShape", "element_shape", kOpNone, PrepareElementShape},
    {"TensorListStack", "tensor", kOpFreshOutputs, PrepareStack},
    {"TensorListFromTensor", "output_handle", kOpNone, PrepareFromTensor},
    {"TensorListPushBack", "output_handle", kOpNone, PreparePushBack},
    {"TensorListPopBack", "output_handle,tensor", kOpNone, PreparePopBack},
};

}  // namespace

std::span<const OpDefinition> TensorListOpDefs() { return kDefs; }

}  // namespace kiln::exec
