// TensorFlow's quantized-tensor conversions (a qint8, quint8, qint16, quint16 or qint32 tensor
// with a float range beside it), as TF's reference CPU kernels compute them
// (TF_ENABLE_ONEDNN_OPTS=0): QuantizeV2 and Dequantize (modes MIN_COMBINED, MIN_FIRST, SCALED;
// per tensor or per `axis` slice; HALF_AWAY_FROM_ZERO or HALF_TO_EVEN), Requantize,
// RequantizationRange, QuantizeDownAndShrinkRange, and the oneDNN build's RequantizePerChannel
// and RequantizationRangePerChannel.
// Each uses the conversion TF's kernel uses (the scalar or the "Eigen" one, quantized_util.h),
// a qint32 read through float, and denormals flushed, so the integers are TF's (checked against
// TF in tests/tf/test_quantized_ops_tf.py). The quantized arithmetic is in quantized_ops.cc, the
// quantized image ops in quantized_image_ops.cc.
// The CPU kernels are in kernels/cpu/quantized_convert_ops.cc.
#include "kernels/quantized_convert_ops.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "kernels/kernel_util.h"
#include "kernels/quantized_util.h"

namespace kiln::exec {
namespace {

using quantized_convert::DequantizeState;
using quantized_convert::QType;
using quantized_convert::QuantizeState;
using quantized_convert::RangePerChannelState;
using quantized_convert::RequantizeState;

Status ReadMode(const PrepareContext& ctx, int* mode) {
  KILN_PREPARE_ASSIGN(ctx, std::string m, ctx.attrs.GetString("mode", "MIN_COMBINED"));
  if (m == "MIN_COMBINED") {
    *mode = 0;
  } else if (m == "MIN_FIRST") {
    *mode = 1;
  } else if (m == "SCALED") {
    *mode = 2;
  } else {
    return ctx.Error("Mode string must be 'MIN_COMBINED', 'MIN_FIRST', or 'SCALED', is '", m, "'");
  }
  return OkStatus();
}

// ---- QuantizeV2 ----------------------------------------------------------------------------

Status PrepareQuantizeV2(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  auto st = std::make_shared<QuantizeState>();
  KILN_PREPARE_ASSIGN(ctx, st->type, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->type, QType::kDTypes));
  for (int i = 0; i < 3; ++i)
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i,
                                          i == 0   ? "input"
                                          : i == 1 ? "min_range"
                                                   : "max_range",
                                          DType::kFloat));
  KILN_RETURN_IF_ERROR(ReadMode(ctx, &st->mode));
  KILN_PREPARE_ASSIGN(ctx, std::string round,
                      ctx.attrs.GetString("round_mode", "HALF_AWAY_FROM_ZERO"));
  if (round != "HALF_AWAY_FROM_ZERO" && round != "HALF_TO_EVEN")
    return ctx.Error("Round mode string must be 'HALF_AWAY_FROM_ZERO' or 'HALF_TO_EVEN', is '",
                     round, "'");
  st->half_to_even = round == "HALF_TO_EVEN";
  if (st->half_to_even && st->mode != 2)
    return ctx.Error("Round mode 'HALF_TO_EVEN' only supported for mode 'SCALED', but mode is '",
                     st->mode == 0 ? "MIN_COMBINED" : "MIN_FIRST", "'.");
  KILN_PREPARE_ASSIGN(ctx, st->narrow_range, ctx.attrs.GetBool("narrow_range", false));
  KILN_PREPARE_ASSIGN(ctx, int64_t axis, ctx.attrs.GetInt("axis", -1));
  st->axis = static_cast<int>(axis);
  KILN_PREPARE_ASSIGN(ctx, st->ensure_minimum_range,
                      ctx.attrs.GetFloat("ensure_minimum_range", 0.01f));
  const PartialShape& x = ctx.inputs[0].shape;
  PartialShape range{};
  if (st->axis >= 0) {
    if (x.unknown_rank() || x.dim(st->axis) < 0) {
      range = PartialShape::UnknownRank();
    } else if (x.dim(st->axis) != 1) {
      range = PartialShape{x.dim(st->axis)};
    }
  }
  ctx.outputs = {TensorSpec{st->type, x}, TensorSpec{DType::kFloat, range},
                 TensorSpec{DType::kFloat, range}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- Dequantize ----------------------------------------------------------------------------

Status PrepareDequantize(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  auto st = std::make_shared<DequantizeState>();
  KILN_PREPARE_ASSIGN(ctx, st->type, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->type, QType::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", st->type));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "min_range", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "max_range", DType::kFloat));
  KILN_RETURN_IF_ERROR(ReadMode(ctx, &st->mode));
  KILN_PREPARE_ASSIGN(ctx, st->out, ctx.attrs.GetType("dtype", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "dtype", st->out, {DType::kFloat, DType::kBFloat16}));
  if (st->out == DType::kBFloat16 && st->mode != 0)
    return ctx.Error("When output type is bfloat16, Mode string must be 'MIN_COMBINED'");
  KILN_PREPARE_ASSIGN(ctx, st->narrow_range, ctx.attrs.GetBool("narrow_range", false));
  KILN_PREPARE_ASSIGN(ctx, int64_t axis, ctx.attrs.GetInt("axis", -1));
  if (axis < -1) return ctx.Error("axis should be at least -1, got ", axis);
  st->axis = static_cast<int>(axis);
  ctx.outputs = {TensorSpec{st->out, ctx.inputs[0].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- Requantize, RequantizationRange, QuantizeDownAndShrinkRange ---------------------------

Status PrepareRequantize(PrepareContext& ctx) {
  const bool shrink = ctx.op == "QuantizeDownAndShrinkRange";
  const bool per_channel = ctx.op == "RequantizePerChannel";
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(shrink ? 3 : 5));
  auto st = std::make_shared<RequantizeState>();
  KILN_PREPARE_ASSIGN(ctx, DType in,
                      ctx.attrs.GetType(per_channel ? "T" : "Tinput", DType::kQInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, per_channel ? "T" : "Tinput", in, {DType::kQInt32}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", DType::kQInt32));
  for (int i = 1; i < static_cast<int>(ctx.inputs.size()); ++i)
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, "range", DType::kFloat));
  KILN_PREPARE_ASSIGN(ctx, st->out, ctx.attrs.GetType("out_type", DType::kQUInt8));
  if (shrink) {
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "out_type", st->out, {DType::kQUInt8}));
  } else {
    KILN_RETURN_IF_ERROR(
        ExpectAttrDTypeIn(ctx, "out_type", st->out, {DType::kQUInt8, DType::kQInt8}));
  }
  ctx.outputs = {TensorSpec{st->out, ctx.inputs[0].shape},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

Status PrepareRequantizationRange(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", DType::kQInt32));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "input_min", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "input_max", DType::kFloat));
  ctx.outputs = {TensorSpec{DType::kFloat, PartialShape::Scalar()},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()}};
  return OkStatus();
}

Status PrepareRequantizationRangePerChannel(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(PrepareRequantizationRange(ctx));
  auto st = std::make_shared<RangePerChannelState>();
  const tensorflow::AttrValue* clip = ctx.attrs.Find("clip_value_max");
  if (clip == nullptr) return ctx.Error("attr 'clip_value_max' is missing");
  KILN_PREPARE_ASSIGN(ctx, st->clip, ctx.attrs.GetFloat("clip_value_max", 0.0f));
  ctx.state = std::move(st);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"QuantizeV2", kQOut, kOpFreshOutputs, PrepareQuantizeV2},
    {"Dequantize", "output", kOpFreshOutputs, PrepareDequantize},
    {"Requantize", kQOut, kOpFreshOutputs, PrepareRequantize},
    {"RequantizePerChannel", kQOut, kOpFreshOutputs, PrepareRequantize},
    {"QuantizeDownAndShrinkRange", kQOut, kOpFreshOutputs, PrepareRequantize},
    {"RequantizationRange", "output_min,output_max", kOpFreshOutputs, PrepareRequantizationRange},
    {"RequantizationRangePerChannel", "output_min,output_max", kOpFreshOutputs,
     PrepareRequantizationRangePerChannel},
};

}  // namespace

std::span<const OpDefinition> QuantizedConvertOpDefs() { return kDefs; }
}  // namespace kiln::exec
