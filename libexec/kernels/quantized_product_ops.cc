// Quantized products as TensorFlow's oneDNN build runs them (its graph rewrite turns these into
// _MklQuantized* kernels): QuantizedConv2D{PerChannel, AndRelu, AndRequantize,
// AndReluAndRequantize, WithBias, WithBiasAndRelu, WithBiasAndRequantize,
// WithBiasAndReluAndRequantize, WithBiasSumAndRelu, WithBiasSumAndReluAndRequantize,
// WithBiasSignedSumAndReluAndRequantize}, QuantizedDepthwiseConv2D{, WithBias, WithBiasAndRelu,
// WithBiasAndReluAndRequantize} and QuantizedMatMulWithBias{, AndRelu, AndRequantize,
// AndReluAndRequantize, AndDequantize}.
// The CPU kernels are in kernels/cpu/quantized_product_ops.cc.
#include "kernels/quantized_product_ops.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/quantized_util.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

using quantized_product::ConvForm;
using quantized_product::MatMulForm;
using quantized_product::QConvState;
using quantized_product::QMatMulState;

// ---- Convolutions --------------------------------------------------------------------------

constexpr ConvForm kConvForms[] = {
    {"QuantizedConv2DPerChannel", false, false, false, false, 0, DType::kQInt32},
    {"QuantizedConv2DAndRelu", false, true, false, false, 0, DType::kQInt32},
    {"QuantizedConv2DAndRequantize", false, false, true, false, 0, DType::kQInt8},
    {"QuantizedConv2DAndReluAndRequantize", false, true, true, false, 0, DType::kQUInt8},
    {"QuantizedConv2DWithBias", true, false, false, false, 0, DType::kQInt32},
    {"QuantizedConv2DWithBiasAndRelu", true, true, false, false, 0, DType::kQInt32},
    {"QuantizedConv2DWithBiasAndRequantize", true, false, true, false, 0, DType::kQInt8},
    {"QuantizedConv2DWithBiasAndReluAndRequantize", true, true, true, false, 0, DType::kQUInt8},
    {"QuantizedConv2DWithBiasSumAndRelu", true, true, false, false, 1, DType::kQInt32},
    {"QuantizedConv2DWithBiasSumAndReluAndRequantize", true, true, true, false, 2, DType::kQUInt8},
    {"QuantizedConv2DWithBiasSignedSumAndReluAndRequantize", true, true, true, false, 2,
     DType::kQUInt8},
    {"QuantizedDepthwiseConv2D", false, false, false, true, 0, DType::kQInt32},
    {"QuantizedDepthwiseConv2DWithBias", true, false, false, true, 0, DType::kQInt32},
    {"QuantizedDepthwiseConv2DWithBiasAndRelu", true, true, false, true, 0, DType::kQInt32},
    {"QuantizedDepthwiseConv2DWithBiasAndReluAndRequantize", true, true, true, true, 0,
     DType::kQUInt8},
};

const ConvForm* FindConvForm(std::string_view op) {
  for (const ConvForm& f : kConvForms)
    if (f.op == op) return &f;
  return nullptr;
}

Status PrepareQConv(PrepareContext& ctx) {
  auto st = std::make_shared<QConvState>();
  st->form = FindConvForm(ctx.op);
  if (st->form == nullptr) return ctx.Error("not a quantized convolution");
  const ConvForm& f = *st->form;
  int next = 2;
  if (f.bias) st->bias = next++;
  st->min_input = next;
  st->min_filter = next + 2;
  next += 4;
  if (f.requantize) {
    st->min_freezed = next;
    next += 2;
  }
  if (f.sum == 1) st->summand = next++;
  if (f.sum == 2) {
    st->summand = next;
    st->min_summand = next + 1;
    next += 3;
  }
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(next));
  KILN_PREPARE_ASSIGN(ctx, st->input_type, ctx.attrs.GetType("Tinput"));
  KILN_RETURN_IF_ERROR(
      ExpectAttrDTypeIn(ctx, "Tinput", st->input_type, {DType::kQUInt8, DType::kQInt8}));
  KILN_PREPARE_ASSIGN(ctx, DType filter_type, ctx.attrs.GetType("Tfilter"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tfilter", filter_type, {DType::kQInt8}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", st->input_type));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "filter", DType::kQInt8));
  KILN_PREPARE_ASSIGN(ctx, st->out_type, ctx.attrs.GetType("out_type", f.default_out));
  if (f.requantize) {
    KILN_RETURN_IF_ERROR(
        ExpectAttrDTypeIn(ctx, "out_type", st->out_type, {DType::kQUInt8, DType::kQInt8}));
  } else {
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "out_type", st->out_type, {DType::kQInt32}));
  }
  if (f.bias) {
    KILN_PREPARE_ASSIGN(ctx, st->bias_type, ctx.attrs.GetType("Tbias", DType::kFloat));
    KILN_RETURN_IF_ERROR(
        ExpectAttrDTypeIn(ctx, "Tbias", st->bias_type, {DType::kFloat, DType::kQInt32}));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, st->bias, "bias", st->bias_type));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, st->bias, "bias", 1));
  }
  for (int i = st->min_input; i < st->min_input + 4; ++i)
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, "min/max", DType::kFloat));
  if (f.sum == 1)
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, st->summand, "summand", DType::kFloat));
  if (f.sum == 2) {
    const DType want =
        ctx.op.find("SignedSum") != std::string_view::npos ? DType::kQInt8 : DType::kQUInt8;
    KILN_PREPARE_ASSIGN(ctx, st->summand_type, ctx.attrs.GetType("Tsummand", want));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tsummand", st->summand_type, {want}));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, st->summand, "summand", st->summand_type));
  }
  KILN_PREPARE_ASSIGN(ctx, std::vector<int64_t> strides, ctx.attrs.GetIntList("strides"));
  KILN_RETURN_IF_ERROR(ReadSpatialList(ctx, "strides", strides, &st->strides));
  KILN_PREPARE_ASSIGN(ctx, std::vector<int64_t> dilations,
                      ctx.attrs.GetIntList("dilations", {1, 1, 1, 1}));
  KILN_RETURN_IF_ERROR(ReadSpatialList(ctx, "dilations", dilations, &st->dilations));
  KILN_PREPARE_ASSIGN(ctx, std::string padding, ctx.attrs.GetString("padding"));
  if (padding != "SAME" && padding != "VALID")
    return ctx.Error("attr 'padding' is '", padding, "', expected SAME or VALID");
  st->padding = padding == "SAME" ? WindowPadding::kSame : WindowPadding::kValid;
  KILN_PREPARE_ASSIGN(ctx, std::vector<int64_t> pads, ctx.attrs.GetIntList("padding_list", {}));
  if (!pads.empty() && pads.size() != 8)
    return ctx.Error("attr 'padding_list' must contain 8 values, got ", pads.size());
  // Any non-zero entry overrides `padding` (TF's PadWithConvFusion); NHWC order.
  st->explicit_pads = std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p != 0; });
  if (st->explicit_pads) {
    for (int64_t p : pads)
      if (p < 0) return ctx.Error("attr 'padding_list' entries must not be negative");
    st->pad_before = {pads[2], pads[4]};
    st->pad_after = {pads[3], pads[5]};
  }
  // Output shape: NHWC; the depth from the filter (depthwise: in_c * multiplier).
  const PartialShape& x = ctx.inputs[0].shape;
  const PartialShape& w = ctx.inputs[1].shape;
  if (!x.unknown_rank() && x.rank() != 4)
    return ctx.Error("input must be 4-dimensional, got ", x.ToPythonString());
  if (!w.unknown_rank() && w.rank() != 4)
    return ctx.Error("filter must be 4-dimensional, got ", w.ToPythonString());
  PartialShape out = UnknownDims(4);
  if (!x.unknown_rank()) out = PartialShape{x.dim(0), -1, -1, -1};
  if (!w.unknown_rank() && (!f.depthwise || w.dim(3) >= 0) && w.dim(3) >= 0)
    out = PartialShape{out.dim(0), -1, -1,
                       f.depthwise ? (w.dim(2) < 0 ? -1 : w.dim(2) * w.dim(3)) : w.dim(3)};
  const bool per_channel_range = !ctx.inputs[st->min_filter].shape.unknown_rank() &&
                                 ctx.inputs[st->min_filter].shape.rank() == 1;
  const PartialShape range_shape = f.requantize || !per_channel_range
                                       ? PartialShape::Scalar()
                                       : PartialShape{ctx.inputs[st->min_filter].shape.dim(0)};
  ctx.outputs = {TensorSpec{st->out_type, out}, TensorSpec{DType::kFloat, range_shape},
                 TensorSpec{DType::kFloat, range_shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- Matrix products -----------------------------------------------------------------------

constexpr MatMulForm kMatMulForms[] = {
    {"QuantizedMatMulWithBias", false, false, false, DType::kQInt32},
    {"QuantizedMatMulWithBiasAndRelu", true, false, false, DType::kQInt32},
    {"QuantizedMatMulWithBiasAndRequantize", false, true, false, DType::kQUInt8},
    {"QuantizedMatMulWithBiasAndReluAndRequantize", true, true, false, DType::kQUInt8},
    {"QuantizedMatMulWithBiasAndDequantize", false, false, true, DType::kFloat},
};

Status PrepareQMatMul(PrepareContext& ctx) {
  auto st = std::make_shared<QMatMulState>();
  for (const MatMulForm& f : kMatMulForms)
    if (f.op == ctx.op) st->form = f;
  const MatMulForm& f = st->form;
  const bool freezed = f.requantize || f.dequantize;
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(freezed ? 9 : 7));
  KILN_PREPARE_ASSIGN(ctx, st->a_type, ctx.attrs.GetType("T1"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T1", st->a_type, {DType::kQUInt8}));
  KILN_PREPARE_ASSIGN(ctx, DType b_type, ctx.attrs.GetType("T2"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T2", b_type, {DType::kQInt8}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "a", st->a_type));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "b", DType::kQInt8));
  KILN_PREPARE_ASSIGN(ctx, st->bias_type, ctx.attrs.GetType("Tbias", DType::kFloat));
  KILN_RETURN_IF_ERROR(
      ExpectAttrDTypeIn(ctx, "Tbias", st->bias_type, {DType::kFloat, DType::kQInt32}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "bias", st->bias_type));
  for (int i = 3; i < static_cast<int>(ctx.inputs.size()); ++i)
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, "min/max", DType::kFloat));
  KILN_PREPARE_ASSIGN(ctx, st->out_type, ctx.attrs.GetType("Toutput", f.default_out));
  if (f.dequantize) {
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Toutput", st->out_type, {DType::kFloat}));
  } else if (f.requantize) {
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Toutput", st->out_type, {DType::kQUInt8}));
  } else {
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Toutput", st->out_type, {DType::kQInt32}));
  }
  KILN_PREPARE_ASSIGN(ctx, std::string mode, ctx.attrs.GetString("input_quant_mode", "MIN_FIRST"));
  if (mode != "MIN_FIRST" && mode != "SCALED")
    return ctx.Error("attr 'input_quant_mode' is '", mode, "', expected MIN_FIRST or SCALED");
  st->min_first = mode == "MIN_FIRST";
  KILN_PREPARE_ASSIGN(ctx, bool ta, ctx.attrs.GetBool("transpose_a", false));
  KILN_PREPARE_ASSIGN(ctx, bool tb, ctx.attrs.GetBool("transpose_b", false));
  // TF's kernel ignores them (and oneDNN then refuses transposed operands): refuse up front.
  if (ta || tb)
    return ctx.Error("transpose_a and transpose_b are not supported (TensorFlow's kernel ",
                     "ignores them); give a as [M, K] and b as [K, N]");
  const PartialShape& a = ctx.inputs[0].shape;
  const PartialShape& b = ctx.inputs[1].shape;
  if ((!a.unknown_rank() && a.rank() != 2) || (!b.unknown_rank() && b.rank() != 2))
    return ctx.Error("a and b must be matrices, got ", a.ToPythonString(), " and ",
                     b.ToPythonString());
  const PartialShape out{a.unknown_rank() ? -1 : a.dim(0), b.unknown_rank() ? -1 : b.dim(1)};
  ctx.outputs = {TensorSpec{st->out_type, out}};
  if (!f.dequantize)
    ctx.outputs.insert(ctx.outputs.end(), {TensorSpec{DType::kFloat, PartialShape::Scalar()},
                                           TensorSpec{DType::kFloat, PartialShape::Scalar()}});
  ctx.state = std::move(st);
  return OkStatus();
}

constexpr char kConvOutputs[] = "output,min_output,max_output";

constexpr OpDefinition kDefs[] = {
    {"QuantizedConv2DPerChannel", kConvOutputs, kOpFreshOutputs, PrepareQConv},
    {"QuantizedConv2DAndRelu", kConvOutputs, kOpFreshOutputs, PrepareQConv},
    {"QuantizedConv2DAndRequantize", kConvOutputs, kOpFreshOutputs, PrepareQConv},
    {"QuantizedConv2DAndReluAndRequantize", kConvOutputs, kOpFreshOutputs, PrepareQConv},
    {"QuantizedConv2DWithBias", kConvOutputs, kOpFreshOutputs, PrepareQConv},
    {"QuantizedConv2DWithBiasAndRelu", kConvOutputs, kOpFreshOutputs, PrepareQConv},
    {"QuantizedConv2DWithBiasAndRequantize", kConvOutputs, kOpFreshOutputs, PrepareQConv},
    {"QuantizedConv2DWithBiasAndReluAndRequantize", kConvOutputs, kOpFreshOutputs, PrepareQConv},
    {"QuantizedConv2DWithBiasSumAndRelu", kConvOutputs, kOpFreshOutputs, PrepareQConv},
    {"QuantizedConv2DWithBiasSumAndReluAndRequantize", kConvOutputs, kOpFreshOutputs, PrepareQConv},
    {"QuantizedConv2DWithBiasSignedSumAndReluAndRequantize", kConvOutputs, kOpFreshOutputs,
     PrepareQConv},
    {"QuantizedDepthwiseConv2D", kConvOutputs, kOpFreshOutputs, PrepareQConv},
    {"QuantizedDepthwiseConv2DWithBias", kConvOutputs, kOpFreshOutputs, PrepareQConv},
    {"QuantizedDepthwiseConv2DWithBiasAndRelu", kConvOutputs, kOpFreshOutputs, PrepareQConv},
    {"QuantizedDepthwiseConv2DWithBiasAndReluAndRequantize", kConvOutputs, kOpFreshOutputs,
     PrepareQConv},
    {"QuantizedMatMulWithBias", "out,min_out,max_out", kOpFreshOutputs, PrepareQMatMul},
    {"QuantizedMatMulWithBiasAndRelu", "out,min_out,max_out", kOpFreshOutputs, PrepareQMatMul},
    {"QuantizedMatMulWithBiasAndRequantize", "out,min_out,max_out", kOpFreshOutputs,
     PrepareQMatMul},
    {"QuantizedMatMulWithBiasAndReluAndRequantize", "out,min_out,max_out", kOpFreshOutputs,
     PrepareQMatMul},
    {"QuantizedMatMulWithBiasAndDequantize", "out", kOpFreshOutputs, PrepareQMatMul},
};

}  // namespace

std::span<const OpDefinition> QuantizedProductOpDefs() { return kDefs; }
}  // namespace kiln::exec
