// Counting and sets: Bincount, DenseBincount, RaggedBincount, Unique, UniqueV2 (along an axis),
// UniqueWithCounts(V2), ListDiff (tf.compat.v1.setdiff1d: the values of x that y lacks) and
// HistogramFixedWidth. The CPU kernels are in kernels/cpu/count_ops.cc.
#include "kernels/count_ops.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using count::BincountState;
using count::BinTypes;
using count::HistogramTypes;
using count::ListDiffTypes;
using count::ScalarIndex;
using count::UniqueAxis;
using count::UniqueState;

constexpr std::initializer_list<DType> kIndexDTypes = {DType::kInt32, DType::kInt64};

// ---- Bincount, DenseBincount -----------------------------------------------------------------

// Bincount(arr int32, size int32, weights T) and DenseBincount(input Tidx of rank 1 or 2,
// size Tidx, weights T). The output is [size], or [rows, size] for a 2-D DenseBincount input.
template <bool kDense>
Status PrepareBincount(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, BinTypes::kDTypes));
  DType tidx = DType::kInt32;
  auto state = std::make_shared<BincountState>();
  if (kDense) {
    KILN_PREPARE_ASSIGN(ctx, tidx, ctx.attrs.GetType("Tidx"));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tidx", tidx, kIndexDTypes));
    KILN_PREPARE_ASSIGN(ctx, state->binary_output, ctx.attrs.GetBool("binary_output", false));
  }
  const std::string_view arr_name = kDense ? "input" : "arr";
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, arr_name, tidx));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "size", tidx));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "weights", t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "size", 0));
  const PartialShape& arr = ctx.inputs[0].shape;
  if (kDense && arr.rank() > 2) {
    return ctx.Error("input 'input' must have rank 1 or 2, got shape ", arr.ToPythonString());
  }
  int64_t size = -1;
  if (const Tensor* s = ConstantInput(ctx, 1); s != nullptr) {
    size = ScalarIndex(*s);
    if (size < 0) return ctx.Error("input 'size' must be non-negative, got ", size);
  }
  PartialShape out{size};
  if (kDense && arr.rank() == 2) out = PartialShape{arr.dim(0), size};
  if (kDense && arr.unknown_rank()) out = PartialShape::UnknownRank();
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::move(state);
  return OkStatus();
}

// ---- RaggedBincount --------------------------------------------------------------------------

// RaggedBincount(splits int64, values Tidx, size Tidx, weights T): one row of bins per ragged
// row, [num_rows, size]. TextVectorization's multi_hot/count/tf_idf modes run it.
Status PrepareRaggedBincount(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, BinTypes::kDTypes));
  KILN_PREPARE_ASSIGN(ctx, DType tidx, ctx.attrs.GetType("Tidx"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tidx", tidx, kIndexDTypes));
  auto state = std::make_shared<BincountState>();
  KILN_PREPARE_ASSIGN(ctx, state->binary_output, ctx.attrs.GetBool("binary_output", false));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "splits", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "splits", 1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "values", tidx));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "size", tidx));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "size", 0));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "weights", t));
  int64_t size = -1;
  if (const Tensor* s = ConstantInput(ctx, 2); s != nullptr) {
    size = ScalarIndex(*s);
    if (size < 0) return ctx.Error("input 'size' must be non-negative, got ", size);
  }
  const int64_t splits = KnownLength(ctx.inputs[0].shape);
  ctx.outputs = {
      TensorSpec{t, PartialShape{splits < 0 ? -1 : std::max<int64_t>(splits - 1, 0), size}}};
  ctx.state = std::move(state);
  return OkStatus();
}

// ---- Unique ----------------------------------------------------------------------------------

// Unique(x), UniqueWithCounts(x): x a vector. UniqueV2(x, axis): slices along axis.
template <bool kV2, bool kCounts>
Status PrepareUnique(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(kV2 ? 2 : 1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, RealBoolStringTypes::kDTypes));
  auto state = std::make_shared<UniqueState>();
  state->with_counts = kCounts;
  KILN_PREPARE_ASSIGN(ctx, state->out_idx, ctx.attrs.GetType("out_idx", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "out_idx", state->out_idx, kIndexDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", t));
  const PartialShape& x = ctx.inputs[0].shape;
  int axis = -1;
  bool axis_known = !kV2;
  if (kV2) {
    KILN_PREPARE_ASSIGN(ctx, DType taxis, ctx.attrs.GetType("Taxis", DType::kInt64));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Taxis", taxis, kIndexDTypes));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "axis", taxis));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "axis", 1));
    if (const Tensor* a = ConstantInput(ctx, 1); a != nullptr && !x.unknown_rank()) {
      KILN_PREPARE_ASSIGN(ctx, axis, UniqueAxis(*a, x.rank()));
      axis_known = true;
    }
  }
  if (axis_known && axis < 0 && !x.unknown_rank() && x.rank() != 1) {
    return ctx.Error("input 'x' must be a vector, got shape ", x.ToPythonString());
  }
  PartialShape y = PartialShape::UnknownRank();
  PartialShape idx{-1};
  if (axis_known && !x.unknown_rank()) {
    const int a = axis < 0 ? 0 : axis;
    std::vector<int64_t> dims(x.dims().begin(), x.dims().end());
    idx = PartialShape{dims[a]};
    dims[a] = -1;
    KILN_PREPARE_ASSIGN(ctx, y, PartialShape::FromDims(dims));
  }
  ctx.outputs = {TensorSpec{t, y}, TensorSpec{state->out_idx, idx}};
  if (kCounts) ctx.outputs.push_back(TensorSpec{state->out_idx, PartialShape{-1}});
  ctx.state = std::move(state);
  return OkStatus();
}

// ---- ListDiff --------------------------------------------------------------------------------

Status PrepareListDiff(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  if (t != DType::kString)
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, ListDiffTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "y", t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "x", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "y", 1));
  KILN_PREPARE_ASSIGN(ctx, DType idx, ctx.attrs.GetType("out_idx", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "out_idx", idx, kIndexDTypes));
  ctx.outputs = {TensorSpec{t, UnknownDims(1)}, TensorSpec{idx, UnknownDims(1)}};
  return OkStatus();
}

// ---- HistogramFixedWidth -----------------------------------------------------------------------

// Counts of values in nbins equal-width bins over value_range [lo, hi); values below lo fall in
// the first bin, values from hi on in the last (TF's arithmetic: (max(v, lo) - lo) in T, divided
// by the bin width in double, truncated). NaN values are an error, as in TF.
Status PrepareHistogram(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "values"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, HistogramTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "value_range", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "nbins", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "nbins", 0));
  KILN_PREPARE_ASSIGN(ctx, DType out, ctx.attrs.GetType("dtype", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "dtype", out, kIndexDTypes));
  PartialShape shape = UnknownDims(1);
  if (const Tensor* n = ConstantInput(ctx, 2)) {
    if (n->scalar<int32_t>() <= 0) {
      return ctx.Error("nbins should be a positive number, but got '", n->scalar<int32_t>(), "'");
    }
    shape = PartialShape(Shape{n->scalar<int32_t>()});
  }
  ctx.outputs = {TensorSpec{out, shape}};
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"Bincount", "bins", kOpFreshOutputs, PrepareBincount<false>},
    {"DenseBincount", "output", kOpFreshOutputs, PrepareBincount<true>},
    {"RaggedBincount", "output", kOpFreshOutputs, PrepareRaggedBincount},
    {"Unique", "y,idx", kOpFreshOutputs, PrepareUnique<false, false>},
    {"UniqueV2", "y,idx", kOpFreshOutputs, PrepareUnique<true, false>},
    {"UniqueWithCounts", "y,idx,count", kOpFreshOutputs, PrepareUnique<false, true>},
    {"UniqueWithCountsV2", "y,idx,count", kOpFreshOutputs, PrepareUnique<true, true>},
    {"ListDiff", "out,idx", kOpFreshOutputs, PrepareListDiff},
    {"HistogramFixedWidth", "out", kOpFreshOutputs, PrepareHistogram},
};
}  // namespace

std::span<const OpDefinition> CountOpDefs() { return kDefs; }

}  // namespace kiln::exec
