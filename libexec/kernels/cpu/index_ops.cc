// The CPU kernels of the ops in kernels/index_ops.cc.
#include "kernels/index_ops.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <type_traits>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/nd_index.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using index::AxisState;
using index::ReadK;
using index::SearchTypes;
using index::TopKState;
using index::WhereTypes;

// ---- OneHot ----------------------------------------------------------------------------------

Status ComputeOneHot(const KernelContext& ctx) {
  const Tensor& indices = ctx.input(0);
  const Result<index::OneHotGeom> g = index::OneHotGeomOf(
      indices, ctx.input(1), ctx.input(2), ctx.input(3), ctx.state<AxisState>().value);
  if (!g.ok()) return Wrap(ctx, g.status());
  const int64_t depth = g->depth, prefix = g->prefix, suffix = g->suffix;
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, g->shape));
  if (out->NumElements() == 0) return OkStatus();
  return DispatchIndex(indices.dtype(), [&](auto index_tag) {
    using I = typename decltype(index_tag)::type;
    const I* idx = indices.data<I>();
    return DispatchStorage(out->dtype(), [&](auto tag) {
      using U = typename decltype(tag)::type;
      const U on = Elems<U>(ctx.input(2))[0];
      const U off = Elems<U>(ctx.input(3))[0];
      U* dst = Elems<U>(*out);
      // out[p, d, s] = indices[p, s] == d ? on : off; a row (p, d) at a time.
      ctx.threads().ParallelFor(prefix * depth, std::max<int64_t>(1, 65536 / suffix),
                                [&](int64_t begin, int64_t end) {
                                  for (int64_t r = begin; r < end; ++r) {
                                    const int64_t p = r / depth, d = r % depth;
                                    const I* row = idx + p * suffix;
                                    U* to = dst + r * suffix;
                                    for (int64_t j = 0; j < suffix; ++j) {
                                      to[j] = IndexAt(row, j) == d ? on : off;
                                    }
                                  }
                                });
      return OkStatus();
    });
  });
}

// ---- TopKV2 ----------------------------------------------------------------------------------

Status ComputeTopK(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const TopKState& st = ctx.state<TopKState>();
  const Result<index::TopKGeom> g =
      index::TopKGeomOf(x, st, st.attr_k >= 0 ? nullptr : &ctx.input(1));
  if (!g.ok()) return Wrap(ctx, g.status());
  const int64_t cols = g->cols, rows = g->rows;
  const int64_t k = g->k;
  KILN_ASSIGN_OR_RETURN(Tensor * values, ctx.AllocateOutput(0, g->shape));
  KILN_ASSIGN_OR_RETURN(Tensor * indices, ctx.AllocateOutput(1, g->shape));
  if (k == 0 || rows == 0) return OkStatus();
  return Dispatch<RealTypes>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* in = ComputeData<T>(x);
    C* vout = MutableComputeData<T>(values);
    return DispatchIndex(indices->dtype(), [&](auto index_tag) {
      using I = typename decltype(index_tag)::type;
      I* iout = indices->data<I>();
      ctx.threads().ParallelFor(rows, std::max<int64_t>(1, 4096 / cols), [&](int64_t b, int64_t e) {
        std::vector<int64_t> order(cols);
        for (int64_t r = b; r < e; ++r) {
          const C* row = in + r * cols;
          std::iota(order.begin(), order.end(), 0);
          auto cmp = [row](int64_t i, int64_t j) {
            return index::TopKBefore(row[i], row[j]) ||
                   (!index::TopKBefore(row[j], row[i]) && i < j);
          };
          std::partial_sort(order.begin(), order.begin() + k, order.end(), cmp);
          for (int64_t j = 0; j < k; ++j) {
            vout[r * k + j] = row[order[j]];
            iout[r * k + j] = static_cast<I>(order[j]);
          }
        }
      });
      return OkStatus();
    });
  });
}

// ---- Where -----------------------------------------------------------------------------------

Status ComputeWhere(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  return Dispatch<WhereTypes>(x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* in = ComputeData<T>(x);
    const int64_t n = x.NumElements();
    int64_t count = 0;
    for (int64_t i = 0; i < n; ++i) count += in[i] != C(0) ? 1 : 0;
    const int rank = x.rank();
    KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{count, rank}));
    int64_t* dst = out->data<int64_t>();
    std::array<int64_t, kMaxRank> idx{};
    for (int64_t i = 0; i < n; ++i) {
      if (in[i] != C(0)) {
        std::copy(idx.begin(), idx.begin() + rank, dst);
        dst += rank;
      }
      for (int d = rank - 1; d >= 0; --d) {
        if (++idx[d] < x.dim(d)) break;
        idx[d] = 0;
      }
    }
    return OkStatus();
  });
}

// ---- InvertPermutation -----------------------------------------------------------------------

Status ComputeInvertPermutation(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() != 1) {
    return ctx.Error("invert_permutation expects a 1D vector, got shape ", x.shape().ToString());
  }
  const int64_t n = x.NumElements();
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  return DispatchIndex(x.dtype(), [&](auto tag) -> Status {
    using I = typename decltype(tag)::type;
    const I* in = x.data<I>();
    I* y = out->data<I>();
    std::fill(y, y + n, I(-1));
    for (int64_t i = 0; i < n; ++i) {
      const int64_t v = IndexAt(in, i);
      if (v < 0 || v >= n) return ctx.Error(v, " is not between 0 and ", n);
      if (y[v] != I(-1)) return ctx.Error(v, " is duplicated in the input");
      y[v] = static_cast<I>(i);
    }
    return OkStatus();
  });
}

// ---- LowerBound, UpperBound ------------------------------------------------------------------

template <bool kUpper>
Status ComputeBound(const KernelContext& ctx) {
  const Tensor& sorted = ctx.input(0);
  const Tensor& values = ctx.input(1);
  if (sorted.rank() != 2 || values.rank() != 2 || sorted.dim(0) != values.dim(0))
    return ctx.Error("'sorted_inputs' ", sorted.shape().ToString(), " and 'values' ",
                     values.shape().ToString(), " must be matrices with the same number of rows");
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, values.shape()));
  const int64_t rows = values.dim(0), n = sorted.dim(1), m = values.dim(1);
  if (values.NumElements() > 0 && n > 0 && out->dtype() == DType::kInt32 &&
      n > std::numeric_limits<int32_t>::max())
    return ctx.Error("'sorted_inputs' has ", n, " columns, too many for out_type int32");
  return Dispatch<SearchTypes>(sorted.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* s = ComputeData<T>(sorted);
    const C* v = ComputeData<T>(values);
    auto write = [&](auto* o) {
      using O = std::remove_pointer_t<decltype(o)>;
      ctx.threads().ParallelFor(rows * m, 1024, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const C* row = s + (i / m) * n;
          const C* at =
              kUpper ? std::upper_bound(row, row + n, v[i]) : std::lower_bound(row, row + n, v[i]);
          o[i] = static_cast<O>(at - row);
        }
      });
    };
    if (out->dtype() == DType::kInt32) {
      write(out->template data<int32_t>());
    } else {
      write(out->template data<int64_t>());
    }
    return OkStatus();
  });
}

// ---- UnravelIndex ----------------------------------------------------------------------------

Status ComputeUnravelIndex(const KernelContext& ctx) {
  const Tensor& indices = ctx.input(0);
  const Tensor& dims_t = ctx.input(1);
  if (indices.rank() > 1 || dims_t.rank() != 1)
    return ctx.Error("'indices' must be a scalar or a vector and 'dims' a vector, got shapes ",
                     indices.shape().ToString(), " and ", dims_t.shape().ToString());
  const std::vector<int64_t> dims = IndexValues(dims_t);
  int64_t total = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] <= 0) return ctx.Error("input 'dims' must contain positive values, got ", dims[i]);
    total = total > std::numeric_limits<int64_t>::max() / dims[i] ? -1 : total * dims[i];
    if (total < 0) return ctx.Error("the product of 'dims' overflows int64");
  }
  const std::vector<int64_t> idx = IndexValues(indices);
  for (int64_t v : idx)
    if (v < 0 || v >= total)
      return ctx.Error("index ", v, " is out of bounds for dims ", DimsString(dims));
  const int64_t k = static_cast<int64_t>(dims.size()), n = static_cast<int64_t>(idx.size());
  Shape shape = indices.rank() == 0 ? Shape{k} : Shape{k, n};
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, shape));
  auto write = [&](auto* o) {
    using O = std::remove_pointer_t<decltype(o)>;
    for (int64_t j = 0; j < n; ++j) {
      int64_t rest = idx[j];
      for (int64_t d = k - 1; d >= 0; --d) {
        o[d * n + j] = static_cast<O>(rest % dims[d]);
        rest /= dims[d];
      }
    }
  };
  if (out->dtype() == DType::kInt32) {
    write(out->data<int32_t>());
  } else {
    write(out->data<int64_t>());
  }
  return OkStatus();
}

// ---- InTopK, InTopKV2 ------------------------------------------------------------------------

Status ComputeInTopK(const KernelContext& ctx) {
  const Tensor& pred = ctx.input(0);
  const Tensor& targets = ctx.input(1);
  int64_t k = 0;
  if (ctx.num_inputs() == 3) {
    if (ctx.input(2).NumElements() != 1) return ctx.Error("input 'k' must be a scalar");
    k = IndexValues(ctx.input(2))[0];
  } else {
    k = ctx.state<TypedOpState<int64_t>>().value;
  }
  if (pred.rank() != 2 || targets.rank() != 1 || targets.dim(0) != pred.dim(0))
    return ctx.Error("'predictions' ", pred.shape().ToString(), " must be [batch, classes] and '",
                     "targets' ", targets.shape().ToString(), " [batch]");
  const int64_t rows = pred.dim(0), classes = pred.dim(1);
  const std::vector<int64_t> target = IndexValues(targets);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{rows}));
  const float* p = pred.data<float>();
  bool* o = out->data<bool>();
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = p + r * classes;
    const int64_t t = target[r];
    if (t < 0 || t >= classes || !std::isfinite(row[t])) {
      o[r] = false;
      continue;
    }
    int64_t more = 0;
    bool finite = true;
    for (int64_t j = 0; j < classes && more <= k; ++j) {
      if (!std::isfinite(row[j])) {
        finite = false;
        break;
      }
      more += row[j] > row[t];
    }
    o[r] = finite && more < k;
  }
  return OkStatus();
}

// ---- NthElement ----------------------------------------------------------------------------

Status ComputeNthElement(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t n = ctx.input(1).scalar<int32_t>();
  const bool reverse = ctx.state<TypedOpState<bool>>().value;
  if (x.rank() < 1) return ctx.Error("input must have rank 1 or more, got a scalar");
  const int64_t len = x.dim(x.rank() - 1);
  if (n < 0 || n >= len)
    return ctx.Error("input 'n' = ", n, " must be in [0, ", len, ") (the last dim)");
  std::vector<int64_t> dims(x.shape().dims().begin(), x.shape().dims().end() - 1);
  KILN_ASSIGN_OR_RETURN(Shape shape, Shape::FromDims(dims));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, shape));
  return Dispatch<RealTypes>(x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* in = ComputeData<T>(x);
    C* o = MutableComputeData<T>(out);
    const int64_t rows = out->NumElements();
    ctx.threads().ParallelFor(rows, 64, [&](int64_t begin, int64_t end) {
      std::vector<C> row(static_cast<size_t>(len));
      for (int64_t r = begin; r < end; ++r) {
        std::copy(in + r * len, in + (r + 1) * len, row.begin());
        const auto nth = row.begin() + (reverse ? len - 1 - n : n);
        // NaN sorts last: std::nth_element needs a strict weak order.
        std::nth_element(row.begin(), nth, row.end(), [](C a, C b) {
          if constexpr (kIsFloating<C>) {
            if (Eigen::numext::isnan(b)) return !Eigen::numext::isnan(a);
            if (Eigen::numext::isnan(a)) return false;
          }
          return a < b;
        });
        o[r] = *nth;
      }
    });
    return OkStatus();
  });
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"OneHot", ComputeOneHot},
    {"TopKV2", ComputeTopK},
    {"ApproxTopK", ComputeTopK},
    {"Where", ComputeWhere},
    {"InvertPermutation", ComputeInvertPermutation},
    {"LowerBound", ComputeBound<false>},
    {"UpperBound", ComputeBound<true>},
    {"UnravelIndex", ComputeUnravelIndex},
    {"InTopK", ComputeInTopK},
    {"InTopKV2", ComputeInTopK},
    {"NthElement", ComputeNthElement},
};

}  // namespace

std::span<const KernelEntry> IndexCpuKernels() { return kCpu; }

}  // namespace kiln::exec
