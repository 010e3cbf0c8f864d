// TensorFlow's quantized image ops (a qint8, quint8 or qint32 tensor with a float range beside
// it), as TF's reference CPU kernels compute them (TF_ENABLE_ONEDNN_OPTS=0): QuantizedMaxPool,
// QuantizedAvgPool, QuantizedResizeBilinear (its fixed-point lerp),
// QuantizedBatchNormWithGlobalNormalization (its qint32 fixed point) and QuantizedInstanceNorm.
// Each uses the conversion TF's kernel uses (the scalar or the "Eigen" one, quantized_util.h),
// a qint32 read through float, and denormals flushed, so the integers are TF's (checked against
// TF in tests/tf/test_quantized_ops_tf.py).
// The CPU kernels are in kernels/cpu/quantized_image_ops.cc.
#include "kernels/quantized_image_ops.h"

#include <memory>
#include <utility>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/quantized_util.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

using quantized_image::BatchNormState;
using quantized_image::InstanceNormState;
using quantized_image::PoolState;
using quantized_image::ResizeState;

// ---- QuantizedMaxPool, QuantizedAvgPool ----------------------------------------------------

Status PrepareQuantizedPool(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, {DType::kQUInt8, DType::kQInt8}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "min_input", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "max_input", DType::kFloat));
  auto st = std::make_shared<PoolState>();
  WindowAttrOptions opts;
  opts.read_ksize = true;
  opts.has_data_format = false;
  KILN_RETURN_IF_ERROR(ReadWindowAttrs(ctx, opts, &st->window));
  const PartialShape& x = ctx.inputs[0].shape;
  if (!x.unknown_rank() && x.rank() != 4)
    return ctx.Error("input must be 4-dimensional, got ", x.ToPythonString());
  ctx.outputs = {TensorSpec{t, UnknownDims(4)}, TensorSpec{DType::kFloat, PartialShape::Scalar()},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- QuantizedResizeBilinear ---------------------------------------------------------------

Status PrepareQuantizedResize(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  auto st = std::make_shared<ResizeState>();
  KILN_PREPARE_ASSIGN(ctx, st->type, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(
      ExpectAttrDTypeIn(ctx, "T", st->type, {DType::kQUInt8, DType::kQInt32, DType::kFloat}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "images", st->type));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "size", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "min", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "max", DType::kFloat));
  KILN_PREPARE_ASSIGN(ctx, st->align_corners, ctx.attrs.GetBool("align_corners", false));
  KILN_PREPARE_ASSIGN(ctx, st->half_pixel_centers, ctx.attrs.GetBool("half_pixel_centers", false));
  ctx.outputs = {TensorSpec{st->type, UnknownDims(4)},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- QuantizedBatchNormWithGlobalNormalization ---------------------------------------------

Status PrepareQuantizedBatchNorm(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(15));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("Tinput"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tinput", t, {DType::kQUInt8}));
  KILN_PREPARE_ASSIGN(ctx, DType out, ctx.attrs.GetType("out_type"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "out_type", out, {DType::kQInt32}));
  for (int i = 0; i < 15; i += 3) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, "tensor", t));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i + 1, "min", DType::kFloat));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i + 2, "max", DType::kFloat));
  }
  auto st = std::make_shared<BatchNormState>();
  if (ctx.attrs.Find("variance_epsilon") == nullptr ||
      ctx.attrs.Find("scale_after_normalization") == nullptr)
    return ctx.Error("attrs 'variance_epsilon' and 'scale_after_normalization' are required");
  KILN_PREPARE_ASSIGN(ctx, st->epsilon, ctx.attrs.GetFloat("variance_epsilon", 0.0f));
  KILN_PREPARE_ASSIGN(ctx, st->scale_after, ctx.attrs.GetBool("scale_after_normalization", false));
  ctx.outputs = {TensorSpec{DType::kQInt32, ctx.inputs[0].shape},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- QuantizedInstanceNorm -----------------------------------------------------------------

Status PrepareQuantizedInstanceNorm(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, {DType::kQUInt8}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "x_min", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "x_max", DType::kFloat));
  auto st = std::make_shared<InstanceNormState>();
  KILN_PREPARE_ASSIGN(ctx, st->range_given, ctx.attrs.GetBool("output_range_given", false));
  KILN_PREPARE_ASSIGN(ctx, st->given_min, ctx.attrs.GetFloat("given_y_min", 0.0f));
  KILN_PREPARE_ASSIGN(ctx, st->given_max, ctx.attrs.GetFloat("given_y_max", 0.0f));
  KILN_PREPARE_ASSIGN(ctx, st->epsilon, ctx.attrs.GetFloat("variance_epsilon", 1e-5f));
  KILN_PREPARE_ASSIGN(ctx, st->min_separation, ctx.attrs.GetFloat("min_separation", 1e-3f));
  if (st->range_given && !(st->given_min < st->given_max))
    return ctx.Error("given_y_min must be less than given_y_max : ", st->given_min,
                     " >= ", st->given_max);
  const PartialShape& x = ctx.inputs[0].shape;
  if (!x.unknown_rank() && x.rank() != 4)
    return ctx.Error("x must be 4-dimensional, got ", x.ToPythonString());
  ctx.outputs = {TensorSpec{t, x}, TensorSpec{DType::kFloat, PartialShape::Scalar()},
                 TensorSpec{DType::kFloat, PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"QuantizedMaxPool", kQOut, kOpFreshOutputs, PrepareQuantizedPool},
    {"QuantizedAvgPool", kQOut, kOpFreshOutputs, PrepareQuantizedPool},
    {"QuantizedResizeBilinear", "resized_images,out_min,out_max", kOpFreshOutputs,
     PrepareQuantizedResize},
    {"QuantizedBatchNormWithGlobalNormalization", "result,result_min,result_max", kOpFreshOutputs,
     PrepareQuantizedBatchNorm},
    {"QuantizedInstanceNorm", "y,y_min,y_max", kOpFreshOutputs, PrepareQuantizedInstanceNorm},
};

}  // namespace

std::span<const OpDefinition> QuantizedImageOpDefs() { return kDefs; }

}  // namespace kiln::exec
