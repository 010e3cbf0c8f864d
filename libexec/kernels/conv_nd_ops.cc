// Convolutions beyond conv_ops.cc's forward 2-D ones: Conv3D, the input and filter backprops
// of Conv2D (Conv2DBackpropInput is also what Keras' Conv2DTranspose runs at inference), of
// DepthwiseConv2dNative, and Conv3DBackpropInputV2: definitions. The CPU kernels are in
// kernels/cpu/conv_nd_ops.cc. NCHW is Unimplemented, as in TensorFlow's CPU kernels.
#include "kernels/conv_nd_ops.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/conv_nd_math.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

using conv_nd::ConvGeom;
using conv_nd_ops::CheckChannels;
using conv_nd_ops::ConvBackpropInputTypes;
using conv_nd_ops::ConvIo;
using conv_nd_ops::ConvKind;
using conv_nd_ops::ConvState;
using conv_nd_ops::IoOf;
using conv_nd_ops::IsDepthwise;
using conv_nd_ops::MakeGeom;
using conv_nd_ops::SizesFromValues;

// ---- ops ---------------------------------------------------------------------------------------

template <ConvKind kKind, typename List>
Status PrepareConvNd(PrepareContext& ctx) {
  const bool three =
      ctx.op == "Conv3D" || ctx.op == "Conv3DBackpropInputV2" || ctx.op == "Conv3DBackpropFilterV2";
  const int spatial = three ? 3 : 2, rank = spatial + 2;
  const ConvIo io = IoOf(kKind);
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(kKind == ConvKind::kConv3D ? 2 : 3));
  auto state = std::make_shared<ConvState>();
  KILN_PREPARE_ASSIGN(ctx, state->dtype, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", state->dtype, List::kDTypes));
  WindowAttrOptions opts;
  opts.spatial = spatial;
  opts.read_dilations = true;
  opts.allow_explicit = !three;
  KILN_RETURN_IF_ERROR(ReadWindowAttrs(ctx, opts, &state->attrs));
  const DType t = state->dtype;
  if (io.input >= 0) KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, io.input, "input", t));
  if (io.filter >= 0) KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, io.filter, "filter", t));
  if (io.dy >= 0) KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, io.dy, "out_backprop", t));
  const std::string sizes_name = io.filter >= 0 ? "input_sizes" : "filter_sizes";
  if (io.sizes >= 0) {
    if (ctx.op == "Conv3DBackpropInputV2") {
      KILN_RETURN_IF_ERROR(IndexInputDType(ctx, io.sizes, sizes_name, "Tshape").status());
    } else {
      KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, io.sizes, sizes_name, DType::kInt32));
    }
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, io.sizes, sizes_name, 1));
  }
  if (io.input >= 0) KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, io.input, "input", rank));
  if (io.filter >= 0) KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, io.filter, "filter", rank));
  if (io.dy >= 0) KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, io.dy, "out_backprop", rank));
  std::vector<int64_t> in = io.input >= 0 ? DimsOrUnknown(ctx.inputs[io.input].shape, rank)
                                          : std::vector<int64_t>(rank, -1);
  std::vector<int64_t> filter = io.filter >= 0 ? DimsOrUnknown(ctx.inputs[io.filter].shape, rank)
                                               : std::vector<int64_t>(rank, -1);
  std::vector<int64_t> dy =
      io.dy >= 0 ? DimsOrUnknown(ctx.inputs[io.dy].shape, rank) : std::vector<int64_t>();
  if (io.sizes >= 0) {
    std::vector<int64_t>& target = io.filter >= 0 ? in : filter;
    if (const Tensor* sizes = ConstantInput(ctx, io.sizes)) {
      auto v = SizesFromValues(kKind, spatial, IndexValues(*sizes), filter, dy);
      if (!v.ok()) return ctx.Error(v.status().message());
      target = *v;
    } else if (io.filter >= 0) {
      // Unknown input_sizes: the batch is out_backprop's and the channels the filter's.
      target[0] = dy[0];
      target[rank - 1] = filter[rank - 2];
    } else if (IsDepthwise(kKind)) {
      target[rank - 2] = in[rank - 1];
    } else {
      target[rank - 2] = in[rank - 1];
      target[rank - 1] = dy[rank - 1];
    }
  }
  // Check what is known: channels, and out_backprop against the forward output.
  const bool all_known =
      std::all_of(in.begin(), in.end(), [](int64_t v) { return v >= 0; }) &&
      std::all_of(filter.begin(), filter.end(), [](int64_t v) { return v >= 0; });
  if (all_known) {
    ConvGeom g;
    Status s = MakeGeom(kKind, state->attrs, in, filter,
                        std::all_of(dy.begin(), dy.end(), [](int64_t v) { return v >= 0; })
                            ? std::span<const int64_t>(dy)
                            : std::span<const int64_t>(),
                        &g);
    if (!s.ok())
      return s.WithContext(std::string("node '") + std::string(ctx.node_name) + "' (" +
                           std::string(ctx.op) + ")");
  } else {
    Status s = CheckChannels(kKind, in[rank - 1], filter[rank - 2], filter[rank - 1],
                             DimsString(in), DimsString(filter));
    if (!s.ok())
      return s.WithContext(std::string("node '") + std::string(ctx.node_name) + "' (" +
                           std::string(ctx.op) + ")");
  }
  std::vector<int64_t> out;
  if (kKind == ConvKind::kConv3D) {
    std::array<int64_t, 3> k{1, 1, 1};
    std::vector<int64_t> known_in = in;
    for (int i = 0; i < spatial; ++i) {
      k[3 - spatial + i] = std::max<int64_t>(filter[i], 1);
      if (filter[i] < 0) known_in[1 + i] = -1;
    }
    std::array<WindowDim, 3> d;
    Status s = MakeWindowDims(state->attrs, known_in, k, &d);
    if (!s.ok()) return ctx.Error(s.message());
    out = {in[0]};
    for (int i = 3 - spatial; i < 3; ++i) out.push_back(d[i].out);
    out.push_back(filter[rank - 1]);
  } else {
    out = io.filter >= 0 ? in : filter;
  }
  if constexpr (kKind == ConvKind::kBackpropInput || kKind == ConvKind::kBackpropFilter) {
    if (all_known) {
      state->prepare_in = in;
      state->prepare_filter = filter;
    }
  }
  KILN_PREPARE_ASSIGN(ctx, PartialShape shape, PartialShape::FromDims(out));
  ctx.outputs = {TensorSpec{t, shape}};
  ctx.state = std::move(state);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"Conv3D", "output", kOpFreshOutputs, PrepareConvNd<ConvKind::kConv3D, FloatTypes>},
    {"Conv2DBackpropInput", "output", kOpFreshOutputs,
     PrepareConvNd<ConvKind::kBackpropInput, ConvBackpropInputTypes>},
    {"Conv3DBackpropInputV2", "output", kOpFreshOutputs,
     PrepareConvNd<ConvKind::kBackpropInput, FloatTypes>},
    {"Conv2DBackpropFilter", "output", kOpFreshOutputs,
     PrepareConvNd<ConvKind::kBackpropFilter, FloatTypes>},
    {"Conv3DBackpropFilterV2", "output", kOpFreshOutputs,
     PrepareConvNd<ConvKind::kBackpropFilter, FloatTypes>},
    {"DepthwiseConv2dNativeBackpropInput", "output", kOpFreshOutputs,
     PrepareConvNd<ConvKind::kDepthwiseInput, FloatTypes>},
    {"DepthwiseConv2dNativeBackpropFilter", "output", kOpFreshOutputs,
     PrepareConvNd<ConvKind::kDepthwiseFilter, FloatTypes>},
};

}  // namespace

std::span<const OpDefinition> ConvNdOpDefs() { return kDefs; }

}  // namespace kiln::exec
