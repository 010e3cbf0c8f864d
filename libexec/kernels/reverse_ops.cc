// Reordering along dims: ReverseV2 and Reverse (v1, a bool per dim), ReverseSequence (each batch
// row reverses its own prefix) and Roll (rotations). The CPU kernels are in
// kernels/cpu/reverse_ops.cc.
#include "kernels/reverse_ops.h"

#include <cstdint>

#include "kernels/array_util.h"

namespace kiln::exec {
namespace {

using reverse::CheckSequenceDims;
using reverse::ReversedDims;
using reverse::SequenceState;

// ---- ReverseV2 ---------------------------------------------------------------------------------

Status PrepareReverse(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "tensor"));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 1, "axis", "Tidx", DType::kInt32).status());
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "axis", 1));
  const PartialShape& in = ctx.inputs[0].shape;
  if (const Tensor* axis = ConstantInput(ctx, 1); axis != nullptr && !in.unknown_rank()) {
    auto r = ReversedDims(IndexValues(*axis), in.rank());
    if (!r.ok()) return ctx.Error(r.status().message());
  }
  ctx.outputs = {TensorSpec{t, in}};
  return OkStatus();
}

// ---- Reverse (v1: a bool per dim) --------------------------------------------------------------

Status PrepareReverseV1(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "tensor"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "dims", DType::kBool));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "dims", 1));
  const PartialShape& in = ctx.inputs[0].shape;
  const int64_t n = KnownLength(ctx.inputs[1].shape);
  if (!in.unknown_rank() && n >= 0 && n != in.rank())
    return ctx.Error("input 'dims' has ", n, " entries for a tensor of rank ", in.rank());
  ctx.outputs = {TensorSpec{t, in}};
  return OkStatus();
}

// ---- ReverseSequence ---------------------------------------------------------------------------

Status PrepareReverseSequence(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 1, "seq_lengths", "Tlen", DType::kInt64).status());
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "seq_lengths", 1));
  auto state = std::make_shared<SequenceState>();
  KILN_PREPARE_ASSIGN(ctx, state->seq_dim, ctx.attrs.GetInt("seq_dim"));
  KILN_PREPARE_ASSIGN(ctx, state->batch_dim, ctx.attrs.GetInt("batch_dim", 0));
  const PartialShape& in = ctx.inputs[0].shape;
  if (!in.unknown_rank()) {
    KILN_PREPARE_CHECK(ctx, CheckSequenceDims(state->seq_dim, state->batch_dim, in.rank()));
    const int64_t n = KnownLength(ctx.inputs[1].shape);
    const int64_t batch = in.dim(static_cast<int>(state->batch_dim));
    if (n >= 0 && batch >= 0 && n != batch) {
      return ctx.Error("length of seq_lengths != input.dims(", state->batch_dim, "), (", n, " vs. ",
                       batch, ")");
    }
  }
  ctx.outputs = {TensorSpec{t, in}};
  ctx.state = std::move(state);
  return OkStatus();
}

// ---- Roll --------------------------------------------------------------------------------------

Status PrepareRoll(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  KILN_PREPARE_ASSIGN(ctx, DType tshift, ctx.attrs.GetType("Tshift"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tshift", tshift, {DType::kInt32, DType::kInt64}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "shift", tshift));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 2, "axis", "Taxis").status());
  for (int i = 1; i < 3; ++i) {
    const PartialShape& s = ctx.inputs[i].shape;
    if (!s.unknown_rank() && s.rank() > 1) {
      return ctx.Error("input '", i == 1 ? "shift" : "axis",
                       "' must be a scalar or a vector, got shape ", s.ToPythonString());
    }
  }
  const PartialShape& in = ctx.inputs[0].shape;
  if (!in.unknown_rank() && in.rank() == 0) {
    return ctx.Error("input 'input' must have rank at least 1, got a scalar");
  }
  ctx.outputs = {TensorSpec{t, in}};
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"ReverseV2", "output", kOpFreshOutputs, PrepareReverse},
    {"Reverse", "output", kOpFreshOutputs, PrepareReverseV1},
    {"ReverseSequence", "output", kOpFreshOutputs, PrepareReverseSequence},
    {"Roll", "output", kOpFreshOutputs, PrepareRoll},
};

}  // namespace

std::span<const OpDefinition> ReverseOpDefs() { return kDefs; }

}  // namespace kiln::exec
