// TF1 tensor arrays (TensorArrayV3 and its Read/Write/Gather/Scatter/Concat/Split/Size/Close
// ops, and the gradient arrays TensorArrayGradV3/GradWithShape of training graphs): a
// TensorArrayV3 node makes a new array each time it runs and hands out a resource handle plus
// a "flow" scalar; the other ops take both, and the flow edges order them. Unlike TensorList
// values, an array is mutable state shared by every op holding its handle, so its ops are
// stateful. Semantics follow TF's TensorArray: an index is written once, a read clears it when
// clear_after_read is set, unwritten elements read as zeros only when the element shape is
// fully known; a gradient array adds up repeated writes to an index.
// The CPU kernels, and the array itself, are in kernels/cpu/tensor_array_ops.cc.
#include "kernels/tensor_array_ops.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/array_util.h"

namespace kiln::exec {
namespace {

using tensor_array::ConcatState;
using tensor_array::DTypeState;
using tensor_array::OptionsState;
using tensor_array::ReadState;

Status ExpectHandleAndFlow(const PrepareContext& ctx, int flow) {
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "handle", DType::kResource));
  if (flow >= 0) KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, flow, "flow_in", DType::kFloat));
  return OkStatus();
}

// ---- TensorArrayV3 ---------------------------------------------------------------------------

Status PrepareTensorArray(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "size", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "size", 0));
  tensor_array::Options o;
  KILN_PREPARE_ASSIGN(ctx, o.dtype, ctx.attrs.GetType("dtype"));
  if (o.dtype == DType::kInvalid) return ctx.Error("attr 'dtype' is invalid");
  KILN_PREPARE_ASSIGN(ctx, o.element_shape,
                      ctx.attrs.GetShape("element_shape", PartialShape::UnknownRank()));
  KILN_PREPARE_ASSIGN(ctx, o.dynamic_size, ctx.attrs.GetBool("dynamic_size", false));
  KILN_PREPARE_ASSIGN(ctx, o.clear_after_read, ctx.attrs.GetBool("clear_after_read", true));
  KILN_PREPARE_ASSIGN(ctx, o.identical_element_shapes,
                      ctx.attrs.GetBool("identical_element_shapes", false));
  KILN_PREPARE_ASSIGN(ctx, o.name, ctx.attrs.GetString("tensor_array_name", ""));
  if (o.name.empty()) o.name = std::string(ctx.node_name);
  ctx.outputs = {TensorSpec{DType::kResource, PartialShape::Scalar()},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()}};
  ctx.state = std::make_shared<OptionsState>(std::move(o));
  return OkStatus();
}

// ---- TensorArrayWriteV3, TensorArrayScatterV3 ------------------------------------------------

Status PrepareWrite(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  KILN_RETURN_IF_ERROR(ExpectHandleAndFlow(ctx, 3));
  const bool scatter = ctx.op == "TensorArrayScatterV3";
  const char* index_name = scatter ? "indices" : "index";
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, index_name, DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, index_name, scatter ? 1 : 0));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 2, "value"));
  ctx.outputs = {TensorSpec{DType::kFloat, PartialShape::Scalar()}};
  ctx.state = std::make_shared<DTypeState>(t);
  return OkStatus();
}

// ---- TensorArrayReadV3, TensorArrayGatherV3 --------------------------------------------------

Status PrepareRead(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_RETURN_IF_ERROR(ExpectHandleAndFlow(ctx, 2));
  const bool gather = ctx.op == "TensorArrayGatherV3";
  const char* index_name = gather ? "indices" : "index";
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, index_name, DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, index_name, gather ? 1 : 0));
  auto state = std::make_shared<ReadState>();
  KILN_PREPARE_ASSIGN(ctx, state->dtype, ctx.attrs.GetType("dtype"));
  PartialShape out;
  if (gather) {
    KILN_PREPARE_ASSIGN(ctx, state->element_shape,
                        ctx.attrs.GetShape("element_shape", PartialShape::UnknownRank()));
    const PartialShape& e = state->element_shape;
    if (!e.unknown_rank() && e.rank() < kMaxRank) {
      std::vector<int64_t> dims = {KnownLength(ctx.inputs[1].shape)};
      dims.insert(dims.end(), e.dims().begin(), e.dims().end());
      out = *PartialShape::FromDims(dims);
    }
  }
  ctx.outputs = {TensorSpec{state->dtype, out}};
  ctx.state = std::move(state);
  return OkStatus();
}

// ---- TensorArrayConcatV3, TensorArraySplitV3 --------------------------------------------------

Status PrepareConcat(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_RETURN_IF_ERROR(ExpectHandleAndFlow(ctx, 1));
  auto st = std::make_shared<ConcatState>();
  KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("dtype"));
  KILN_PREPARE_ASSIGN(ctx, st->except0,
                      ctx.attrs.GetShape("element_shape_except0", PartialShape::UnknownRank()));
  PartialShape out;
  if (!st->except0.unknown_rank() && st->except0.rank() < kMaxRank) {
    std::vector<int64_t> dims = {-1};
    dims.insert(dims.end(), st->except0.dims().begin(), st->except0.dims().end());
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{st->dtype, out}, TensorSpec{DType::kInt64, PartialShape{-1}}};
  ctx.state = std::move(st);
  return OkStatus();
}

Status PrepareSplit(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  KILN_RETURN_IF_ERROR(ExpectHandleAndFlow(ctx, 3));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 1, "value"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "lengths", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "lengths", 1));
  ctx.outputs = {TensorSpec{DType::kFloat, PartialShape::Scalar()}};
  ctx.state = std::make_shared<DTypeState>(t);
  return OkStatus();
}

// ---- TensorArrayGradV3, TensorArrayGradWithShape ------------------------------------------------

Status PrepareGrad(PrepareContext& ctx) {
  const bool with_shape = ctx.op == "TensorArrayGradWithShape";
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(with_shape ? 3 : 2));
  KILN_RETURN_IF_ERROR(ExpectHandleAndFlow(ctx, 1));
  if (with_shape) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "shape_to_prepend", DType::kInt32));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "shape_to_prepend", 1));
  }
  KILN_PREPARE_ASSIGN(ctx, std::string source, ctx.attrs.GetString("source"));
  ctx.outputs = {TensorSpec{DType::kResource, PartialShape::Scalar()},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()}};
  ctx.state = std::make_shared<TypedOpState<std::string>>(std::move(source));
  return OkStatus();
}

// ---- TensorArraySizeV3, TensorArrayCloseV3 ---------------------------------------------------

Status PrepareSize(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_RETURN_IF_ERROR(ExpectHandleAndFlow(ctx, 1));
  ctx.outputs = {TensorSpec{DType::kInt32, PartialShape::Scalar()}};
  return OkStatus();
}

Status PrepareClose(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  return ExpectHandleAndFlow(ctx, -1);
}

// ---- tables ----------------------------------------------------------------------------------

constexpr uint32_t kStatefulFresh = kOpStateful | kOpFreshOutputs;

constexpr OpDefinition kDefs[] = {
    {"TensorArrayV3", "handle,flow", kStatefulFresh, PrepareTensorArray},
    {"TensorArrayWriteV3", "flow_out", kStatefulFresh, PrepareWrite},
    {"TensorArrayScatterV3", "flow_out", kStatefulFresh, PrepareWrite},
    // Not fresh: a read returns the stored element itself.
    {"TensorArrayReadV3", "value", kOpStateful, PrepareRead},
    {"TensorArrayGatherV3", "value", kStatefulFresh, PrepareRead},
    {"TensorArrayConcatV3", "value,lengths", kStatefulFresh, PrepareConcat},
    {"TensorArraySplitV3", "flow_out", kStatefulFresh, PrepareSplit},
    {"TensorArrayGradV3", "grad_handle,flow_out", kStatefulFresh, PrepareGrad},
    {"TensorArrayGradWithShape", "grad_handle,flow_out", kStatefulFresh, PrepareGrad},
    {"TensorArraySizeV3", "size", kStatefulFresh, PrepareSize},
    {"TensorArrayCloseV3", "", kOpStateful, PrepareClose},
};

}  // namespace

std::span<const OpDefinition> TensorArrayOpDefs() { return kDefs; }

}  // namespace kiln::exec
