// The CPU kernels of CTCGreedyDecoder, CTCBeamSearchDecoder and CTCLoss (kernels/ctc_ops.cc),
// as TensorFlow's CPU kernels compute them; the beam search is kernels/cpu/ctc_beam_search.h.
#include "kernels/ctc_ops.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "kernels/cpu/ctc_beam_search.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using ctc_ops::BeamState;
using ctc_ops::CtcLossState;
using ctc_ops::CtcState;

using CtcTypes = TypeList<float, double>;

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

// CTCLoss: per batch entry, -log p(labels | softmax(inputs)) over the first sequence_length[b]
// steps (the blank is the last class) and its gradient with respect to the logits, by the
// forward-backward recursion in log space (Graves' thesis, ch. 7) as TF's CTCLossCalculator
// runs it, in T. Labels come from a sparse [batch, max_label_len] tensor in row-major order;
// labels >= num_classes - 1 end a sequence. Entries skipped (sequence_length 0, or too short
// under ignore_longer_outputs_than_inputs) get loss 0 and a zero gradient (TF leaves the loss
// unset).

// The labels of each batch entry from the sparse (indices, values) pair, checked as TF's
// SparseTensor::IndicesValid does: in bounds and strictly increasing in row-major order.
Result<std::vector<std::vector<int>>> CtcLabels(const KernelContext& ctx, int64_t batch) {
  const Tensor& idx = ctx.input(1);
  const Tensor& val = ctx.input(2);
  if (idx.dim(1) != 2 || idx.dim(0) != val.dim(0)) {
    return ctx.Error("labels_indices must be [n, 2] and labels_values [n], got shapes ",
                     idx.shape().ToString(), " and ", val.shape().ToString());
  }
  const int64_t* ix = idx.data<int64_t>();
  const int32_t* v = val.data<int32_t>();
  std::vector<std::vector<int>> labels(batch);
  for (int64_t i = 0; i < idx.dim(0); ++i) {
    const int64_t b = ix[2 * i], pos = ix[2 * i + 1];
    if (b < 0 || b >= batch || pos < 0) {
      return ctx.Error("label SparseTensor is not valid: labels_indices[", i, "] = [", b, ",", pos,
                       "] is out of bounds for batch size ", batch);
    }
    if (i > 0 && (b < ix[2 * i - 2] || (b == ix[2 * i - 2] && pos <= ix[2 * i - 1]))) {
      return ctx.Error("label SparseTensor is not valid: labels_indices[", i, "] = [", b, ",", pos,
                       "] is out of order or repeated");
    }
    labels[b].push_back(v[i]);
  }
  return labels;
}

template <typename T>
T LogSumExp(T a, T b) {
  if (a == -std::numeric_limits<T>::infinity()) return b;
  if (b == -std::numeric_limits<T>::infinity()) return a;
  return a > b ? a + std::log1p(std::exp(b - a)) : b + std::log1p(std::exp(a - b));
}

// Loss and gradient of one batch entry: y [steps, classes] softmax, l_prime the labels with
// blanks around and between them; grad rows [steps, classes] with a `stride` between rows.
template <typename T>
T CtcEntry(const std::vector<T>& y, int64_t steps, int64_t classes, const std::vector<int>& lp,
           bool merge, T* grad, int64_t stride) {
  const T zero = -std::numeric_limits<T>::infinity();
  const int64_t u_n = static_cast<int64_t>(lp.size()), blank = classes - 1;
  std::vector<T> alpha(u_n * steps, zero), beta(u_n * steps, zero);
  auto a = [&](int64_t u, int64_t t) -> T& { return alpha[u * steps + t]; };
  auto be = [&](int64_t u, int64_t t) -> T& { return beta[u * steps + t]; };
  auto ly = [&](int64_t u, int64_t t) { return std::log(y[t * classes + lp[u]]); };
  a(0, 0) = std::log(y[blank]);
  if (u_n > 1) a(1, 0) = ly(1, 0);
  for (int64_t t = 1; t < steps; ++t) {
    for (int64_t u = std::max<int64_t>(0, u_n - 2 * (steps - t)); u < std::min(u_n, 2 * (t + 1));
         ++u) {
      T s = (merge || lp[u] == blank) ? a(u, t - 1) : zero;
      if (u > 0) s = LogSumExp(s, a(u - 1, t - 1));
      if (u > 1 && lp[u] != blank && !(merge && lp[u] == lp[u - 2]))
        s = LogSumExp(s, a(u - 2, t - 1));
      a(u, t) = ly(u, t) + s;
    }
  }
  for (int64_t u = std::max<int64_t>(0, u_n - 2); u < u_n; ++u) be(u, steps - 1) = 0;
  for (int64_t t = steps - 2; t >= 0; --t) {
    for (int64_t u = std::max<int64_t>(0, u_n - 2 * (steps - t)); u < std::min(u_n, 2 * (t + 1));
         ++u) {
      if (merge || lp[u] == blank) be(u, t) = LogSumExp(be(u, t), be(u, t + 1) + ly(u, t + 1));
      if (u + 1 < u_n) be(u, t) = LogSumExp(be(u, t), be(u + 1, t + 1) + ly(u + 1, t + 1));
      if (u + 2 < u_n && lp[u] != blank && !(merge && lp[u] == lp[u + 2]))
        be(u, t) = LogSumExp(be(u, t), be(u + 2, t + 1) + ly(u + 2, t + 1));
    }
  }
  T log_p = zero;
  for (int64_t u = 0; u < u_n; ++u) log_p = LogSumExp(log_p, a(u, 0) + be(u, 0));
  std::vector<T> prob(classes);
  for (int64_t t = 0; t < steps; ++t) {
    T* g = grad + t * stride;
    if (log_p == zero) {  // no valid path: TF's gradient is the softmax itself
      std::copy(y.begin() + t * classes, y.begin() + (t + 1) * classes, g);
      continue;
    }
    std::fill(prob.begin(), prob.end(), zero);
    for (int64_t u = 0; u < u_n; ++u) prob[lp[u]] = LogSumExp(prob[lp[u]], a(u, t) + be(u, t));
    // TF takes this exp in float for every T.
    for (int64_t l = 0; l < classes; ++l)
      g[l] = y[t * classes + l] - static_cast<T>(std::exp(static_cast<float>(prob[l] - log_p)));
  }
  return -log_p;
}

Status ComputeCtcLoss(const KernelContext& ctx) {
  const auto& st = ctx.state<CtcLossState>();
  const Tensor& in = ctx.input(0);
  const Tensor& len = ctx.input(3);
  if (in.rank() != 3)
    return ctx.Error("input 'inputs' must have rank 3, got ", in.shape().ToString());
  if (ctx.input(1).rank() != 2 || ctx.input(2).rank() != 1 || len.rank() != 1) {
    return ctx.Error("labels_indices must be a matrix and labels_values and sequence_length ",
                     "vectors, got shapes ", ctx.input(1).shape().ToString(), ", ",
                     ctx.input(2).shape().ToString(), " and ", len.shape().ToString());
  }
  const int64_t max_time = in.dim(0), batch = in.dim(1), classes = in.dim(2);
  if (len.dim(0) != batch) {
    return ctx.Error("len(sequence_length) != batch_size: sequence_length has ", len.dim(0),
                     " entries, inputs ", in.shape().ToString());
  }
  if (batch == 0) return ctx.Error("batch_size must not be 0");
  if (classes == 0)
    return ctx.Error("inputs must have at least one class, got ", in.shape().ToString());
  KILN_ASSIGN_OR_RETURN(auto labels, CtcLabels(ctx, batch));
  const int32_t* seq = len.data<int32_t>();
  std::vector<std::vector<int>> lprimes(batch);
  for (int64_t b = 0; b < batch; ++b) {
    if (seq[b] < 0 || seq[b] > max_time) {
      return ctx.Error("sequence_length[", b, "] = ", seq[b], " must be in [0, ", max_time, "]");
    }
    const std::vector<int>& label = labels[b];
    if (label.empty()) return ctx.Error("labels length is zero in batch ", b);
    std::vector<int> l;
    bool finished = false;
    for (size_t i = 0; i < label.size(); ++i) {
      if (i > 0 && st.collapse && label[i] == label[i - 1]) continue;
      if (label[i] >= classes - 1) {
        finished = true;
      } else if (finished) {
        return ctx.Error("saw a non-null label (index < num_classes - 1 = ", classes - 1,
                         ") following a null label in batch ", b);
      } else if (label[i] < 0) {
        return ctx.Error("all labels must be nonnegative integers, batch ", b, " has ", label[i]);
      } else {
        l.push_back(label[i]);
      }
    }
    if (!st.ignore_longer && static_cast<int64_t>(label.size()) > seq[b]) {
      return ctx.Error("not enough time for target transition sequence (required: ", label.size(),
                       ", available: ", seq[b], ") in batch ", b,
                       "; set ignore_longer_outputs_than_inputs to skip such entries");
    }
    for (int v : l) lprimes[b].insert(lprimes[b].end(), {static_cast<int>(classes - 1), v});
    lprimes[b].push_back(static_cast<int>(classes - 1));
  }
  KILN_ASSIGN_OR_RETURN(Tensor * loss, ctx.AllocateOutput(0, Shape{batch}));
  KILN_ASSIGN_OR_RETURN(Tensor * grad, ctx.AllocateOutput(1, in.shape()));
  return Dispatch<CtcTypes>(st.t, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* x = in.data<T>();
    T* lo = loss->data<T>();
    T* g = grad->data<T>();
    std::fill(g, g + grad->NumElements(), T(0));
    ctx.threads().ParallelFor(batch, 1, [&](int64_t begin, int64_t end) {
      std::vector<T> y;
      for (int64_t b = begin; b < end; ++b) {
        const int64_t steps = seq[b];
        lo[b] = T(0);
        if (steps == 0 || (st.ignore_longer && static_cast<int64_t>(labels[b].size()) > steps))
          continue;
        y.resize(steps * classes);
        for (int64_t t = 0; t < steps; ++t) {  // softmax of each step's logits
          const T* row = x + (t * batch + b) * classes;
          const T mx = *std::max_element(row, row + classes);
          T sum = 0;
          for (int64_t c = 0; c < classes; ++c) sum += y[t * classes + c] = std::exp(row[c] - mx);
          for (int64_t c = 0; c < classes; ++c) y[t * classes + c] /= sum;
        }
        lo[b] =
            CtcEntry<T>(y, steps, classes, lprimes[b], st.merge, g + b * classes, batch * classes);
      }
    });
    return OkStatus();
  });
}

constexpr KernelEntry kCpu[] = {
    {"CTCGreedyDecoder", ComputeCtcGreedy},
    {"CTCBeamSearchDecoder", ComputeCtcBeam},
    {"CTCLoss", ComputeCtcLoss},
};

}  // namespace

std::span<const KernelEntry> CtcCpuKernels() { return kCpu; }

}  // namespace kiln::exec
