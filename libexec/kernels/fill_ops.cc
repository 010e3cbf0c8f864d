// Making tensors from values: Fill, Empty, Range, Tile, BroadcastTo.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

// ---- Fill --------------------------------------------------------------------------------------

Status PrepareFill(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 0, "dims", "index_type").status());
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 1, "value"));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "dims", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "value", 0));
  PartialShape out = UnknownDims(static_cast<int>(KnownLength(ctx.inputs[0].shape)));
  if (const Tensor* dims = ConstantInput(ctx, 0)) {
    auto s = ShapeFromDimsTensor(*dims, "dims");
    if (!s.ok()) return ctx.Error(s.status().message());
    out = *s;
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

Status ComputeFill(const KernelContext& ctx) {
  auto shape = ShapeFromDimsTensor(ctx.input(0), "dims");
  if (!shape.ok()) return Wrap(ctx, shape.status());
  const Tensor& value = ctx.input(1);
  if (value.rank() != 0) {
    return ctx.Error("input 'value' must be a scalar, got shape ", value.shape().ToString());
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out_ptr, ctx.AllocateOutput(0, value.dtype(), *shape));
  Tensor& out = *out_ptr;
  KILN_RETURN_IF_ERROR(DispatchStorage(value.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    std::fill(Elems<U>(out), Elems<U>(out) + out.NumElements(), Elems<U>(value)[0]);
    return OkStatus();
  }));
  return OkStatus();
}

// ---- Range -------------------------------------------------------------------------------------

template <typename T>
Result<int64_t> RangeSize(T start, T limit, T delta) {
  if (delta == 0) return InvalidArgument("requires delta != 0");
  if (delta > 0 && start > limit) {
    return InvalidArgument("requires start <= limit when delta > 0: ", start, "/", limit);
  }
  if (delta < 0 && start < limit) {
    return InvalidArgument("requires start >= limit when delta < 0: ", start, "/", limit);
  }
  if constexpr (std::is_integral_v<T>) {
    const int64_t span = std::abs(static_cast<int64_t>(limit) - static_cast<int64_t>(start));
    const int64_t step = std::abs(static_cast<int64_t>(delta));
    return (span + step - 1) / step;
  } else {
    // In T's precision, as TF computes it: float ranges can differ from a double count.
    const T n = std::ceil(std::abs((limit - start) / delta));
    if (!std::isfinite(n) || n > static_cast<T>(INT64_MAX / 2)) {
      return InvalidArgument("range from ", start, " to ", limit, " by ", delta,
                             " has too many elements");
    }
    return static_cast<int64_t>(n);
  }
}

template <typename T>
Result<int64_t> RangeSizeOf(const Tensor& start, const Tensor& limit, const Tensor& delta) {
  return RangeSize<T>(start.data<T>()[0], limit.data<T>()[0], delta.data<T>()[0]);
}

// Accumulated, as TF's kernel does, so float values match it bit for bit.
template <typename T>
void RangeFill(T start, T delta, int64_t n, T* out) {
  T value = start;
  for (int64_t i = 0; i < n; ++i, value += delta) out[i] = value;
}

Status PrepareRange(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("Tidx", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tidx", t, BasicRealTypes::kDTypes));
  const char* names[] = {"start", "limit", "delta"};
  for (int i = 0; i < 3; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, names[i], t));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, i, names[i], 0));
  }
  PartialShape out{-1};
  const Tensor* s = ConstantInput(ctx, 0);
  const Tensor* l = ConstantInput(ctx, 1);
  const Tensor* d = ConstantInput(ctx, 2);
  if (s && l && d) {
    Result<int64_t> n = int64_t{0};
    KILN_RETURN_IF_ERROR(Dispatch<BasicRealTypes>(t, [&](auto tag) {
      n = RangeSizeOf<typename decltype(tag)::type>(*s, *l, *d);
      return OkStatus();
    }));
    if (!n.ok()) return ctx.Error(n.status().message());
    out = PartialShape{*n};
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

Status ComputeRange(const KernelContext& ctx) {
  const Tensor& s = ctx.input(0);
  const Tensor& l = ctx.input(1);
  const Tensor& d = ctx.input(2);
  for (int i = 0; i < 3; ++i) {
    if (ctx.input(i).NumElements() != 1) {
      return ctx.Error("inputs start, limit and delta must be scalars, got input ", i, " of shape ",
                       ctx.input(i).shape().ToString());
    }
  }
  return Dispatch<BasicRealTypes>(s.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    auto n = RangeSizeOf<T>(s, l, d);
    if (!n.ok()) return Wrap(ctx, n.status());
    KILN_ASSIGN_OR_RETURN(Tensor * out_ptr, ctx.AllocateOutput(0, s.dtype(), Shape{*n}));
    Tensor& out = *out_ptr;
    RangeFill<T>(s.data<T>()[0], d.data<T>()[0], *n, out.data<T>());
    return OkStatus();
  });
}

// ---- Tile, BroadcastTo -----------------------------------------------------------------------

Status PrepareTile(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 1, "multiples", "Tmultiples").status());
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "multiples", 1));
  const PartialShape& in = ctx.inputs[0].shape;
  const int64_t n = KnownLength(ctx.inputs[1].shape);
  if (!in.unknown_rank() && n >= 0 && n != in.rank()) {
    return ctx.Error("input 'multiples' has ", n, " entries but 'input' has shape ",
                     in.ToPythonString());
  }
  const int rank = in.unknown_rank() ? static_cast<int>(n) : in.rank();
  PartialShape out = UnknownDims(rank);
  if (const Tensor* m = ConstantInput(ctx, 1); m != nullptr && rank >= 0) {
    std::vector<int64_t> mult = IndexValues(*m);
    std::vector<int64_t> dims(rank, -1);
    for (int i = 0; i < rank; ++i) {
      if (mult[i] < 0) {
        return ctx.Error("input 'multiples' ", DimsString(mult), " has a negative entry");
      }
      const int64_t d = in.unknown_rank() ? -1 : in.dim(i);
      dims[i] = mult[i] == 0 ? 0 : d < 0 ? -1 : d * mult[i];
    }
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

Status ComputeTile(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& m = ctx.input(1);
  if (m.rank() != 1 || m.NumElements() != x.rank()) {
    return ctx.Error("input 'multiples' must be a vector of length ", x.rank(), ", got shape ",
                     m.shape().ToString());
  }
  std::vector<int64_t> mult = IndexValues(m);
  const auto strides = RowMajorStrides(x.shape());
  Shape shape;
  CopyPlan plan;  // output viewed as [m0, d0, m1, d1, ...]: the input repeats along each m
  for (int i = 0; i < x.rank(); ++i) {
    if (mult[i] < 0) {
      return ctx.Error("input 'multiples' ", DimsString(mult), " has a negative entry");
    }
    shape.AddDim(x.dim(i) * mult[i]);
    AddCopyDim(&plan, mult[i], 0);
    AddCopyDim(&plan, x.dim(i), strides[i]);
  }
  return CopyIntoOutput(ctx, 0, x, shape, plan);
}

Status PrepareBroadcastTo(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 1, "shape", "Tidx").status());
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "shape", 1));
  PartialShape out = UnknownDims(static_cast<int>(KnownLength(ctx.inputs[1].shape)));
  if (const Tensor* shape_t = ConstantInput(ctx, 1)) {
    auto target = ShapeFromDimsTensor(*shape_t, "shape");
    if (!target.ok()) return ctx.Error(target.status().message());
    const PartialShape& in = ctx.inputs[0].shape;
    if (!in.unknown_rank()) {
      bool ok = in.rank() <= target->rank();
      for (int i = 0; ok && i < in.rank(); ++i) {
        const int64_t d = in.dim(in.rank() - 1 - i);
        const int64_t want = target->dim(target->rank() - 1 - i);
        ok = d == -1 || d == 1 || d == want;
      }
      if (!ok) {
        return ctx.Error("cannot broadcast a tensor of shape ", in.ToPythonString(), " to shape ",
                         target->ToString());
      }
    }
    out = *target;
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

Status ComputeBroadcastTo(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  auto target = ShapeFromDimsTensor(ctx.input(1), "shape");
  if (!target.ok()) return Wrap(ctx, target.status());
  const int rank = target->rank();
  const int offset = rank - x.rank();
  bool ok = offset >= 0;
  const auto strides = RowMajorStrides(x.shape());
  CopyPlan plan;
  for (int i = 0; ok && i < rank; ++i) {
    const int64_t want = target->dim(i);
    if (i < offset) {
      AddCopyDim(&plan, want, 0);
      continue;
    }
    const int64_t d = x.dim(i - offset);
    ok = d == want || d == 1;
    AddCopyDim(&plan, want, d == want ? strides[i - offset] : 0);
  }
  if (!ok) {
    return ctx.Error("cannot broadcast a tensor of shape ", x.shape().ToString(), " to shape ",
                     target->ToString());
  }
  if (*target == x.shape()) {
    ctx.SetOutput(0, x);
    return OkStatus();
  }
  return CopyIntoOutput(ctx, 0, x, *target, plan);
}

// ---- tables ----------------------------------------------------------------------------------

// ---- Empty -----------------------------------------------------------------------------------

// Empty(shape) of attr dtype. TF leaves the elements uninitialised unless `init`; here they are
// always zero (strings empty), so no call ever reads stale memory.
Status PrepareEmpty(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "shape", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "shape", 1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("dtype"));
  if (!HoldsData(t)) return ctx.Error("attr 'dtype': ", DTypeShortName(t), " holds no data");
  PartialShape out = UnknownDims(static_cast<int>(KnownLength(ctx.inputs[0].shape)));
  if (const Tensor* dims = ConstantInput(ctx, 0)) {
    auto s = ShapeFromDimsTensor(*dims, "shape");
    if (!s.ok()) return ctx.Error(s.status().message());
    out = *s;
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

Status ComputeEmpty(const KernelContext& ctx) {
  auto shape = ShapeFromDimsTensor(ctx.input(0), "shape");
  if (!shape.ok()) return Wrap(ctx, shape.status());
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, *shape));
  return DispatchStorage(out->dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    std::fill_n(Elems<U>(*out), out->NumElements(), U{});
    return OkStatus();
  });
}

constexpr OpDefinition kDefs[] = {
    {"Fill", "output", kOpFreshOutputs, PrepareFill},
    {"Empty", "output", kOpFreshOutputs, PrepareEmpty},
    {"Range", "output", kOpFreshOutputs, PrepareRange},
    {"Tile", "output", kOpFreshOutputs, PrepareTile},
    {"BroadcastTo", "output", kOpNone, PrepareBroadcastTo},
};

constexpr KernelEntry kCpu[] = {
    {"Fill", ComputeFill},
    {"Empty", ComputeEmpty},
    {"Range", ComputeRange},
    {"Tile", ComputeTile},
    {"BroadcastTo", ComputeBroadcastTo},
};

}  // namespace

std::span<const OpDefinition> FillOpDefs() { return kDefs; }
std::span<const KernelEntry> FillCpuKernels() { return kCpu; }

}  // namespace kiln::exec
