// The CPU kernels of the counting and set ops in kernels/count_ops.cc.
#include "kernels/count_ops.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

using count::BincountState;
using count::BinTypes;
using count::HistogramTypes;
using count::ListDiffTypes;
using count::ScalarIndex;
using count::UniqueAxis;
using count::UniqueState;

// ---- Bincount, DenseBincount -----------------------------------------------------------------

template <bool kDense>
Status ComputeBincount(const KernelContext& ctx) {
  const Tensor& arr = ctx.input(0);
  const Tensor& size_t_ = ctx.input(1);
  const Tensor& weights = ctx.input(2);
  if (size_t_.rank() != 0) {
    return ctx.Error("input 'size' must be a scalar, got shape ", size_t_.shape().ToString());
  }
  const int64_t size = ScalarIndex(size_t_);
  if (size < 0) return ctx.Error("input 'size' must be non-negative, got ", size);
  if (kDense && arr.rank() > 2) {
    return ctx.Error("input 'input' must have rank 1 or 2, got shape ", arr.shape().ToString());
  }
  const bool weighted = weights.NumElements() > 0;
  if (weighted &&
      (kDense ? weights.shape() != arr.shape() : weights.NumElements() != arr.NumElements())) {
    return ctx.Error("input 'weights' must have the shape of the values ", arr.shape().ToString(),
                     " or no elements, got ", weights.shape().ToString());
  }
  const bool binary = kDense && ctx.state<BincountState>().binary_output;
  const int64_t rows = kDense && arr.rank() == 2 ? arr.dim(0) : 1;
  const int64_t per_row = rows == 0 ? 0 : arr.NumElements() / rows;
  const Shape out_shape = kDense && arr.rank() == 2 ? Shape{rows, size} : Shape{size};
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  const std::vector<int64_t> values = IndexValues(arr);
  for (int64_t v : values) {
    if (v < 0) return ctx.Error("input values must be non-negative, got ", v);
  }
  return Dispatch<BinTypes>(out->dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;  // storage
    using T = ComputeType<S>;
    T* o = MutableComputeData<S>(out);
    std::fill_n(o, out->NumElements(), T(0));
    const T* w = weighted ? ComputeData<S>(weights) : nullptr;
    for (int64_t r = 0; r < rows; ++r) {
      T* bins = o + r * size;
      for (int64_t i = r * per_row; i < (r + 1) * per_row; ++i) {
        const int64_t v = values[i];
        if (v >= size) continue;  // values past the last bin are dropped, as TF
        if (binary) {
          bins[v] = T(1);
        } else {
          bins[v] += w != nullptr ? w[i] : T(1);
        }
      }
    }
    return OkStatus();
  });
}

// ---- RaggedBincount --------------------------------------------------------------------------

Status ComputeRaggedBincount(const KernelContext& ctx) {
  const Tensor& splits_t = ctx.input(0);
  const Tensor& values_t = ctx.input(1);
  const Tensor& size_t_ = ctx.input(2);
  const Tensor& weights = ctx.input(3);
  if (size_t_.rank() != 0) {
    return ctx.Error("input 'size' must be a scalar, got shape ", size_t_.shape().ToString());
  }
  const int64_t size = ScalarIndex(size_t_);
  if (size < 0) return ctx.Error("input 'size' must be non-negative, got ", size);
  if (splits_t.rank() != 1 || splits_t.NumElements() == 0) {
    return ctx.Error("input 'splits' must be a non-empty vector, got shape ",
                     splits_t.shape().ToString());
  }
  const int64_t* splits = splits_t.data<int64_t>();
  const int64_t rows = splits_t.NumElements() - 1;
  const int64_t n = values_t.NumElements();
  if (splits[0] != 0) return ctx.Error("input 'splits' must start with 0, got ", splits[0]);
  for (int64_t r = 0; r < rows; ++r) {
    if (splits[r + 1] < splits[r] || splits[r + 1] > n) {
      return ctx.Error("input 'splits' must be non-decreasing and at most the number of values ", n,
                       ", got ", splits[r + 1], " at ", r + 1);
    }
  }
  if (splits[rows] != n) {
    return ctx.Error("input 'splits' must end with the number of values ", n, ", got ",
                     splits[rows]);
  }
  const bool weighted = weights.NumElements() > 0;
  if (weighted && weights.NumElements() != n) {
    return ctx.Error("input 'weights' must have as many elements as 'values' (", n,
                     ") or none, got shape ", weights.shape().ToString());
  }
  const std::vector<int64_t> values = IndexValues(values_t);
  for (int64_t v : values) {
    if (v < 0) return ctx.Error("input 'values' must be non-negative, got ", v);
  }
  const int64_t out_dims[] = {rows, size};
  KILN_RETURN_IF_ERROR_CTX(CheckElementCount(out_dims, "output shape"), "node '", ctx.node_name(),
                           "'");
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{rows, size}));
  const bool binary = ctx.state<BincountState>().binary_output;
  return Dispatch<BinTypes>(out->dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;  // storage
    using T = ComputeType<S>;
    T* o = MutableComputeData<S>(out);
    std::fill_n(o, out->NumElements(), T(0));
    const T* w = weighted ? ComputeData<S>(weights) : nullptr;
    for (int64_t r = 0; r < rows; ++r) {
      T* bins = o + r * size;
      for (int64_t i = splits[r]; i < splits[r + 1]; ++i) {
        const int64_t v = values[i];
        if (v >= size) continue;  // past the last bin: dropped, as TF
        if (binary) {
          bins[v] = T(1);
        } else {
          bins[v] += w != nullptr ? w[i] : T(1);
        }
      }
    }
    return OkStatus();
  });
}

// ---- Unique ----------------------------------------------------------------------------------

// Elements of T as hashable, comparable values: floats compare as numbers (-0 equals 0, NaN
// equals nothing, as TF's hash map of floats), strings by content.
template <typename T>
struct ElementTraits {
  using C = ComputeType<T>;
  static bool Equal(const C& a, const C& b) { return a == b; }
  static bool IsNan(const C& a) {
    if constexpr (kIsFloating<C>) {
      return Eigen::numext::isnan(a);
    } else {
      (void)a;
      return false;
    }
  }
  static size_t Hash(const C& a) {
    if constexpr (std::is_same_v<T, std::string>) {
      return std::hash<std::string_view>()(a);
    } else if constexpr (kIsFloating<C>) {
      const double d = static_cast<double>(a);
      return std::hash<double>()(d == 0 ? 0.0 : d);
    } else {
      return std::hash<C>()(a);
    }
  }
};

// x viewed as [outer, n, inner]: slice k is x[:, k, :]. Slices are told apart by a hash map
// keyed by slice number; a slice holding a NaN equals no other.
template <typename T, typename Index>
Status RunUnique(const KernelContext& ctx, const Tensor& x, int axis, bool with_counts) {
  using Tr = ElementTraits<T>;
  using C = typename Tr::C;
  int64_t outer = 1, inner = 1, n = x.NumElements();
  if (axis >= 0) {
    n = x.dim(axis);
    for (int i = 0; i < x.rank(); ++i) {
      if (i < axis) outer *= x.dim(i);
      if (i > axis) inner *= x.dim(i);
    }
  }
  const C* in = ComputeData<T>(x);
  auto at = [&](int64_t o, int64_t k, int64_t i) -> const C& {
    return in[(o * n + k) * inner + i];
  };
  auto hash = [&](int64_t k) {
    size_t h = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) h = h * 1000003u ^ Tr::Hash(at(o, k, i));
    return h;
  };
  auto equal = [&](int64_t a, int64_t b) {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        if (!Tr::Equal(at(o, a, i), at(o, b, i))) return false;
    return true;
  };
  auto has_nan = [&](int64_t k) {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i)
        if (Tr::IsNan(at(o, k, i))) return true;
    return false;
  };
  std::unordered_map<int64_t, int64_t, decltype(hash), decltype(equal)> ids(static_cast<size_t>(n),
                                                                            hash, equal);
  std::vector<int64_t> first;  // slice number of each unique slice, in order of appearance
  std::vector<int64_t> counts;
  KILN_ASSIGN_OR_RETURN(Tensor * idx, ctx.AllocateOutput(1, Shape{n}));
  Index* idx_data = idx->data<Index>();
  for (int64_t k = 0; k < n; ++k) {
    int64_t id = static_cast<int64_t>(first.size());
    if (has_nan(k)) {
      first.push_back(k);
      counts.push_back(0);
    } else {
      auto [it, inserted] = ids.emplace(k, id);
      if (inserted) {
        first.push_back(k);
        counts.push_back(0);
      } else {
        id = it->second;
      }
    }
    ++counts[id];
    idx_data[k] = static_cast<Index>(id);
  }
  const int64_t unique = static_cast<int64_t>(first.size());
  Shape y_shape = axis >= 0 ? x.shape() : Shape{unique};
  if (axis >= 0) y_shape.set_dim(axis, unique);
  KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, y_shape));
  T* out = y->data<T>();
  const T* src = x.data<T>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t u = 0; u < unique; ++u)
      for (int64_t i = 0; i < inner; ++i)
        out[(o * unique + u) * inner + i] = src[(o * n + first[u]) * inner + i];
  if (with_counts) {
    KILN_ASSIGN_OR_RETURN(Tensor * count, ctx.AllocateOutput(2, Shape{unique}));
    for (int64_t u = 0; u < unique; ++u) count->data<Index>()[u] = static_cast<Index>(counts[u]);
  }
  return OkStatus();
}

template <bool kV2>
Status ComputeUnique(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  int axis = -1;
  if (kV2) {
    const Tensor& a = ctx.input(1);
    if (a.rank() != 1) {
      return ctx.Error("input 'axis' must be a vector, got shape ", a.shape().ToString());
    }
    Result<int> r = UniqueAxis(a, x.rank());
    if (!r.ok()) return Wrap(ctx, r.status());
    axis = *r;
  }
  if (axis < 0 && x.rank() != 1) {
    return ctx.Error("input 'x' must be a vector, got shape ", x.shape().ToString());
  }
  const auto& st = ctx.state<UniqueState>();
  return Dispatch<RealBoolStringTypes>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    return Dispatch<TypeList<int32_t, int64_t>>(st.out_idx, [&](auto index_tag) {
      using Index = typename decltype(index_tag)::type;
      return RunUnique<T, Index>(ctx, x, axis, st.with_counts);
    });
  });
}

// ---- ListDiff --------------------------------------------------------------------------------

// The values of x not in y, in x's order (duplicates kept), and their positions in x.
template <typename U, typename Key>
Status ListDiffOf(const KernelContext& ctx, const Tensor& x, const Tensor& y, Key key) {
  const U* px = Elems<U>(x);
  const U* py = Elems<U>(y);
  using K = decltype(key(px[0]));
  std::unordered_set<K> in_y;
  for (int64_t i = 0; i < y.NumElements(); ++i) in_y.insert(key(py[i]));
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < x.NumElements(); ++i)
    if (!in_y.count(key(px[i]))) keep.push_back(i);
  const int64_t n = static_cast<int64_t>(keep.size());
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{n}));
  KILN_ASSIGN_OR_RETURN(Tensor * idx, ctx.AllocateOutput(1, Shape{n}));
  U* o = Elems<U>(*out);
  for (int64_t j = 0; j < n; ++j) {
    o[j] = px[keep[j]];
    if (idx->dtype() == DType::kInt32) {
      idx->data<int32_t>()[j] = static_cast<int32_t>(keep[j]);
    } else {
      idx->data<int64_t>()[j] = keep[j];
    }
  }
  return OkStatus();
}

Status ComputeListDiff(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.input(1);
  if (x.rank() != 1 || y.rank() != 1)
    return ctx.Error("'x' and 'y' must be vectors, got shapes ", x.shape().ToString(), " and ",
                     y.shape().ToString());
  if (x.dtype() == DType::kString)
    return ListDiffOf<std::string>(ctx, x, y, [](const std::string& s) { return s; });
  // Floats compare by value (as TF's hash set of T): -0 equals 0, NaN equals nothing.
  return Dispatch<ListDiffTypes>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    if constexpr (kIsFloating<C>) {
      return ListDiffOf<T>(ctx, x, y, [](const T& v) {
        // T is the storage type; C (its compute type) has the same bits.
        const double d = static_cast<double>(*reinterpret_cast<const C*>(&v));
        return d == 0 ? 0.0 : d;
      });
    } else {
      return ListDiffOf<T>(ctx, x, y, [](const T& v) { return v; });
    }
  });
}

// ---- HistogramFixedWidth -----------------------------------------------------------------------

// Counts of values in nbins equal-width bins over value_range [lo, hi); values below lo fall in
// the first bin, values from hi on in the last (TF's arithmetic: (max(v, lo) - lo) in T, divided
// by the bin width in double, truncated). NaN values are an error, as in TF.
Status ComputeHistogram(const KernelContext& ctx) {
  const Tensor& values = ctx.input(0);
  const Tensor& range = ctx.input(1);
  if (range.NumElements() != 2) {
    return ctx.Error("value_range should have two elements, got shape ", range.shape().ToString());
  }
  const int32_t nbins = ctx.input(2).scalar<int32_t>();
  if (nbins <= 0) return ctx.Error("nbins should be a positive number, but got '", nbins, "'");
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{nbins}));
  std::vector<int64_t> counts(nbins, 0);
  KILN_RETURN_IF_ERROR(Dispatch<HistogramTypes>(values.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;  // storage
    using T = ComputeType<S>;
    const T lo = ComputeData<S>(range)[0];
    const T hi = ComputeData<S>(range)[1];
    if (!(lo < hi)) {
      return ctx.Error("value_range should satisfy value_range[0] < value_range[1], but got '[", lo,
                       ", ", hi, "]'");
    }
    const double step = static_cast<double>(hi - lo) / nbins;
    const T* v = ComputeData<S>(values);
    for (int64_t k = 0; k < values.NumElements(); ++k) {
      if constexpr (kIsFloating<T>) {
        if (Eigen::numext::isnan(v[k])) return ctx.Error("Histogram values must not contain NaN");
      }
      const double pos = static_cast<double>((v[k] < lo ? lo : v[k]) - lo) / step;
      counts[static_cast<int64_t>(std::min(pos, static_cast<double>(nbins - 1)))]++;
    }
    return OkStatus();
  }));
  for (int32_t b = 0; b < nbins; ++b) {
    if (out->dtype() == DType::kInt64) {
      out->data<int64_t>()[b] = counts[b];
    } else {
      out->data<int32_t>()[b] = static_cast<int32_t>(counts[b]);
    }
  }
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"Bincount", ComputeBincount<false>},        {"DenseBincount", ComputeBincount<true>},
    {"RaggedBincount", ComputeRaggedBincount},   {"Unique", ComputeUnique<false>},
    {"UniqueV2", ComputeUnique<true>},           {"UniqueWithCounts", ComputeUnique<false>},
    {"UniqueWithCountsV2", ComputeUnique<true>}, {"ListDiff", ComputeListDiff},
    {"HistogramFixedWidth", ComputeHistogram},
};

}  // namespace

std::span<const KernelEntry> CountCpuKernels() { return kCpu; }

}  // namespace kiln::exec
