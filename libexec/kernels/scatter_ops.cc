// Scattering slices by N-d index: ScatterNd (into zeros, duplicates add up) and
// TensorScatterUpdate/Add/Sub/Max/Min (into a copy of a tensor). Updates are applied in index
// order, so duplicates under Update resolve to the last one, deterministically. The TF 1 row
// updates InplaceUpdate/Add/Sub (rows i of a copy of x set to, or added with, rows of v).
#include <algorithm>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/elementwise_functors.h"
#include "kernels/nd_index.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using ScatterAddTypes =
    TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
             uint32_t, uint64_t, bool, std::string, std::complex<float>, std::complex<double>>;
using ArithmeticTypes =
    TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
             uint32_t, uint64_t, std::complex<float>, std::complex<double>>;

enum class Combine { kUpdate, kAdd, kSub, kMax, kMin };

struct ScatterState : OpState {
  Combine combine = Combine::kUpdate;
  bool ignore_bad = false;
  bool into_zeros = false;  // ScatterNd
};

struct ScatterKind {
  std::string_view op;
  Combine combine;
  std::span<const DType> types;  // empty: any dtype
};

constexpr ScatterKind kKinds[] = {
    {"ScatterNd", Combine::kAdd, ScatterAddTypes::kDTypes},
    {"TensorScatterUpdate", Combine::kUpdate, {}},
    {"TensorScatterAdd", Combine::kAdd, ArithmeticTypes::kDTypes},
    // TF 1's name for TensorScatterAdd (tf.compat.v1.scatter_nd_non_aliasing_add).
    {"ScatterNdNonAliasingAdd", Combine::kAdd, ArithmeticTypes::kDTypes},
    {"TensorScatterSub", Combine::kSub, ArithmeticTypes::kDTypes},
    {"TensorScatterMax", Combine::kMax, RealTypes::kDTypes},
    {"TensorScatterMin", Combine::kMin, RealTypes::kDTypes},
};

// TF's scatter shape rules: indices [..., K]; updates = indices.shape[:-1] + shape[K:].
// Dims may be -1 (unknown) at prepare time; those pass.
Status CheckScatterShapes(std::span<const int64_t> shape, std::span<const int64_t> indices,
                          std::span<const int64_t> updates) {
  if (indices.empty()) return InvalidArgument("indices must have rank at least 1, got a scalar");
  const int64_t k = indices.back();
  if (k > static_cast<int64_t>(shape.size())) {
    return InvalidArgument("the last dimension of indices (", k,
                           ") must not exceed the rank of the output shape ", ShapeBrackets(shape));
  }
  const size_t batch = indices.size() - 1;
  auto same = [](int64_t a, int64_t b) { return a < 0 || b < 0 || a == b; };
  bool ok = updates.size() >= batch;
  for (size_t d = 0; ok && d < batch; ++d) ok = same(indices[d], updates[d]);
  if (ok && k >= 0) {  // K unknown at prepare time: only the batch dims can be checked
    const size_t slice_rank = shape.size() - k;
    ok = updates.size() == batch + slice_rank;
    for (size_t d = 0; ok && d < slice_rank; ++d) ok = same(shape[k + d], updates[batch + d]);
  }
  if (!ok) {
    return InvalidArgument("updates of shape ", ShapeBrackets(updates),
                           " must have shape indices.shape[:-1] + shape[indices.shape[-1]:] "
                           "for indices of shape ",
                           ShapeBrackets(indices), " into shape ", ShapeBrackets(shape));
  }
  return OkStatus();
}

Status PrepareScatter(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  auto state = std::make_shared<ScatterState>();
  const ScatterKind* kind = nullptr;
  for (const ScatterKind& k : kKinds)
    if (k.op == ctx.op) kind = &k;
  if (kind == nullptr) return ctx.Error("not a scatter op");
  state->combine = kind->combine;
  state->into_zeros = ctx.op == "ScatterNd";
  // ScatterNd(indices, updates, shape); TensorScatter*(tensor, indices, updates).
  const int indices_in = state->into_zeros ? 0 : 1;
  const int updates_in = state->into_zeros ? 1 : 2;
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  if (!kind->types.empty()) KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, kind->types));
  KILN_PREPARE_ASSIGN(ctx, DType ti, ctx.attrs.GetType("Tindices"));
  static constexpr DType kUpdateIndex[] = {DType::kInt16, DType::kInt32, DType::kInt64,
                                           DType::kUInt16};
  static constexpr DType kScatterNdIndex[] = {DType::kInt16, DType::kInt32, DType::kInt64};
  static constexpr DType kTensorScatterIndex[] = {DType::kInt32, DType::kInt64};
  const std::span<const DType> index_types = ctx.op == "TensorScatterUpdate" ? kUpdateIndex
                                             : state->into_zeros
                                                 ? std::span<const DType>(kScatterNdIndex)
                                                 : kTensorScatterIndex;
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tindices", ti, index_types));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, indices_in, "indices", ti));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, updates_in, "updates", t));
  KILN_PREPARE_ASSIGN(ctx, std::string policy, ctx.attrs.GetString("bad_indices_policy", ""));
  if (policy == "IGNORE") {
    state->ignore_bad = true;
  } else if (!policy.empty() && policy != "DEFAULT" && policy != "ERROR") {
    return ctx.Error(
        "attr 'bad_indices_policy' must be \"\", \"DEFAULT\", \"ERROR\" or "
        "\"IGNORE\", got \"",
        policy, "\"");
  }
  PartialShape out;
  if (state->into_zeros) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "shape", ti));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "shape", 1));
    out = UnknownDims(static_cast<int>(KnownLength(ctx.inputs[2].shape)));
    if (const Tensor* s = ConstantInput(ctx, 2)) {
      std::vector<int64_t> dims;
      KILN_RETURN_IF_ERROR(DispatchIndex(s->dtype(), [&](auto tag) {
        using I = typename decltype(tag)::type;
        for (int64_t i = 0; i < s->NumElements(); ++i) dims.push_back(IndexAt(s->data<I>(), i));
        return OkStatus();
      }));
      auto shape = PartialShape::FromDims(dims);
      if (!shape.ok() || !shape->IsFullyDefined()) {
        return ctx.Error("input 'shape' ", DimsString(dims), " is not a valid shape");
      }
      out = *shape;
    }
  } else {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "tensor", t));
    out = ctx.inputs[0].shape;
  }
  const PartialShape& ind = ctx.inputs[indices_in].shape;
  const PartialShape& upd = ctx.inputs[updates_in].shape;
  if (!out.unknown_rank() && !ind.unknown_rank() && !upd.unknown_rank()) {
    Status s = CheckScatterShapes(out.dims(), ind.dims(), upd.dims());
    if (!s.ok()) return ctx.Error(s.message());
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::move(state);
  return OkStatus();
}

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

// (x, i, v): a copy of x whose rows i[j] are set to (or added with, or minus) v[j], in order.
Status PrepareInplace(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  const bool update = ctx.op == "InplaceUpdate";
  if (!update) KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, ArithmeticTypes::kDTypes));
  if (!HoldsData(t)) return ctx.Error("attr 'T': ", DTypeShortName(t), " holds no data");
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "i", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "v", t));
  ctx.outputs = {ctx.inputs[0]};
  auto st = std::make_shared<ScatterState>();
  st->combine = update ? Combine::kUpdate : ctx.op == "InplaceAdd" ? Combine::kAdd : Combine::kSub;
  ctx.state = std::move(st);
  return OkStatus();
}

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

constexpr uint32_t kInPlace = kOpFreshOutputs | kOpInPlace;

constexpr OpDefinition kDefs[] = {
    {"ScatterNd", "output", kOpFreshOutputs, PrepareScatter},
    {"TensorScatterUpdate", "output", kInPlace, PrepareScatter},
    {"TensorScatterAdd", "output", kInPlace, PrepareScatter},
    {"ScatterNdNonAliasingAdd", "output", kInPlace, PrepareScatter},
    {"InplaceUpdate", "y", kOpFreshOutputs, PrepareInplace},
    {"InplaceAdd", "y", kOpFreshOutputs, PrepareInplace},
    {"InplaceSub", "y", kOpFreshOutputs, PrepareInplace},
    {"TensorScatterSub", "output", kInPlace, PrepareScatter},
    {"TensorScatterMax", "output", kInPlace, PrepareScatter},
    {"TensorScatterMin", "output", kInPlace, PrepareScatter},
};

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

std::span<const OpDefinition> ScatterOpDefs() { return kDefs; }
std::span<const KernelEntry> ScatterCpuKernels() { return kCpu; }

}  // namespace kiln::exec
