// Segment reductions: rows of `data` (dim 0; the rest of each row is reduced element-wise) are
// combined into output rows by segment id.
//   Segment{Sum,Mean,Prod,Max,Min}(data, segment_ids): sorted ids, one per data row; the output
//     has last id + 1 rows, empty segments 0 (1 for Prod).
//   UnsortedSegment{Sum,Prod,Max,Min}(data, segment_ids, num_segments): ids of any order and the
//     shape of a prefix of data's shape; negative ids drop their rows; empty segments hold the
//     reduction's identity (the lowest / highest value for Max / Min).
//   SparseSegment{Sum,Mean,SqrtN}[WithNumSegments](data, indices, segment_ids[, num_segments]):
//     row indices[i] goes to segment segment_ids[i] (sorted); empty segments 0.
// Definitions; the CPU kernels are in kernels/cpu/segment_ops.cc.
#include "kernels/segment_ops.h"

#include <initializer_list>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using segment::ScalarIndex;

constexpr std::initializer_list<DType> kIndexDTypes = {DType::kInt32, DType::kInt64};

// ---- sorted segments -------------------------------------------------------------------------

PartialShape SegmentOutputSpec(const PartialShape& data, int skip, int64_t rows) {
  if (data.unknown_rank()) return PartialShape::UnknownRank();
  std::vector<int64_t> dims{rows};
  for (int i = skip; i < data.rank(); ++i) dims.push_back(data.dim(i));
  return *PartialShape::FromDims(dims);
}

template <typename List>
Status PrepareSegment(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, List::kDTypes));
  KILN_PREPARE_ASSIGN(ctx, DType tindices, ctx.attrs.GetType("Tindices"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tindices", tindices, kIndexDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "data", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "segment_ids", tindices));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "segment_ids", 1));
  const PartialShape& data = ctx.inputs[0].shape;
  if (data.rank() == 0) return ctx.Error("input 'data' must have rank >= 1, got a scalar");
  ctx.outputs = {TensorSpec{t, SegmentOutputSpec(data, 1, -1)}};
  return OkStatus();
}

// ---- sparse segments -------------------------------------------------------------------------

template <typename List, bool kNumSegments>
Status PrepareSparseSegment(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(kNumSegments ? 4 : 3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, List::kDTypes));
  KILN_PREPARE_ASSIGN(ctx, DType tidx, ctx.attrs.GetType("Tidx", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tidx", tidx, kIndexDTypes));
  KILN_PREPARE_ASSIGN(ctx, DType tseg, ctx.attrs.GetType("Tsegmentids", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tsegmentids", tseg, kIndexDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "data", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "indices", tidx));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "segment_ids", tseg));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "indices", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "segment_ids", 1));
  const PartialShape& data = ctx.inputs[0].shape;
  if (data.rank() == 0) return ctx.Error("input 'data' must have rank >= 1, got a scalar");
  int64_t rows = -1;
  if (kNumSegments) {
    KILN_PREPARE_ASSIGN(ctx, DType tnum, ctx.attrs.GetType("Tnumsegments", DType::kInt32));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tnumsegments", tnum, kIndexDTypes));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "num_segments", tnum));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 3, "num_segments", 0));
    if (const Tensor* n = ConstantInput(ctx, 3); n != nullptr) {
      rows = ScalarIndex(*n);
      if (rows < 0) return ctx.Error("input 'num_segments' must be non-negative, got ", rows);
    }
  }
  ctx.outputs = {TensorSpec{t, SegmentOutputSpec(data, 1, rows)}};
  return OkStatus();
}

// ---- unsorted segments -----------------------------------------------------------------------

template <typename List>
Status PrepareUnsorted(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, List::kDTypes));
  KILN_PREPARE_ASSIGN(ctx, DType tindices, ctx.attrs.GetType("Tindices"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tindices", tindices, kIndexDTypes));
  KILN_PREPARE_ASSIGN(ctx, DType tnum, ctx.attrs.GetType("Tnumsegments", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tnumsegments", tnum, kIndexDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "data", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "segment_ids", tindices));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "num_segments", tnum));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "num_segments", 0));
  const PartialShape& data = ctx.inputs[0].shape;
  const PartialShape& ids = ctx.inputs[1].shape;
  int64_t rows = -1;
  if (const Tensor* n = ConstantInput(ctx, 2); n != nullptr) {
    rows = ScalarIndex(*n);
    if (rows < 0) return ctx.Error("input 'num_segments' must be non-negative, got ", rows);
  }
  PartialShape out = PartialShape::UnknownRank();
  if (!data.unknown_rank() && !ids.unknown_rank()) {
    if (ids.rank() > data.rank()) {
      return ctx.Error("input 'segment_ids' of shape ", ids.ToPythonString(),
                       " must be a prefix of data's shape ", data.ToPythonString());
    }
    out = SegmentOutputSpec(data, ids.rank(), rows);
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"SegmentSum", "output", kOpFreshOutputs, PrepareSegment<NumberTypes>},
    {"SegmentMean", "output", kOpFreshOutputs, PrepareSegment<NumberTypes>},
    {"SegmentProd", "output", kOpFreshOutputs, PrepareSegment<NumberTypes>},
    {"SegmentMax", "output", kOpFreshOutputs, PrepareSegment<RealTypes>},
    {"SegmentMin", "output", kOpFreshOutputs, PrepareSegment<RealTypes>},
    {"UnsortedSegmentSum", "output", kOpFreshOutputs, PrepareUnsorted<NumberTypes>},
    {"UnsortedSegmentProd", "output", kOpFreshOutputs, PrepareUnsorted<NumberTypes>},
    {"UnsortedSegmentMax", "output", kOpFreshOutputs, PrepareUnsorted<RealTypes>},
    {"UnsortedSegmentMin", "output", kOpFreshOutputs, PrepareUnsorted<RealTypes>},
    {"SparseSegmentSum", "output", kOpFreshOutputs, PrepareSparseSegment<RealTypes, false>},
    {"SparseSegmentMean", "output", kOpFreshOutputs, PrepareSparseSegment<FloatTypes, false>},
    {"SparseSegmentSqrtN", "output", kOpFreshOutputs, PrepareSparseSegment<FloatTypes, false>},
    {"SparseSegmentSumWithNumSegments", "output", kOpFreshOutputs,
     PrepareSparseSegment<RealTypes, true>},
    {"SparseSegmentMeanWithNumSegments", "output", kOpFreshOutputs,
     PrepareSparseSegment<FloatTypes, true>},
    {"SparseSegmentSqrtNWithNumSegments", "output", kOpFreshOutputs,
     PrepareSparseSegment<FloatTypes, true>},
};

}  // namespace

std::span<const OpDefinition> SegmentOpDefs() { return kDefs; }

}  // namespace kiln::exec
