// Gradients of the sparse segment reductions (what a train step through SparseSegment{Sum,Mean,
// SqrtN} holds):
//   SparseSegment{Sum,Mean,SqrtN}Grad(grad, indices, segment_ids, output_dim0): an
//     [output_dim0, ...] tensor where row indices[i] accumulates grad row segment_ids[i], scaled
//     by 1 (Sum), 1 / count (Mean) or 1 / sqrt(count) (SqrtN), count being how often that
//     segment id occurs; rows no index names are 0.
//   SparseSegment{Sum,Mean,SqrtN}GradV2(grad, indices, segment_ids, dense_output_dim0): the same
//     rows, only those of the sorted unique indices, and those indices as a second output.
// Definitions; the CPU kernels are in kernels/cpu/segment_grad_ops.cc.
#include <initializer_list>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

constexpr std::initializer_list<DType> kIndexDTypes = {DType::kInt32, DType::kInt64};

template <bool kV2>
Status PrepareSparseSegmentGrad(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, FloatTypes::kDTypes));
  KILN_PREPARE_ASSIGN(ctx, DType tidx, ctx.attrs.GetType("Tidx", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tidx", tidx, kIndexDTypes));
  KILN_PREPARE_ASSIGN(ctx, DType tseg, ctx.attrs.GetType("Tsegmentids", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tsegmentids", tseg, kIndexDTypes));
  const char* dim0_name = kV2 ? "dense_output_dim0" : "output_dim0";
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "grad", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "indices", tidx));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "segment_ids", tseg));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, dim0_name, DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "indices", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "segment_ids", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 3, dim0_name, 0));
  const PartialShape& grad = ctx.inputs[0].shape;
  if (grad.rank() == 0) return ctx.Error("input 'grad' must have rank >= 1, got a scalar");
  int64_t rows = -1;
  if (const Tensor* n = ConstantInput(ctx, 3); n != nullptr && !kV2) {
    rows = n->scalar<int32_t>();
    if (rows < 0) return ctx.Error("input 'output_dim0' must be non-negative, got ", rows);
  }
  PartialShape out = PartialShape::UnknownRank();
  if (!grad.unknown_rank()) {
    std::vector<int64_t> dims(grad.dims().begin(), grad.dims().end());
    dims[0] = rows;
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  if (kV2) ctx.outputs.push_back(TensorSpec{tidx, PartialShape{-1}});
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"SparseSegmentSumGrad", "output", kOpFreshOutputs, PrepareSparseSegmentGrad<false>},
    {"SparseSegmentMeanGrad", "output", kOpFreshOutputs, PrepareSparseSegmentGrad<false>},
    {"SparseSegmentSqrtNGrad", "output", kOpFreshOutputs, PrepareSparseSegmentGrad<false>},
    {"SparseSegmentSumGradV2", "output,sorted_unique_indices", kOpFreshOutputs,
     PrepareSparseSegmentGrad<true>},
    {"SparseSegmentMeanGradV2", "output,sorted_unique_indices", kOpFreshOutputs,
     PrepareSparseSegmentGrad<true>},
    {"SparseSegmentSqrtNGradV2", "output,sorted_unique_indices", kOpFreshOutputs,
     PrepareSparseSegmentGrad<true>},
};

}  // namespace

std::span<const OpDefinition> SegmentGradOpDefs() { return kDefs; }

}  // namespace kiln::exec
