// Ops about positions: OneHot (indices to one-hot rows), TopKV2 (the k largest and where they
// are), Where (the coordinates of non-zero elements) and InvertPermutation.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/nd_index.h"
#include "kernels/op_families.h"
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
  auto k = ReadK(ctx.input(1));
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

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"OneHot", "output", kOpFreshOutputs, PrepareOneHot},
    {"TopKV2", "values,indices", kOpFreshOutputs, PrepareTopK},
    {"Where", "index", kOpFreshOutputs, PrepareWhere},
    {"InvertPermutation", "y", kOpFreshOutputs, PrepareInvertPermutation},
};

constexpr KernelEntry kCpu[] = {
    {"OneHot", ComputeOneHot},
    {"TopKV2", ComputeTopK},
    {"Where", ComputeWhere},
    {"InvertPermutation", ComputeInvertPermutation},
};

}  // namespace

std::span<const OpDefinition> IndexOpDefs() { return kDefs; }
std::span<const KernelEntry> IndexCpuKernels() { return kCpu; }

}  // namespace kiln::exec
