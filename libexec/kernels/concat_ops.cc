// Joining and splitting along an axis: Pack, ConcatV2, ParallelConcat, Unpack; ConcatOffset (the
// offsets of each input in a concatenation, for its gradient). The CPU kernels are in
// kernels/cpu/concat_ops.cc.
#include <cstdint>
#include <vector>

#include "kernels/array_util.h"

namespace kiln::exec {
namespace {

// ---- Pack, ConcatV2 ------------------------------------------------------------------------

// N attr and N value inputs of dtype T (for Pack and ConcatV2: `extra` more inputs follow).
Result<DType> PrepareValueList(PrepareContext& ctx, int extra, int min_n) {
  KILN_PREPARE_ASSIGN(ctx, int64_t n, ctx.attrs.GetInt("N"));
  if (n < min_n) return ctx.Error("attr 'N' must be at least ", min_n, ", got ", n);
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(static_cast<int>(n) + extra));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  for (int i = 0; i < n; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, internal::StrCat("values:", i), t));
  }
  return t;
}

Status PreparePack(PrepareContext& ctx) {
  KILN_ASSIGN_OR_RETURN(DType t, PrepareValueList(ctx, 0, 1));
  const int n = static_cast<int>(ctx.inputs.size());
  KILN_PREPARE_ASSIGN(ctx, int64_t axis, ctx.attrs.GetInt("axis", 0));
  PartialShape merged = ctx.inputs[0].shape;
  for (int i = 1; i < n; ++i) {
    auto m = merged.MergeWith(ctx.inputs[i].shape);
    if (!m.ok()) {
      return ctx.Error("shapes of all inputs must match: values:0 has shape ",
                       ctx.inputs[0].shape.ToPythonString(), " but values:", i, " has shape ",
                       ctx.inputs[i].shape.ToPythonString());
    }
    merged = *m;
  }
  PartialShape out;
  if (!merged.unknown_rank()) {
    const int rank = merged.rank();
    if (rank >= kMaxRank) return ctx.Error("values have rank ", rank, "; too many to stack");
    auto a = CanonicalAxis(axis, rank + 1, "attr 'axis'");
    if (!a.ok()) return ctx.Error(a.status().message());
    std::vector<int64_t> dims(merged.dims().begin(), merged.dims().end());
    dims.insert(dims.begin() + *a, n);
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::make_shared<TypedOpState<int64_t>>(axis);
  return OkStatus();
}

Status PrepareConcat(PrepareContext& ctx) {
  KILN_ASSIGN_OR_RETURN(DType t, PrepareValueList(ctx, 1, 2));
  const int n = static_cast<int>(ctx.inputs.size()) - 1;
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, n, "axis", "Tidx").status());
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, n, "axis", 0));
  int rank = -1;
  for (int i = 0; i < n; ++i) {
    const PartialShape& s = ctx.inputs[i].shape;
    if (s.unknown_rank()) continue;
    if (s.rank() == 0) return ctx.Error("cannot concatenate scalars (values:", i, "); use Pack");
    if (rank >= 0 && s.rank() != rank) {
      return ctx.Error("all values must have the same rank: values:0.. have rank ", rank,
                       " but values:", i, " has shape ", s.ToPythonString());
    }
    rank = s.rank();
  }
  PartialShape out = UnknownDims(rank);
  const Tensor* axis_t = ConstantInput(ctx, n);
  if (axis_t != nullptr && rank >= 0) {
    auto axis = CanonicalAxis(IndexValues(*axis_t)[0], rank, "axis");
    if (!axis.ok()) return ctx.Error(axis.status().message());
    std::vector<int64_t> dims(rank, -1);
    int64_t total = 0;
    for (int i = 0; i < n; ++i) {
      const PartialShape& s = ctx.inputs[i].shape;
      if (s.unknown_rank()) {
        total = -1;
        continue;
      }
      for (int d = 0; d < rank; ++d) {
        if (d == *axis) continue;
        if (dims[d] == -1) {
          dims[d] = s.dim(d);
        } else if (s.dim(d) != -1 && s.dim(d) != dims[d]) {
          return ctx.Error("dimension ", d, " of all values must be equal (axis ", *axis,
                           "): values:", i, " has shape ", s.ToPythonString(),
                           ", an earlier value has ", dims[d]);
        }
      }
      total = (total < 0 || s.dim(*axis) < 0) ? -1 : total + s.dim(*axis);
    }
    dims[*axis] = total;
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

// ---- ParallelConcat --------------------------------------------------------------------------

// N values of shape [1, ...] stacked along dim 0 into attr `shape` (TF's kernel writes them in
// parallel; the result is that of ConcatV2 on axis 0).
Status PrepareParallelConcat(PrepareContext& ctx) {
  KILN_ASSIGN_OR_RETURN(DType t, PrepareValueList(ctx, 0, 1));
  KILN_PREPARE_ASSIGN(ctx, PartialShape shape, ctx.attrs.GetShape("shape"));
  const int n = static_cast<int>(ctx.inputs.size());
  for (int i = 0; i < n; ++i) {
    const PartialShape& s = ctx.inputs[i].shape;
    if (!s.unknown_rank() && (s.rank() < 1 || (s.dim(0) >= 0 && s.dim(0) != 1))) {
      return ctx.Error("values:", i, " must have size 1 in dimension 0, got shape ",
                       s.ToPythonString());
    }
  }
  if (!shape.unknown_rank() && shape.rank() >= 1 && shape.dim(0) >= 0 && shape.dim(0) != n) {
    return ctx.Error("attr 'shape' ", shape.ToPythonString(), " does not hold ", n, " values");
  }
  ctx.outputs = {TensorSpec{t, shape}};
  return OkStatus();
}

// ---- ConcatOffset ----------------------------------------------------------------------------

// ConcatOffset(concat_dim, shape:0..N-1): for each shape, a vector of its offset in the
// concatenation (zero but along concat_dim).
Status PrepareConcatOffset(PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, int64_t n, ctx.attrs.GetInt("N"));
  if (n < 2) return ctx.Error("attr 'N' must be at least 2, got ", n);
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(static_cast<int>(n) + 1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "concat_dim", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "concat_dim", 0));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("shape_type", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "shape_type", t, {DType::kInt32, DType::kInt64}));
  for (int i = 1; i <= n; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, internal::StrCat("shape:", i - 1), t));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, i, internal::StrCat("shape:", i - 1), 1));
  }
  for (int i = 1; i <= n; ++i) ctx.outputs.push_back(TensorSpec{t, ctx.inputs[i].shape});
  return OkStatus();
}

// ---- Unpack ----------------------------------------------------------------------------------

Status PrepareUnpack(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "value"));
  KILN_PREPARE_ASSIGN(ctx, int64_t num, ctx.attrs.GetInt("num"));
  KILN_PREPARE_ASSIGN(ctx, int64_t axis, ctx.attrs.GetInt("axis", 0));
  if (num < 0) return ctx.Error("attr 'num' must be non-negative, got ", num);
  const PartialShape& in = ctx.inputs[0].shape;
  PartialShape out;
  if (!in.unknown_rank()) {
    if (in.rank() == 0) return ctx.Error("input 'value' must have rank >= 1, got a scalar");
    auto a = CanonicalAxis(axis, in.rank(), "attr 'axis'");
    if (!a.ok()) return ctx.Error(a.status().message());
    if (in.dim(*a) != -1 && in.dim(*a) != num) {
      return ctx.Error("attr 'num' is ", num, " but dimension ", *a, " of 'value' ",
                       in.ToPythonString(), " is ", in.dim(*a));
    }
    std::vector<int64_t> dims(in.dims().begin(), in.dims().end());
    dims.erase(dims.begin() + *a);
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs.assign(num, TensorSpec{t, out});
  ctx.state = std::make_shared<TypedOpState<int64_t>>(axis);
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"Pack", "output", kOpFreshOutputs, PreparePack},
    {"Unpack", "output", kOpFreshOutputs, PrepareUnpack},
    {"ConcatV2", "output", kOpFreshOutputs, PrepareConcat},
    {"ParallelConcat", "output", kOpFreshOutputs, PrepareParallelConcat},
    {"ConcatOffset", "offset", kOpFreshOutputs, PrepareConcatOffset},
};

}  // namespace

std::span<const OpDefinition> ConcatOpDefs() { return kDefs; }

}  // namespace kiln::exec
