// Cutting tensors into pieces and the TF1 way of joining them: Slice, Split, SplitV and Concat
// (v1, whose axis comes first); XLA's dynamic slice and dynamic update slice, which Keras 3's
// `ops.slice_update` (KV caches of generative decoders) writes on TensorFlow. The CPU kernels are
// in kernels/cpu/split_ops.cc.
#include "kernels/split_ops.h"

#include <cstdint>
#include <vector>

#include "kernels/array_util.h"

namespace kiln::exec {
namespace {

using split::ResolveSplits;
using split::SplitAxis;
using split::SplitState;

// ---- Slice -------------------------------------------------------------------------------------

Status PrepareSlice(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  KILN_ASSIGN_OR_RETURN(DType index, IndexInputDType(ctx, 1, "begin", "Index"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "size", index));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "begin", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "size", 1));
  const PartialShape& in = ctx.inputs[0].shape;
  int rank = in.rank();
  for (int i = 1; i < 3; ++i) {
    const int64_t n = KnownLength(ctx.inputs[i].shape);
    if (n < 0) continue;
    if (rank >= 0 && n != rank) {
      return ctx.Error("input '", i == 1 ? "begin" : "size", "' has ", n,
                       " entries but 'input' has shape ", in.ToPythonString());
    }
    rank = static_cast<int>(n);
  }
  PartialShape out = UnknownDims(rank);
  const Tensor* begin_t = ConstantInput(ctx, 1);
  const Tensor* size_t_ = ConstantInput(ctx, 2);
  if (size_t_ != nullptr && rank >= 0) {
    std::vector<int64_t> size = IndexValues(*size_t_);
    std::vector<int64_t> dims(rank, -1);
    for (int i = 0; i < rank && i < static_cast<int>(size.size()); ++i) {
      if (size[i] < -1) return ctx.Error("size[", i, "] = ", size[i], " must be -1 or >= 0");
      dims[i] = size[i];
    }
    if (begin_t != nullptr && !in.unknown_rank()) {
      std::vector<int64_t> begin = IndexValues(*begin_t);
      for (int i = 0; i < rank && i < static_cast<int>(begin.size()); ++i) {
        if (dims[i] == -1 && in.dim(i) >= 0) dims[i] = in.dim(i) - begin[i];
        if (in.dim(i) >= 0 && (begin[i] < 0 || begin[i] > in.dim(i) || dims[i] < 0 ||
                               begin[i] + dims[i] > in.dim(i))) {
          return ctx.Error("slice [", begin[i], ", ", begin[i] + size[i], ") of dim ", i,
                           " is out of range for 'input' of shape ", in.ToPythonString());
        }
      }
    }
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

// ---- XlaDynamicSlice, XlaDynamicUpdateSlice ---------------------------------------------------

// XLA's semantics: start indices are clamped so that the window lies inside the operand (no
// error for an index out of range), the window's sizes are given (slice) or the update's shape.
Status PrepareXlaDynamicSlice(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  KILN_ASSIGN_OR_RETURN(DType index, IndexInputDType(ctx, 1, "start_indices", "Tindices"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "size_indices", index));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "start_indices", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "size_indices", 1));
  const PartialShape& in = ctx.inputs[0].shape;
  int rank = in.rank();
  for (int i = 1; i < 3; ++i) {
    const int64_t n = KnownLength(ctx.inputs[i].shape);
    if (n >= 0 && rank >= 0 && n != rank)
      return ctx.Error("input '", i == 1 ? "start_indices" : "size_indices", "' has ", n,
                       " entries but 'input' has shape ", in.ToPythonString());
    if (n >= 0) rank = static_cast<int>(n);
  }
  PartialShape out = UnknownDims(rank);
  if (const Tensor* size = ConstantInput(ctx, 2); size != nullptr && rank >= 0) {
    std::vector<int64_t> dims = IndexValues(*size);
    for (int i = 0; i < rank; ++i) {
      if (dims[i] < 0 || (!in.unknown_rank() && in.dim(i) >= 0 && dims[i] > in.dim(i)))
        return ctx.Error(
            "size_indices[", i, "] = ", dims[i], " must be in [0, ",
            in.unknown_rank() || in.dim(i) < 0 ? std::string("dim") : std::to_string(in.dim(i)),
            "] for 'input' of shape ", in.ToPythonString());
    }
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

Status PrepareXlaDynamicUpdateSlice(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "update", t));
  KILN_ASSIGN_OR_RETURN(DType index, IndexInputDType(ctx, 2, "indices", "Tindices"));
  (void)index;
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "indices", 1));
  const PartialShape& in = ctx.inputs[0].shape;
  const PartialShape& update = ctx.inputs[1].shape;
  if (!in.unknown_rank() && !update.unknown_rank()) {
    if (update.rank() != in.rank())
      return ctx.Error("input 'update' of shape ", update.ToPythonString(),
                       " must have the rank of 'input' ", in.ToPythonString());
    for (int i = 0; i < in.rank(); ++i)
      if (in.dim(i) >= 0 && update.dim(i) > in.dim(i))
        return ctx.Error("input 'update' of shape ", update.ToPythonString(),
                         " does not fit in 'input' of shape ", in.ToPythonString());
  }
  const int64_t n = KnownLength(ctx.inputs[2].shape);
  if (n >= 0 && !in.unknown_rank() && n != in.rank())
    return ctx.Error("input 'indices' has ", n, " entries but 'input' has shape ",
                     in.ToPythonString());
  ctx.outputs = {TensorSpec{t, in}};
  return OkStatus();
}

// ---- Split, SplitV -----------------------------------------------------------------------------

Status PrepareSplit(PrepareContext& ctx) {
  const bool v = ctx.op == "SplitV";
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(v ? 3 : 2));
  auto state = std::make_shared<SplitState>();
  state->value_input = v ? 0 : 1;
  state->axis_input = v ? 2 : 0;
  KILN_PREPARE_ASSIGN(ctx, int64_t num, ctx.attrs.GetInt("num_split"));
  if (num < 1) return ctx.Error("attr 'num_split' must be at least 1, got ", num);
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, state->value_input, "value"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, state->axis_input, "split_dim", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, state->axis_input, "split_dim", 0));
  std::vector<int64_t> sizes;
  if (v) {
    KILN_PREPARE_ASSIGN(ctx, DType tlen, ctx.attrs.GetType("Tlen", DType::kInt64));
    KILN_RETURN_IF_ERROR(
        ExpectAttrDTypeIn(ctx, "Tlen", tlen, {DType::kInt8, DType::kInt32, DType::kInt64}));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "size_splits", tlen));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "size_splits", 1));
    const int64_t n = KnownLength(ctx.inputs[1].shape);
    if (n >= 0 && n != num) {
      return ctx.Error("input 'size_splits' has ", n, " entries but attr 'num_split' is ", num);
    }
    if (const Tensor* s = ConstantInput(ctx, 1)) {
      for (int64_t i = 0; i < s->NumElements(); ++i) {
        sizes.push_back(s->dtype() == DType::kInt8    ? s->data<int8_t>()[i]
                        : s->dtype() == DType::kInt32 ? s->data<int32_t>()[i]
                                                      : s->data<int64_t>()[i]);
      }
    }
  }
  const PartialShape& in = ctx.inputs[state->value_input].shape;
  std::vector<PartialShape> outs(num, UnknownDims(in.rank()));
  const Tensor* axis_t = ConstantInput(ctx, state->axis_input);
  if (!in.unknown_rank() && axis_t != nullptr) {
    auto axis = SplitAxis(*axis_t, in.rank());
    if (!axis.ok()) return ctx.Error(axis.status().message());
    const int64_t dim = in.dim(*axis);
    std::vector<int64_t> pieces(num, -1);
    if (!v) {
      if (dim >= 0 && dim % num != 0) {
        return ctx.Error(
            "number of ways to split should evenly divide the split dimension, but "
            "got split_dim ",
            *axis, " (size = ", dim, ") and num_split ", num);
      }
      if (dim >= 0) pieces.assign(num, dim / num);
    } else if (!sizes.empty()) {
      auto r = ResolveSplits(sizes, dim);
      if (!r.ok()) return ctx.Error(r.status().message());
      pieces = *r;
    }
    for (int64_t k = 0; k < num; ++k) {
      std::vector<int64_t> dims(in.dims().begin(), in.dims().end());
      dims[*axis] = pieces[k];
      outs[k] = *PartialShape::FromDims(dims);
    }
  }
  for (const PartialShape& s : outs) ctx.outputs.push_back(TensorSpec{t, s});
  ctx.state = std::move(state);
  return OkStatus();
}

// ---- Concat (v1) -------------------------------------------------------------------------------

Status PrepareConcatV1(PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, int64_t n, ctx.attrs.GetInt("N"));
  if (n < 2) return ctx.Error("attr 'N' must be at least 2, got ", n);
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(static_cast<int>(n) + 1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "concat_dim", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "concat_dim", 0));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  int rank = -1;
  for (int i = 1; i <= n; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, internal::StrCat("values:", i - 1), t));
    const PartialShape& s = ctx.inputs[i].shape;
    if (s.unknown_rank()) continue;
    if (s.rank() == 0) return ctx.Error("cannot concatenate scalars (use Pack)");
    if (rank >= 0 && s.rank() != rank) {
      return ctx.Error("all values must have the same rank, but values:", i - 1, " has shape ",
                       s.ToPythonString(), " and an earlier value rank ", rank);
    }
    rank = s.rank();
  }
  std::vector<int64_t> dims;
  if (rank >= 0) dims.assign(rank, -1);
  if (const Tensor* axis_t = ConstantInput(ctx, 0); axis_t != nullptr && rank >= 0) {
    auto axis = CanonicalAxis(IndexValues(*axis_t)[0], rank, "concat_dim");
    if (!axis.ok()) return ctx.Error(axis.status().message());
    int64_t total = 0;
    for (int i = 1; i <= n; ++i) {
      const PartialShape& s = ctx.inputs[i].shape;
      if (s.unknown_rank()) {
        total = -1;
        continue;
      }
      for (int d = 0; d < rank; ++d) {
        if (d == *axis || s.dim(d) < 0) continue;
        if (dims[d] >= 0 && dims[d] != s.dim(d)) {
          return ctx.Error("dimension ", d, " of values:", i - 1, " ", s.ToPythonString(),
                           " does not match ", dims[d], " of an earlier value");
        }
        dims[d] = s.dim(d);
      }
      total = (total < 0 || s.dim(*axis) < 0) ? -1 : total + s.dim(*axis);
    }
    dims[*axis] = total;
  }
  ctx.outputs = {TensorSpec{t, rank >= 0 ? *PartialShape::FromDims(dims) : PartialShape()}};
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"Slice", "output", kOpFreshOutputs, PrepareSlice},
    {"Split", "output", kOpFreshOutputs, PrepareSplit},
    {"SplitV", "output", kOpFreshOutputs, PrepareSplit},
    {"Concat", "output", kOpFreshOutputs, PrepareConcatV1},
    {"XlaDynamicSlice", "output", kOpFreshOutputs, PrepareXlaDynamicSlice},
    // The update is written over input 0's buffer where the plan lets the output take it.
    {"XlaDynamicUpdateSlice", "output", kOpFreshOutputs | kOpInPlace, PrepareXlaDynamicUpdateSlice},
};

}  // namespace

std::span<const OpDefinition> SplitOpDefs() { return kDefs; }

}  // namespace kiln::exec
