// The CPU kernels of the ops in kernels/scatter_ops.cc. Updates are applied in index order, so
// duplicates under Update resolve to the last one, deterministically.
#include "kernels/scatter_ops.h"

#include <algorithm>
#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/elementwise_functors.h"
#include "kernels/nd_index.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using scatter::ArithmeticTypes;
using scatter::CheckScatterShapes;
using scatter::Combine;
using scatter::ScatterAddTypes;
using scatter::ScatterState;

// dst[0..n) = combine(dst, src) element by element.
template <typename T>
void CombineInto(Combine c, T* dst, const T* src, int64_t n) {
  using C = ComputeType<T>;
  C* d = reinterpret_cast<C*>(dst);
  const C* s = reinterpret_cast<const C*>(src);
  switch (c) {
    case Combine::kUpdate:
      std::copy(s, s + n, d);
      return;
    case Combine::kAdd:
      for (int64_t i = 0; i < n; ++i) d[i] = fn::Add<C>()(d[i], s[i]);
      return;
    case Combine::kSub:
      if constexpr (!std::is_same_v<C, bool> && !std::is_same_v<C, std::string>) {
        for (int64_t i = 0; i < n; ++i) d[i] = fn::Sub<C>()(d[i], s[i]);
      }
      return;
    case Combine::kMax:
      if constexpr (!std::is_same_v<C, bool> && !std::is_same_v<C, std::string> &&
                    !std::is_same_v<C, std::complex<float>> &&
                    !std::is_same_v<C, std::complex<double>>) {
        for (int64_t i = 0; i < n; ++i) d[i] = fn::Maximum<C>()(d[i], s[i]);
      }
      return;
    case Combine::kMin:
      if constexpr (!std::is_same_v<C, bool> && !std::is_same_v<C, std::string> &&
                    !std::is_same_v<C, std::complex<float>> &&
                    !std::is_same_v<C, std::complex<double>>) {
        for (int64_t i = 0; i < n; ++i) d[i] = fn::Minimum<C>()(d[i], s[i]);
      }
      return;
  }
}

Status ComputeScatter(const KernelContext& ctx) {
  const auto& st = ctx.state<ScatterState>();
  const Tensor& indices = ctx.input(st.into_zeros ? 0 : 1);
  const Tensor& updates = ctx.input(st.into_zeros ? 1 : 2);
  Shape shape;
  if (st.into_zeros) {
    const Tensor& s = ctx.input(2);
    if (s.rank() != 1) {
      return ctx.Error("input 'shape' must be a vector, got shape ", s.shape().ToString());
    }
    std::vector<int64_t> dims;
    KILN_RETURN_IF_ERROR(DispatchIndex(s.dtype(), [&](auto tag) {
      using I = typename decltype(tag)::type;
      for (int64_t i = 0; i < s.NumElements(); ++i) dims.push_back(IndexAt(s.data<I>(), i));
      return OkStatus();
    }));
    auto r = Shape::FromDims(dims);
    if (!r.ok()) return ctx.Error("input 'shape' ", DimsString(dims), " is not a valid shape");
    shape = *r;
  } else {
    shape = ctx.input(0).shape();
  }
  Status s = CheckScatterShapes(shape.dims(), indices.shape().dims(), updates.shape().dims());
  if (!s.ok()) return Wrap(ctx, s);
  if (shape.num_elements() == 0 && indices.NumElements() > 0) {
    return ctx.Error("indices and updates specified for an empty output; indices shape: ",
                     ShapeBrackets(indices.shape().dims()));
  }
  const int64_t k = indices.dim(indices.rank() - 1);
  NdIndex nd;
  std::string bad;
  KILN_RETURN_IF_ERROR(DispatchIndex(indices.dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    nd = ResolveNdIndex<I>(indices, shape);
    if (nd.first_bad >= 0) bad = IndexVectorString<I>(indices, nd.first_bad, k);
    return OkStatus();
  }));
  if (nd.first_bad >= 0 && !st.ignore_bad) {
    return ctx.Error(bad, " does not index into shape ", ShapeBrackets(shape.dims()));
  }
  Tensor* out = nullptr;
  if (st.into_zeros) {
    KILN_ASSIGN_OR_RETURN(out, ctx.AllocateOutput(0, shape));
  } else {
    KILN_ASSIGN_OR_RETURN(out, ctx.ForwardInputOrAllocateOutput(0, 0, shape));
  }
  const Tensor& base = ctx.input(0);
  const bool forwarded = !st.into_zeros && out->raw_data() == base.raw_data();
  return DispatchStorage(updates.dtype(), [&](auto storage_tag) -> Status {
    using U = typename decltype(storage_tag)::type;
    U* dst = Elems<U>(*out);
    const int64_t n = out->NumElements();
    if (st.into_zeros) {
      std::fill(dst, dst + n, U{});
    } else if (!forwarded) {
      std::copy(Elems<U>(base), Elems<U>(base) + n, dst);
    }
    const U* src = Elems<U>(updates);
    if (st.combine == Combine::kUpdate) {
      for (int64_t j = 0; j < nd.n; ++j) {
        if (nd.offsets[j] < 0) continue;
        std::copy(src + j * nd.slice_size, src + (j + 1) * nd.slice_size, dst + nd.offsets[j]);
      }
      return OkStatus();
    }
    return Dispatch<ScatterAddTypes>(updates.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* d = out->data<T>();
      const T* u = updates.data<T>();
      for (int64_t j = 0; j < nd.n; ++j) {
        if (nd.offsets[j] < 0) continue;
        CombineInto<T>(st.combine, d + nd.offsets[j], u + j * nd.slice_size, nd.slice_size);
      }
      return OkStatus();
    });
  });
}

// ---- InplaceUpdate, InplaceAdd, InplaceSub ---------------------------------------------------

Status ComputeInplace(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& i = ctx.input(1);
  const Tensor& v = ctx.input(2);
  const Combine combine = ctx.state<ScatterState>().combine;
  bool ok = x.rank() >= 1 && i.rank() <= 1 && v.rank() == x.rank() && v.dim(0) == i.NumElements();
  for (int d = 1; ok && d < x.rank(); ++d) ok = v.dim(d) == x.dim(d);
  if (!ok) {
    return ctx.Error("v of shape ", v.shape().ToString(), " must be x's shape ",
                     x.shape().ToString(), " with dim 0 the size of i ", i.shape().ToString());
  }
  const int32_t* rows = i.data<int32_t>();
  for (int64_t j = 0; j < i.NumElements(); ++j) {
    if (rows[j] < 0 || rows[j] >= x.dim(0)) {
      return ctx.Error("i[", j, "] = ", rows[j], " is not in [0, ", x.dim(0), ")");
    }
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  const int64_t row = x.dim(0) == 0 ? 0 : x.NumElements() / x.dim(0);
  if (combine == Combine::kUpdate) {
    return DispatchStorage(x.dtype(), [&](auto tag) {
      using U = typename decltype(tag)::type;
      std::copy_n(Elems<U>(x), x.NumElements(), Elems<U>(*out));
      for (int64_t j = 0; j < i.NumElements(); ++j)
        std::copy_n(Elems<U>(v) + j * row, row, Elems<U>(*out) + rows[j] * row);
      return OkStatus();
    });
  }
  return Dispatch<ArithmeticTypes>(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    std::copy_n(x.data<T>(), x.NumElements(), out->data<T>());
    C* o = MutableComputeData<T>(out);
    const C* src = ComputeData<T>(v);
    for (int64_t j = 0; j < i.NumElements(); ++j) {
      C* r = o + rows[j] * row;
      const C* w = src + j * row;
      for (int64_t k = 0; k < row; ++k) r[k] = combine == Combine::kAdd ? r[k] + w[k] : r[k] - w[k];
    }
    return OkStatus();
  });
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"ScatterNd", ComputeScatter},
    {"TensorScatterUpdate", ComputeScatter},
    {"TensorScatterAdd", ComputeScatter},
    {"TensorScatterSub", ComputeScatter},
    {"TensorScatterMax", ComputeScatter},
    {"TensorScatterMin", ComputeScatter},
    {"ScatterNdNonAliasingAdd", ComputeScatter},
    {"InplaceUpdate", ComputeInplace},
    {"InplaceAdd", ComputeInplace},
    {"InplaceSub", ComputeInplace},
};

}  // namespace

std::span<const KernelEntry> ScatterCpuKernels() { return kCpu; }

}  // namespace kiln::exec
