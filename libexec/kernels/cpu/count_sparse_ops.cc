// The CPU kernels of the sparse counting ops in kernels/count_sparse_ops.cc.
#include "kernels/count_sparse_ops.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/sparse_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using count_sparse::CountInput;
using count_sparse::CountSparseState;
using count_sparse::CountTypes;
using count_sparse::SparseBincountState;

// ---- SparseBincount --------------------------------------------------------------------------

Status ComputeSparseBincount(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(SparseInput sp, ReadSparseInput(ctx, 0, "sparse input"));
  const Tensor& size_t_ = ctx.input(3);
  const Tensor& weights = ctx.input(4);
  if (size_t_.rank() != 0) {
    return ctx.Error("input 'size' must be a scalar, got shape ", size_t_.shape().ToString());
  }
  const int64_t size = IndexValues(size_t_)[0];
  if (size < 0) return ctx.Error("input 'size' must be non-negative, got ", size);
  if (sp.rank == 0) return ctx.Error("input 'dense_shape' must have at least one element");
  const bool weighted = weights.NumElements() > 0;
  if (weighted && weights.NumElements() != sp.n) {
    return ctx.Error("input 'weights' must have as many elements as 'values' (", sp.n,
                     ") or none, got shape ", weights.shape().ToString());
  }
  const std::vector<int64_t> values = IndexValues(*sp.values);
  // TF rejects negative values of a 1-D input and drops those of a batched one.
  const bool batched = sp.rank >= 2;
  for (int64_t v : values) {
    if (v < 0 && !batched) return ctx.Error("input 'values' must be non-negative, got ", v);
  }
  const bool binary = ctx.state<SparseBincountState>().binary_output;
  const int64_t rows = batched ? sp.shape[0] : 1;
  const Shape out_shape = batched ? Shape{rows, size} : Shape{size};
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  // SparseBincount's weights: every number type, as TF registers.
  return Dispatch<NumberTypes>(out->dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;  // storage
    using T = ComputeType<S>;
    T* o = MutableComputeData<S>(out);
    std::fill_n(o, out->NumElements(), T(0));
    const T* w = weighted ? ComputeData<S>(weights) : nullptr;
    for (int64_t i = 0; i < sp.n; ++i) {
      const int64_t v = values[i];
      if (v < 0 || v >= size) continue;  // past the last bin: dropped, as TF
      T& bin = o[(batched ? sp.row(i)[0] * size : 0) + v];
      bin = binary ? T(1) : bin + (w != nullptr ? w[i] : T(1));
    }
    return OkStatus();
  });
}

// ---- {Dense,Sparse,Ragged}CountSparseOutput --------------------------------------------------

// The counts of each batch, sorted by value, written as a SparseTensor of rank 1 (one batch) or
// 2 ([batches, width]). The width is maxlength if positive, else max(max value + 1, minlength).
template <typename W>
Status EmitSparseCounts(const KernelContext& ctx, const std::vector<std::map<int64_t, W>>& counts,
                        int64_t max_value, bool is_1d) {
  const auto& st = ctx.state<CountSparseState>();
  int64_t total = 0;
  for (const auto& batch : counts) total += static_cast<int64_t>(batch.size());
  const int64_t rank = is_1d ? 1 : 2;
  KILN_ASSIGN_OR_RETURN(Tensor * indices, ctx.AllocateOutput(0, Shape{total, rank}));
  KILN_ASSIGN_OR_RETURN(Tensor * values, ctx.AllocateOutput(1, Shape{total}));
  KILN_ASSIGN_OR_RETURN(Tensor * shape, ctx.AllocateOutput(2, Shape{rank}));
  int64_t* idx = indices->data<int64_t>();
  W* val = values->data<W>();
  int64_t k = 0;
  for (size_t b = 0; b < counts.size(); ++b) {
    for (const auto& [value, count] : counts[b]) {
      if (!is_1d) *idx++ = static_cast<int64_t>(b);
      *idx++ = value;
      val[k++] = count;
    }
  }
  const int64_t width =
      st.maxlength > 0 ? st.maxlength : std::max<int64_t>(max_value + 1, st.minlength);
  int64_t* dims = shape->data<int64_t>();
  if (!is_1d) *dims++ = static_cast<int64_t>(counts.size());
  *dims = width;
  return OkStatus();
}

// Counts values[i] into batch batch_of(i), skipping those >= maxlength (when positive).
template <typename W, typename BatchOf>
Status CountInto(const KernelContext& ctx, const Tensor& values_t, const Tensor& weights,
                 int64_t batches, bool is_1d, BatchOf batch_of) {
  const auto& st = ctx.state<CountSparseState>();
  const std::vector<int64_t> values = IndexValues(values_t);
  const W* w = weights.NumElements() > 0 ? weights.data<W>() : nullptr;
  std::vector<std::map<int64_t, W>> counts(static_cast<size_t>(batches));
  for (int64_t v : values) {
    if (v < 0) return ctx.Error("input 'values' must all be non-negative, got ", v);
  }
  int64_t max_value = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    const int64_t v = values[i];
    if (st.maxlength > 0 && v >= st.maxlength) continue;
    W& c = counts[batch_of(static_cast<int64_t>(i))][v];
    c = st.binary_output ? W(1) : c + (w != nullptr ? w[i] : W(1));
    max_value = std::max(max_value, v);
  }
  return EmitSparseCounts<W>(ctx, counts, max_value, is_1d);
}

Status CheckWeights(const KernelContext& ctx, const Tensor& weights, const Tensor& values) {
  if (weights.NumElements() > 0 && weights.shape() != values.shape()) {
    return ctx.Error("input 'weights' must have the shape of 'values' ", values.shape().ToString(),
                     " or no elements, got ", weights.shape().ToString());
  }
  return OkStatus();
}

template <CountInput kIn>
Status ComputeCountSparseOutput(const KernelContext& ctx) {
  const int values_at = kIn == CountInput::kDense ? 0 : 1;
  const Tensor& values = ctx.input(values_at);
  const Tensor& weights = ctx.input(kIn == CountInput::kSparse ? 3 : values_at + 1);
  KILN_RETURN_IF_ERROR(CheckWeights(ctx, weights, values));
  int64_t batches = 1;
  bool is_1d = true;
  std::vector<int64_t> batch_of;  // batch of each value (sparse and ragged inputs)
  int64_t per_batch = values.NumElements();
  if (kIn == CountInput::kDense) {
    if (values.rank() != 1 && values.rank() != 2) {
      return ctx.Error("input 'values' must have rank 1 or 2, got shape ",
                       values.shape().ToString());
    }
    is_1d = values.rank() == 1;
    if (!is_1d) {
      batches = values.dim(0);
      if (batches == 0) return ctx.Error("input 'values' must not have 0 rows");
      per_batch = values.dim(1);
    }
  } else if (kIn == CountInput::kSparse) {
    KILN_ASSIGN_OR_RETURN(SparseInput sp, ReadSparseInput(ctx, 0, "sparse input"));
    if (sp.rank == 0) return ctx.Error("input 'dense_shape' must have at least one element");
    is_1d = sp.rank == 1;
    if (!is_1d) {
      batches = sp.shape[0];
      if (batches <= 0) {
        return ctx.Error("input 'dense_shape' must have a positive first dimension, got ", batches);
      }
      for (int64_t i = 0; i < sp.n; ++i) batch_of.push_back(sp.row(i)[0]);
    }
  } else {
    const Tensor& splits_t = ctx.input(0);
    const int64_t n = values.NumElements();
    if (splits_t.rank() != 1 || splits_t.NumElements() < 2) {
      return ctx.Error("input 'splits' must have at least 2 elements, got shape ",
                       splits_t.shape().ToString());
    }
    if (values.rank() != 1) {
      return ctx.Error("input 'values' must be a vector, got shape ", values.shape().ToString());
    }
    const int64_t* splits = splits_t.data<int64_t>();
    batches = splits_t.NumElements() - 1;
    is_1d = false;
    if (splits[0] != 0) return ctx.Error("input 'splits' must start with 0, got ", splits[0]);
    if (splits[batches] != n) {
      return ctx.Error("input 'splits' must end with the number of values ", n, ", got ",
                       splits[batches]);
    }
    for (int64_t r = 0; r < batches; ++r) {
      if (splits[r + 1] < splits[r]) {
        return ctx.Error("input 'splits' must be non-decreasing, got ", splits[r], " then ",
                         splits[r + 1]);
      }
      for (int64_t i = splits[r]; i < splits[r + 1]; ++i) batch_of.push_back(r);
    }
  }
  const bool by_row = kIn != CountInput::kDense && !is_1d;
  return Dispatch<CountTypes>(ctx.state<CountSparseState>().out_type, [&](auto tag) {
    using W = typename decltype(tag)::type;
    return CountInto<W>(ctx, values, weights, batches, is_1d, [&](int64_t i) {
      return by_row ? batch_of[i] : (is_1d ? 0 : i / per_batch);
    });
  });
}

constexpr KernelEntry kCpu[] = {
    {"SparseBincount", ComputeSparseBincount},
    {"DenseCountSparseOutput", ComputeCountSparseOutput<CountInput::kDense>},
    {"SparseCountSparseOutput", ComputeCountSparseOutput<CountInput::kSparse>},
    {"RaggedCountSparseOutput", ComputeCountSparseOutput<CountInput::kRagged>},
};

}  // namespace

std::span<const KernelEntry> CountSparseCpuKernels() { return kCpu; }

}  // namespace kiln::exec
