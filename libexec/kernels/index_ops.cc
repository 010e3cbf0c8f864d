// Ops about positions: OneHot (indices to one-hot rows), TopKV2 and ApproxTopK (the k largest and
// where they are), Where (the coordinates of non-zero elements), InvertPermutation, LowerBound and
// UpperBound (tf.searchsorted: where each value would go in a sorted row) and UnravelIndex (flat
// indices to coordinates), InTopK(V2) (whether targets are among the k best predictions) and
// NthElement (the n-th smallest or largest of each row). The CPU kernels are in
// kernels/cpu/index_ops.cc.
#include "kernels/index_ops.h"

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using index::AxisState;
using index::CheckOneHotAxis;
using index::ReadK;
using index::SearchTypes;
using index::TopKState;
using index::WhereTypes;

// ---- OneHot ----------------------------------------------------------------------------------

Status PrepareOneHot(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  KILN_PREPARE_ASSIGN(ctx, DType ti, ctx.attrs.GetType("TI", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(
      ctx, "TI", ti, {DType::kUInt8, DType::kInt8, DType::kInt32, DType::kInt64}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "indices", ti));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "depth", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "depth", 0));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 2, "on_value"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "off_value", t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "on_value", 0));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 3, "off_value", 0));
  KILN_PREPARE_ASSIGN(ctx, int64_t axis, ctx.attrs.GetInt("axis", -1));
  const PartialShape& in = ctx.inputs[0].shape;
  PartialShape out;
  if (!in.unknown_rank()) {
    KILN_PREPARE_CHECK(ctx, CheckOneHotAxis(axis, in.rank()));
    if (in.rank() >= kMaxRank) return ctx.Error("indices have rank ", in.rank(), "; too many");
    int64_t depth = -1;
    if (const Tensor* d = ConstantInput(ctx, 1)) {
      depth = d->scalar<int32_t>();
      if (depth < 0) return ctx.Error("depth must be non-negative, got: ", depth);
    }
    std::vector<int64_t> dims(in.dims().begin(), in.dims().end());
    dims.insert(dims.begin() + (axis < 0 ? in.rank() : axis), depth);
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::make_shared<AxisState>(axis);
  return OkStatus();
}

// ---- TopKV2 ----------------------------------------------------------------------------------

Status PrepareTopK(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, RealTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  KILN_PREPARE_ASSIGN(ctx, DType tk, ctx.attrs.GetType("Tk", DType::kInt32));
  const auto ints = {DType::kInt16, DType::kInt32, DType::kInt64};
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tk", tk, ints));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "k", tk));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "k", 0));
  auto state = std::make_shared<TopKState>();
  KILN_PREPARE_ASSIGN(ctx, state->index_type, ctx.attrs.GetType("index_type", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "index_type", state->index_type, ints));
  KILN_PREPARE_ASSIGN(ctx, bool sorted, ctx.attrs.GetBool("sorted", true));
  (void)sorted;  // results are always sorted (TF leaves the unsorted order unspecified)
  const PartialShape& in = ctx.inputs[0].shape;
  PartialShape out;
  if (!in.unknown_rank()) {
    if (in.rank() == 0) return ctx.Error("input must be >= 1-D, got shape []");
    std::vector<int64_t> dims(in.dims().begin(), in.dims().end());
    dims.back() = -1;
    if (const Tensor* k = ConstantInput(ctx, 1)) {
      auto v = ReadK(*k);
      if (!v.ok()) return ctx.Error(v.status().message());
      const int64_t cols = in.dim(in.rank() - 1);
      if (cols >= 0 && *v > cols) {
        return ctx.Error("input must have at least k columns. Had ", cols, ", needed ", *v);
      }
      dims.back() = *v;
    }
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}, TensorSpec{state->index_type, out}};
  ctx.state = std::move(state);
  return OkStatus();
}

// ApproxTopK (tf.math.approx_max_k): TF's CPU kernel is the exact top k along the last
// dimension (recall_target and the aggregation attrs only matter to TPUs); approx_min_k and
// other dimensions have no CPU kernel in TF, so they are refused here too.
Status PrepareApproxTopK(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, RealTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  auto state = std::make_shared<TopKState>();
  KILN_PREPARE_ASSIGN(ctx, state->attr_k, ctx.attrs.GetInt("k"));
  if (state->attr_k < 0) return ctx.Error("attr 'k' must be >= 0, got ", state->attr_k);
  KILN_PREPARE_ASSIGN(ctx, bool is_max_k, ctx.attrs.GetBool("is_max_k", true));
  if (!is_max_k)
    return ctx.Error("is_max_k=false (tf.math.approx_min_k) has no CPU kernel in TensorFlow");
  KILN_PREPARE_ASSIGN(ctx, int64_t dim, ctx.attrs.GetInt("reduction_dimension", -1));
  const PartialShape& in = ctx.inputs[0].shape;
  if (dim != -1 && (in.unknown_rank() || dim != in.rank() - 1))
    return ctx.Error("attr 'reduction_dimension' must be the last dimension (-1), got ", dim,
                     ": TensorFlow's CPU kernel reduces the last dimension only");
  PartialShape out;
  if (!in.unknown_rank()) {
    if (in.rank() == 0) return ctx.Error("input must be >= 1-D, got shape []");
    std::vector<int64_t> dims(in.dims().begin(), in.dims().end());
    const int64_t cols = dims.back();
    if (cols >= 0 && state->attr_k > cols)
      return ctx.Error("input must have at least k columns. Had ", cols, ", needed ",
                       state->attr_k);
    dims.back() = state->attr_k;
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}, TensorSpec{DType::kInt32, out}};
  ctx.state = std::move(state);
  return OkStatus();
}

// ---- Where -----------------------------------------------------------------------------------

Status PrepareWhere(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T", DType::kBool));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, WhereTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  const PartialShape& in = ctx.inputs[0].shape;
  ctx.outputs = {TensorSpec{
      DType::kInt64, in.unknown_rank() ? PartialShape{-1, -1} : PartialShape{-1, in.rank()}}};
  return OkStatus();
}

// ---- InvertPermutation -----------------------------------------------------------------------

Status PrepareInvertPermutation(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_ASSIGN_OR_RETURN(DType t, IndexInputDType(ctx, 0, "x", "T"));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "x", 1));
  ctx.outputs = {TensorSpec{t, ctx.inputs[0].shape}};
  return OkStatus();
}

// ---- LowerBound, UpperBound ------------------------------------------------------------------

constexpr std::initializer_list<DType> kIndexDTypes = {DType::kInt32, DType::kInt64};

Status PrepareBound(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, SearchTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "sorted_inputs", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "values", t));
  KILN_PREPARE_ASSIGN(ctx, DType out, ctx.attrs.GetType("out_type", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "out_type", out, kIndexDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "sorted_inputs", 2));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "values", 2));
  const PartialShape& s = ctx.inputs[0].shape;
  const PartialShape& v = ctx.inputs[1].shape;
  if (s.rank() == 2 && v.rank() == 2 && s.dim(0) >= 0 && v.dim(0) >= 0 && s.dim(0) != v.dim(0))
    return ctx.Error("inputs 'sorted_inputs' and 'values' must have the same number of rows, got ",
                     s.ToPythonString(), " and ", v.ToPythonString());
  ctx.outputs = {TensorSpec{out, v}};
  return OkStatus();
}

// ---- UnravelIndex ----------------------------------------------------------------------------

Status PrepareUnravelIndex(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_ASSIGN_OR_RETURN(DType t, IndexInputDType(ctx, 0, "indices", "Tidx"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "dims", t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "dims", 1));
  const PartialShape& idx = ctx.inputs[0].shape;
  if (!idx.unknown_rank() && idx.rank() > 1)
    return ctx.Error("input 'indices' must be a scalar or a vector, got shape ",
                     idx.ToPythonString());
  const int64_t n = KnownLength(ctx.inputs[1].shape);
  std::vector<int64_t> dims = {n};
  if (idx.unknown_rank()) {
    ctx.outputs = {TensorSpec{t, PartialShape::UnknownRank()}};
    return OkStatus();
  }
  if (idx.rank() == 1) dims.push_back(idx.dim(0));
  KILN_PREPARE_ASSIGN(ctx, PartialShape out, PartialShape::FromDims(dims));
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

// ---- InTopK, InTopKV2 ------------------------------------------------------------------------

// Whether each row's target class is among its k largest predictions, as TF decides it: fewer
// than k classes predict more than the target; false for an out-of-range target or a row with a
// non-finite prediction.
Status PrepareInTopK(PrepareContext& ctx) {
  const bool v2 = ctx.op == "InTopKV2";
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(v2 ? 3 : 2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "predictions", DType::kFloat));
  KILN_ASSIGN_OR_RETURN(DType t, IndexInputDType(ctx, 1, "targets", "T"));
  if (v2) KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "k", t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "predictions", 2));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "targets", 1));
  if (!v2) {
    KILN_PREPARE_ASSIGN(ctx, int64_t k, ctx.attrs.GetInt("k"));
    ctx.state = std::make_shared<TypedOpState<int64_t>>(k);
  }
  const PartialShape& p = ctx.inputs[0].shape;
  ctx.outputs = {TensorSpec{DType::kBool, UnknownDims(1)}};
  if (p.rank() == 2 && p.dim(0) >= 0) ctx.outputs[0].shape = PartialShape(Shape{p.dim(0)});
  return OkStatus();
}

// ---- NthElement ----------------------------------------------------------------------------

// The n-th smallest value of each last-dim vector (the n-th largest with reverse).
Status PrepareNthElement(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, RealTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "n", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "n", 0));
  KILN_PREPARE_ASSIGN(ctx, bool reverse, ctx.attrs.GetBool("reverse", false));
  ctx.state = std::make_shared<TypedOpState<bool>>(reverse);
  const PartialShape& in = ctx.inputs[0].shape;
  if (in.unknown_rank()) {
    ctx.outputs = {TensorSpec{t, PartialShape::UnknownRank()}};
    return OkStatus();
  }
  if (in.rank() < 1) return ctx.Error("input 'input' must have rank 1 or more, got a scalar");
  std::vector<int64_t> dims(in.dims().begin(), in.dims().end() - 1);
  KILN_PREPARE_ASSIGN(ctx, PartialShape out, PartialShape::FromDims(dims));
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"OneHot", "output", kOpFreshOutputs, PrepareOneHot},
    {"TopKV2", "values,indices", kOpFreshOutputs, PrepareTopK},
    {"ApproxTopK", "values,indices", kOpFreshOutputs, PrepareApproxTopK},
    {"Where", "index", kOpFreshOutputs, PrepareWhere},
    {"InvertPermutation", "y", kOpFreshOutputs, PrepareInvertPermutation},
    {"LowerBound", "output", kOpFreshOutputs, PrepareBound},
    {"UpperBound", "output", kOpFreshOutputs, PrepareBound},
    {"UnravelIndex", "output", kOpFreshOutputs, PrepareUnravelIndex},
    {"InTopK", "precision", kOpFreshOutputs, PrepareInTopK},
    {"InTopKV2", "precision", kOpFreshOutputs, PrepareInTopK},
    {"NthElement", "values", kOpFreshOutputs, PrepareNthElement},
};

}  // namespace

std::span<const OpDefinition> IndexOpDefs() { return kDefs; }

}  // namespace kiln::exec
