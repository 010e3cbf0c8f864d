// Image resizing over NHWC batches: ResizeBilinear, ResizeNearestNeighbor, ResizeBicubic,
// ResizeArea and CropAndResize: definitions. Every output is float except
// ResizeNearestNeighbor's (the input dtype). The CPU kernels are in
// kernels/cpu/image_resize_ops.cc.
#include "kernels/image_resize_ops.h"

#include <limits>
#include <string>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/image_resize_coords.h"
#include "kernels/image_util.h"
#include "kernels/kernel_util.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

using image_resize::CropState;
using image_resize::CropTypes;
using image_resize::Resize;
using image_resize::ResizeState;
using image_resize::ResizeTypes;

template <Resize kKind, typename List>
Status PrepareResize(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  auto st = std::make_shared<ResizeState>();
  st->kind = kKind;
  KILN_PREPARE_ASSIGN(ctx, st->t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->t, List::kDTypes));
  KILN_PREPARE_ASSIGN(ctx, st->align_corners, ctx.attrs.GetBool("align_corners", false));
  if (kKind != Resize::kArea) {
    KILN_PREPARE_ASSIGN(ctx, st->half_pixel_centers,
                        ctx.attrs.GetBool("half_pixel_centers", false));
  }
  if (st->half_pixel_centers && st->align_corners) {
    return ctx.Error("attrs 'half_pixel_centers' and 'align_corners' cannot both be true ",
                     "(TensorFlow: if half_pixel_centers is True, align_corners must be False)");
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "images", st->t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "images", 4));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "size", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "size", 1));
  const int64_t n = KnownLength(ctx.inputs[1].shape);
  if (n >= 0 && n != 2) {
    return ctx.Error("input 'size' must have 2 elements (new_height, new_width), got shape ",
                     ctx.inputs[1].shape.ToPythonString());
  }
  KILN_ASSIGN_OR_RETURN(PartialShape out_shape, ResizedImageShape(ctx));
  const DType out = kKind == Resize::kNearest ? st->t : DType::kFloat;
  ctx.outputs = {TensorSpec{out, out_shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- CropAndResize ---------------------------------------------------------------------------

Status PrepareCropAndResize(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  auto st = std::make_shared<CropState>();
  KILN_PREPARE_ASSIGN(ctx, st->t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->t, CropTypes::kDTypes));
  KILN_PREPARE_ASSIGN(ctx, std::string method, ctx.attrs.GetString("method", "bilinear"));
  if (method != "bilinear" && method != "nearest") {
    return ctx.Error("attr 'method': expected \"bilinear\" or \"nearest\", got \"", method, "\"");
  }
  st->nearest = method == "nearest";
  KILN_PREPARE_ASSIGN(ctx, st->extrapolation, ctx.attrs.GetFloat("extrapolation_value", 0.0f));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "image", st->t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "image", 4));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "boxes", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "boxes", 2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "box_ind", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "box_ind", 1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "crop_size", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 3, "crop_size", 1));
  const PartialShape& boxes = ctx.inputs[1].shape;
  const PartialShape& ind = ctx.inputs[2].shape;
  int64_t n = -1;
  if (!boxes.unknown_rank()) {
    if (boxes.dim(1) >= 0 && boxes.dim(1) != 4) {
      return ctx.Error("input 'boxes' must have shape (num_boxes, 4), got ",
                       boxes.ToPythonString());
    }
    n = boxes.dim(0);
  }
  if (!ind.unknown_rank() && ind.dim(0) >= 0) {
    if (n >= 0 && ind.dim(0) != n) {
      return ctx.Error("inputs 'boxes' ", boxes.ToPythonString(), " and 'box_ind' ",
                       ind.ToPythonString(), " disagree on the number of boxes");
    }
    n = ind.dim(0);
  }
  int64_t h = -1, w = -1;
  if (const Tensor* size = ConstantInput(ctx, 3)) {
    std::vector<int64_t> v = IndexValues(*size);
    if (v.size() != 2 || v[0] <= 0 || v[1] <= 0) {
      return ctx.Error("input 'crop_size' must hold two positive values, got ", DimsString(v));
    }
    h = v[0];
    w = v[1];
  }
  const PartialShape& image = ctx.inputs[0].shape;
  const int64_t c = image.unknown_rank() ? -1 : image.dim(3);
  ctx.outputs = {TensorSpec{DType::kFloat, PartialShape{n, h, w, c}}};
  ctx.state = std::move(st);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"ResizeBilinear", "resized_images", kOpFreshOutputs,
     PrepareResize<Resize::kBilinear, ResizeTypes>},
    {"ResizeNearestNeighbor", "resized_images", kOpFreshOutputs,
     PrepareResize<Resize::kNearest, ResizeTypes>},
    {"ResizeBicubic", "resized_images", kOpFreshOutputs,
     PrepareResize<Resize::kBicubic, ResizeTypes>},
    {"ResizeArea", "resized_images", kOpFreshOutputs, PrepareResize<Resize::kArea, ResizeTypes>},
    {"CropAndResize", "crops", kOpFreshOutputs, PrepareCropAndResize},
};

}  // namespace

namespace image_resize {

Status MakeResizeGeom(const KernelContext& ctx, const ResizeState& st, ResizeGeom* g) {
  const Tensor& images = ctx.input(0);
  const Tensor& size = ctx.input(1);
  if (images.rank() != 4) {
    return ctx.Error("input 'images' must be 4-dimensional, got shape ", images.shape().ToString());
  }
  if (size.rank() != 1 || size.NumElements() != 2) {
    return ctx.Error("input 'size' must have 2 elements, got shape ", size.shape().ToString());
  }
  g->batch = images.dim(0);
  g->in_h = images.dim(1);
  g->in_w = images.dim(2);
  g->c = images.dim(3);
  if (g->c <= 0) return ctx.Error("input 'images' must have at least one channel");
  if (g->in_h <= 0 || g->in_w <= 0) {
    return ctx.Error("input 'images' must have a non-zero height and width, got shape ",
                     images.shape().ToString());
  }
  if (g->in_h > std::numeric_limits<int32_t>::max() ||
      g->in_w > std::numeric_limits<int32_t>::max()) {
    return ctx.Error("input sizes must be between 0 and max int32");
  }
  g->out_h = size.data<int32_t>()[0];
  g->out_w = size.data<int32_t>()[1];
  if (g->out_h <= 0 || g->out_w <= 0) {
    return ctx.Error("input 'size' must hold two positive values, got [", g->out_h, ", ", g->out_w,
                     "]");
  }
  const int64_t out_dims[] = {g->batch, g->out_h, g->out_w, g->c};
  KILN_RETURN_IF_ERROR_CTX(CheckElementCount(out_dims, "output shape"), "node '", ctx.node_name(),
                           "'");
  if (st.kind == Resize::kNearest && (g->in_h >= (1 << 24) || g->in_w >= (1 << 24))) {
    return ctx.Error("nearest neighbor requires max height & width of 2^24");
  }
  g->scale_h = ResizeScale(g->in_h, g->out_h, st.align_corners);
  g->scale_w = ResizeScale(g->in_w, g->out_w, st.align_corners);
  return OkStatus();
}

}  // namespace image_resize

std::span<const OpDefinition> ImageResizeOpDefs() { return kDefs; }

}  // namespace kiln::exec
