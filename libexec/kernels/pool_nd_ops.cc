// Pooling beyond conv_ops.cc's MaxPool and AvgPool: AvgPool3D, MaxPool3D, MaxPoolV2 (ksize and
// strides as inputs), MaxPoolWithArgmax, and the gradients MaxPoolGrad(V2), MaxPool3DGrad,
// AvgPoolGrad, AvgPool3DGrad, MaxPoolGradWithArgmax (grad added at the argmax indices) and
// MaxPoolGradGrad(V2) and MaxPool3DGradGrad (each output takes the grad of the first window element
// equal to orig_output, TF's rule): definitions. The CPU kernels are in
// kernels/cpu/pool_nd_ops.cc.
#include "kernels/pool_nd_ops.h"

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

using pool_nd::ForwardDims;
using pool_nd::IsAvgGrad;
using pool_nd::IsGradGrad;
using pool_nd::IsMaxGrad;
using pool_nd::MaxPool3DTypes;
using pool_nd::PoolKind;
using pool_nd::PoolState;
using pool_nd::SpatialOf;
using pool_nd::WindowInput;

template <PoolKind kKind, typename List>
Status PreparePoolNd(PrepareContext& ctx) {
  constexpr int spatial = SpatialOf<kKind>(), rank = spatial + 2;
  constexpr int num_inputs = kKind == PoolKind::kMaxGradV2 || kKind == PoolKind::kMaxGradGradV2 ? 5
                             : kKind == PoolKind::kMaxV2 || IsMaxGrad(kKind) || IsGradGrad(kKind) ||
                                     kKind == PoolKind::kMaxGradWithArgmax
                                 ? 3
                             : IsAvgGrad(kKind) ? 2
                                                : 1;
  constexpr int window_input = WindowInput(kKind);
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(num_inputs));
  auto state = std::make_shared<PoolState>();
  // MaxPoolV2's and the max-pool gradients' T default to float in TF's OpDefs.
  const bool t_defaults = kKind == PoolKind::kMaxV2 || IsMaxGrad(kKind);
  if (t_defaults) {
    KILN_PREPARE_ASSIGN(ctx, state->dtype, ctx.attrs.GetType("T", DType::kFloat));
  } else {
    KILN_PREPARE_ASSIGN(ctx, state->dtype, ctx.attrs.GetType("T"));
  }
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", state->dtype, List::kDTypes));
  if (kKind == PoolKind::kMaxGrad3D) {  // TInput, the forward pass's dtype, must be T here
    KILN_PREPARE_ASSIGN(ctx, DType tin, ctx.attrs.GetType("TInput", DType::kFloat));
    if (tin != state->dtype) {
      return ctx.Error("attr 'TInput' ", DTypeShortName(tin), " differs from 'T' ",
                       DTypeShortName(state->dtype), "; only equal types are supported");
    }
  }
  WindowAttrOptions opts;
  opts.spatial = spatial;
  opts.read_ksize = window_input == 0;
  opts.read_strides = window_input == 0;
  opts.allow_explicit = kKind == PoolKind::kMaxGrad;
  opts.has_data_format = kKind != PoolKind::kMaxWithArgmax && kKind != PoolKind::kMaxGradWithArgmax;
  KILN_RETURN_IF_ERROR(ReadWindowAttrs(ctx, opts, &state->attrs));
  const DType t = state->dtype;
  std::vector<DType> out_types = {t};
  DType targmax = DType::kInt64;
  if (kKind == PoolKind::kMaxWithArgmax || kKind == PoolKind::kMaxGradWithArgmax) {
    KILN_PREPARE_ASSIGN(ctx, targmax, ctx.attrs.GetType("Targmax", DType::kInt64));
    KILN_RETURN_IF_ERROR(
        ExpectAttrDTypeIn(ctx, "Targmax", targmax, {DType::kInt32, DType::kInt64}));
    KILN_PREPARE_ASSIGN(ctx, state->include_batch_in_index,
                        ctx.attrs.GetBool("include_batch_in_index", false));
    if (kKind == PoolKind::kMaxWithArgmax) out_types.push_back(targmax);
  }
  // The image input and where the output's dims come from.
  std::vector<int64_t> in(rank, -1);
  bool known_window = true;
  if (IsAvgGrad(kKind)) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "orig_input_shape", DType::kInt32));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "orig_input_shape", 1));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "grad", t));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "grad", rank));
    if (const Tensor* s = ConstantInput(ctx, 0)) {
      std::vector<int64_t> v = IndexValues(*s);
      if (v.size() != rank) {
        return ctx.Error("input 'orig_input_shape' must have ", rank, " entries, got ",
                         DimsString(v));
      }
      for (int64_t x : v)
        if (x < 0) return ctx.Error("input 'orig_input_shape' ", DimsString(v), " is negative");
      in = v;
    } else {
      in[0] = DimsOrUnknown(ctx.inputs[1].shape, rank)[0];
      in[rank - 1] = DimsOrUnknown(ctx.inputs[1].shape, rank)[rank - 1];
    }
  } else {
    KILN_RETURN_IF_ERROR(ExpectInputDType(
        ctx, 0, IsMaxGrad(kKind) || IsGradGrad(kKind) ? "orig_input" : "input", t));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "input", rank));
    in = DimsOrUnknown(ctx.inputs[0].shape, rank);
  }
  if (window_input > 0) {
    for (int i : {window_input, window_input + 1}) {
      const bool ksize = i == window_input;
      const char* name = ksize ? "ksize" : "strides";
      KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, name, DType::kInt32));
      KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, i, name, 1));
      if (const Tensor* v = ConstantInput(ctx, i)) {
        KILN_RETURN_IF_ERROR(CheckWindowList(ctx, std::string("input '") + name + "'",
                                             IndexValues(*v), spatial,
                                             ksize ? &state->attrs.ksize : &state->attrs.strides));
      } else {
        known_window = false;
      }
    }
  }
  std::array<WindowDim, 3> d;
  std::vector<int64_t> fwd(rank, -1);
  if (known_window) {
    Status s = MakeWindowDims(state->attrs, in, state->attrs.ksize, &d);
    if (!s.ok()) return ctx.Error(s.message());
    fwd = ForwardDims(state->attrs, in, d);
  } else {
    fwd[0] = in[0];
    fwd[rank - 1] = in[rank - 1];
  }
  if (IsMaxGrad(kKind)) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "orig_output", t));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "grad", t));
    for (int i : {1, 2}) {
      const PartialShape& s = ctx.inputs[i].shape;
      KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, i, i == 1 ? "orig_output" : "grad", rank));
      if (known_window && !s.unknown_rank() &&
          !PartialShape(*PartialShape::FromDims(fwd)).IsCompatibleWith(s)) {
        return ctx.Error("input '", i == 1 ? "orig_output" : "grad", "' has shape ",
                         s.ToPythonString(), " but pooling the input gives ", DimsString(fwd));
      }
    }
  }
  if (IsGradGrad(kKind) || kKind == PoolKind::kMaxGradWithArgmax) {
    // GradGrad: orig_output pooled, grad input-shaped; GradWithArgmax: grad and argmax pooled.
    const bool gg = IsGradGrad(kKind);
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, gg ? "orig_output" : "grad", t));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, gg ? "grad" : "argmax", gg ? t : targmax));
    for (int i : {1, 2}) {
      const char* name = gg ? (i == 1 ? "orig_output" : "grad") : (i == 1 ? "grad" : "argmax");
      KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, i, name, rank));
      const std::vector<int64_t>& want = gg && i == 2 ? in : fwd;
      const PartialShape& s = ctx.inputs[i].shape;
      if ((known_window || (gg && i == 2)) && !s.unknown_rank() &&
          !PartialShape(*PartialShape::FromDims(want)).IsCompatibleWith(s)) {
        return ctx.Error("input '", name, "' has shape ", s.ToPythonString(), ", expected ",
                         DimsString(want));
      }
    }
  }
  if (IsAvgGrad(kKind)) {
    const PartialShape& s = ctx.inputs[1].shape;
    if (!s.unknown_rank() && !PartialShape(*PartialShape::FromDims(fwd)).IsCompatibleWith(s)) {
      return ctx.Error("input 'grad' has shape ", s.ToPythonString(),
                       " but pooling an input of shape ", DimsString(in), " gives ",
                       DimsString(fwd));
    }
  }
  const bool grad = IsMaxGrad(kKind) || IsAvgGrad(kKind) || kKind == PoolKind::kMaxGradWithArgmax;
  KILN_PREPARE_ASSIGN(ctx, PartialShape out, PartialShape::FromDims(grad ? in : fwd));
  for (DType ot : out_types) ctx.outputs.push_back(TensorSpec{ot, out});
  ctx.state = std::move(state);
  return OkStatus();
}
constexpr OpDefinition kDefs[] = {
    {"AvgPool3D", "output", kOpFreshOutputs, PreparePoolNd<PoolKind::kAvg3D, FloatTypes>},
    {"MaxPool3D", "output", kOpFreshOutputs, PreparePoolNd<PoolKind::kMax3D, MaxPool3DTypes>},
    {"MaxPoolV2", "output", kOpFreshOutputs, PreparePoolNd<PoolKind::kMaxV2, RealTypes>},
    {"MaxPoolWithArgmax", "output,argmax", kOpFreshOutputs,
     PreparePoolNd<PoolKind::kMaxWithArgmax, RealTypes>},
    {"MaxPoolGrad", "output", kOpFreshOutputs, PreparePoolNd<PoolKind::kMaxGrad, RealTypes>},
    {"AvgPoolGrad", "output", kOpFreshOutputs, PreparePoolNd<PoolKind::kAvgGrad, FloatTypes>},
    {"MaxPoolGradV2", "output", kOpFreshOutputs, PreparePoolNd<PoolKind::kMaxGradV2, RealTypes>},
    {"MaxPool3DGrad", "output", kOpFreshOutputs,
     PreparePoolNd<PoolKind::kMaxGrad3D, MaxPool3DTypes>},
    {"AvgPool3DGrad", "output", kOpFreshOutputs, PreparePoolNd<PoolKind::kAvgGrad3D, FloatTypes>},
    {"MaxPoolGradGrad", "output", kOpFreshOutputs,
     PreparePoolNd<PoolKind::kMaxGradGrad, RealTypes>},
    {"MaxPoolGradGradV2", "output", kOpFreshOutputs,
     PreparePoolNd<PoolKind::kMaxGradGradV2, RealTypes>},
    {"MaxPool3DGradGrad", "output", kOpFreshOutputs,
     PreparePoolNd<PoolKind::kMaxGradGrad3D, MaxPool3DTypes>},
    {"MaxPoolGradWithArgmax", "output", kOpFreshOutputs,
     PreparePoolNd<PoolKind::kMaxGradWithArgmax, RealTypes>},
};

}  // namespace

std::span<const OpDefinition> PoolNdOpDefs() { return kDefs; }

}  // namespace kiln::exec
