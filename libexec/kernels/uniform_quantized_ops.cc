// TF's uniform quantization ops (tensorflow/core/kernels/uniform_quant_ops): an integer q means
// (q - zero_point) * scale, per tensor or per `quantization_axis` slice. UniformQuantize,
// UniformDequantize, UniformRequantize (through TF's fixed-point multiplier and shift) and
// UniformQuantizedClipByValue, with TF's rounding (half toward +inf) and its casts (a float
// past int32, or NaN, becomes INT32_MIN before clamping); UniformQuantizedAdd (both operands
// requantized to the output's scales, then added) and UniformQuantizedDot and its Hybrid form
// (float lhs quantized per row, asymmetric int8). UniformQuantizedConvolution and its Hybrid
// form are in uniform_quantized_conv_ops.cc.
// The CPU kernels are in kernels/cpu/uniform_quantized_ops.cc.
#include "kernels/uniform_quantized_ops.h"

#include <memory>
#include <utility>

#include "kernels/kernel_util.h"
#include "kernels/uniform_quantized_util.h"

namespace kiln::exec {
namespace {

using uniform_quantized::AddState;
using uniform_quantized::DotState;
using uniform_quantized::UniformState;
using uniform_quantized::UniformTypes;

// ---- UniformQuantize, UniformDequantize ----------------------------------------------------

template <bool kQuantize>
Status PrepareUniformConvert(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  auto st = std::make_shared<UniformState>();
  KILN_PREPARE_ASSIGN(ctx, st->in, ctx.attrs.GetType("Tin"));
  KILN_PREPARE_ASSIGN(ctx, st->out, ctx.attrs.GetType("Tout"));
  const DType q = kQuantize ? st->out : st->in;
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, kQuantize ? "Tin" : "Tout",
                                         kQuantize ? st->in : st->out, {DType::kFloat}));
  KILN_RETURN_IF_ERROR(
      ExpectAttrDTypeIn(ctx, kQuantize ? "Tout" : "Tin", q, UniformTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", st->in));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "scales", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "zero_points", DType::kInt32));
  KILN_RETURN_IF_ERROR(ReadUniformSpec(ctx, "", &st->spec));
  ctx.outputs = {TensorSpec{st->out, ctx.inputs[0].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- UniformRequantize ---------------------------------------------------------------------

Status PrepareUniformRequantize(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(5));
  auto st = std::make_shared<UniformState>();
  KILN_PREPARE_ASSIGN(ctx, st->in, ctx.attrs.GetType("Tin"));
  KILN_PREPARE_ASSIGN(ctx, st->out, ctx.attrs.GetType("Tout"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tin", st->in, {DType::kQInt8, DType::kQInt32}));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tout", st->out, {DType::kQInt8, DType::kQInt32}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", st->in));
  for (int i : {1, 3}) KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, "scales", DType::kFloat));
  for (int i : {2, 4}) KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, "zero_points", DType::kInt32));
  KILN_RETURN_IF_ERROR(ReadUniformSpec(ctx, "input_", &st->spec));
  KILN_RETURN_IF_ERROR(ReadUniformSpec(ctx, "output_", &st->out_spec));
  if (st->spec.axis >= 0 && st->out_spec.axis >= 0 && st->spec.axis != st->out_spec.axis)
    return ctx.Error("If input and output is both per-axis quantized, the quantization axis ",
                     "must be same.");
  ctx.outputs = {TensorSpec{st->out, ctx.inputs[0].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- UniformQuantizedClipByValue -----------------------------------------------------------

Status PrepareUniformClip(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(5));
  auto st = std::make_shared<UniformState>();
  KILN_PREPARE_ASSIGN(ctx, st->in, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->in, {DType::kQInt32}));
  for (int i = 0; i < 3; ++i) KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, "operand", st->in));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "scales", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 4, "zero_points", DType::kInt32));
  KILN_RETURN_IF_ERROR(ReadUniformSpec(ctx, "", &st->spec));
  ctx.outputs = {TensorSpec{st->in, ctx.inputs[0].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- UniformQuantizedAdd -------------------------------------------------------------------

Status PrepareUniformAdd(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(8));
  auto st = std::make_shared<AddState>();
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, {DType::kQInt32}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "lhs", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "rhs", t));
  for (int i = 2; i < 8; i += 2) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, "scales", DType::kFloat));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i + 1, "zero_points", DType::kInt32));
  }
  KILN_RETURN_IF_ERROR(ReadUniformSpec(ctx, "lhs_", &st->lhs));
  KILN_RETURN_IF_ERROR(ReadUniformSpec(ctx, "rhs_", &st->rhs));
  KILN_RETURN_IF_ERROR(ReadUniformSpec(ctx, "output_", &st->out));
  auto shape = BroadcastPartialShapes(ctx.inputs[0].shape, ctx.inputs[1].shape);
  if (!shape.ok()) return ctx.Error(shape.status().message());
  ctx.outputs = {TensorSpec{t, *shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- UniformQuantizedDot, UniformQuantizedDotHybrid ----------------------------------------

Status PrepareUniformDot(PrepareContext& ctx) {
  auto st = std::make_shared<DotState>();
  st->hybrid = ctx.op == "UniformQuantizedDotHybrid";
  KILN_RETURN_IF_ERROR(ReadProductOperands(ctx, st->hybrid, &st->lhs, &st->rhs, &st->out));
  if (!st->hybrid && st->out.axis != -1 && st->out.axis != 1)
    return ctx.Error("output_quantization_axis Attr must be 1 (per-channel) or -1 (per-tensor).");
  if (st->rhs.axis != -1 && st->rhs.axis != 1)
    return ctx.Error("rhs_quantization_axis Attr must be 1 (per-channel) or -1 (per-tensor).");
  const PartialShape& a = ctx.inputs[0].shape;
  const PartialShape& b = ctx.inputs[1].shape;
  ctx.outputs = {
      TensorSpec{st->hybrid ? DType::kFloat : DType::kQInt32,
                 PartialShape{a.unknown_rank() ? -1 : a.dim(0), b.unknown_rank() ? -1 : b.dim(1)}}};
  ctx.state = std::move(st);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"UniformQuantize", "output", kOpFreshOutputs, PrepareUniformConvert<true>},
    {"UniformDequantize", "output", kOpFreshOutputs, PrepareUniformConvert<false>},
    {"UniformRequantize", "output", kOpFreshOutputs, PrepareUniformRequantize},
    {"UniformQuantizedClipByValue", "output", kOpFreshOutputs, PrepareUniformClip},
    {"UniformQuantizedAdd", "output", kOpFreshOutputs, PrepareUniformAdd},
    {"UniformQuantizedDot", "output", kOpFreshOutputs, PrepareUniformDot},
    {"UniformQuantizedDotHybrid", "output", kOpFreshOutputs, PrepareUniformDot},
};

}  // namespace

std::span<const OpDefinition> UniformQuantizedOpDefs() { return kDefs; }
}  // namespace kiln::exec
