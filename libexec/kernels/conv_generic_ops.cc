// Conv, TensorFlow's generic convolution op (tf.raw_ops.Conv; conv_ops_impl.h's ConvOp), and
// the image-transform convolutions FusedPadConv2D and FusedResizeAndPadConv2D
// (conv_ops_fused_image_transform.cc): definitions. The CPU kernels are in
// kernels/cpu/conv_generic_ops.cc.
//
// Conv: `batch_dims` leading dims are flattened into one batch, the rest is a 2-D or 3-D
// channels-last convolution run by kernels/cpu/conv_nd_math.h's forward pass. TF's CPU kernel
// hands 2-D to its Conv2D launcher and 3-D to its Conv3D one, so the same refusals apply: groups
// other than 1 (Unimplemented), CHANNELS_FIRST, and for 3-D dilations other than 1; 3-D EXPLICIT
// padding and a negative batch_dims abort TF's process, so they are refused here. When the
// flattened input or output is empty TF returns before restoring the batch dims: the output then
// keeps the flattened shape, and so it does here.
//
// FusedPadConv2D / FusedResizeAndPadConv2D: MirrorPad (REFLECT or SYMMETRIC) of the input, for
// the second after a bilinear resize (TF's legacy coordinates, resize_align_corners), then a
// Conv2D; the CPU kernels follow TF's kernel, which is not quite that composition.
#include "kernels/conv_generic_ops.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

using conv_generic::ConvOutputDims;
using conv_generic::ConvState;
using conv_generic::ConvTypes;
using conv_generic::FlatInput;
using conv_generic::FusedGeom;
using conv_generic::FusedPadTypes;
using conv_generic::FusedState;
using conv_generic::kInt32Max;
using conv_generic::MakeFusedGeom;

// ---- Conv ---------------------------------------------------------------------------------------

// The spatial entries of a strides or dilations list (channels last) into the window's slots.
Status ReadConvList(const PrepareContext& ctx, const std::vector<int64_t>& v, int spatial,
                    bool dilations, std::array<int64_t, 3>* out) {
  const char* what = dilations ? "dilation rates" : "strides";
  if (v.front() != 1 || v.back() != 1) {
    return ctx.Error("Current implementation does not support ", what,
                     " in the batch and depth dimensions.");
  }
  for (int i = 0; i < spatial; ++i) {
    const int64_t s = v[1 + i];
    if (s <= 0) {
      return ctx.Error(dilations ? "Dilated rates should be larger than 0."
                                 : "Spatial strides should be larger than 0.");
    }
    // TF's launchers take int: larger values would wrap there.
    if (s > kInt32Max)
      return ctx.Error("attr '", dilations ? "dilations" : "strides", "' ", DimsString(v),
                       ": entries must fit in int32");
    (*out)[3 - spatial + i] = s;
  }
  return OkStatus();
}

// padding and explicit_paddings, with TF's CheckValidPadding messages.
Status ReadConvPadding(const PrepareContext& ctx, int spatial, WindowSpec* w) {
  KILN_PREPARE_ASSIGN(ctx, std::string padding, ctx.attrs.GetString("padding"));
  KILN_PREPARE_ASSIGN(ctx, std::vector<int64_t> p, ctx.attrs.GetIntList("explicit_paddings", {}));
  if (padding == "SAME") {
    w->padding = WindowPadding::kSame;
  } else if (padding == "VALID") {
    w->padding = WindowPadding::kValid;
  } else if (padding == "EXPLICIT") {
    w->padding = WindowPadding::kExplicit;
  } else {
    return ctx.Error("attr 'padding': expected \"SAME\", \"VALID\" or \"EXPLICIT\", got \"",
                     padding, "\"");
  }
  const size_t rank = static_cast<size_t>(spatial) + 2;
  if (w->padding != WindowPadding::kExplicit) {
    if (!p.empty()) {
      return ctx.Error(
          "explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT");
    }
    return OkStatus();
  }
  if (p.size() != 2 * rank) {
    return ctx.Error("explicit_paddings attribute must contain ", 2 * rank,
                     " values, but got: ", p.size());
  }
  for (int64_t v : p) {
    if (v < 0) return ctx.Error("All elements of explicit_paddings must be nonnegative");
    if (v > kInt32Max) return ctx.Error("filter too large");
  }
  if (p[0] != 0 || p[1] != 0 || p[2 * rank - 2] != 0 || p[2 * rank - 1] != 0) {
    return ctx.Error("Nonzero explicit padding in the batch or depth dimensions is not supported");
  }
  for (int i = 0; i < spatial; ++i) {
    w->pad_before[3 - spatial + i] = p[2 + 2 * i];
    w->pad_after[3 - spatial + i] = p[3 + 2 * i];
  }
  return OkStatus();
}

Status PrepareConv(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  auto st = std::make_shared<ConvState>();
  KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->dtype, ConvTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", st->dtype));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "filter", st->dtype));
  KILN_PREPARE_ASSIGN(ctx, int64_t groups, ctx.attrs.GetInt("groups", 1));
  if (groups != 1)
    return PrepareUnimplemented(ctx, "Grouped/Depthwise Convolutions are not supported yet.");
  KILN_PREPARE_ASSIGN(ctx, std::string format, ctx.attrs.GetString("data_format", "CHANNELS_LAST"));
  if (format != "CHANNELS_LAST" && format != "CHANNELS_FIRST")
    return ctx.Error("Unknown data format: ", format);
  KILN_PREPARE_ASSIGN(ctx, st->batch_dims, ctx.attrs.GetInt("batch_dims", 1));
  if (st->batch_dims < 0 || st->batch_dims > kMaxRank) {
    return ctx.Error("attr 'batch_dims' must be between 0 and ", kMaxRank, ", got ",
                     st->batch_dims);
  }
  KILN_PREPARE_ASSIGN(ctx, std::vector<int64_t> strides, ctx.attrs.GetIntList("strides"));
  const PartialShape& in_shape = ctx.inputs[0].shape;
  const PartialShape& f_shape = ctx.inputs[1].shape;
  // The spatial rank: the input's, else the strides' (TF requires them to agree).
  const int64_t spatial = !in_shape.unknown_rank() ? in_shape.rank() - 1 - st->batch_dims
                                                   : static_cast<int64_t>(strides.size()) - 2;
  if (spatial != 2 && spatial != 3)
    return ctx.Error("The input must have 2 or 3 spatial dimensions but got ", spatial);
  st->spatial = static_cast<int>(spatial);
  const int rank = st->spatial + 2;
  if (!f_shape.unknown_rank()) {
    if (f_shape.rank() != 4 && f_shape.rank() != 5)
      return ctx.Error("The filter must be rank 4 or 5 but got ", f_shape.rank());
    // TF's kernel aborts the process on a mismatch.
    if (f_shape.rank() != rank) {
      return ctx.Error("a filter of rank ", f_shape.rank(), " does not fit an input with ", spatial,
                       " spatial dimensions (it needs rank ", rank, ")");
    }
  }
  if (strides.size() != static_cast<size_t>(rank))
    return ctx.Error("Sliding window strides field must specify ", rank, " dimensions");
  WindowSpec& w = st->window;
  w.spatial = st->spatial;
  KILN_RETURN_IF_ERROR(ReadConvList(ctx, strides, st->spatial, false, &w.strides));
  KILN_PREPARE_ASSIGN(ctx, std::vector<int64_t> dilations, ctx.attrs.GetIntList("dilations", {}));
  if (!dilations.empty()) {
    if (dilations.size() != static_cast<size_t>(rank))
      return ctx.Error("Dilation rates field must specify ", rank, " dimensions");
    KILN_RETURN_IF_ERROR(ReadConvList(ctx, dilations, st->spatial, true, &w.dilations));
  }
  KILN_RETURN_IF_ERROR(ReadConvPadding(ctx, st->spatial, &w));
  // What TF's 2-D and 3-D CPU launchers refuse.
  if (format == "CHANNELS_FIRST") {
    if (spatial == 2) {
      return PrepareUnimplemented(ctx,
                                  "The Conv2D op currently only supports the NHWC tensor format "
                                  "on the CPU. The op was given the format: NCHW");
    }
    return ctx.Error(
        "CPU implementation of Conv3D currently only supports the NHWC tensor format.");
  }
  if (spatial == 3 && (w.dilations[0] != 1 || w.dilations[1] != 1 || w.dilations[2] != 1))
    return ctx.Error("CPU implementation of Conv3D currently only supports dilated rates of 1.");
  if (spatial == 3 && w.padding == WindowPadding::kExplicit) {
    return ctx.Error(
        "EXPLICIT padding is not supported for 3 spatial dimensions (TensorFlow's "
        "CPU kernel aborts on it)");
  }
  // Shapes: what is known now.
  std::vector<int64_t> in = DimsOrUnknown(in_shape, static_cast<int>(st->batch_dims) + rank - 1);
  std::vector<int64_t> f = DimsOrUnknown(f_shape, rank);
  for (int64_t d : f)
    if (d == 0)
      return ctx.Error("filter must not have zero elements (i.e. all dimensions must be non-zero)");
  const int64_t in_c = in.back(), f_in = f[rank - 2];
  if (in_c >= 0 && f_in >= 0 && in_c != f_in)
    return ctx.Error("Input depth must be equal to filter depth: ", in_c, " vs ", f_in);
  std::vector<int64_t> flat = FlatInput(in, st->batch_dims);
  std::array<int64_t, 3> k{1, 1, 1};
  for (int i = 0; i < st->spatial; ++i) {
    k[3 - st->spatial + i] = std::max<int64_t>(f[i], 1);
    if (f[i] < 0) flat[1 + i] = -1;  // an unknown filter size leaves the output size unknown
  }
  std::array<WindowDim, 3> d;
  Status s = MakeWindowDims(w, flat, k, &d);
  if (!s.ok()) return ctx.Error(s.message());
  std::vector<int64_t> flat_out = {flat[0]};
  for (int i = 3 - st->spatial; i < 3; ++i) flat_out.push_back(d[i].out);
  flat_out.push_back(f[rank - 1]);
  // Flattened when the input or output is empty; restored when both are known not to be.
  bool empty = false, nonempty = true;
  for (int64_t v : in) {
    empty |= v == 0;
    nonempty &= v > 0;
  }
  for (int64_t v : flat_out) {
    empty |= v == 0;
    nonempty &= v > 0;
  }
  PartialShape out;
  if (empty || nonempty || st->batch_dims == 1) {
    KILN_PREPARE_ASSIGN(ctx, out,
                        PartialShape::FromDims(ConvOutputDims(in, st->batch_dims, flat_out,
                                                              empty && st->batch_dims != 1)));
  }
  ctx.outputs = {TensorSpec{st->dtype, out}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- FusedPadConv2D, FusedResizeAndPadConv2D --------------------------------------------------

using FusedResizeTypes = TypeList<float, double, Half>;

template <bool kResize>
Status PrepareFused(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(kResize ? 4 : 3));
  auto st = std::make_shared<FusedState>();
  st->resize = kResize;
  st->paddings_input = kResize ? 2 : 1;
  st->filter_input = kResize ? 3 : 2;
  KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->dtype,
                                         kResize ? std::span<const DType>(FusedResizeTypes::kDTypes)
                                                 : std::span<const DType>(FusedPadTypes::kDTypes)));
  if (kResize) {
    KILN_PREPARE_ASSIGN(ctx, st->align_corners, ctx.attrs.GetBool("resize_align_corners", false));
  }
  KILN_PREPARE_ASSIGN(ctx, std::string mode, ctx.attrs.GetString("mode"));
  if (mode != "REFLECT" && mode != "SYMMETRIC")
    return ctx.Error("mode must be either REFLECT or SYMMETRIC.");
  st->pad_offset = mode == "REFLECT" ? 1 : 0;
  KILN_PREPARE_ASSIGN(ctx, std::vector<int64_t> strides, ctx.attrs.GetIntList("strides"));
  if (strides.size() != 4)
    return ctx.Error("Sliding window strides field must specify 4 dimensions");
  if (strides[0] != 1 || strides[3] != 1) {
    return ctx.Error(
        "Current implementation does not yet support strides in the batch and depth dimensions.");
  }
  for (int i = 1; i <= 2; ++i) {
    if (strides[i] <= 0) return ctx.Error("Stride must be > 0, but got ", strides[i]);
    if (strides[i] > kInt32Max) return ctx.Error("attr 'strides' entries must fit in int32");
  }
  st->stride_h = strides[1];
  st->stride_w = strides[2];
  KILN_PREPARE_ASSIGN(ctx, std::string padding, ctx.attrs.GetString("padding"));
  if (padding != "SAME" && padding != "VALID")
    return ctx.Error("attr 'padding': expected \"SAME\" or \"VALID\", got \"", padding, "\"");
  st->padding = padding == "SAME" ? WindowPadding::kSame : WindowPadding::kValid;
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", st->dtype));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "input", 4));
  if (kResize) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "size", DType::kInt32));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "size", 1));
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, st->paddings_input, "paddings", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, st->paddings_input, "paddings", 2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, st->filter_input, "filter", st->dtype));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, st->filter_input, "filter", 4));
  const std::vector<int64_t> in = DimsOrUnknown(ctx.inputs[0].shape, 4);
  const std::vector<int64_t> f = DimsOrUnknown(ctx.inputs[st->filter_input].shape, 4);
  PartialShape out{in[0], -1, -1, f[3]};
  // Everything known (constant size and paddings): the exact shape, and TF's checks now.
  const Tensor* size = kResize ? ConstantInput(ctx, 1) : nullptr;
  const Tensor* pads = ConstantInput(ctx, st->paddings_input);
  const auto known = [](const std::vector<int64_t>& v) {
    return std::all_of(v.begin(), v.end(), [](int64_t d) { return d >= 0; });
  };
  if (known(in) && known(f) && pads != nullptr && (!kResize || size != nullptr)) {
    FusedGeom g;
    Status s = MakeFusedGeom(*st, in, kResize ? IndexValues(*size) : std::vector<int64_t>{},
                             pads->shape().dims(), IndexValues(*pads), f, &g);
    if (!s.ok()) return ctx.Error(s.message());
    out = PartialShape{g.batch, g.out_h, g.out_w, g.out_c};
  }
  ctx.outputs = {TensorSpec{st->dtype, out}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- tables ------------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"Conv", "output", kOpFreshOutputs, PrepareConv},
    {"FusedPadConv2D", "output", kOpFreshOutputs, PrepareFused<false>},
    {"FusedResizeAndPadConv2D", "output", kOpFreshOutputs, PrepareFused<true>},
};

}  // namespace

std::span<const OpDefinition> ConvGenericOpDefs() { return kDefs; }

}  // namespace kiln::exec
