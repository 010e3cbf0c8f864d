// Colour ops on images whose last dim holds RGB (or HSV): RGBToHSV, HSVToRGB, AdjustHue,
// AdjustSaturation, AdjustContrastv2: definitions. The CPU kernels are in
// kernels/cpu/image_color_ops.cc.
#include "kernels/image_color_ops.h"

#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using image_color::AdjustTypes;
using image_color::ColorspaceTypes;

// ---- RGBToHSV, HSVToRGB --------------------------------------------------------------------

template <typename List>
Status PrepareRgbOp(PrepareContext& ctx) {
  const bool has_factor = ctx.op != "RGBToHSV" && ctx.op != "HSVToRGB";
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(has_factor ? 2 : 1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, List::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "images", t));
  const PartialShape& s = ctx.inputs[0].shape;
  const bool contrast = ctx.op == "AdjustContrastv2";
  const int min_rank = has_factor ? 3 : 1;
  if (!s.unknown_rank()) {
    if (s.rank() < min_rank) {
      return ctx.Error("input 'images' must be at least ", min_rank, "-D, got shape ",
                       s.ToPythonString());
    }
    const int64_t c = s.dim(s.rank() - 1);
    if (!contrast && c >= 0 && c != 3) {
      return ctx.Error("input 'images' must have 3 channels in its last dimension, got shape ",
                       s.ToPythonString());
    }
  }
  if (has_factor) {
    const char* name = contrast ? "contrast_factor" : ctx.op == "AdjustHue" ? "delta" : "scale";
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, name, DType::kFloat));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, name, 0));
  }
  ctx.outputs = {TensorSpec{t, s}};
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"RGBToHSV", "output", kOpFreshOutputs, PrepareRgbOp<ColorspaceTypes>},
    {"HSVToRGB", "output", kOpFreshOutputs, PrepareRgbOp<ColorspaceTypes>},
    {"AdjustHue", "output", kOpFreshOutputs, PrepareRgbOp<AdjustTypes>},
    {"AdjustSaturation", "output", kOpFreshOutputs, PrepareRgbOp<AdjustTypes>},
    {"AdjustContrastv2", "output", kOpFreshOutputs, PrepareRgbOp<AdjustTypes>},
};

}  // namespace

std::span<const OpDefinition> ImageColorOpDefs() { return kDefs; }

}  // namespace kiln::exec
