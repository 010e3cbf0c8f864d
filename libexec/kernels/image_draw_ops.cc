// DrawBoundingBoxes(images, boxes) and DrawBoundingBoxesV2(images, boxes, colors), as TF's CPU
// kernel: a copy of the NHWC images (1, 3 or 4 channels) with the outline of each box
// [y_min, x_min, y_max, x_max] (relative: 0 and 1 are the first and last pixel, truncated to
// whole pixels) drawn one pixel wide in colour box % num_colors. The colours are V2's `colors`
// rows (non-empty) or TF's table of ten; grayscale images draw in channel 0 = 1. Inverted
// boxes and boxes wholly outside the image are skipped; lines outside it are not drawn.
// The CPU kernels are in kernels/cpu/image_draw_ops.cc.
#include "kernels/image_draw_ops.h"

#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using image_draw::DrawTypes;

template <bool kV2>
Status PrepareDrawBoxes(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(kV2 ? 3 : 2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, DrawTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "images", t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "images", 4));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "boxes", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "boxes", 3));
  if (kV2) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "colors", DType::kFloat));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "colors", 2));
  }
  const PartialShape& images = ctx.inputs[0].shape;
  if (!images.unknown_rank()) {
    const int64_t depth = images.dim(3);
    if (depth >= 0 && depth != 1 && depth != 3 && depth != 4) {
      return ctx.Error("input 'images' must have 1 (gray), 3 (RGB) or 4 (RGBA) channels, got ",
                       depth);
    }
  }
  ctx.outputs = {TensorSpec{t, images}};
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"DrawBoundingBoxes", "output", kOpFreshOutputs, PrepareDrawBoxes<false>},
    {"DrawBoundingBoxesV2", "output", kOpFreshOutputs, PrepareDrawBoxes<true>},
};

}  // namespace

std::span<const OpDefinition> ImageDrawOpDefs() { return kDefs; }

}  // namespace kiln::exec
