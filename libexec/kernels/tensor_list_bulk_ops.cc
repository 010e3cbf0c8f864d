// TensorList ops that touch many elements at once: TensorListGather, TensorListConcat(V2),
// TensorListScatter(V2), TensorListScatterIntoExistingList, TensorListSplit, TensorListResize,
// TensorListConcatLists and TensorListPushBackBatch. Lists are immutable (see
// tensor_list.h): changed lists are new lists sharing the element buffers.
// The CPU kernels are in kernels/cpu/tensor_list_bulk_ops.cc.
#include "kernels/tensor_list_bulk_ops.h"

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/tensor_list.h"

namespace kiln::exec {
namespace {

using tensor_list::ConstantShape;
using tensor_list::ExpectShapeInput;
using tensor_list_bulk::ConcatV1State;
using tensor_list_bulk::DTypeState;

TensorSpec ListSpec() { return TensorSpec{DType::kVariant, PartialShape::Scalar()}; }

Status PrepareListOp(PrepareContext& ctx, int inputs, DType* element_dtype) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(inputs));
  KILN_PREPARE_ASSIGN(ctx, *element_dtype, ctx.attrs.GetType("element_dtype"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input_handle", DType::kVariant));
  ctx.state = std::make_shared<DTypeState>(*element_dtype);
  return OkStatus();
}

// ---- TensorListGather ------------------------------------------------------------------------

Status PrepareGather(PrepareContext& ctx) {
  DType t;
  KILN_RETURN_IF_ERROR(PrepareListOp(ctx, 3, &t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "indices", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "indices", 1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "element_shape", DType::kInt32));
  const PartialShape elem = ConstantShape(ctx, 2);
  PartialShape out;
  if (!elem.unknown_rank() && elem.rank() < kMaxRank) {
    std::vector<int64_t> dims = {KnownLength(ctx.inputs[1].shape)};
    dims.insert(dims.end(), elem.dims().begin(), elem.dims().end());
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

// ---- TensorListConcatV2 ----------------------------------------------------------------------

Status PrepareConcat(PrepareContext& ctx) {
  DType t;
  KILN_RETURN_IF_ERROR(PrepareListOp(ctx, 3, &t));
  KILN_PREPARE_ASSIGN(ctx, DType shape_type, ctx.attrs.GetType("shape_type"));
  KILN_RETURN_IF_ERROR(
      ExpectAttrDTypeIn(ctx, "shape_type", shape_type, {DType::kInt32, DType::kInt64}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "element_shape", shape_type));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "leading_dims", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "leading_dims", 1));
  const PartialShape elem = ConstantShape(ctx, 1);
  PartialShape out;
  if (!elem.unknown_rank()) {
    if (elem.rank() == 0) return ctx.Error("concat requires elements of rank at least 1");
    std::vector<int64_t> dims(elem.dims().begin(), elem.dims().end());
    dims[0] = -1;
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}, TensorSpec{DType::kInt64, PartialShape{-1}}};
  return OkStatus();
}

// TensorListConcat (v1): the element shape is an attr; no leading dims.
Status PrepareConcatV1(PrepareContext& ctx) {
  DType t;
  KILN_RETURN_IF_ERROR(PrepareListOp(ctx, 1, &t));
  KILN_PREPARE_ASSIGN(ctx, PartialShape elem,
                      ctx.attrs.GetShape("element_shape", PartialShape::UnknownRank()));
  PartialShape out;
  if (!elem.unknown_rank()) {
    if (elem.rank() == 0) return ctx.Error("concat requires elements of rank at least 1");
    std::vector<int64_t> dims(elem.dims().begin(), elem.dims().end());
    dims[0] = -1;
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}, TensorSpec{DType::kInt64, PartialShape{-1}}};
  ctx.state = std::make_shared<ConcatV1State>(t, elem);
  return OkStatus();
}

// ---- TensorListScatter, TensorListScatterV2, TensorListSplit ---------------------------------

// Rows (TensorListScatter: tensor[j] at indices[j]) or pieces (TensorListSplit: tensor's first
// dim cut by lengths) of a tensor as a new list.
template <bool kSplit>
Status PrepareToList(PrepareContext& ctx) {
  const bool v2 = ctx.op == "TensorListScatterV2";
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(v2 ? 4 : 3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("element_dtype"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "tensor", t));
  const int shape_in = kSplit ? 1 : 2;
  KILN_RETURN_IF_ERROR(ExpectShapeInput(ctx, shape_in, "element_shape"));
  if (kSplit) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "lengths", DType::kInt64));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "lengths", 1));
  } else {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "indices", DType::kInt32));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "indices", 1));
  }
  if (v2) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "num_elements", DType::kInt32));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 3, "num_elements", 0));
  }
  const PartialShape& in = ctx.inputs[0].shape;
  if (!in.unknown_rank() && in.rank() == 0)
    return ctx.Error("input 'tensor' must have rank at least 1, got a scalar");
  ctx.outputs = {ListSpec()};
  ctx.state = std::make_shared<DTypeState>(t);
  return OkStatus();
}

// ---- TensorListConcatLists, TensorListPushBackBatch ------------------------------------------

// Variant tensors of lists, element by element: a's list followed by b's (ConcatLists), or
// each list with one more element, a row of `tensor` (PushBackBatch).
Status PrepareBatchOfLists(PrepareContext& ctx) {
  DType t;
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, t, ctx.attrs.GetType("element_dtype"));
  const bool concat = ctx.op == "TensorListConcatLists";
  KILN_RETURN_IF_ERROR(
      ExpectInputDType(ctx, 0, concat ? "input_a" : "input_handles", DType::kVariant));
  KILN_RETURN_IF_ERROR(
      ExpectInputDType(ctx, 1, concat ? "input_b" : "tensor", concat ? DType::kVariant : t));
  ctx.outputs = {TensorSpec{DType::kVariant, ctx.inputs[0].shape}};
  ctx.state = std::make_shared<DTypeState>(t);
  return OkStatus();
}

// ---- TensorListScatterIntoExistingList -------------------------------------------------------

Status PrepareScatter(PrepareContext& ctx) {
  DType t;
  KILN_RETURN_IF_ERROR(PrepareListOp(ctx, 3, &t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "tensor", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "indices", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "indices", 1));
  ctx.outputs = {ListSpec()};
  return OkStatus();
}

// ---- TensorListResize ------------------------------------------------------------------------

Status PrepareResize(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input_handle", DType::kVariant));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "size", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "size", 0));
  ctx.outputs = {ListSpec()};
  ctx.state = std::make_shared<DTypeState>(DType::kInvalid);
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"TensorListGather", "values", kOpFreshOutputs, PrepareGather},
    {"TensorListConcatV2", "tensor,lengths", kOpFreshOutputs, PrepareConcat},
    {"TensorListConcat", "tensor,lengths", kOpFreshOutputs, PrepareConcatV1},
    {"TensorListScatter", "output_handle", kOpNone, PrepareToList<false>},
    {"TensorListScatterV2", "output_handle", kOpNone, PrepareToList<false>},
    {"TensorListSplit", "output_handle", kOpNone, PrepareToList<true>},
    {"TensorListConcatLists", "output", kOpFreshOutputs, PrepareBatchOfLists},
    {"TensorListPushBackBatch", "output_handles", kOpFreshOutputs, PrepareBatchOfLists},
    {"TensorListScatterIntoExistingList", "output_handle", kOpNone, PrepareScatter},
    {"TensorListResize", "output_handle", kOpNone, PrepareResize},
};

}  // namespace

std::span<const OpDefinition> TensorListBulkOpDefs() { return kDefs; }

}  // namespace kiln::exec
