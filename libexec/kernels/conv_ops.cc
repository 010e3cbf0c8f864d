// 2-D convolutions and pooling over NHWC images: Conv2D, DepthwiseConv2dNative, their fused
// forms (_FusedConv2D, _FusedDepthwiseConv2dNative: bias or a folded batch norm, a residual
// add, an activation), MaxPool and AvgPool: definitions. The CPU kernels are in
// kernels/cpu/conv_ops.cc. Output sizes and padding follow TF's GetWindowedOutputSize. NCHW is
// Unimplemented, as in TF's CPU kernels.
#include "kernels/conv_ops.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>

#include "kernels/array_util.h"
#include "kernels/epilogue.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

using conv::ConvGeometry;
using conv::ConvState;
using conv::MakeGeometry;
using conv::MaxPoolTypes;
using conv::PoolState;

// ---- Conv2D, DepthwiseConv2dNative and their fused forms ------------------------------------

template <bool kDepthwise>
Status PrepareConv(PrepareContext& ctx) {
  auto st = std::make_shared<ConvState>();
  st->depthwise = kDepthwise;
  KILN_ASSIGN_OR_RETURN(st->epilogue, ReadEpilogue(ctx));
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2 + st->epilogue.num_args()));
  KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("T"));
  // Conv2D also takes int32, as TF's Eigen kernel (products and sums wrap in int32).
  using Conv2DTypes = TypeList<float, double, int32_t>;
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->dtype,
                                         kDepthwise || ctx.op != "Conv2D"
                                             ? std::span<const DType>(BasicFloatTypes::kDTypes)
                                             : std::span<const DType>(Conv2DTypes::kDTypes)));
  if (st->epilogue.num_args() > 0 && st->dtype != DType::kFloat)
    return PrepareUnimplemented(ctx, "fused epilogues are supported for float32 only");
  WindowAttrOptions opts;
  opts.read_dilations = true;
  opts.allow_explicit = true;
  opts.legacy_2d = true;
  KILN_RETURN_IF_ERROR(ReadWindowAttrs(ctx, opts, &st->window));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", st->dtype));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "filter", st->dtype));
  for (int i = 2; i < static_cast<int>(ctx.inputs.size()); ++i)
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, internal::StrCat("args:", i - 2), st->dtype));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "input", 4));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "filter", 4));
  const PartialShape& in = ctx.inputs[0].shape;
  const PartialShape& f = ctx.inputs[1].shape;
  std::array<int64_t, 4> in_dims{-1, -1, -1, -1}, f_dims{-1, -1, -1, -1};
  if (!in.unknown_rank()) std::copy(in.dims().begin(), in.dims().end(), in_dims.begin());
  if (!f.unknown_rank()) std::copy(f.dims().begin(), f.dims().end(), f_dims.begin());
  int64_t out_c = f_dims[3];
  if (kDepthwise) {
    const int64_t c = in_dims[3] >= 0 ? in_dims[3] : f_dims[2];
    out_c = c >= 0 && f_dims[3] >= 0 ? c * f_dims[3] : -1;
    if (in_dims[3] >= 0 && f_dims[2] >= 0 && in_dims[3] != f_dims[2]) {
      return ctx.Error("input depth must match the filter's in_channels: input has shape ",
                       in.ToPythonString(), ", filter has shape ", f.ToPythonString());
    }
  } else {
    // Grouped when the input has a multiple of the filter's in-channels (Keras' groups=,
    // ConvNeXt's depthwise stage).
    Result<int64_t> groups = ConvGroups(in_dims[3], f_dims[2], out_c);
    if (!groups.ok()) {
      return ctx.Error(groups.status().message(), "; input has shape ", in.ToPythonString(),
                       ", filter has shape ", f.ToPythonString());
    }
  }
  ConvGeometry g;
  std::array<int64_t, 4> known_in = in_dims;
  // Unknown filter sizes make the spatial output unknown.
  if (f_dims[0] < 0) known_in[1] = -1;
  if (f_dims[1] < 0) known_in[2] = -1;
  Status s = MakeGeometry(st->window, known_in, std::max<int64_t>(f_dims[0], 1),
                          std::max<int64_t>(f_dims[1], 1), &g);
  if (!s.ok()) return ctx.Error(s.message());
  // Every argument before the addend is a vector of the output channels.
  for (int i = 2; i < 2 + st->epilogue.num_args() - (st->epilogue.add ? 1 : 0); ++i) {
    const PartialShape& v = ctx.inputs[i].shape;
    if (!v.unknown_rank() && (v.rank() != 1 || (out_c >= 0 && v.dim(0) >= 0 && v.dim(0) != out_c)))
      return ctx.Error("args:", i - 2, " must be a vector of the ", out_c,
                       " output channels, got shape ", v.ToPythonString());
  }
  ctx.outputs = {TensorSpec{st->dtype, PartialShape{in_dims[0], g.h.out, g.w.out, out_c}}};

  ctx.state = std::move(st);
  return OkStatus();
}

// ---- MaxPool, AvgPool ------------------------------------------------------------------------

template <bool kMax>
Status PreparePool(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  // MaxPool's T defaults to float in TF's OpDef, so stripped graphs (Keras) omit it; AvgPool's
  // T has no default.
  KILN_PREPARE_ASSIGN(ctx, DType t,
                      kMax ? ctx.attrs.GetType("T", DType::kFloat) : ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t,
                                         kMax ? std::span<const DType>(MaxPoolTypes::kDTypes)
                                              : std::span<const DType>(BasicFloatTypes::kDTypes)));
  auto a = std::make_shared<PoolState>();
  a->max = kMax;
  WindowAttrOptions opts;
  opts.read_ksize = true;
  opts.legacy_2d = true;
  KILN_RETURN_IF_ERROR(ReadWindowAttrs(ctx, opts, &a->window));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "input", 4));
  const PartialShape& in = ctx.inputs[0].shape;
  std::array<int64_t, 4> in_dims{-1, -1, -1, -1};
  if (!in.unknown_rank()) std::copy(in.dims().begin(), in.dims().end(), in_dims.begin());
  ConvGeometry g;
  Status s = MakeGeometry(a->window, in_dims, a->window.ksize[1], a->window.ksize[2], &g);
  if (!s.ok()) return ctx.Error(s.message());
  ctx.outputs = {TensorSpec{t, PartialShape{in_dims[0], g.h.out, g.w.out, in_dims[3]}}};
  ctx.state = std::move(a);
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"Conv2D", "output", kOpFreshOutputs, PrepareConv<false>},
    {"_FusedConv2D", "output", kOpFreshOutputs, PrepareConv<false>},
    {"DepthwiseConv2dNative", "output", kOpFreshOutputs, PrepareConv<true>},
    {"_FusedDepthwiseConv2dNative", "output", kOpFreshOutputs, PrepareConv<true>},
    {"MaxPool", "output", kOpFreshOutputs, PreparePool<true>},
    {"AvgPool", "output", kOpFreshOutputs, PreparePool<false>},
};

}  // namespace

std::span<const OpDefinition> ConvOpDefs() { return kDefs; }

}  // namespace kiln::exec
