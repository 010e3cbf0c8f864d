// CTCGreedyDecoder: best-path decoding of [max_time, batch, num_classes] logits. At every step up
// to sequence_length[b] the first class with the highest value is taken and its negated value
// added to log_probability; blanks (blank_index, negative counts from the end) are dropped, and
// with merge_repeated so are repeats of the previous step's class. The decoded sequences come
// out as a sparse tensor (indices [n, 2], values [n], dense shape [batch, longest]), as
// TensorFlow's CPU kernel writes them.
// CTCBeamSearchDecoder: the top_paths most probable label sequences of a beam search
// (cpu/ctc_beam_search.h; the blank is the last class), one sparse tensor per path, and each path's
// log probability (of the softmax of each step's logits, as TF's kernel reports it).
// CTCLoss: per batch entry, -log p(labels | softmax(inputs)) and its gradient with respect to the
// logits.
// The CPU kernels are in kernels/cpu/ctc_ops.cc (which says how CTCLoss computes).
#include "kernels/ctc_ops.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <utility>

#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using ctc_ops::BeamState;
using ctc_ops::CtcLossState;
using ctc_ops::CtcState;

Status PrepareCtcGreedy(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  auto st = std::make_shared<CtcState>();
  KILN_PREPARE_ASSIGN(ctx, st->t, ctx.attrs.GetType("T", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->t, {DType::kFloat, DType::kDouble}));
  KILN_PREPARE_ASSIGN(ctx, st->merge_repeated, ctx.attrs.GetBool("merge_repeated", false));
  KILN_PREPARE_ASSIGN(ctx, st->blank_index, ctx.attrs.GetInt("blank_index", -1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "inputs", st->t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "inputs", 3));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "sequence_length", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "sequence_length", 1));
  const PartialShape& in = ctx.inputs[0].shape;
  int64_t batch = in.unknown_rank() ? -1 : in.dim(1);
  const int64_t classes = in.unknown_rank() ? -1 : in.dim(2);
  const PartialShape& len = ctx.inputs[1].shape;
  if (!len.unknown_rank() && len.dim(0) >= 0) {
    if (batch >= 0 && len.dim(0) != batch) {
      return ctx.Error("input 'sequence_length' ", len.ToPythonString(),
                       " must have one entry per batch element of 'inputs' ", in.ToPythonString());
    }
    batch = len.dim(0);
  }
  if (classes > 0) {
    const int64_t blank = st->blank_index < 0 ? classes + st->blank_index : st->blank_index;
    if (blank < 0 || blank >= classes) {
      return ctx.Error("attr 'blank_index' expected to be between ", -classes, " and ", classes - 1,
                       " but was ", st->blank_index);
    }
  }
  ctx.outputs = {
      TensorSpec{DType::kInt64, PartialShape{-1, 2}}, TensorSpec{DType::kInt64, PartialShape{-1}},
      TensorSpec{DType::kInt64, PartialShape{2}}, TensorSpec{st->t, PartialShape{batch, 1}}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- CTCBeamSearchDecoder ----------------------------------------------------------------------

Status PrepareCtcBeam(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  auto st = std::make_shared<BeamState>();
  KILN_PREPARE_ASSIGN(ctx, st->t, ctx.attrs.GetType("T", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->t, {DType::kFloat, DType::kDouble}));
  KILN_PREPARE_ASSIGN(ctx, int64_t width, ctx.attrs.GetInt("beam_width"));
  KILN_PREPARE_ASSIGN(ctx, int64_t paths, ctx.attrs.GetInt("top_paths"));
  KILN_PREPARE_ASSIGN(ctx, st->merge_repeated, ctx.attrs.GetBool("merge_repeated", true));
  if (width < 1 || width > std::numeric_limits<int32_t>::max())
    return ctx.Error("attr 'beam_width' must be >= 1, got ", width);
  if (paths < 1 || paths > width)
    return ctx.Error("attr 'top_paths' must be between 1 and beam_width (", width, "), got ",
                     paths);
  st->beam_width = static_cast<int>(width);
  st->top_paths = static_cast<int>(paths);
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "inputs", st->t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "inputs", 3));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "sequence_length", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "sequence_length", 1));
  const PartialShape& in = ctx.inputs[0].shape;
  const int64_t batch = in.unknown_rank() ? -1 : in.dim(1);
  ctx.outputs.clear();
  for (int p = 0; p < st->top_paths; ++p)
    ctx.outputs.push_back(TensorSpec{DType::kInt64, PartialShape{-1, 2}});
  for (int p = 0; p < st->top_paths; ++p)
    ctx.outputs.push_back(TensorSpec{DType::kInt64, PartialShape{-1}});
  for (int p = 0; p < st->top_paths; ++p)
    ctx.outputs.push_back(TensorSpec{DType::kInt64, PartialShape{2}});
  ctx.outputs.push_back(TensorSpec{st->t, PartialShape{batch, st->top_paths}});
  ctx.state = std::move(st);
  return OkStatus();
}

Status PrepareCtcLoss(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  auto st = std::make_shared<CtcLossState>();
  KILN_PREPARE_ASSIGN(ctx, st->t, ctx.attrs.GetType("T", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->t, {DType::kFloat, DType::kDouble}));
  KILN_PREPARE_ASSIGN(ctx, st->collapse, ctx.attrs.GetBool("preprocess_collapse_repeated", false));
  KILN_PREPARE_ASSIGN(ctx, st->merge, ctx.attrs.GetBool("ctc_merge_repeated", true));
  KILN_PREPARE_ASSIGN(ctx, st->ignore_longer,
                      ctx.attrs.GetBool("ignore_longer_outputs_than_inputs", false));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "inputs", st->t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "inputs", 3));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "labels_indices", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "labels_indices", 2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "labels_values", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "labels_values", 1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "sequence_length", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 3, "sequence_length", 1));
  const PartialShape& in = ctx.inputs[0].shape;
  const int64_t batch = in.unknown_rank() ? -1 : in.dim(1);
  ctx.outputs = {TensorSpec{st->t, PartialShape{batch}}, TensorSpec{st->t, in}};
  ctx.state = std::move(st);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"CTCGreedyDecoder", "decoded_indices,decoded_values,decoded_shape,log_probability",
     kOpFreshOutputs, PrepareCtcGreedy},
    {"CTCBeamSearchDecoder",
     "decoded_indices*top_paths,decoded_values*top_paths,decoded_shape*top_paths,log_probability",
     kOpFreshOutputs, PrepareCtcBeam},
    {"CTCLoss", "loss,gradient", kOpFreshOutputs, PrepareCtcLoss},
};

}  // namespace

std::span<const OpDefinition> CtcOpDefs() { return kDefs; }

}  // namespace kiln::exec
