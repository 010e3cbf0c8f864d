// BiasAdd, activations and softmax: definitions. The CPU kernels are in kernels/cpu/nn_ops.cc.
#include "kernels/nn_ops.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/elementwise.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using nn::BiasAddState;

// ---- BiasAdd ---------------------------------------------------------------------------------

Status PrepareBiasAdd(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, NumberTypes::kDTypes));
  KILN_PREPARE_ASSIGN(ctx, std::string format, ctx.attrs.GetString("data_format", "NHWC"));
  if (format != "NHWC" && format != "NCHW") {
    return ctx.Error("attr 'data_format': expected \"NHWC\" or \"NCHW\", got \"", format, "\"");
  }
  auto state = std::make_shared<BiasAddState>();
  state->nchw = format == "NCHW";
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "value", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "bias", t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "bias", 1));
  const PartialShape& value = ctx.inputs[0].shape;
  const PartialShape& bias = ctx.inputs[1].shape;
  if (!value.unknown_rank()) {
    if (value.rank() < 2) {
      return ctx.Error("input 'value': expected rank >= 2, got shape ", value.ToPythonString());
    }
    int64_t channels = value.dim(state->nchw ? 1 : value.rank() - 1);
    int64_t n = bias.unknown_rank() ? -1 : bias.dim(0);
    if (channels >= 0 && n >= 0 && channels != n) {
      return ctx.Error("input 'bias' has ", n, " elements but the channel dimension of 'value' ",
                       value.ToPythonString(), " (", format, ") is ", channels);
    }
  }
  // The channel dim is the bias's length where the value's shape lost it (Tensordot's Reshape
  // to a shape known only at run time): what follows knows its channels.
  PartialShape out = value;
  if (!value.unknown_rank() && value.rank() >= 2 && !bias.unknown_rank()) {
    const int channel_dim = state->nchw ? 1 : value.rank() - 1;
    if (value.dim(channel_dim) < 0 && bias.dim(0) >= 0) {
      std::vector<int64_t> dims(value.dims().begin(), value.dims().end());
      dims[channel_dim] = bias.dim(0);
      KILN_PREPARE_ASSIGN(ctx, out, PartialShape::FromDims(dims));
    }
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::move(state);
  return OkStatus();
}

// ---- activations -----------------------------------------------------------------------------

template <typename List>
Status PrepareActivation(PrepareContext& ctx) {
  return PrepareUnary(ctx, List::kDTypes, "features");
}

// ---- Softmax, LogSoftmax ---------------------------------------------------------------------

Status PrepareSoftmax(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, BasicFloatTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "logits", t));
  const PartialShape& s = ctx.inputs[0].shape;
  if (s.rank() == 0) {
    return ctx.Error("input 'logits': expected rank >= 1, got shape ", s.ToPythonString());
  }
  ctx.outputs = {TensorSpec{t, s}};
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"BiasAdd", "output", kOpElementwise, PrepareBiasAdd},
    {"Relu", "activations", kOpElementwise, PrepareActivation<RealTypes>},
    {"Relu6", "activations", kOpElementwise, PrepareActivation<RealTypes>},
    {"Elu", "activations", kOpElementwise, PrepareActivation<FloatTypes>},
    {"Softmax", "softmax", kOpFreshOutputs, PrepareSoftmax},
    {"LogSoftmax", "logsoftmax", kOpFreshOutputs, PrepareSoftmax},
};

}  // namespace

std::span<const OpDefinition> NnOpDefs() { return kDefs; }

}  // namespace kiln::exec
