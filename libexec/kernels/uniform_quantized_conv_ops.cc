// TF's UniformQuantizedConvolution and its Hybrid form (tensorflow/core/kernels/uniform_quant_ops):
// N-D with XLA-style dimension numbers (a serialized proto in the attr), lhs and rhs dilation,
// padding and feature and batch groups; qint8 x qint8 -> qint32 requantized to the output's
// scales, or float lhs quantized per batch (asymmetric int8) x qint8 -> float. The other uniform
// quantization ops are in uniform_quantized_ops.cc.
// The CPU kernels are in kernels/cpu/uniform_quantized_conv_ops.cc.
#include "kernels/uniform_quantized_conv_ops.h"

#include <memory>
#include <utility>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/uniform_quantized_util.h"

namespace kiln::exec {
namespace {

using uniform_quantized_conv::ConvDims;
using uniform_quantized_conv::ConvState;
using uniform_quantized_conv::ParseConvDims;

// ---- UniformQuantizedConvolution, UniformQuantizedConvolutionHybrid -----------------------

Status PrepareUniformConv(PrepareContext& ctx) {
  auto st = std::make_shared<ConvState>();
  st->hybrid = ctx.op == "UniformQuantizedConvolutionHybrid";
  KILN_RETURN_IF_ERROR(ReadProductOperands(ctx, st->hybrid, &st->lhs, &st->rhs, &st->out));
  KILN_PREPARE_ASSIGN(ctx, st->strides, ctx.attrs.GetIntList("window_strides", {}));
  KILN_PREPARE_ASSIGN(ctx, st->lhs_dilation, ctx.attrs.GetIntList("lhs_dilation", {}));
  KILN_PREPARE_ASSIGN(ctx, st->rhs_dilation, ctx.attrs.GetIntList("rhs_dilation", {}));
  KILN_PREPARE_ASSIGN(ctx, st->explicit_padding, ctx.attrs.GetIntList("explicit_padding", {}));
  KILN_PREPARE_ASSIGN(ctx, st->padding, ctx.attrs.GetString("padding"));
  if (st->padding != "EXPLICIT" && st->padding != "SAME" && st->padding != "VALID")
    return ctx.Error("padding Attr must be one of [EXPLICIT | SAME | VALID], but given: ",
                     st->padding);
  if (st->padding != "EXPLICIT" && !st->explicit_padding.empty())
    return ctx.Error("If padding Attr is not 'EXPLICIT', explicit_padding Attr must be empty. ",
                     "Given padding ", st->padding, " and explicit_padding of size ",
                     st->explicit_padding.size());
  KILN_PREPARE_ASSIGN(ctx, st->feature_groups, ctx.attrs.GetInt("feature_group_count", 1));
  KILN_PREPARE_ASSIGN(ctx, st->batch_groups, ctx.attrs.GetInt("batch_group_count", 1));
  KILN_PREPARE_ASSIGN(ctx, st->dimension_numbers, ctx.attrs.GetString("dimension_numbers", ""));
  ConvDims dims;
  if (!st->dimension_numbers.empty() && !ParseConvDims(st->dimension_numbers, &dims))
    return ctx.Error("Error parsing convolution dimension numbers.");
  const PartialShape& lhs = ctx.inputs[0].shape;
  ctx.outputs = {TensorSpec{st->hybrid ? DType::kFloat : DType::kQInt32,
                            lhs.unknown_rank() ? lhs : UnknownDims(lhs.rank())}};
  ctx.state = std::move(st);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"UniformQuantizedConvolution", "output", kOpFreshOutputs, PrepareUniformConv},
    {"UniformQuantizedConvolutionHybrid", "output", kOpFreshOutputs, PrepareUniformConv},
};

}  // namespace

std::span<const OpDefinition> UniformQuantizedConvOpDefs() { return kDefs; }
}  // namespace kiln::exec
