// The CPU kernels of the row-access ops on resource variables in
// kernels/resource_scatter_ops.cc: rows written or combined under the variable's lock, a
// repeated index applied in order.
#include "kernels/resource_scatter_ops.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "kernels/nd_index.h"
#include "kernels/strided_slice.h"
#include "kernels/type_lists.h"
#include "kernels/variable_util.h"

namespace kiln::exec {
namespace {

using resource_scatter::GatherState;
using resource_scatter::ScatterOp;
using resource_scatter::SliceAssignState;

// "indices[3] = 7 is not in [0, 5)", TF's wording.
Status CheckIndex(int64_t pos, int64_t index, int64_t limit) {
  if (index >= 0 && index < limit) return OkStatus();
  return InvalidArgument("indices[", pos, "] = ", index, " is not in [0, ", limit, ")");
}

// ---- ResourceGather --------------------------------------------------------------------------

Status ComputeResourceGather(const KernelContext& ctx) {
  const auto& st = ctx.state<GatherState>();
  const int b = st.batch_dims;
  auto var = VariableFromHandle(ctx.input(0), "resource");
  if (!var.ok()) return Wrap(ctx, var.status());
  if (Status s = ExpectVariableDType(**var, st.dtype); !s.ok()) return Wrap(ctx, s);
  auto params_r = (*var)->Read();
  if (!params_r.ok()) return Wrap(ctx, params_r.status());
  const Tensor& params = *params_r;
  const Tensor& indices_t = ctx.input(1);
  if (params.rank() <= b || indices_t.rank() < b)
    return ctx.Error("batch_dims ", b, " needs params of rank > ", b, " and indices of rank >= ", b,
                     ", got ", params.shape().ToString(), " and ", indices_t.shape().ToString());
  Shape out_shape;
  int64_t batch = 1;
  for (int d = 0; d < b; ++d) {
    if (params.dim(d) != indices_t.dim(d))
      return ctx.Error("batch dimension ", d, " differs: params ", params.shape().ToString(),
                       ", indices ", indices_t.shape().ToString());
    out_shape.AddDim(params.dim(d));
    batch *= params.dim(d);
  }
  int64_t per_batch = 1;
  for (int d = b; d < indices_t.rank(); ++d) {
    out_shape.AddDim(indices_t.dim(d));
    per_batch *= indices_t.dim(d);
  }
  int64_t inner = 1;
  for (int d = b + 1; d < params.rank(); ++d) {
    out_shape.AddDim(params.dim(d));
    inner *= params.dim(d);
  }
  const int64_t limit = params.dim(b);
  const std::vector<int64_t> indices = IndexValues(indices_t);
  for (int64_t i = 0; i < static_cast<int64_t>(indices.size()); ++i) {
    Status bad = CheckIndex(i, indices[i], limit);
    if (!bad.ok()) return Wrap(ctx, bad);
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, params.dtype(), out_shape));
  for (int64_t bi = 0; bi < batch; ++bi) {
    for (int64_t m = 0; m < per_batch; ++m) {
      const int64_t row = indices[bi * per_batch + m];
      CopyElementRange(params, (bi * limit + row) * inner, out, (bi * per_batch + m) * inner,
                       inner);
    }
  }
  return OkStatus();
}

// ---- ResourceScatterUpdate, Add, Sub, Mul, Div, Min, Max ----------------------------------------

// What a variable's rows can be: numbers (combined), and bool, strings and handles (assigned
// only: Prepare refuses them for the arithmetic, as TF registers ResourceScatterUpdate alone
// for every type).
using ScatterTypes = TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t,
                              uint8_t, uint16_t, uint32_t, uint64_t, std::complex<float>,
                              std::complex<double>, bool, std::string, ResourcePtr, VariantPtr>;

// row = row (op) v in the compute type; false for an integer division by zero.
template <typename C>
bool ApplyScatter(ScatterOp op, C& row, C v) {
  switch (op) {
    case ScatterOp::kUpdate:
      row = v;
      break;
    case ScatterOp::kAdd:
      row = static_cast<C>(row + v);
      break;
    case ScatterOp::kSub:
      row = static_cast<C>(row - v);
      break;
    case ScatterOp::kMul:
      row = static_cast<C>(row * v);
      break;
    case ScatterOp::kDiv:
      if constexpr (kIsInteger<C>) {
        if (v == C(0)) return false;
        if constexpr (std::is_signed_v<C>) {
          if (v == C(-1)) {  // the lowest value divided by -1 wraps, as TF's
            using U = std::make_unsigned_t<C>;
            row = static_cast<C>(static_cast<U>(U(0) - static_cast<U>(row)));
            break;
          }
        }
      }
      row = static_cast<C>(row / v);
      break;
    case ScatterOp::kMin:
    case ScatterOp::kMax:
      // Real types only (Prepare refuses complex for these).
      if constexpr (!kIsComplex<C>) row = (op == ScatterOp::kMin ? v < row : v > row) ? v : row;
      break;
  }
  return true;
}

Status ComputeScatter(const KernelContext& ctx) {
  const ScatterOp op = ctx.state<TypedOpState<ScatterOp>>().value;
  auto var = VariableFromHandle(ctx.input(0), "resource");
  if (!var.ok()) return Wrap(ctx, var.status());
  const Tensor& indices_t = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  const std::vector<int64_t> indices = IndexValues(indices_t);
  Status s = (*var)->Update([&](const Tensor& cur) -> Result<Tensor> {
    if (cur.dtype() != updates.dtype())
      return InvalidArgument("variable '", (*var)->name(), "' has dtype ",
                             DTypeShortName(cur.dtype()), ", 'updates' has dtype ",
                             DTypeShortName(updates.dtype()));
    if (cur.rank() < 1)
      return InvalidArgument("cannot scatter into variable '", (*var)->name(), "' of shape ",
                             cur.shape().ToString(), ": it needs at least one dimension");
    // updates: indices.shape + var.shape[1:], or a scalar applied to every row.
    Shape want = indices_t.shape();
    int64_t inner = 1;
    for (int d = 1; d < cur.rank(); ++d) {
      want.AddDim(cur.dim(d));
      inner *= cur.dim(d);
    }
    const bool scalar = updates.rank() == 0;
    if (!scalar && updates.shape() != want)
      return InvalidArgument("'updates' must have shape ", want.ToString(),
                             " (indices.shape + variable.shape[1:]) or be a scalar, got ",
                             updates.shape().ToString());
    for (int64_t i = 0; i < static_cast<int64_t>(indices.size()); ++i)
      KILN_RETURN_IF_ERROR(CheckIndex(i, indices[i], cur.dim(0)));
    Tensor next = cur.DeepCopy();
    KILN_RETURN_IF_ERROR(Dispatch<ScatterTypes>(cur.dtype(), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      const T* u = updates.data<T>();
      T* d = next.data<T>();
      for (int64_t i = 0; i < static_cast<int64_t>(indices.size()); ++i) {
        T* row = d + indices[i] * inner;
        const T* src = scalar ? u : u + i * inner;
        for (int64_t k = 0; k < inner; ++k) {
          const T& v = src[scalar ? 0 : k];
          if constexpr (NumberTypes::Contains(kDTypeOf<T>)) {
            using C = ComputeType<T>;
            if (!ApplyScatter(op, reinterpret_cast<C&>(row[k]), reinterpret_cast<const C&>(v)))
              return InvalidArgument("integer division by zero in 'updates'");
          } else {
            row[k] = v;
          }
        }
      }
      return OkStatus();
    }));
    return next;
  });
  if (!s.ok()) return Wrap(ctx, s);
  return OkStatus();
}

// ---- ResourceGatherNd, ResourceScatterNd*
// --------------------------------------------------------

// The slices of `shape` that index vectors of `indices` select (offsets in elements), or the
// error naming the first bad one.
Result<NdIndex> ResolveIndices(const Tensor& indices, const Shape& shape, std::string_view what) {
  if (indices.rank() == 0) return InvalidArgument("input 'indices' must have rank at least 1");
  const int64_t k = indices.dim(indices.rank() - 1);
  if (k > shape.rank()) {
    return InvalidArgument("the last dimension of indices (", k, ") must not exceed the rank of ",
                           what, " ", ShapeBrackets(shape.dims()));
  }
  NdIndex nd;
  std::string bad;
  KILN_RETURN_IF_ERROR(DispatchIndex(indices.dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    nd = ResolveNdIndex<I>(indices, shape);
    if (nd.first_bad >= 0) bad = IndexVectorString<I>(indices, nd.first_bad, k);
    return OkStatus();
  }));
  if (nd.first_bad >= 0) {
    return InvalidArgument(bad, " does not index into ", what, " ", ShapeBrackets(shape.dims()));
  }
  return nd;
}

Status ComputeResourceGatherNd(const KernelContext& ctx) {
  auto var = VariableFromHandle(ctx.input(0), "resource");
  if (!var.ok()) return Wrap(ctx, var.status());
  if (Status s = ExpectVariableDType(**var, ctx.state<TypedOpState<DType>>().value); !s.ok())
    return Wrap(ctx, s);
  auto params_r = (*var)->Read();
  if (!params_r.ok()) return Wrap(ctx, params_r.status());
  const Tensor& params = *params_r;
  const Tensor& indices = ctx.input(1);
  auto nd = ResolveIndices(indices, params.shape(), "param shape");
  if (!nd.ok()) return Wrap(ctx, nd.status());
  std::vector<int64_t> dims(indices.shape().dims().begin(), indices.shape().dims().end() - 1);
  dims.insert(dims.end(), params.shape().dims().begin() + nd->k, params.shape().dims().end());
  KILN_ASSIGN_OR_RETURN(Shape shape, Shape::FromDims(dims));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, shape));
  return DispatchStorage(params.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    for (int64_t j = 0; j < nd->n; ++j)
      std::copy_n(Elems<U>(params) + nd->offsets[j], nd->slice_size,
                  Elems<U>(*out) + j * nd->slice_size);
    return OkStatus();
  });
}

Status ComputeScatterNd(const KernelContext& ctx) {
  const ScatterOp op = ctx.state<TypedOpState<ScatterOp>>().value;
  auto var = VariableFromHandle(ctx.input(0), "ref");
  if (!var.ok()) return Wrap(ctx, var.status());
  const Tensor& indices = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  Status s = (*var)->Update([&](const Tensor& cur) -> Result<Tensor> {
    if (cur.dtype() != updates.dtype())
      return InvalidArgument("variable '", (*var)->name(), "' has dtype ",
                             DTypeShortName(cur.dtype()), ", 'updates' has dtype ",
                             DTypeShortName(updates.dtype()));
    KILN_ASSIGN_OR_RETURN(NdIndex nd, ResolveIndices(indices, cur.shape(), "variable shape"));
    // updates: indices.shape[:-1] + var.shape[K:].
    std::vector<int64_t> want(indices.shape().dims().begin(), indices.shape().dims().end() - 1);
    want.insert(want.end(), cur.shape().dims().begin() + nd.k, cur.shape().dims().end());
    if (updates.shape().ToVector() != want)
      return InvalidArgument("'updates' must have shape ", ShapeBrackets(want),
                             " (indices.shape[:-1] + variable.shape[indices.shape[-1]:]), got ",
                             ShapeBrackets(updates.shape().dims()));
    Tensor next = cur.DeepCopy();
    KILN_RETURN_IF_ERROR(Dispatch<ScatterTypes>(cur.dtype(), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      T* d = next.data<T>();
      for (int64_t j = 0; j < nd.n; ++j) {
        T* row = d + nd.offsets[j];
        const T* src = updates.data<T>() + j * nd.slice_size;
        for (int64_t k = 0; k < nd.slice_size; ++k) {
          if constexpr (NumberTypes::Contains(kDTypeOf<T>)) {
            using C = ComputeType<T>;
            ApplyScatter(op, reinterpret_cast<C&>(row[k]), reinterpret_cast<const C&>(src[k]));
          } else if constexpr (std::is_same_v<T, bool>) {
            row[k] = op == ScatterOp::kAdd   ? (row[k] || src[k])
                     : op == ScatterOp::kSub ? (row[k] != src[k])
                                             : src[k];
          } else {
            row[k] = src[k];
          }
        }
      }
      return OkStatus();
    }));
    return next;
  });
  if (!s.ok()) return Wrap(ctx, s);
  return OkStatus();
}

// ---- ResourceStridedSliceAssign ----------------------------------------------------------------

Status ComputeSliceAssign(const KernelContext& ctx) {
  auto var = VariableFromHandle(ctx.input(0), "ref");
  if (!var.ok()) return Wrap(ctx, var.status());
  const Tensor& value = ctx.input(4);
  Status s = (*var)->Update([&](const Tensor& cur) -> Result<Tensor> {
    if (cur.dtype() != value.dtype())
      return InvalidArgument("variable '", (*var)->name(), "' has dtype ",
                             DTypeShortName(cur.dtype()), ", 'value' has dtype ",
                             DTypeShortName(value.dtype()));
    DenseSlice dense;
    KILN_RETURN_IF_ERROR(AnalyzeSliceOf(cur.shape(), ctx.input(1), ctx.input(2), ctx.input(3),
                                        ctx.state<SliceAssignState>().masks, &dense));
    Tensor next = cur.DeepCopy();
    KILN_RETURN_IF_ERROR(WriteStridedSlice(value, dense, &next));
    return next;
  });
  if (!s.ok()) return Wrap(ctx, s);
  if (ctx.num_outputs() == 1) ctx.SetOutput(0, ctx.input(0));  // StridedSliceAssign's ref
  return OkStatus();
}

// ---- DisableCopyOnRead -----------------------------------------------------------------------

Status ComputeDisableCopyOnRead(const KernelContext& ctx) {
  auto var = VariableFromHandle(ctx.input(0), "resource");
  if (!var.ok()) return Wrap(ctx, var.status());
  return OkStatus();
}

constexpr KernelEntry kCpu[] = {
    {"ResourceGather", ComputeResourceGather},
    {"ResourceScatterUpdate", ComputeScatter},
    {"ResourceScatterAdd", ComputeScatter},
    {"ResourceScatterSub", ComputeScatter},
    {"ResourceScatterMul", ComputeScatter},
    {"ResourceScatterDiv", ComputeScatter},
    {"ResourceScatterMin", ComputeScatter},
    {"ResourceScatterMax", ComputeScatter},
    {"ResourceGatherNd", ComputeResourceGatherNd},
    {"ResourceScatterNdUpdate", ComputeScatterNd},
    {"ResourceScatterNdAdd", ComputeScatterNd},
    {"ResourceScatterNdSub", ComputeScatterNd},
    {"ResourceScatterNdMin", ComputeScatterNd},
    {"ResourceScatterNdMax", ComputeScatterNd},
    {"ResourceStridedSliceAssign", ComputeSliceAssign},
    {"StridedSliceAssign", ComputeSliceAssign},
    {"DisableCopyOnRead", ComputeDisableCopyOnRead},
};

}  // namespace

std::span<const KernelEntry> ResourceScatterCpuKernels() { return kCpu; }

}  // namespace kiln::exec
