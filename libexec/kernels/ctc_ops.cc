// CTCGreedyDecoder: best-path decoding of [max_time, batch, num_classes] logits. At every step up
// to sequence_length[b] the first class with the highest value is taken and its negated value
// added to log_probability; blanks (blank_index, negative counts from the end) are dropped, and
// with merge_repeated so are repeats of the previous step's class. The decoded sequences come
// out as a sparse tensor (indices [n, 2], values [n], dense shape [batch, longest]), as
// TensorFlow's CPU kernel writes them.
// CTCBeamSearchDecoder: the top_paths most probable label sequences of a beam search
// (ctc_beam_search.h; the blank is the last class), one sparse tensor per path, and each path's
// log probability (of the softmax of each step's logits, as TF's kernel reports it).
#include <algorithm>
#include <limits>
#include <vector>

#include "kernels/ctc_beam_search.h"
#include "kernels/kernel_util.h"
#include "kernels/op_families.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using CtcTypes = TypeList<float, double>;

struct CtcState : OpState {
  DType t = DType::kFloat;
  bool merge_repeated = false;
  int64_t blank_index = -1;
};

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

// TF's ValidateInputsGenerateOutputs: [max_time, batch, classes] inputs and one length per
// batch element, none beyond max_time.
Status CheckCtcInputs(const KernelContext& ctx, const Tensor& in, const Tensor& len) {
  if (in.rank() != 3) return ctx.Error("inputs is not a 3-Tensor: shape ", in.shape().ToString());
  if (in.NumElements() == 0) {
    return ctx.Error("inputs must not be empty, got shape ", in.shape().ToString());
  }
  const int64_t max_time = in.dim(0), batch = in.dim(1), classes = in.dim(2);
  if (classes > std::numeric_limits<int32_t>::max()) {
    return ctx.Error("num_classes cannot exceed max int");
  }
  if (len.rank() != 1 || len.dim(0) != batch) {
    return ctx.Error("len(sequence_length) != batch_size: sequence_length has shape ",
                     len.shape().ToString(), ", batch_size ", batch);
  }
  const int32_t* lens = len.data<int32_t>();
  for (int64_t b = 0; b < batch; ++b) {
    if (lens[b] > max_time) {
      return ctx.Error("sequence_length(", b, ") = ", lens[b], " exceeds max_time ", max_time);
    }
  }
  return OkStatus();
}

// One path of every batch element as a sparse tensor: outputs `first` (indices [n, 2]),
// `first + stride` (values [n]) and `first + 2 * stride` (dense shape [batch, longest]).
Status WriteDecoded(const KernelContext& ctx, const std::vector<std::vector<int64_t>>& sequences,
                    int first, int stride) {
  const auto batch = static_cast<int64_t>(sequences.size());
  int64_t total = 0, longest = 0;
  for (const auto& s : sequences) {
    total += static_cast<int64_t>(s.size());
    longest = std::max<int64_t>(longest, static_cast<int64_t>(s.size()));
  }
  KILN_ASSIGN_OR_RETURN(Tensor * indices, ctx.AllocateOutput(first, Shape{total, 2}));
  KILN_ASSIGN_OR_RETURN(Tensor * values, ctx.AllocateOutput(first + stride, Shape{total}));
  KILN_ASSIGN_OR_RETURN(Tensor * shape, ctx.AllocateOutput(first + 2 * stride, Shape{2}));
  int64_t* ip = indices->data<int64_t>();
  int64_t* vp = values->data<int64_t>();
  int64_t k = 0;
  for (int64_t b = 0; b < batch; ++b) {
    for (size_t t = 0; t < sequences[b].size(); ++t, ++k) {
      ip[2 * k] = b;
      ip[2 * k + 1] = static_cast<int64_t>(t);
      vp[k] = sequences[b][t];
    }
  }
  shape->data<int64_t>()[0] = batch;
  shape->data<int64_t>()[1] = longest;
  return OkStatus();
}

Status ComputeCtcGreedy(const KernelContext& ctx) {
  const auto& st = ctx.state<CtcState>();
  const Tensor& in = ctx.input(0);
  const Tensor& len = ctx.input(1);
  KILN_RETURN_IF_ERROR(CheckCtcInputs(ctx, in, len));
  const int64_t batch = in.dim(1), classes = in.dim(2);
  const int32_t* lens = len.data<int32_t>();
  const int64_t blank = st.blank_index < 0 ? classes + st.blank_index : st.blank_index;
  if (blank < 0 || blank >= classes) {
    return ctx.Error("blank_index expected to be between ", -classes, " and ", classes - 1,
                     " but was ", st.blank_index);
  }
  std::vector<std::vector<int64_t>> sequences(batch);
  KILN_ASSIGN_OR_RETURN(Tensor * log_prob, ctx.AllocateOutput(3, Shape{batch, 1}));
  KILN_RETURN_IF_ERROR(Dispatch<CtcTypes>(st.t, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* x = in.data<T>();
    T* lp = log_prob->data<T>();
    for (int64_t b = 0; b < batch; ++b) {
      lp[b] = T(0);
      int64_t prev = -1;
      for (int64_t t = 0; t < lens[b]; ++t) {
        const T* row = x + (t * batch + b) * classes;
        int64_t best = 0;
        T m = row[0];
        for (int64_t c = 1; c < classes; ++c) {
          if (row[c] > m) {
            m = row[c];
            best = c;
          }
        }
        lp[b] += -m;
        if (best != blank && !(st.merge_repeated && best == prev)) sequences[b].push_back(best);
        prev = best;
      }
    }
    return OkStatus();
  }));
  return WriteDecoded(ctx, sequences, 0, 1);
}

// ---- CTCBeamSearchDecoder ----------------------------------------------------------------------

struct BeamState : OpState {
  DType t = DType::kFloat;
  int beam_width = 0;
  int top_paths = 0;
  bool merge_repeated = true;
};

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

Status ComputeCtcBeam(const KernelContext& ctx) {
  const auto& st = ctx.state<BeamState>();
  const Tensor& in = ctx.input(0);
  const Tensor& len = ctx.input(1);
  KILN_RETURN_IF_ERROR(CheckCtcInputs(ctx, in, len));
  const int64_t batch = in.dim(1), classes = in.dim(2);
  const int32_t* lens = len.data<int32_t>();
  // paths[p][b]: path p of batch element b.
  std::vector<std::vector<std::vector<int64_t>>> paths(st.top_paths,
                                                       std::vector<std::vector<int64_t>>(batch));
  KILN_ASSIGN_OR_RETURN(Tensor * log_prob,
                        ctx.AllocateOutput(3 * st.top_paths, Shape{batch, st.top_paths}));
  KILN_RETURN_IF_ERROR(Dispatch<CtcTypes>(st.t, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* x = in.data<T>();
    T* lp = log_prob->data<T>();
    ctc::BeamSearch<T> search(classes, st.beam_width);
    std::vector<std::vector<int64_t>> best;
    std::vector<T> scores;
    for (int64_t b = 0; b < batch; ++b) {
      search.Reset();
      for (int64_t t = 0; t < lens[b]; ++t) search.Step(x + (t * batch + b) * classes);
      if (search.num_leaves() < st.top_paths)
        return ctx.Error("Less leaves in the beam search than requested (", search.num_leaves(),
                         " prefixes for top_paths ", st.top_paths, " in batch element ", b, ")");
      search.TopPaths(st.top_paths, st.merge_repeated, &best, &scores);
      for (int p = 0; p < st.top_paths; ++p) {
        paths[p][b] = std::move(best[p]);
        lp[b * st.top_paths + p] = scores[p];
      }
    }
    return OkStatus();
  }));
  for (int p = 0; p < st.top_paths; ++p)
    KILN_RETURN_IF_ERROR(WriteDecoded(ctx, paths[p], p, st.top_paths));
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"CTCGreedyDecoder", "decoded_indices,decoded_values,decoded_shape,log_probability",
     kOpFreshOutputs, PrepareCtcGreedy},
    {"CTCBeamSearchDecoder",
     "decoded_indices*top_paths,decoded_values*top_paths,decoded_shape*top_paths,log_probability",
     kOpFreshOutputs, PrepareCtcBeam},
};

constexpr KernelEntry kCpu[] = {
    {"CTCGreedyDecoder", ComputeCtcGreedy},
    {"CTCBeamSearchDecoder", ComputeCtcBeam},
};

}  // namespace

std::span<const OpDefinition> CtcOpDefs() { return kDefs; }
std::span<const KernelEntry> CtcCpuKernels() { return kCpu; }

}  // namespace kiln::exec
