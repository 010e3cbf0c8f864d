// Ops about positions: OneHot (indices to one-hot rows), TopKV2 and ApproxTopK (the k largest and
// where they are), Where (the coordinates of non-zero elements), InvertPermutation, LowerBound and
// UpperBound (tf.searchsorted: where each value would go in a sorted row) and UnravelIndex (flat
// indices to coordinates), InTopK(V2) (whether targets are among the k best predictions) and
// NthElement (the n-th smallest or largest of each row).
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/nd_index.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

// ---- OneHot ----------------------------------------------------------------------------------

using AxisState = TypedOpState<int64_t>;

Status CheckOneHotAxis(int64_t axis, int indices_rank) {
  if (axis < -1 || axis > indices_rank) {
    return InvalidArgument("expected axis to be -1 or between [0, ", indices_rank + 1,
                           "), but received: ", axis);
  }
  return OkStatus();
}

Status PrepareOneHot(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  KILN_PREPARE_ASSIGN(ctx, DType ti, ctx.attrs.GetType("TI", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(
      ctx, "TI", ti, {DType::kUInt8, DType::kInt8, DType::kInt32, DType::kInt64}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "indices", ti));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "depth", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "depth", 0));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 2, "on_value"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "off_value", t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "on_value", 0));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 3, "off_value", 0));
  KILN_PREPARE_ASSIGN(ctx, int64_t axis, ctx.attrs.GetInt("axis", -1));
  const PartialShape& in = ctx.inputs[0].shape;
  PartialShape out;
  if (!in.unknown_rank()) {
    KILN_PREPARE_CHECK(ctx, CheckOneHotAxis(axis, in.rank()));
    if (in.rank() >= kMaxRank) return ctx.Error("indices have rank ", in.rank(), "; too many");
    int64_t depth = -1;
    if (const Tensor* d = ConstantInput(ctx, 1)) {
      depth = d->scalar<int32_t>();
      if (depth < 0) return ctx.Error("depth must be non-negative, got: ", depth);
    }
    std::vector<int64_t> dims(in.dims().begin(), in.dims().end());
    dims.insert(dims.begin() + (axis < 0 ? in.rank() : axis), depth);
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::make_shared<AxisState>(axis);
  return OkStatus();
}

Status ComputeOneHot(const KernelContext& ctx) {
  const Tensor& indices = ctx.input(0);
  const int64_t axis_attr = ctx.state<AxisState>().value;
  Status s = CheckOneHotAxis(axis_attr, indices.rank());
  if (!s.ok()) return Wrap(ctx, s);
  if (indices.rank() >= kMaxRank) return ctx.Error("indices have rank ", indices.rank());
  for (int i = 1; i < 4; ++i) {
    if (ctx.input(i).NumElements() != 1) {
      return ctx.Error("inputs depth, on_value and off_value must be scalars, got input ", i,
                       " of shape ", ctx.input(i).shape().ToString());
    }
  }
  const int64_t depth = ctx.input(1).data<int32_t>()[0];
  if (depth < 0) return ctx.Error("depth must be non-negative, got: ", depth);
  const int axis = static_cast<int>(axis_attr < 0 ? indices.rank() : axis_attr);
  Shape shape;
  int64_t prefix = 1, suffix = 1;
  for (int d = 0; d < indices.rank(); ++d) {
    if (d == axis) shape.AddDim(depth);
    shape.AddDim(indices.dim(d));
    (d < axis ? prefix : suffix) *= indices.dim(d);
  }
  if (axis == indices.rank()) shape.AddDim(depth);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, shape));
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

struct TopKState : OpState {
  DType index_type = DType::kInt32;
  int64_t attr_k = -1;  // ApproxTopK's k (an attr); TopKV2 reads its k input
};

Result<int64_t> ReadK(const Tensor& k) {
  if (k.NumElements() != 1) {
    return InvalidArgument("input 'k' must be a scalar, got shape ", k.shape().ToString());
  }
  int64_t v = 0;
  KILN_RETURN_IF_ERROR(DispatchIndex(k.dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    v = IndexAt(k.data<I>(), 0);
    return OkStatus();
  }));
  if (v < 0) return InvalidArgument("need k >= 0, got ", v);
  return v;
}

Status PrepareTopK(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, RealTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  KILN_PREPARE_ASSIGN(ctx, DType tk, ctx.attrs.GetType("Tk", DType::kInt32));
  const auto ints = {DType::kInt16, DType::kInt32, DType::kInt64};
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tk", tk, ints));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "k", tk));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "k", 0));
  auto state = std::make_shared<TopKState>();
  KILN_PREPARE_ASSIGN(ctx, state->index_type, ctx.attrs.GetType("index_type", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "index_type", state->index_type, ints));
  KILN_PREPARE_ASSIGN(ctx, bool sorted, ctx.attrs.GetBool("sorted", true));
  (void)sorted;  // results are always sorted (TF leaves the unsorted order unspecified)
  const PartialShape& in = ctx.inputs[0].shape;
  PartialShape out;
  if (!in.unknown_rank()) {
    if (in.rank() == 0) return ctx.Error("input must be >= 1-D, got shape []");
    std::vector<int64_t> dims(in.dims().begin(), in.dims().end());
    dims.back() = -1;
    if (const Tensor* k = ConstantInput(ctx, 1)) {
      auto v = ReadK(*k);
      if (!v.ok()) return ctx.Error(v.status().message());
      const int64_t cols = in.dim(in.rank() - 1);
      if (cols >= 0 && *v > cols) {
        return ctx.Error("input must have at least k columns. Had ", cols, ", needed ", *v);
      }
      dims.back() = *v;
    }
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}, TensorSpec{state->index_type, out}};
  ctx.state = std::move(state);
  return OkStatus();
}

// ApproxTopK (tf.math.approx_max_k): TF's CPU kernel is the exact top k along the last
// dimension (recall_target and the aggregation attrs only matter to TPUs); approx_min_k and
// other dimensions have no CPU kernel in TF, so they are refused here too.
Status PrepareApproxTopK(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, RealTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  auto state = std::make_shared<TopKState>();
  KILN_PREPARE_ASSIGN(ctx, state->attr_k, ctx.attrs.GetInt("k"));
  if (state->attr_k < 0) return ctx.Error("attr 'k' must be >= 0, got ", state->attr_k);
  KILN_PREPARE_ASSIGN(ctx, bool is_max_k, ctx.attrs.GetBool("is_max_k", true));
  if (!is_max_k)
    return ctx.Error("is_max_k=false (tf.math.approx_min_k) has no CPU kernel in TensorFlow");
  KILN_PREPARE_ASSIGN(ctx, int64_t dim, ctx.attrs.GetInt("reduction_dimension", -1));
  const PartialShape& in = ctx.inputs[0].shape;
  if (dim != -1 && (in.unknown_rank() || dim != in.rank() - 1))
    return ctx.Error("attr 'reduction_dimension' must be the last dimension (-1), got ", dim,
                     ": TensorFlow's CPU kernel reduces the last dimension only");
  PartialShape out;
  if (!in.unknown_rank()) {
    if (in.rank() == 0) return ctx.Error("input must be >= 1-D, got shape []");
    std::vector<int64_t> dims(in.dims().begin(), in.dims().end());
    const int64_t cols = dims.back();
    if (cols >= 0 && state->attr_k > cols)
      return ctx.Error("input must have at least k columns. Had ", cols, ", needed ",
                       state->attr_k);
    dims.back() = state->attr_k;
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}, TensorSpec{DType::kInt32, out}};
  ctx.state = std::move(state);
  return OkStatus();
}

// a before b: larger first, NaN largest (as TF's CPU kernel orders them), ties by index.
template <typename C>
bool Before(C a, C b) {
  if constexpr (kIsFloating<C>) {
    const bool na = Eigen::numext::isnan(a), nb = Eigen::numext::isnan(b);
    if (na || nb) return na && !nb;
  }
  return b < a;
}

Status ComputeTopK(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() == 0) return ctx.Error("input must be >= 1-D, got shape []");
  const int64_t attr_k = ctx.state<TopKState>().attr_k;
  auto k = attr_k >= 0 ? Result<int64_t>(attr_k) : ReadK(ctx.input(1));
  if (!k.ok()) return Wrap(ctx, k.status());
  const int64_t cols = x.dim(x.rank() - 1);
  if (*k > cols) {
    return ctx.Error("input must have at least k columns. Had ", cols, ", needed ", *k);
  }
  Shape shape = x.shape();
  shape.set_dim(x.rank() - 1, *k);
  KILN_ASSIGN_OR_RETURN(Tensor * values, ctx.AllocateOutput(0, shape));
  KILN_ASSIGN_OR_RETURN(Tensor * indices, ctx.AllocateOutput(1, shape));
  const int64_t rows = cols == 0 ? 0 : x.NumElements() / cols;
  if (*k == 0 || rows == 0) return OkStatus();
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
            return Before(row[i], row[j]) || (!Before(row[j], row[i]) && i < j);
          };
          std::partial_sort(order.begin(), order.begin() + *k, order.end(), cmp);
          for (int64_t j = 0; j < *k; ++j) {
            vout[r * *k + j] = row[order[j]];
            iout[r * *k + j] = static_cast<I>(order[j]);
          }
        }
      });
      return OkStatus();
    });
  });
}

// ---- Where -----------------------------------------------------------------------------------

using WhereTypes =
    TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
             uint32_t, uint64_t, bool, std::complex<float>, std::complex<double>>;

Status PrepareWhere(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T", DType::kBool));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, WhereTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  const PartialShape& in = ctx.inputs[0].shape;
  ctx.outputs = {TensorSpec{
      DType::kInt64, in.unknown_rank() ? PartialShape{-1, -1} : PartialShape{-1, in.rank()}}};
  return OkStatus();
}

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

Status PrepareInvertPermutation(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_ASSIGN_OR_RETURN(DType t, IndexInputDType(ctx, 0, "x", "T"));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "x", 1));
  ctx.outputs = {TensorSpec{t, ctx.inputs[0].shape}};
  return OkStatus();
}

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

constexpr std::initializer_list<DType> kIndexDTypes = {DType::kInt32, DType::kInt64};

// TF's registrations: the real number types.
using SearchTypes = RealTypes;

Status PrepareBound(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, SearchTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "sorted_inputs", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "values", t));
  KILN_PREPARE_ASSIGN(ctx, DType out, ctx.attrs.GetType("out_type", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "out_type", out, kIndexDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "sorted_inputs", 2));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "values", 2));
  const PartialShape& s = ctx.inputs[0].shape;
  const PartialShape& v = ctx.inputs[1].shape;
  if (s.rank() == 2 && v.rank() == 2 && s.dim(0) >= 0 && v.dim(0) >= 0 && s.dim(0) != v.dim(0))
    return ctx.Error("inputs 'sorted_inputs' and 'values' must have the same number of rows, got ",
                     s.ToPythonString(), " and ", v.ToPythonString());
  ctx.outputs = {TensorSpec{out, v}};
  return OkStatus();
}

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

Status PrepareUnravelIndex(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_ASSIGN_OR_RETURN(DType t, IndexInputDType(ctx, 0, "indices", "Tidx"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "dims", t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "dims", 1));
  const PartialShape& idx = ctx.inputs[0].shape;
  if (!idx.unknown_rank() && idx.rank() > 1)
    return ctx.Error("input 'indices' must be a scalar or a vector, got shape ",
                     idx.ToPythonString());
  const int64_t n = KnownLength(ctx.inputs[1].shape);
  std::vector<int64_t> dims = {n};
  if (idx.unknown_rank()) {
    ctx.outputs = {TensorSpec{t, PartialShape::UnknownRank()}};
    return OkStatus();
  }
  if (idx.rank() == 1) dims.push_back(idx.dim(0));
  KILN_PREPARE_ASSIGN(ctx, PartialShape out, PartialShape::FromDims(dims));
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

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

// Whether each row's target class is among its k largest predictions, as TF decides it: fewer
// than k classes predict more than the target; false for an out-of-range target or a row with a
// non-finite prediction.
Status PrepareInTopK(PrepareContext& ctx) {
  const bool v2 = ctx.op == "InTopKV2";
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(v2 ? 3 : 2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "predictions", DType::kFloat));
  KILN_ASSIGN_OR_RETURN(DType t, IndexInputDType(ctx, 1, "targets", "T"));
  if (v2) KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "k", t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "predictions", 2));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "targets", 1));
  if (!v2) {
    KILN_PREPARE_ASSIGN(ctx, int64_t k, ctx.attrs.GetInt("k"));
    ctx.state = std::make_shared<TypedOpState<int64_t>>(k);
  }
  const PartialShape& p = ctx.inputs[0].shape;
  ctx.outputs = {TensorSpec{DType::kBool, UnknownDims(1)}};
  if (p.rank() == 2 && p.dim(0) >= 0) ctx.outputs[0].shape = PartialShape(Shape{p.dim(0)});
  return OkStatus();
}

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

// The n-th smallest value of each last-dim vector (the n-th largest with reverse).
Status PrepareNthElement(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, RealTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "n", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "n", 0));
  KILN_PREPARE_ASSIGN(ctx, bool reverse, ctx.attrs.GetBool("reverse", false));
  ctx.state = std::make_shared<TypedOpState<bool>>(reverse);
  const PartialShape& in = ctx.inputs[0].shape;
  if (in.unknown_rank()) {
    ctx.outputs = {TensorSpec{t, PartialShape::UnknownRank()}};
    return OkStatus();
  }
  if (in.rank() < 1) return ctx.Error("input 'input' must have rank 1 or more, got a scalar");
  std::vector<int64_t> dims(in.dims().begin(), in.dims().end() - 1);
  KILN_PREPARE_ASSIGN(ctx, PartialShape out, PartialShape::FromDims(dims));
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

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

constexpr OpDefinition kDefs[] = {
    {"OneHot", "output", kOpFreshOutputs, PrepareOneHot},
    {"TopKV2", "values,indices", kOpFreshOutputs, PrepareTopK},
    {"ApproxTopK", "values,indices", kOpFreshOutputs, PrepareApproxTopK},
    {"Where", "index", kOpFreshOutputs, PrepareWhere},
    {"InvertPermutation", "y", kOpFreshOutputs, PrepareInvertPermutation},
    {"LowerBound", "output", kOpFreshOutputs, PrepareBound},
    {"UpperBound", "output", kOpFreshOutputs, PrepareBound},
    {"UnravelIndex", "output", kOpFreshOutputs, PrepareUnravelIndex},
    {"InTopK", "precision", kOpFreshOutputs, PrepareInTopK},
    {"InTopKV2", "precision", kOpFreshOutputs, PrepareInTopK},
    {"NthElement", "values", kOpFreshOutputs, PrepareNthElement},
};

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

std::span<const OpDefinition> IndexOpDefs() { return kDefs; }
std::span<const KernelEntry> IndexCpuKernels() { return kCpu; }

}  // namespace kiln::exec
