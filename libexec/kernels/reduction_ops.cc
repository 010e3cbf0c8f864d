// Reductions over a set of axes (Sum, Mean, Max, Min, Prod, EuclideanNorm, All, Any) and
// ArgMax / ArgMin: definitions. The CPU kernels are in kernels/cpu/reduction_ops.cc.
#include "kernels/reduction_ops.h"

#include <array>
#include <initializer_list>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using reduction::ReducedDims;
using reduction::ReduceState;
using reduction::ScalarIndex;

// ---- Prepare ---------------------------------------------------------------------------------

constexpr std::initializer_list<DType> kIndexDTypes = {DType::kInt32, DType::kInt64};

Status PrepareReduce(PrepareContext& ctx, std::span<const DType> allowed, bool has_t) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  DType t = DType::kBool;
  if (has_t) {
    KILN_PREPARE_ASSIGN(ctx, t, ctx.attrs.GetType("T"));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, allowed));
  }
  KILN_PREPARE_ASSIGN(ctx, DType tidx, ctx.attrs.GetType("Tidx", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tidx", tidx, kIndexDTypes));
  auto state = std::make_shared<ReduceState>();
  KILN_PREPARE_ASSIGN(ctx, state->keep_dims, ctx.attrs.GetBool("keep_dims", false));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "reduction_indices", tidx));
  const PartialShape& axes_shape = ctx.inputs[1].shape;
  if (axes_shape.rank() > 1) {
    return ctx.Error("input 'reduction_indices' must be a scalar or a vector, got shape ",
                     axes_shape.ToPythonString());
  }
  const PartialShape& in = ctx.inputs[0].shape;
  PartialShape out = PartialShape::UnknownRank();
  const Tensor* axes = ctx.constant_inputs.size() > 1 ? ctx.constant_inputs[1] : nullptr;
  if (axes != nullptr && !in.unknown_rank()) {
    Result<std::array<bool, kMaxRank>> reduced = ReducedDims(*axes, in.rank());
    if (!reduced.ok())
      return ctx.Error(reduced.status().message(), " (input shape ", in.ToPythonString(), ")");
    std::vector<int64_t> dims;
    for (int i = 0; i < in.rank(); ++i) {
      if (!(*reduced)[i]) {
        dims.push_back(in.dim(i));
      } else if (state->keep_dims) {
        dims.push_back(1);
      }
    }
    KILN_PREPARE_ASSIGN(ctx, out, PartialShape::FromDims(dims));
  } else if (!in.unknown_rank() && state->keep_dims) {
    std::vector<int64_t> dims(in.rank(), -1);  // rank stays; which dims become 1 is unknown
    KILN_PREPARE_ASSIGN(ctx, out, PartialShape::FromDims(dims));
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::move(state);
  return OkStatus();
}
Status PrepareReduceReal(PrepareContext& ctx) {
  return PrepareReduce(ctx, RealTypes::kDTypes, true);
}
// Sum, Mean, Prod, EuclideanNorm: complex too.
Status PrepareReduceNumber(PrepareContext& ctx) {
  return PrepareReduce(ctx, NumberTypes::kDTypes, true);
}
Status PrepareReduceBool(PrepareContext& ctx) { return PrepareReduce(ctx, {}, false); }

// ---- ArgMax, ArgMin --------------------------------------------------------------------------

template <bool kMax>
Status PrepareArg(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, RealAndBoolTypes::kDTypes));
  KILN_PREPARE_ASSIGN(ctx, DType tidx, ctx.attrs.GetType("Tidx", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tidx", tidx, kIndexDTypes));
  KILN_PREPARE_ASSIGN(ctx, DType out_type, ctx.attrs.GetType("output_type", DType::kInt64));
  // TF's CPU kernels: ArgMax also writes int16 / uint16 indices.
  if (kMax) {
    KILN_RETURN_IF_ERROR(
        ExpectAttrDTypeIn(ctx, "output_type", out_type,
                          {DType::kInt16, DType::kUInt16, DType::kInt32, DType::kInt64}));
  } else {
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "output_type", out_type, kIndexDTypes));
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "dimension", tidx));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "dimension", 0));
  const PartialShape& in = ctx.inputs[0].shape;
  if (in.rank() == 0) return ctx.Error("input 'input' must have rank >= 1, got a scalar");
  PartialShape out = PartialShape::UnknownRank();
  const Tensor* dim = ctx.constant_inputs.size() > 1 ? ctx.constant_inputs[1] : nullptr;
  if (!in.unknown_rank()) {
    std::vector<int64_t> dims(in.rank() - 1, -1);
    if (dim != nullptr) {
      const int64_t axis = ScalarIndex(*dim);
      if (axis < -in.rank() || axis >= in.rank()) {
        return ctx.Error("input 'dimension' is ", axis, ", expected a value in [", -in.rank(), ", ",
                         in.rank(), ") for input shape ", in.ToPythonString());
      }
      const int64_t a = axis < 0 ? axis + in.rank() : axis;
      dims.clear();
      for (int i = 0; i < in.rank(); ++i) {
        if (i != a) dims.push_back(in.dim(i));
      }
    }
    KILN_PREPARE_ASSIGN(ctx, out, PartialShape::FromDims(dims));
  }
  ctx.outputs = {TensorSpec{out_type, out}};
  ctx.state = std::make_shared<TypedOpState<DType>>(out_type);
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"Sum", "output", kOpFreshOutputs, PrepareReduceNumber},
    {"Mean", "output", kOpFreshOutputs, PrepareReduceNumber},
    {"Max", "output", kOpFreshOutputs, PrepareReduceReal},
    {"Min", "output", kOpFreshOutputs, PrepareReduceReal},
    {"Prod", "output", kOpFreshOutputs, PrepareReduceNumber},
    {"EuclideanNorm", "output", kOpFreshOutputs, PrepareReduceNumber},
    {"All", "output", kOpFreshOutputs, PrepareReduceBool},
    {"Any", "output", kOpFreshOutputs, PrepareReduceBool},
    {"ArgMax", "output", kOpFreshOutputs, PrepareArg<true>},
    {"ArgMin", "output", kOpFreshOutputs, PrepareArg<false>},
};

}  // namespace

std::span<const OpDefinition> ReductionOpDefs() { return kDefs; }

}  // namespace kiln::exec
