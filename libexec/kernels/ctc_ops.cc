// CTCGreedyDecoder: best-path decoding of [max_time, batch, num_classes] logits. At every step up
// to sequence_length[b] the first class with the highest value is taken and its negated value
// added to log_probability; blanks (blank_index, negative counts from the end) are dropped, and
// with merge_repeated so are repeats of the previous step's class. The decoded sequences come
// out as a sparse tensor (indices [n, 2], values [n], dense shape [batch, longest]), as
// TensorFlow's CPU kernel writes them.
#include <algorithm>
#include <limits>
#include <vector>

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

Status ComputeCtcGreedy(const KernelContext& ctx) {
  const auto& st = ctx.state<CtcState>();
  const Tensor& in = ctx.input(0);
  const Tensor& len = ctx.input(1);
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
  int64_t total = 0, longest = 0;
  for (const auto& s : sequences) {
    total += static_cast<int64_t>(s.size());
    longest = std::max<int64_t>(longest, static_cast<int64_t>(s.size()));
  }
  KILN_ASSIGN_OR_RETURN(Tensor * indices, ctx.AllocateOutput(0, Shape{total, 2}));
  KILN_ASSIGN_OR_RETURN(Tensor * values, ctx.AllocateOutput(1, Shape{total}));
  KILN_ASSIGN_OR_RETURN(Tensor * shape, ctx.AllocateOutput(2, Shape{2}));
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

constexpr OpDefinition kDefs[] = {
    {"CTCGreedyDecoder", "decoded_indices,decoded_values,decoded_shape,log_probability",
     kOpFreshOutputs, PrepareCtcGreedy},
};

constexpr KernelEntry kCpu[] = {
    {"CTCGreedyDecoder", ComputeCtcGreedy},
};

}  // namespace

std::span<const OpDefinition> CtcOpDefs() { return kDefs; }
std::span<const KernelEntry> CtcCpuKernels() { return kCpu; }

}  // namespace kiln::exec
