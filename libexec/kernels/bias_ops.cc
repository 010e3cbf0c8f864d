// BiasAddGrad (the sum of out_backprop over everything but the channel dim, NHWC or NCHW) and
// BiasAddV1 (the original BiasAdd: bias along the last dim, no data_format): definitions. The
// CPU kernels are in kernels/cpu/bias_ops.cc.
#include <string>

#include "kernels/elementwise.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

// ---- BiasAddGrad -----------------------------------------------------------------------------

Status PrepareBiasAddGrad(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, NumberTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "out_backprop", t));
  KILN_PREPARE_ASSIGN(ctx, std::string format, ctx.attrs.GetString("data_format", "NHWC"));
  if (format != "NHWC" && format != "NCHW") {
    return ctx.Error("attr 'data_format': expected \"NHWC\" or \"NCHW\", got \"", format, "\"");
  }
  const bool nchw = format == "NCHW";
  const PartialShape& s = ctx.inputs[0].shape;
  int64_t c = -1;
  if (!s.unknown_rank()) {
    if (s.rank() < 2) {
      return ctx.Error("input 'out_backprop': expected rank >= 2, got shape ", s.ToPythonString());
    }
    c = s.dim(nchw ? 1 : s.rank() - 1);
  }
  ctx.outputs = {TensorSpec{t, PartialShape{c}}};
  ctx.state = std::make_shared<TypedOpState<bool>>(nchw);
  return OkStatus();
}

// ---- BiasAddV1 ----------------------------------------------------------------------------

Status PrepareBiasAddV1(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, NumberTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "value", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "bias", t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "bias", 1));
  const PartialShape& value = ctx.inputs[0].shape;
  const PartialShape& bias = ctx.inputs[1].shape;
  if (!value.unknown_rank()) {
    if (value.rank() < 2) {
      return ctx.Error("input 'value': expected rank >= 2, got shape ", value.ToPythonString());
    }
    const int64_t c = value.dim(value.rank() - 1);
    const int64_t n = bias.unknown_rank() ? -1 : bias.dim(0);
    if (c >= 0 && n >= 0 && c != n) {
      return ctx.Error("input 'bias' has ", n, " elements but the last dimension of 'value' ",
                       value.ToPythonString(), " is ", c);
    }
  }
  ctx.outputs = {TensorSpec{t, value}};
  return OkStatus();
}
constexpr OpDefinition kDefs[] = {
    {"BiasAddGrad", "output", kOpFreshOutputs, PrepareBiasAddGrad},
    {"BiasAddV1", "output", kOpElementwise, PrepareBiasAddV1},
};

}  // namespace

std::span<const OpDefinition> BiasOpDefs() { return kDefs; }

}  // namespace kiln::exec
