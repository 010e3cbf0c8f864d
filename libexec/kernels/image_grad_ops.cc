// Gradients of the image resizes (NHWC), definitions (the CPU kernels are in
// kernels/cpu/image_grad_ops.cc):
//   ResizeBilinearGrad(grads: float, original_image: T): each grads pixel goes to its four source
//     pixels with the bilinear weights; the output has original_image's shape and dtype.
//   ResizeBicubicGrad(grads: float, original_image: T): the same over the 4x4 cubic taps.
//   ResizeNearestNeighborGrad(grads: T, size): each grads pixel is added to the pixel it was
//     copied from in an image of height and width `size`.
//   CropAndResizeGradImage(grads, boxes, box_ind, image_size): the gradient of CropAndResize
//     with respect to the image (bilinear or nearest), summed into an image_size tensor of T.
//   CropAndResizeGradBoxes(grads, image, boxes, box_ind): with respect to the box corners.
#include "kernels/image_grad_ops.h"

#include <string>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using image_grad::BicubicGradTypes;
using image_grad::BilinearGradTypes;
using image_grad::CropGradBoxesTypes;
using image_grad::CropGradImageTypes;
using image_grad::CropGradState;
using image_grad::GradKind;
using image_grad::GradState;
using image_grad::NearestGradTypes;

template <GradKind K, typename List>
Status PrepareResizeGrad(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  auto st = std::make_shared<GradState>();
  KILN_PREPARE_ASSIGN(ctx, st->t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->t, List::kDTypes));
  KILN_PREPARE_ASSIGN(ctx, st->align_corners, ctx.attrs.GetBool("align_corners", false));
  KILN_PREPARE_ASSIGN(ctx, st->half_pixel_centers, ctx.attrs.GetBool("half_pixel_centers", false));
  if (st->half_pixel_centers && st->align_corners) {
    return ctx.Error("attrs 'half_pixel_centers' and 'align_corners' cannot both be true ",
                     "(TensorFlow: if half_pixel_centers is True, align_corners must be False)");
  }
  KILN_RETURN_IF_ERROR(
      ExpectInputDType(ctx, 0, "grads", K == GradKind::kNearest ? st->t : DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "grads", 4));
  const PartialShape& grads = ctx.inputs[0].shape;
  if (K == GradKind::kNearest) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "size", DType::kInt32));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "size", 1));
    const int64_t n = KnownLength(ctx.inputs[1].shape);
    if (n >= 0 && n != 2) {
      return ctx.Error("input 'size' must have 2 elements (height, width), got shape ",
                       ctx.inputs[1].shape.ToPythonString());
    }
    int64_t h = -1, w = -1;
    if (const Tensor* size = ConstantInput(ctx, 1)) {
      const std::vector<int64_t> v = IndexValues(*size);
      if (v.size() == 2) {
        h = v[0];
        w = v[1];
      }
    }
    const bool known = !grads.unknown_rank();
    ctx.outputs = {TensorSpec{
        st->t, PartialShape{known ? grads.dim(0) : -1, h, w, known ? grads.dim(3) : -1}}};
  } else {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "original_image", st->t));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "original_image", 4));
    const PartialShape& orig = ctx.inputs[1].shape;
    if (!grads.unknown_rank() && !orig.unknown_rank()) {
      for (int d : {0, 3}) {
        if (grads.dim(d) >= 0 && orig.dim(d) >= 0 && grads.dim(d) != orig.dim(d)) {
          return ctx.Error("inputs 'grads' ", grads.ToPythonString(), " and 'original_image' ",
                           orig.ToPythonString(), " must have the same ",
                           d == 0 ? "batch size" : "number of channels");
        }
      }
    }
    ctx.outputs = {TensorSpec{st->t, orig}};
  }
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- CropAndResize gradients -----------------------------------------------------------------

// CropAndResizeGradImage(grads, boxes, box_ind, image_size) and CropAndResizeGradBoxes(grads,
// image, boxes, box_ind): inputs 'boxes' and 'box_ind' sit at 1, 2 or 2, 3.
template <bool kBoxes>
Status PrepareCropGrad(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  auto st = std::make_shared<CropGradState>();
  KILN_PREPARE_ASSIGN(ctx, st->t, ctx.attrs.GetType("T"));
  if (kBoxes) {
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->t, CropGradBoxesTypes::kDTypes));
  } else {
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->t, CropGradImageTypes::kDTypes));
  }
  KILN_PREPARE_ASSIGN(ctx, std::string method, ctx.attrs.GetString("method", "bilinear"));
  if (method != "bilinear" && (kBoxes || method != "nearest")) {
    return ctx.Error("attr 'method' must be \"bilinear\"", kBoxes ? "" : " or \"nearest\"",
                     ", got \"", method, "\"");
  }
  st->nearest = method == "nearest";
  const int box_at = kBoxes ? 2 : 1;
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "grads", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "grads", 4));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, box_at, "boxes", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, box_at, "boxes", 2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, box_at + 1, "box_ind", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, box_at + 1, "box_ind", 1));
  const PartialShape& grads = ctx.inputs[0].shape;
  if (kBoxes) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "image", st->t));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "image", 4));
    ctx.outputs = {
        TensorSpec{DType::kFloat, PartialShape{grads.unknown_rank() ? -1 : grads.dim(0), 4}}};
  } else {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "image_size", DType::kInt32));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 3, "image_size", 1));
    PartialShape out{-1, -1, -1, grads.unknown_rank() ? -1 : grads.dim(3)};
    if (const Tensor* size = ConstantInput(ctx, 3); size != nullptr && size->NumElements() == 4) {
      const std::vector<int64_t> v = IndexValues(*size);
      if (v[0] < 0 || v[1] <= 0 || v[2] <= 0 || v[3] < 0) {
        return ctx.Error("input 'image_size' must hold [batch, height, width, depth] with a ",
                         "positive height and width, got ", DimsString(v));
      }
      out = PartialShape{v[0], v[1], v[2], v[3]};
    }
    ctx.outputs = {TensorSpec{st->t, out}};
  }
  ctx.state = std::move(st);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"ResizeBilinearGrad", "output", kOpFreshOutputs,
     PrepareResizeGrad<GradKind::kBilinear, BilinearGradTypes>},
    {"ResizeBicubicGrad", "output", kOpFreshOutputs,
     PrepareResizeGrad<GradKind::kBicubic, BicubicGradTypes>},
    {"ResizeNearestNeighborGrad", "output", kOpFreshOutputs,
     PrepareResizeGrad<GradKind::kNearest, NearestGradTypes>},
    {"CropAndResizeGradImage", "output", kOpFreshOutputs, PrepareCropGrad<false>},
    {"CropAndResizeGradBoxes", "output", kOpFreshOutputs, PrepareCropGrad<true>},
};

}  // namespace

std::span<const OpDefinition> ImageGradOpDefs() { return kDefs; }

}  // namespace kiln::exec
