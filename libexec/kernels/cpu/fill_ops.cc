// The CPU kernels of the ops in kernels/fill_ops.cc: Tile and BroadcastTo are strided copies of
// their input (an input stride 0 repeats it).
#include "kernels/fill_ops.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using fill::RangeSizeOf;

// ---- Fill --------------------------------------------------------------------------------------

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

// Accumulated, as TF's kernel does, so float values match it bit for bit. Delta is added only
// between elements: once more after the last could pass an integer type's range (Range(-2^31,
// 2^31 - 1, 2^30) in int32), which is undefined for the signed ones.
template <typename T>
void RangeFill(T start, T delta, int64_t n, T* out) {
  if (n <= 0) return;
  T value = start;
  out[0] = value;
  for (int64_t i = 1; i < n; ++i) {
    value += delta;
    out[i] = value;
  }
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

// ---- Empty -----------------------------------------------------------------------------------

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

constexpr KernelEntry kCpu[] = {
    {"Fill", ComputeFill},
    {"Empty", ComputeEmpty},
    {"Range", ComputeRange},
    {"Tile", ComputeTile},
    {"BroadcastTo", ComputeBroadcastTo},
};

}  // namespace

std::span<const KernelEntry> FillCpuKernels() { return kCpu; }

}  // namespace kiln::exec
