// The CPU kernels of the ops in kernels/compare_ops.cc.
#include "kernels/compare_ops.h"

#include <type_traits>

#include "kernels/cpu/elementwise.h"
#include "kernels/elementwise_functors.h"
#include "kernels/kernel_util.h"
#include "kernels/strided_walk.h"
#include "kernels/type_lists.h"

namespace kiln {

// Quantized values compare by their stored integers (TF's Equal and NotEqual on qint8, ...);
// found by argument-dependent lookup from the comparison functors.
template <typename Q>
requires(std::is_same_v<Q, QInt8> || std::is_same_v<Q, QUInt8> || std::is_same_v<Q, QInt16> ||
         std::is_same_v<Q, QUInt16> || std::is_same_v<Q, QInt32>) bool
operator==(const Q& a, const Q& b) {
  return a.value == b.value;
}

}  // namespace kiln

namespace kiln::exec {
namespace {

using compare::CompareState;
using compare::EqualityTypes;
using compare::SelectTypes;

// ---- comparisons -----------------------------------------------------------------------------

// Equal / NotEqual: with incompatible_shape_error=false, incompatible shapes are simply "not
// equal" (one bool), as in TF.
template <template <typename> class Fn, bool kNotEqual>
Status ComputeEquality(const KernelContext& ctx) {
  if (!ctx.state<CompareState>().incompatible_shape_error &&
      !BroadcastShapes(ctx.input(0).shape(), ctx.input(1).shape()).ok()) {
    KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape()));
    out->scalar<bool>() = kNotEqual;
    return OkStatus();
  }
  return ComputeBinary<Fn, EqualityTypes>(ctx);
}

// ---- Select, SelectV2 -----------------------------------------------------------------------

Status RunSelect(const KernelContext& ctx, const Tensor& cond, const Shape& cond_as,
                 const Tensor& t, const Tensor& e, const Shape& out_shape) {
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  const StridedPlan<4> plan = MakeBroadcastPlan<4>(out_shape, {cond_as, t.shape(), e.shape()});
  return Dispatch<SelectTypes>(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const bool* c = cond.data<bool>();
    const T* tv = t.data<T>();
    const T* ev = e.data<T>();
    T* o = out->data<T>();
    ParallelWalk(plan, ctx.threads(), 32768, [&](const auto& off, int64_t n, const auto& s) {
      for (int64_t j = 0; j < n; ++j)
        o[off[0] + j] = c[off[1] + j * s[1]] ? tv[off[2] + j * s[2]] : ev[off[3] + j * s[3]];
    });
    return OkStatus();
  });
}

Status ComputeSelect(const KernelContext& ctx) {
  const Tensor& cond = ctx.input(0);
  const Tensor& t = ctx.input(1);
  const Tensor& e = ctx.input(2);
  if (t.shape() != e.shape()) {
    return ctx.Error("inputs 't' and 'e' must have the same shape, got ", t.shape().ToString(),
                     " and ", e.shape().ToString());
  }
  Shape cond_as = cond.shape();
  if (cond.rank() == 1 && t.rank() > 1 && cond.dim(0) == t.dim(0)) {
    // A vector condition picks rows: view it as (n, 1, ..., 1).
    cond_as = Shape();
    cond_as.AddDim(cond.dim(0));
    for (int i = 1; i < t.rank(); ++i) cond_as.AddDim(1);
  } else if (cond.rank() != 0 && cond.shape() != t.shape()) {
    return ctx.Error("input 'condition' ", cond.shape().ToString(),
                     " must be a scalar, have the shape of 't' ", t.shape().ToString(),
                     ", or be a vector of its first dimension");
  }
  return RunSelect(ctx, cond, cond_as, t, e, t.shape());
}

Status ComputeSelectV2(const KernelContext& ctx) {
  const Tensor& cond = ctx.input(0);
  const Tensor& t = ctx.input(1);
  const Tensor& e = ctx.input(2);
  Result<Shape> te = BroadcastShapes(t.shape(), e.shape());
  if (!te.ok()) return ctx.Error(te.status().message());
  Result<Shape> shape = BroadcastShapes(cond.shape(), *te);
  if (!shape.ok()) return ctx.Error(shape.status().message());
  return RunSelect(ctx, cond, cond.shape(), t, e, *shape);
}

// ---- tables ----------------------------------------------------------------------------------

using LogicalTypes = TypeList<bool>;

constexpr KernelEntry kCpu[] = {
    {"Less", ComputeBinary<fn::Less, RealTypes>},
    {"LessEqual", ComputeBinary<fn::LessEqual, RealTypes>},
    {"Greater", ComputeBinary<fn::Greater, RealTypes>},
    {"GreaterEqual", ComputeBinary<fn::GreaterEqual, RealTypes>},
    {"Equal", ComputeEquality<fn::Equal, false>},
    {"NotEqual", ComputeEquality<fn::NotEqual, true>},
    {"LogicalAnd", ComputeBinary<fn::LogicalAnd, LogicalTypes>},
    {"LogicalOr", ComputeBinary<fn::LogicalOr, LogicalTypes>},
    {"LogicalNot", ComputeUnary<fn::LogicalNot, LogicalTypes>},
    {"Select", ComputeSelect},
    {"SelectV2", ComputeSelectV2},
};

}  // namespace

std::span<const KernelEntry> CompareCpuKernels() { return kCpu; }

}  // namespace kiln::exec
