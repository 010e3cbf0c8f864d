// Image resampling through a map of coordinates: definitions. The CPU kernels, and how they
// compute, are in kernels/cpu/image_scale_translate_ops.cc.
//
// ScaleAndTranslate: separable resampling with a named filter kernel, what tf.image.resize runs
// for antialias=True and for the lanczos3/lanczos5/gaussian/mitchellcubic methods
// (tensorflow/core/kernels/image/scale_and_translate_op.cc, sampling_kernels.h). The output is
// always float. ScaleAndTranslateGrad (float only, as TF registers it) is its adjoint.
//
// ImageProjectiveTransformV2/V3: what Keras's RandomRotation, RandomZoom and RandomTranslation
// (and tf.raw_ops users) put in a graph (tensorflow/core/kernels/image/image_ops.{h,cc}).
#include "kernels/image_scale_translate_ops.h"

#include <algorithm>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/image_util.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

using image_scale_translate::FillMode;
using image_scale_translate::Filter;
using image_scale_translate::ScaleTranslateState;
using image_scale_translate::TransformState;
using image_scale_translate::TransformTypes;

struct FilterName {
  const char* name;
  Filter filter;
};

constexpr FilterName kFilters[] = {
    {"lanczos1", Filter::kLanczos1}, {"lanczos3", Filter::kLanczos3},
    {"lanczos5", Filter::kLanczos5}, {"gaussian", Filter::kGaussian},
    {"box", Filter::kBox},           {"triangle", Filter::kTriangle},
    {"keyscubic", Filter::kKeys},    {"mitchellcubic", Filter::kMitchell},
};

// kernel_type and antialias, shared by the op and its gradient.
Result<std::shared_ptr<ScaleTranslateState>> ReadScaleTranslateAttrs(PrepareContext& ctx) {
  auto st = std::make_shared<ScaleTranslateState>();
  KILN_PREPARE_ASSIGN(ctx, st->t, ctx.attrs.GetType("T"));
  std::string kernel;
  KILN_PREPARE_ASSIGN(ctx, kernel, ctx.attrs.GetString("kernel_type", "lanczos3"));
  KILN_PREPARE_ASSIGN(ctx, st->antialias, ctx.attrs.GetBool("antialias", true));
  const auto* it = std::find_if(std::begin(kFilters), std::end(kFilters),
                                [&](const FilterName& n) { return kernel == n.name; });
  if (it == std::end(kFilters)) {
    return ctx.Error("attr 'kernel_type' must be one of lanczos1, lanczos3, lanczos5, gaussian, ",
                     "box, triangle, keyscubic, mitchellcubic; got '", kernel, "'");
  }
  st->filter = it->filter;
  return st;
}

Status PrepareScaleAndTranslate(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<ScaleTranslateState> st, ReadScaleTranslateAttrs(ctx));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->t, RealTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "images", st->t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "images", 4));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "size", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "scale", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "translation", DType::kFloat));
  static constexpr const char* kNames[] = {"size", "scale", "translation"};
  for (int i = 1; i <= 3; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, i, kNames[i - 1], 1));
    const int64_t n = KnownLength(ctx.inputs[i].shape);
    if (n >= 0 && n != 2) {
      return ctx.Error("input '", kNames[i - 1], "' must have 2 elements, got shape ",
                       ctx.inputs[i].shape.ToPythonString());
    }
  }
  KILN_ASSIGN_OR_RETURN(PartialShape out_shape, ResizedImageShape(ctx));
  if (const Tensor* scale = ConstantInput(ctx, 2)) {
    if (scale->NumElements() == 2 &&
        !(scale->data<float>()[0] > 0 && scale->data<float>()[1] > 0)) {
      return ctx.Error("input 'scale' must be greater than zero");
    }
  }
  ctx.outputs = {TensorSpec{DType::kFloat, out_shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ScaleAndTranslateGrad(grads, original_image, scale, translation): the forward's adjoint, as
// TF computes it: per dim, each input index gathers the forward outputs whose spans reach it
// (its nonzero weights, from the first such output on: a span of its own), and the two passes
// run over grads with those spans. The output is grads' batch and channels at the original
// image's height and width.
Status PrepareScaleAndTranslateGrad(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<ScaleTranslateState> st, ReadScaleTranslateAttrs(ctx));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->t, {DType::kFloat}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "grads", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "original_image", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "scale", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "translation", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "grads", 4));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "original_image", 4));
  const std::vector<int64_t> g = DimsOrUnknown(ctx.inputs[0].shape, 4);
  const std::vector<int64_t> orig = DimsOrUnknown(ctx.inputs[1].shape, 4);
  ctx.outputs = {TensorSpec{DType::kFloat, PartialShape{g[0], orig[1], orig[2], g[3]}}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- ImageProjectiveTransformV2/V3 ------------------------------------------------------------

template <bool kV3>
Status PrepareProjectiveTransform(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(kV3 ? 4 : 3));
  auto st = std::make_shared<TransformState>();
  KILN_PREPARE_ASSIGN(ctx, st->t, ctx.attrs.GetType("dtype"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "dtype", st->t, TransformTypes::kDTypes));
  std::string interpolation, fill_mode;
  KILN_PREPARE_ASSIGN(ctx, interpolation, ctx.attrs.GetString("interpolation"));
  KILN_PREPARE_ASSIGN(ctx, fill_mode, ctx.attrs.GetString("fill_mode", "CONSTANT"));
  if (interpolation != "NEAREST" && interpolation != "BILINEAR")
    return ctx.Error("attr 'interpolation' must be NEAREST or BILINEAR, got '", interpolation, "'");
  st->bilinear = interpolation == "BILINEAR";
  static constexpr std::pair<const char*, FillMode> kModes[] = {{"REFLECT", FillMode::kReflect},
                                                                {"WRAP", FillMode::kWrap},
                                                                {"CONSTANT", FillMode::kConstant},
                                                                {"NEAREST", FillMode::kNearest}};
  const auto* mode = std::find_if(std::begin(kModes), std::end(kModes),
                                  [&](const auto& m) { return fill_mode == m.first; });
  if (mode == std::end(kModes))
    return ctx.Error("attr 'fill_mode' must be REFLECT, WRAP, CONSTANT or NEAREST, got '",
                     fill_mode, "'");
  st->fill = mode->second;
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "images", st->t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "images", 4));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "transforms", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "transforms", 2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "output_shape", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "output_shape", 1));
  if (kV3) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "fill_value", DType::kFloat));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 3, "fill_value", 0));
  }
  const PartialShape& images = ctx.inputs[0].shape;
  std::vector<int64_t> in(4, -1);
  if (!images.unknown_rank()) in.assign(images.dims().begin(), images.dims().end());
  int64_t h = -1, w = -1;
  if (const Tensor* size = ConstantInput(ctx, 2)) {
    const std::vector<int64_t> v = IndexValues(*size);
    if (v.size() != 2 || v[0] <= 0 || v[1] <= 0)
      return ctx.Error("input 'output_shape' must hold two positive values, got ", DimsString(v));
    h = v[0];
    w = v[1];
  }
  ctx.outputs = {TensorSpec{st->t, PartialShape{in[0], h, w, in[3]}}};
  ctx.state = std::move(st);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"ImageProjectiveTransformV2", "transformed_images", kOpFreshOutputs,
     PrepareProjectiveTransform<false>},
    {"ImageProjectiveTransformV3", "transformed_images", kOpFreshOutputs,
     PrepareProjectiveTransform<true>},
    {"ScaleAndTranslate", "resized_images", kOpFreshOutputs, PrepareScaleAndTranslate},
    {"ScaleAndTranslateGrad", "output", kOpFreshOutputs, PrepareScaleAndTranslateGrad},
};

}  // namespace

std::span<const OpDefinition> ImageScaleTranslateOpDefs() { return kDefs; }

}  // namespace kiln::exec
