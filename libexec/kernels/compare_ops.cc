// Comparisons (bool results, numpy broadcasting), logical ops, and Select / SelectV2.
#include <functional>
#include <string>
#include <type_traits>

#include "kernels/cpu/elementwise.h"
#include "kernels/elementwise_functors.h"
#include "kernels/kernel_util.h"

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

// TF's Equal and NotEqual also compare quantized values (their stored integers).
using EqualityTypes =
    TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
             uint32_t, uint64_t, bool, std::string, std::complex<float>, std::complex<double>,
             QInt8, QUInt8, QInt16, QUInt16, QInt32>;

// ---- comparisons -----------------------------------------------------------------------------

struct CompareState : OpState {
  // Equal / NotEqual with incompatible_shape_error=false give a scalar instead of failing.
  bool incompatible_shape_error = true;
};

Status PrepareCompareImpl(PrepareContext& ctx, bool equality) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(
      ctx, "T", t, equality ? std::span<const DType>(EqualityTypes::kDTypes) : RealTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "y", t));
  auto state = std::make_shared<CompareState>();
  if (equality) {
    KILN_PREPARE_ASSIGN(ctx, state->incompatible_shape_error,
                        ctx.attrs.GetBool("incompatible_shape_error", true));
  }
  const PartialShape& a = ctx.inputs[0].shape;
  const PartialShape& b = ctx.inputs[1].shape;
  Result<PartialShape> shape = BroadcastPartialShapes(a, b);
  if (!shape.ok()) {
    if (state->incompatible_shape_error) return ctx.Error(shape.status().message());
    shape = PartialShape::Scalar();  // known to be incompatible: the op gives one bool
  } else if (!state->incompatible_shape_error && !(a.IsFullyDefined() && b.IsFullyDefined())) {
    shape = PartialShape::UnknownRank();  // may turn out incompatible, and then a scalar
  }
  ctx.outputs = {TensorSpec{DType::kBool, *shape}};
  ctx.state = std::move(state);
  return OkStatus();
}
Status PrepareCompare(PrepareContext& ctx) { return PrepareCompareImpl(ctx, false); }
Status PrepareEquality(PrepareContext& ctx) { return PrepareCompareImpl(ctx, true); }

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

// ---- logical ---------------------------------------------------------------------------------

Status PrepareLogicalBinary(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", DType::kBool));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "y", DType::kBool));
  KILN_PREPARE_ASSIGN(ctx, PartialShape shape,
                      BroadcastPartialShapes(ctx.inputs[0].shape, ctx.inputs[1].shape));
  ctx.outputs = {TensorSpec{DType::kBool, shape}};
  return OkStatus();
}

Status PrepareLogicalNot(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", DType::kBool));
  ctx.outputs = {TensorSpec{DType::kBool, ctx.inputs[0].shape}};
  return OkStatus();
}

// ---- Select, SelectV2 -----------------------------------------------------------------------

using SelectTypes = EqualityTypes;

Status PrepareSelectCommon(PrepareContext& ctx, DType* t) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, *t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", *t, SelectTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "condition", DType::kBool));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "t", *t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "e", *t));
  return OkStatus();
}

// TF1 Select: t and e have one shape; condition is a scalar, has that shape, or is a vector
// whose length is t's first dim (it then picks whole rows).
Status PrepareSelect(PrepareContext& ctx) {
  DType t;
  KILN_RETURN_IF_ERROR(PrepareSelectCommon(ctx, &t));
  const PartialShape& cond = ctx.inputs[0].shape;
  Result<PartialShape> value = ctx.inputs[1].shape.MergeWith(ctx.inputs[2].shape);
  if (!value.ok()) {
    return ctx.Error("inputs 't' and 'e' must have the same shape, got ",
                     ctx.inputs[1].shape.ToPythonString(), " and ",
                     ctx.inputs[2].shape.ToPythonString());
  }
  if (!cond.unknown_rank() && cond.rank() > 0 && !value->unknown_rank()) {
    bool ok = cond.IsCompatibleWith(*value);
    if (!ok && cond.rank() == 1 && value->rank() >= 1) {
      ok = cond.dim(0) < 0 || value->dim(0) < 0 || cond.dim(0) == value->dim(0);
    }
    if (!ok) {
      return ctx.Error("input 'condition' ", cond.ToPythonString(),
                       " must be a scalar, have the shape of 't' ", value->ToPythonString(),
                       ", or be a vector of its first dimension");
    }
  }
  ctx.outputs = {TensorSpec{t, *value}};
  return OkStatus();
}

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

Status PrepareSelectV2(PrepareContext& ctx) {
  DType t;
  KILN_RETURN_IF_ERROR(PrepareSelectCommon(ctx, &t));
  KILN_PREPARE_ASSIGN(ctx, PartialShape te,
                      BroadcastPartialShapes(ctx.inputs[1].shape, ctx.inputs[2].shape));
  KILN_PREPARE_ASSIGN(ctx, PartialShape shape, BroadcastPartialShapes(ctx.inputs[0].shape, te));
  ctx.outputs = {TensorSpec{t, shape}};
  return OkStatus();
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

constexpr OpDefinition kDefs[] = {
    {"Less", "z", kOpFreshOutputs, PrepareCompare},
    {"LessEqual", "z", kOpFreshOutputs, PrepareCompare},
    {"Greater", "z", kOpFreshOutputs, PrepareCompare},
    {"GreaterEqual", "z", kOpFreshOutputs, PrepareCompare},
    {"Equal", "z", kOpFreshOutputs, PrepareEquality},
    {"NotEqual", "z", kOpFreshOutputs, PrepareEquality},
    {"LogicalAnd", "z", kOpElementwise, PrepareLogicalBinary},
    {"LogicalOr", "z", kOpElementwise, PrepareLogicalBinary},
    {"LogicalNot", "y", kOpElementwise, PrepareLogicalNot},
    {"Select", "output", kOpFreshOutputs, PrepareSelect},
    {"SelectV2", "output", kOpFreshOutputs, PrepareSelectV2},
};

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

std::span<const OpDefinition> CompareOpDefs() { return kDefs; }
std::span<const KernelEntry> CompareCpuKernels() { return kCpu; }

}  // namespace kiln::exec
