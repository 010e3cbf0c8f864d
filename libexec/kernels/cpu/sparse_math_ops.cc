// The CPU kernels of the sparse arithmetic ops in kernels/sparse_math_ops.cc. Products
// accumulate in float for half precision (TF's SumType), in nnz order.
#include "kernels/sparse_math_ops.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <map>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/nd_index.h"
#include "kernels/sparse_util.h"
#include "kernels/strided_walk.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using sparse_math::Cwise;
using sparse_math::MatMulState;
using sparse_math::MatMulTypes;
using sparse_math::RealNumberTypes;
using sparse_math::ReduceState;

// The type sums accumulate in: float for half precision, T otherwise.
template <typename C>
struct SumTypeOf {
  using type = C;
};
template <>
struct SumTypeOf<Eigen::half> {
  using type = float;
};
template <>
struct SumTypeOf<Eigen::bfloat16> {
  using type = float;
};

template <typename C>
C Conj(const C& v) {
  if constexpr (std::is_same_v<C, std::complex<float>> || std::is_same_v<C, std::complex<double>>) {
    return std::conj(v);
  } else {
    return v;
  }
}

// |v| as a double, for any number type (std::abs has no unsigned or half overloads).
template <typename C>
double Magnitude(const C& v) {
  if constexpr (std::is_same_v<C, std::complex<float>> || std::is_same_v<C, std::complex<double>>) {
    return static_cast<double>(std::abs(v));
  } else if constexpr (std::is_unsigned_v<C>) {
    return static_cast<double>(v);
  } else {
    const auto d = static_cast<double>(v);
    return d < 0 ? -d : d;
  }
}

// ---- SparseTensorDenseMatMul ------------------------------------------------------------------

Status ComputeSparseMatMul(const KernelContext& ctx) {
  const auto& st = ctx.state<MatMulState>();
  const Tensor& a_idx = ctx.input(0);
  const Tensor& a_val = ctx.input(1);
  const std::vector<int64_t> a_shape = IndexValues(ctx.input(2));
  const Tensor& b = ctx.input(3);
  if (a_shape.size() != 2) {
    return ctx.Error("Tensor 'a_shape' is not a vector of 2 elements: ", ShapeBrackets(a_shape));
  }
  if (b.rank() != 2) return ctx.Error("Tensor 'b' is not a matrix: ", b.shape().ToString());
  const int64_t nnz = a_val.NumElements();
  if (a_idx.rank() != 2 || a_idx.dim(0) != nnz || a_idx.dim(1) != 2) {
    return ctx.Error("a_indices must be [", nnz, ", 2], got ", a_idx.shape().ToString());
  }
  const int64_t m = a_shape[st.adjoint_a ? 1 : 0], k = a_shape[st.adjoint_a ? 0 : 1];
  const int64_t bk = b.dim(st.adjoint_b ? 1 : 0), n = b.dim(st.adjoint_b ? 0 : 1);
  if (k != bk) {
    return ctx.Error("Cannot multiply A and B because inner dimension does not match: ", k, " vs. ",
                     bk, ".  Did you forget a transpose?  Dimensions of A: [", a_shape[0], ", ",
                     a_shape[1], ").  Dimensions of B: ", b.shape().ToString());
  }
  const std::vector<int64_t> idx = IndexValues(a_idx);
  for (int64_t i = 0; i < nnz; ++i) {
    const int64_t r = idx[2 * i + (st.adjoint_a ? 1 : 0)], c = idx[2 * i + (st.adjoint_a ? 0 : 1)];
    if (c < 0 || c >= k) {
      return ctx.Error("k (", c, ") from index[", i, ",", st.adjoint_a ? 0 : 1,
                       "] out of bounds (>=", k, ")");
    }
    if (r < 0 || r >= m) {
      return ctx.Error("m (", r, ") from index[", i, ",", st.adjoint_a ? 1 : 0,
                       "] out of bounds (>=", m, ")");
    }
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{m, n}));
  return Dispatch<MatMulTypes>(a_val.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    using S = typename SumTypeOf<C>::type;
    const C* av = ComputeData<T>(a_val);
    const C* bv = ComputeData<T>(b);
    std::vector<S> acc(static_cast<size_t>(m * n), S(0));
    for (int64_t i = 0; i < nnz; ++i) {
      const int64_t r = idx[2 * i + (st.adjoint_a ? 1 : 0)];
      const int64_t c = idx[2 * i + (st.adjoint_a ? 0 : 1)];
      const S a = static_cast<S>(st.adjoint_a ? Conj(av[i]) : av[i]);
      S* row = acc.data() + r * n;
      for (int64_t j = 0; j < n; ++j) {
        const C bj = st.adjoint_b ? Conj(bv[j * bk + c]) : bv[c * n + j];
        row[j] += a * static_cast<S>(bj);
      }
    }
    C* o = MutableComputeData<T>(out);
    for (int64_t i = 0; i < m * n; ++i) o[i] = static_cast<C>(acc[i]);
    return OkStatus();
  });
}

// ---- sparse inputs ---------------------------------------------------------------------------

using SparseIn = SparseInput;

int Compare(const int64_t* a, const int64_t* b, int64_t r) {
  for (int64_t d = 0; d < r; ++d) {
    if (a[d] != b[d]) return a[d] < b[d] ? -1 : 1;
  }
  return 0;
}

// ---- SparseTensorDenseAdd ---------------------------------------------------------------------

// b with a's entries added (duplicates add up).
Status ComputeSparseDenseAdd(const KernelContext& ctx) {
  const std::vector<int64_t> idx = IndexValues(ctx.input(0));
  const Tensor& val = ctx.input(1);
  const std::vector<int64_t> shape = IndexValues(ctx.input(2));
  const Tensor& b = ctx.input(3);
  const int64_t r = static_cast<int64_t>(shape.size());
  if (b.shape().ToVector() != shape) {
    return ctx.Error("Dimension mismatch: a_shape ", ShapeBrackets(shape), " and b's shape ",
                     b.shape().ToString(), " differ");
  }
  if (ctx.input(0).rank() != 2 || ctx.input(0).dim(0) != val.NumElements() ||
      ctx.input(0).dim(1) != r) {
    return ctx.Error("a_indices must be [", val.NumElements(), ", ", r, "], got ",
                     ctx.input(0).shape().ToString());
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, b.shape()));
  const auto strides = RowMajorStrides(b.shape());
  return Dispatch<NumberTypes>(b.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    std::copy_n(b.data<T>(), b.NumElements(), out->data<T>());
    C* o = MutableComputeData<T>(out);
    const C* v = ComputeData<T>(val);
    for (int64_t i = 0; i < val.NumElements(); ++i) {
      int64_t flat = 0;
      for (int64_t d = 0; d < r; ++d) {
        const int64_t k = idx[i * r + d];
        if (k < 0 || k >= shape[d]) {
          return ctx.Error("a_indices[", i, "] is out of bounds for shape ", ShapeBrackets(shape));
        }
        flat += k * strides[d];
      }
      o[flat] = static_cast<C>(o[flat] + v[i]);
    }
    return OkStatus();
  });
}

// ---- SparseDenseCwiseAdd, SparseDenseCwiseMul, SparseDenseCwiseDiv ----------------------------

// values[i] (op) dense at entry i's index, the dense operand broadcast to the sparse shape.
Status ComputeCwise(const KernelContext& ctx) {
  const Cwise op = ctx.state<TypedOpState<Cwise>>().value;
  KILN_ASSIGN_OR_RETURN(SparseIn s, ReadSparseInput(ctx, 0, "sparse operand"));
  const Tensor& dense = ctx.input(3);
  const int64_t dr = dense.rank();
  bool ok = dr <= s.rank;
  for (int64_t d = 0; ok && d < dr; ++d) {
    const int64_t dd = dense.dim(static_cast<int>(d)), sd = s.shape[s.rank - dr + d];
    ok = dd == sd || dd == 1;
  }
  if (!ok) {
    return ctx.Error(
        "SparseDenseBinaryOpShared broadcasts dense to sparse only; got incompatible "
        "shapes: [",
        ShapeBrackets(s.shape), "] vs. ", dense.shape().ToString());
  }
  const auto strides = RowMajorStrides(dense.shape());
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{s.n}));
  return Dispatch<NumberTypes>(dense.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* v = ComputeData<T>(*s.values);
    const C* dv = ComputeData<T>(dense);
    C* o = MutableComputeData<T>(out);
    for (int64_t i = 0; i < s.n; ++i) {
      int64_t flat = 0;
      for (int64_t d = 0; d < dr; ++d) {
        if (dense.dim(static_cast<int>(d)) > 1) flat += s.row(i)[s.rank - dr + d] * strides[d];
      }
      const C x = v[i], y = dv[flat];
      if (op == Cwise::kAdd) {
        o[i] = static_cast<C>(x + y);
      } else if (op == Cwise::kMul) {
        o[i] = static_cast<C>(x * y);
      } else {
        if constexpr (kIsInteger<C>) {
          if (y == C(0)) return ctx.Error("Integer division by zero");
        }
        o[i] = static_cast<C>(x / y);
      }
    }
    return OkStatus();
  });
}

// ---- SparseReduceSum, SparseReduceMax (and their Sparse forms) -------------------------------

// Groups the entries by their index outside the reduced axes; each group reduces its values
// (the implicit zeros count for a sum, not for a max, as in TF). A dense result has zeros where
// no entry falls; a sparse one lists the groups in row-major order.
Status ComputeSparseReduce(const KernelContext& ctx) {
  const auto& st = ctx.state<ReduceState>();
  KILN_ASSIGN_OR_RETURN(SparseIn s, ReadSparseInput(ctx, 0, "SparseReduce"));
  std::vector<bool> reduced(s.rank, false);
  const Tensor& axes = ctx.input(3);
  for (int64_t i = 0; i < axes.NumElements(); ++i) {
    int64_t a = axes.data<int32_t>()[i];
    if (a < -s.rank || a >= s.rank) {
      return ctx.Error("Invalid reduction dimension ", a, ", for input with ", s.rank,
                       " dimensions.");
    }
    reduced[a < 0 ? a + s.rank : a] = true;
  }
  std::vector<int64_t> out_dims;  // of the result (keep_dims: reduced dims are 1)
  for (int64_t d = 0; d < s.rank; ++d) {
    if (!reduced[d]) {
      out_dims.push_back(s.shape[d]);
    } else if (st.keep_dims) {
      out_dims.push_back(1);
    }
  }
  auto key_of = [&](int64_t i) {
    std::vector<int64_t> k;
    for (int64_t d = 0; d < s.rank; ++d) {
      if (!reduced[d]) {
        k.push_back(s.row(i)[d]);
      } else if (st.keep_dims) {
        k.push_back(0);
      }
    }
    return k;
  };
  std::map<std::vector<int64_t>, std::vector<int64_t>> groups;
  for (int64_t i = 0; i < s.n; ++i) groups[key_of(i)].push_back(i);
  KILN_ASSIGN_OR_RETURN(Shape dense_shape, Shape::FromDims(out_dims));
  Tensor* out = nullptr;
  Tensor* out_idx = nullptr;
  const int64_t g = static_cast<int64_t>(groups.size());
  const int64_t out_rank = static_cast<int64_t>(out_dims.size());
  if (st.sparse_out) {
    KILN_ASSIGN_OR_RETURN(out_idx, ctx.AllocateOutput(0, Shape{g, out_rank}));
    KILN_ASSIGN_OR_RETURN(out, ctx.AllocateOutput(1, Shape{g}));
    KILN_ASSIGN_OR_RETURN(Tensor * os, ctx.AllocateOutput(2, Shape{out_rank}));
    std::copy(out_dims.begin(), out_dims.end(), os->data<int64_t>());
  } else {
    KILN_ASSIGN_OR_RETURN(out, ctx.AllocateOutput(0, dense_shape));
  }
  const auto strides = RowMajorStrides(dense_shape);
  const DType dt = s.values->dtype();
  return Dispatch<NumberTypes>(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* v = ComputeData<T>(*s.values);
    C* o = MutableComputeData<T>(out);
    if (!st.sparse_out) std::fill_n(o, out->NumElements(), C(0));
    int64_t j = 0;
    for (const auto& [key, members] : groups) {
      C acc = v[members[0]];
      for (size_t m = 1; m < members.size(); ++m) {
        if constexpr (std::is_same_v<C, std::complex<float>> ||
                      std::is_same_v<C, std::complex<double>>) {
          acc += v[members[m]];
        } else if (st.max) {
          if (v[members[m]] > acc || acc != acc) acc = v[members[m]];
        } else {
          acc = static_cast<C>(acc + v[members[m]]);
        }
      }
      if (st.sparse_out) {
        std::copy(key.begin(), key.end(), out_idx->data<int64_t>() + j * out_rank);
        o[j] = acc;
      } else {
        int64_t flat = 0;
        for (int64_t d = 0; d < out_rank; ++d) flat += key[d] * strides[d];
        o[flat] = acc;
      }
      ++j;
    }
    return OkStatus();
  });
}

// ---- SparseSoftmax ---------------------------------------------------------------------------

// Softmax over the entries of each innermost row (same index but the last); the implicit zeros
// take no part.
Status ComputeSparseSoftmax(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(SparseIn s, ReadSparseInput(ctx, 0, "SparseSoftmax"));
  if (s.rank < 2) return ctx.Error("SparseSoftmax needs a tensor of rank >= 2, got ", s.rank);
  std::map<std::vector<int64_t>, std::vector<int64_t>> rows;
  for (int64_t i = 0; i < s.n; ++i)
    rows[std::vector<int64_t>(s.row(i), s.row(i) + s.rank - 1)].push_back(i);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{s.n}));
  return Dispatch<TypeList<float, double, Half>>(s.values->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    using S = typename SumTypeOf<C>::type;
    const C* v = ComputeData<T>(*s.values);
    C* o = MutableComputeData<T>(out);
    for (const auto& [key, members] : rows) {
      S mx = static_cast<S>(v[members[0]]);
      for (int64_t i : members) mx = std::max(mx, static_cast<S>(v[i]));
      S sum = 0;
      for (int64_t i : members) sum += std::exp(static_cast<S>(v[i]) - mx);
      for (int64_t i : members) o[i] = static_cast<C>(std::exp(static_cast<S>(v[i]) - mx) / sum);
    }
    return OkStatus();
  });
}

// ---- SparseAdd, SparseSparseMaximum, SparseSparseMinimum -------------------------------------

// One merged entry: from a (a >= 0), b (b >= 0) or both.
struct Merged {
  int64_t a = -1, b = -1;
};

// TF's linear merge of two sparse tensors in canonical order (a's entry first on ties of order).
std::vector<Merged> MergeSparse(const SparseIn& a, const SparseIn& b) {
  std::vector<Merged> out;
  int64_t i = 0, j = 0;
  while (i < a.n && j < b.n) {
    const int c = Compare(a.row(i), b.row(j), a.rank);
    if (c < 0) {
      out.push_back({i++, -1});
    } else if (c > 0) {
      out.push_back({-1, j++});
    } else {
      out.push_back({i++, j++});
    }
  }
  for (; i < a.n; ++i) out.push_back({i, -1});
  for (; j < b.n; ++j) out.push_back({-1, j});
  return out;
}

Result<std::pair<SparseIn, SparseIn>> ReadOperands(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(SparseIn a, ReadSparseInput(ctx, 0, "operand a"));
  KILN_ASSIGN_OR_RETURN(SparseIn b, ReadSparseInput(ctx, 3, "operand b"));
  if (a.rank != b.rank) {
    return ctx.Error("Operands do not have the same ranks; got shapes: ", ShapeBrackets(a.shape),
                     " and ", ShapeBrackets(b.shape));
  }
  if (a.shape != b.shape) {
    return ctx.Error("Operands' shapes do not match: got ", ShapeBrackets(a.shape), " and ",
                     ShapeBrackets(b.shape));
  }
  return std::make_pair(std::move(a), std::move(b));
}

// a + b: entries at the same index add, and such a sum is kept only when |sum| >= thresh; the
// others are copied (TF's rule).
Status ComputeSparseAdd(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(auto ab, ReadOperands(ctx));
  const SparseIn& a = ab.first;
  const SparseIn& b = ab.second;
  const std::vector<Merged> merged = MergeSparse(a, b);
  const Tensor& thresh_t = ctx.input(6);
  if (thresh_t.NumElements() != 1) {
    return ctx.Error("The magnitude threshold must be a scalar: got shape ",
                     thresh_t.shape().ToString());
  }
  return Dispatch<NumberTypes>(a.values->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* av = ComputeData<T>(*a.values);
    const C* bv = ComputeData<T>(*b.values);
    double thresh = 0;
    KILN_RETURN_IF_ERROR(Dispatch<RealNumberTypes>(thresh_t.dtype(), [&](auto rtag) {
      using R = typename decltype(rtag)::type;
      thresh = static_cast<double>(ComputeData<R>(thresh_t)[0]);
      return OkStatus();
    }));
    std::vector<const int64_t*> rows;
    std::vector<C> vals;
    for (const Merged& m : merged) {
      if (m.a >= 0 && m.b >= 0) {
        const C sum = static_cast<C>(av[m.a] + bv[m.b]);
        if (thresh <= Magnitude(sum)) {
          rows.push_back(a.row(m.a));
          vals.push_back(sum);
        }
      } else if (m.a >= 0) {
        rows.push_back(a.row(m.a));
        vals.push_back(av[m.a]);
      } else {
        rows.push_back(b.row(m.b));
        vals.push_back(bv[m.b]);
      }
    }
    const int64_t n = static_cast<int64_t>(vals.size());
    KILN_ASSIGN_OR_RETURN(Tensor * oi, ctx.AllocateOutput(0, Shape{n, a.rank}));
    KILN_ASSIGN_OR_RETURN(Tensor * ov, ctx.AllocateOutput(1, Shape{n}));
    KILN_ASSIGN_OR_RETURN(Tensor * os, ctx.AllocateOutput(2, Shape{a.rank}));
    for (int64_t k = 0; k < n; ++k) {
      std::copy_n(rows[k], a.rank, oi->data<int64_t>() + k * a.rank);
      MutableComputeData<T>(ov)[k] = vals[k];
    }
    std::copy(a.shape.begin(), a.shape.end(), os->data<int64_t>());
    return OkStatus();
  });
}

// The union of the indices; an index only one operand has meets an implicit zero.
Status ComputeSparseSparseMinMax(const KernelContext& ctx) {
  const bool maximum = ctx.state<TypedOpState<bool>>().value;
  KILN_ASSIGN_OR_RETURN(auto ab, ReadOperands(ctx));
  const SparseIn& a = ab.first;
  const SparseIn& b = ab.second;
  const std::vector<Merged> merged = MergeSparse(a, b);
  const int64_t n = static_cast<int64_t>(merged.size());
  KILN_ASSIGN_OR_RETURN(Tensor * oi, ctx.AllocateOutput(0, Shape{n, a.rank}));
  KILN_ASSIGN_OR_RETURN(Tensor * ov, ctx.AllocateOutput(1, Shape{n}));
  return Dispatch<RealNumberTypes>(a.values->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* av = ComputeData<T>(*a.values);
    const C* bv = ComputeData<T>(*b.values);
    C* o = MutableComputeData<T>(ov);
    for (int64_t k = 0; k < n; ++k) {
      const Merged& m = merged[k];
      std::copy_n(m.a >= 0 ? a.row(m.a) : b.row(m.b), a.rank, oi->data<int64_t>() + k * a.rank);
      const C x = m.a >= 0 ? av[m.a] : C(0), y = m.b >= 0 ? bv[m.b] : C(0);
      o[k] = maximum ? (x > y ? x : y) : (x < y ? x : y);
    }
    return OkStatus();
  });
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"SparseTensorDenseMatMul", ComputeSparseMatMul},
    {"SparseTensorDenseAdd", ComputeSparseDenseAdd},
    {"SparseDenseCwiseAdd", ComputeCwise},
    {"SparseDenseCwiseMul", ComputeCwise},
    {"SparseDenseCwiseDiv", ComputeCwise},
    {"SparseReduceSum", ComputeSparseReduce},
    {"SparseReduceMax", ComputeSparseReduce},
    {"SparseReduceSumSparse", ComputeSparseReduce},
    {"SparseReduceMaxSparse", ComputeSparseReduce},
    {"SparseSoftmax", ComputeSparseSoftmax},
    {"SparseAdd", ComputeSparseAdd},
    {"SparseSparseMaximum", ComputeSparseSparseMinMax},
    {"SparseSparseMinimum", ComputeSparseSparseMinMax},
};

}  // namespace

std::span<const KernelEntry> SparseMathCpuKernels() { return kCpu; }

}  // namespace kiln::exec
