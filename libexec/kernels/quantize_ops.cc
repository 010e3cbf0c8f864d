// Fake quantisation (quantisation-aware training graphs and the models exported from them), in
// float arithmetic exactly as TF's kernels:
//  - FakeQuantWithMinMaxArgs (range in attrs), FakeQuantWithMinMaxVars (range in scalar inputs)
//    and FakeQuantWithMinMaxVarsPerChannel (a range per last-dimension channel): the range is
//    nudged so that 0 is exactly representable, values are clamped to it and rounded to one of
//    2^num_bits (or 2^num_bits - 1, narrow_range) levels;
//  - QuantizeAndDequantizeV2/V3/V4: a scale that keeps 0 fixed and fits [min, max] (given, or
//    the tensor's own) into the signed or unsigned num_bits range, per tensor or per `axis`
//    channel, rounding half to even (or half up). float32 and float64; half-precision graphs
//    run them in float32 (executor/half_precision.h);
//  - the gradients of both (straight-through inside the range), as TF's kernels compute them.
// The CPU kernels are in kernels/cpu/quantize_ops.cc.
#include "kernels/quantize_ops.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "kernels/elementwise.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using quantize_ops::FakeQuantState;
using quantize_ops::QdqState;

Status ReadQuantAttrs(PrepareContext& ctx, FakeQuantState* st) {
  KILN_PREPARE_ASSIGN(ctx, int64_t bits, ctx.attrs.GetInt("num_bits", 8));
  if (bits < 2 || bits > 16) {
    return ctx.Error("attr 'num_bits' is ", bits, ", expected a value in [2, 16]");
  }
  KILN_PREPARE_ASSIGN(ctx, bool narrow, ctx.attrs.GetBool("narrow_range", false));
  st->range.quant_min = narrow ? 1 : 0;
  st->range.quant_max = (1 << bits) - 1;
  return OkStatus();
}

// Args and its gradient: the range in attrs; the output has the shape of input `x`.
Status PrepareArgsRange(PrepareContext& ctx, int x) {
  auto st = std::make_shared<FakeQuantState>();
  KILN_RETURN_IF_ERROR(ReadQuantAttrs(ctx, st.get()));
  KILN_PREPARE_ASSIGN(ctx, st->min, ctx.attrs.GetFloat("min", -6.0f));
  KILN_PREPARE_ASSIGN(ctx, st->max, ctx.attrs.GetFloat("max", 6.0f));
  if (!(st->min < st->max)) {
    return ctx.Error("attrs 'min' and 'max': min must be below max, got ", st->min,
                     " >= ", st->max);
  }
  ctx.outputs = {TensorSpec{DType::kFloat, ctx.inputs[x].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

Status PrepareFakeQuantArgs(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "inputs", DType::kFloat));
  return PrepareArgsRange(ctx, 0);
}

Status PrepareFakeQuantVars(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "inputs", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "min", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "max", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "min", 0));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "max", 0));
  auto st = std::make_shared<FakeQuantState>();
  KILN_RETURN_IF_ERROR(ReadQuantAttrs(ctx, st.get()));
  ctx.outputs = {TensorSpec{DType::kFloat, ctx.inputs[0].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- FakeQuantWithMinMaxVarsPerChannel ----------------------------------------------------

Status PrepareFakeQuantPerChannel(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "inputs", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "min", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "max", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "min", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "max", 1));
  const PartialShape& x = ctx.inputs[0].shape;
  if (!x.unknown_rank() && (x.rank() < 1 || x.rank() > 4))
    return ctx.Error("input 'inputs' must have rank 1 to 4, got ", x.ToPythonString());
  auto st = std::make_shared<FakeQuantState>();
  KILN_RETURN_IF_ERROR(ReadQuantAttrs(ctx, st.get()));
  ctx.outputs = {TensorSpec{DType::kFloat, x}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- QuantizeAndDequantizeV2 / V3 / V4 ---------------------------------------------------

template <bool kV3>
Status PrepareQdq(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(kV3 ? 4 : 3));
  auto st = std::make_shared<QdqState>();
  KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->dtype, {DType::kFloat, DType::kDouble}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", st->dtype));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "input_min", st->dtype));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "input_max", st->dtype));
  KILN_PREPARE_ASSIGN(ctx, st->signed_input, ctx.attrs.GetBool("signed_input", true));
  KILN_PREPARE_ASSIGN(ctx, st->range_given, ctx.attrs.GetBool("range_given", kV3));
  KILN_PREPARE_ASSIGN(ctx, st->narrow_range, ctx.attrs.GetBool("narrow_range", false));
  KILN_PREPARE_ASSIGN(ctx, int64_t axis, ctx.attrs.GetInt("axis", -1));
  st->axis = static_cast<int>(axis);
  if constexpr (kV3) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "num_bits", DType::kInt32));
    st->bits_input = true;
  } else {
    KILN_PREPARE_ASSIGN(ctx, int64_t bits, ctx.attrs.GetInt("num_bits", 8));
    st->num_bits = static_cast<int>(bits);
    KILN_PREPARE_ASSIGN(ctx, std::string mode, ctx.attrs.GetString("round_mode", "HALF_TO_EVEN"));
    if (mode != "HALF_TO_EVEN" && mode != "HALF_UP")
      return ctx.Error("attr 'round_mode' is '", mode, "', expected HALF_TO_EVEN or HALF_UP");
    st->half_up = mode == "HALF_UP";
  }
  const PartialShape& x = ctx.inputs[0].shape;
  if (st->axis < -1 || (!x.unknown_rank() && st->axis >= x.rank()))
    return ctx.Error("attr 'axis' is ", st->axis, ", expected -1 or a dimension of 'input' ",
                     x.ToPythonString());
  ctx.outputs = {TensorSpec{st->dtype, x}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- Gradients: straight-through inside the (nudged) range -------------------------------

Status ExpectSameShapes(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "gradients", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "inputs", DType::kFloat));
  if (!ctx.inputs[0].shape.IsCompatibleWith(ctx.inputs[1].shape))
    return ctx.Error("inputs 'gradients' ", ctx.inputs[0].shape.ToPythonString(), " and 'inputs' ",
                     ctx.inputs[1].shape.ToPythonString(), " must have the same shape");
  return OkStatus();
}

Status PrepareFakeQuantArgsGrad(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_RETURN_IF_ERROR(ExpectSameShapes(ctx));
  return PrepareArgsRange(ctx, 1);
}

// Vars (scalar min/max) and PerChannel (a min/max per last-dimension channel).
template <bool kPerChannel>
Status PrepareFakeQuantVarsGrad(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  KILN_RETURN_IF_ERROR(ExpectSameShapes(ctx));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "min", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "max", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "min", kPerChannel ? 1 : 0));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 3, "max", kPerChannel ? 1 : 0));
  auto st = std::make_shared<FakeQuantState>();
  KILN_RETURN_IF_ERROR(ReadQuantAttrs(ctx, st.get()));
  const PartialShape& x = ctx.inputs[1].shape;
  ctx.outputs = {TensorSpec{DType::kFloat, x}, TensorSpec{DType::kFloat, ctx.inputs[2].shape},
                 TensorSpec{DType::kFloat, ctx.inputs[3].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

// QuantizeAndDequantizeV4Grad: the gradient inside [input_min, input_max] (per `axis` channel
// or for the whole tensor); TF gives the range's own gradients as zeros.
Status PrepareQdqGrad(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  auto st = std::make_shared<QdqState>();
  KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->dtype, {DType::kFloat, DType::kDouble}));
  constexpr const char* kNames[] = {"gradients", "input", "input_min", "input_max"};
  for (int i = 0; i < 4; ++i) KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, kNames[i], st->dtype));
  KILN_PREPARE_ASSIGN(ctx, int64_t axis, ctx.attrs.GetInt("axis", -1));
  st->axis = static_cast<int>(axis);
  const PartialShape& x = ctx.inputs[1].shape;
  if (st->axis < -1 || (!x.unknown_rank() && st->axis >= x.rank()))
    return ctx.Error("attr 'axis' is ", st->axis, ", expected -1 or a dimension of 'input' ",
                     x.ToPythonString());
  ctx.outputs = {TensorSpec{st->dtype, x}, TensorSpec{st->dtype, ctx.inputs[2].shape},
                 TensorSpec{st->dtype, ctx.inputs[3].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"FakeQuantWithMinMaxArgs", "outputs", kOpElementwise, PrepareFakeQuantArgs},
    {"FakeQuantWithMinMaxVars", "outputs", kOpElementwise, PrepareFakeQuantVars},
    {"FakeQuantWithMinMaxVarsPerChannel", "outputs", kOpElementwise, PrepareFakeQuantPerChannel},
    {"QuantizeAndDequantizeV2", "output", kOpFreshOutputs, PrepareQdq<false>},
    {"QuantizeAndDequantizeV3", "output", kOpFreshOutputs, PrepareQdq<true>},
    {"QuantizeAndDequantizeV4", "output", kOpFreshOutputs, PrepareQdq<false>},
    {"FakeQuantWithMinMaxArgsGradient", "backprops", kOpFreshOutputs, PrepareFakeQuantArgsGrad},
    {"FakeQuantWithMinMaxVarsGradient", "backprops_wrt_input,backprop_wrt_min,backprop_wrt_max",
     kOpFreshOutputs, PrepareFakeQuantVarsGrad<false>},
    {"FakeQuantWithMinMaxVarsPerChannelGradient",
     "backprops_wrt_input,backprop_wrt_min,backprop_wrt_max", kOpFreshOutputs,
     PrepareFakeQuantVarsGrad<true>},
    {"QuantizeAndDequantizeV4Grad", "input_backprop,input_min_backprop,input_max_backprop",
     kOpFreshOutputs, PrepareQdqGrad},
};

}  // namespace

std::span<const OpDefinition> QuantizeOpDefs() { return kDefs; }
}  // namespace kiln::exec
