// Arithmetic on sparse tensors (indices [N, rank] int64, values [N], dense_shape [rank]):
// SparseTensorDenseMatMul (sparse A times dense B, either adjoint), SparseTensorDenseAdd,
// SparseDenseCwiseAdd/Mul/Div (a dense operand broadcast to the sparse shape),
// SparseReduceSum/Max (dense or sparse result), SparseSoftmax, SparseAdd and
// SparseSparseMaximum/Minimum. The CPU kernels are in kernels/cpu/sparse_math_ops.cc.
#include "kernels/sparse_math_ops.h"

#include <cstdint>
#include <memory>
#include <utility>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/sparse_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using sparse_math::Cwise;
using sparse_math::MatMulState;
using sparse_math::MatMulTypes;
using sparse_math::RealNumberTypes;
using sparse_math::ReduceState;

// ---- SparseTensorDenseMatMul ------------------------------------------------------------------

Status PrepareSparseMatMul(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, MatMulTypes::kDTypes));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 0, "a_indices", "Tindices", DType::kInt64).status());
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "a_values", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "a_shape", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "b", t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "a_indices", 2));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "a_values", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "a_shape", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 3, "b", 2));
  auto st = std::make_shared<MatMulState>();
  KILN_PREPARE_ASSIGN(ctx, st->adjoint_a, ctx.attrs.GetBool("adjoint_a", false));
  KILN_PREPARE_ASSIGN(ctx, st->adjoint_b, ctx.attrs.GetBool("adjoint_b", false));
  int64_t rows = -1;
  if (const Tensor* shape = ConstantInput(ctx, 2); shape != nullptr && shape->NumElements() == 2)
    rows = shape->data<int64_t>()[st->adjoint_a ? 1 : 0];
  const PartialShape& b = ctx.inputs[3].shape;
  const int64_t cols = b.unknown_rank() ? -1 : b.dim(st->adjoint_b ? 0 : 1);
  ctx.outputs = {TensorSpec{t, PartialShape{rows, cols}}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- SparseTensorDenseAdd ---------------------------------------------------------------------

Status PrepareSparseDenseAdd(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, NumberTypes::kDTypes));
  KILN_ASSIGN_OR_RETURN(DType ti, IndexInputDType(ctx, 0, "a_indices", "Tindices"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "a_values", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "a_shape", ti));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "b", t));
  ctx.outputs = {TensorSpec{t, ctx.inputs[3].shape}};
  return OkStatus();
}

// ---- SparseDenseCwiseAdd, SparseDenseCwiseMul, SparseDenseCwiseDiv ----------------------------

Status PrepareCwise(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, NumberTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectSparseInputs(ctx, 0, t, "sp_"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "dense", t));
  const Cwise op = ctx.op == "SparseDenseCwiseAdd"   ? Cwise::kAdd
                   : ctx.op == "SparseDenseCwiseMul" ? Cwise::kMul
                                                     : Cwise::kDiv;
  ctx.outputs = {TensorSpec{t, ctx.inputs[1].shape}};
  ctx.state = std::make_shared<TypedOpState<Cwise>>(op);
  return OkStatus();
}

// ---- SparseReduceSum, SparseReduceMax (and their Sparse forms) -------------------------------

Status PrepareSparseReduce(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  auto st = std::make_shared<ReduceState>();
  st->max = ctx.op.starts_with("SparseReduceMax");
  st->sparse_out = ctx.op.ends_with("Sparse");
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  if (st->max) {
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, RealNumberTypes::kDTypes));
  } else {
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, NumberTypes::kDTypes));
  }
  KILN_RETURN_IF_ERROR(ExpectSparseInputs(ctx, 0, t, "input_"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "reduction_axes", DType::kInt32));
  KILN_PREPARE_ASSIGN(ctx, st->keep_dims, ctx.attrs.GetBool("keep_dims", false));
  if (st->sparse_out) {
    ctx.outputs = {TensorSpec{DType::kInt64, PartialShape{-1, -1}}, TensorSpec{t, PartialShape{-1}},
                   TensorSpec{DType::kInt64, PartialShape{-1}}};
  } else {
    ctx.outputs = {TensorSpec{t, PartialShape::UnknownRank()}};
  }
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- SparseSoftmax ---------------------------------------------------------------------------

Status PrepareSparseSoftmax(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(
      ExpectAttrDTypeIn(ctx, "T", t, {DType::kFloat, DType::kDouble, DType::kHalf}));
  KILN_RETURN_IF_ERROR(ExpectSparseInputs(ctx, 0, t, "sp_"));
  ctx.outputs = {TensorSpec{t, ctx.inputs[1].shape}};
  return OkStatus();
}

// ---- SparseAdd, SparseSparseMaximum, SparseSparseMinimum -------------------------------------

Status PrepareSparseAdd(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(7));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, NumberTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectSparseInputs(ctx, 0, t, "a_"));
  KILN_RETURN_IF_ERROR(ExpectSparseInputs(ctx, 3, t, "b_"));
  KILN_PREPARE_ASSIGN(ctx, DType treal, ctx.attrs.GetType("Treal"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 6, "thresh", treal));
  ctx.outputs = {TensorSpec{DType::kInt64, PartialShape{-1, -1}}, TensorSpec{t, PartialShape{-1}},
                 TensorSpec{DType::kInt64, PartialShape{-1}}};
  return OkStatus();
}

Status PrepareSparseSparseMinMax(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(6));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, RealNumberTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectSparseInputs(ctx, 0, t, "a_"));
  KILN_RETURN_IF_ERROR(ExpectSparseInputs(ctx, 3, t, "b_"));
  ctx.outputs = {TensorSpec{DType::kInt64, PartialShape{-1, -1}}, TensorSpec{t, PartialShape{-1}}};
  ctx.state = std::make_shared<TypedOpState<bool>>(ctx.op == "SparseSparseMaximum");
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"SparseTensorDenseMatMul", "product", kOpFreshOutputs, PrepareSparseMatMul},
    {"SparseTensorDenseAdd", "output", kOpFreshOutputs, PrepareSparseDenseAdd},
    {"SparseDenseCwiseAdd", "output", kOpFreshOutputs, PrepareCwise},
    {"SparseDenseCwiseMul", "output", kOpFreshOutputs, PrepareCwise},
    {"SparseDenseCwiseDiv", "output", kOpFreshOutputs, PrepareCwise},
    {"SparseReduceSum", "output", kOpFreshOutputs, PrepareSparseReduce},
    {"SparseReduceMax", "output", kOpFreshOutputs, PrepareSparseReduce},
    {"SparseReduceSumSparse", "output_indices,output_values,output_shape", kOpFreshOutputs,
     PrepareSparseReduce},
    {"SparseReduceMaxSparse", "output_indices,output_values,output_shape", kOpFreshOutputs,
     PrepareSparseReduce},
    {"SparseSoftmax", "output", kOpFreshOutputs, PrepareSparseSoftmax},
    {"SparseAdd", "sum_indices,sum_values,sum_shape", kOpFreshOutputs, PrepareSparseAdd},
    {"SparseSparseMaximum", "output_indices,output_values", kOpFreshOutputs,
     PrepareSparseSparseMinMax},
    {"SparseSparseMinimum", "output_indices,output_values", kOpFreshOutputs,
     PrepareSparseSparseMinMax},
};

}  // namespace

std::span<const OpDefinition> SparseMathOpDefs() { return kDefs; }

}  // namespace kiln::exec
