// Normalisation: FusedBatchNorm (V1, V2, V3) in inference and training mode,
// FusedBatchNormGrad (V1, V2, V3), LRN and LRNGrad: definitions. The CPU kernels are in
// kernels/cpu/norm_ops.cc.
#include "kernels/norm_ops.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using norm_ops::BatchNormState;
using norm_ops::LrnState;

// ---- FusedBatchNorm ------------------------------------------------------------------------

// data_format among the op's formats; sets channels_first.
Status ReadFormat(const PrepareContext& ctx, bool allow_3d, bool* channels_first) {
  KILN_PREPARE_ASSIGN(ctx, std::string format, ctx.attrs.GetString("data_format", "NHWC"));
  if (format == "NHWC" || (allow_3d && format == "NDHWC")) {
    *channels_first = false;
  } else if (format == "NCHW" || (allow_3d && format == "NCDHW")) {
    *channels_first = true;
  } else {
    return ctx.Error(
        "attr 'data_format': expected ",
        allow_3d ? "\"NHWC\", \"NCHW\", \"NDHWC\" or \"NCDHW\"" : "\"NHWC\" or \"NCHW\"",
        ", got \"", format, "\"");
  }
  return OkStatus();
}

// The channel count implied by x (rank 4, or 5 for V3) and the 1-D inputs, or -1.
Status CheckBatchNormShapes(const PrepareContext& ctx, int x_index, bool allow_5d,
                            bool channels_first, std::span<const int> vectors,
                            std::span<const char* const> names, int64_t* channels) {
  const PartialShape& x = ctx.inputs[x_index].shape;
  int64_t c = -1;
  if (!x.unknown_rank()) {
    if (x.rank() != 4 && !(allow_5d && x.rank() == 5)) {
      return ctx.Error("input 'x' must be ", allow_5d ? "4- or 5-dimensional" : "4-dimensional",
                       ", got shape ", x.ToPythonString());
    }
    c = x.dim(channels_first ? 1 : x.rank() - 1);
  }
  for (size_t k = 0; k < vectors.size(); ++k) {
    const PartialShape& s = ctx.inputs[vectors[k]].shape;
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, vectors[k], names[k], 1));
    if (s.unknown_rank() || s.dim(0) < 0) continue;
    if (c >= 0 && s.dim(0) != c) {
      return ctx.Error("input '", names[k], "' must have one element per channel of x (", c,
                       "), got shape ", s.ToPythonString());
    }
    c = s.dim(0);
  }
  *channels = c;
  return OkStatus();
}

template <int kVersion>
Status PrepareFusedBatchNorm(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(5));
  auto st = std::make_shared<BatchNormState>();
  st->version = kVersion;
  KILN_PREPARE_ASSIGN(ctx, st->t, ctx.attrs.GetType("T"));
  if (kVersion == 1) {
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->t, {DType::kFloat}));
  } else {
    KILN_RETURN_IF_ERROR(
        ExpectAttrDTypeIn(ctx, "T", st->t, {DType::kFloat, DType::kHalf, DType::kBFloat16}));
    KILN_PREPARE_ASSIGN(ctx, DType u, ctx.attrs.GetType("U"));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "U", u, {DType::kFloat}));
  }
  KILN_PREPARE_ASSIGN(ctx, st->epsilon, ctx.attrs.GetFloat("epsilon", 1e-4f));
  KILN_PREPARE_ASSIGN(ctx, st->avg_factor, ctx.attrs.GetFloat("exponential_avg_factor", 1.0f));
  KILN_PREPARE_ASSIGN(ctx, st->training, ctx.attrs.GetBool("is_training", true));
  KILN_RETURN_IF_ERROR(ReadFormat(ctx, kVersion == 3, &st->channels_first));
  const DType u = DType::kFloat;
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "x", st->t));
  static constexpr const char* kNames[] = {"scale", "offset", "mean", "variance"};
  for (int i = 1; i < 5; ++i) KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, kNames[i - 1], u));
  int64_t c = -1;
  static constexpr int kVectors[] = {1, 2, 3, 4};
  // mean and variance only matter (and are only checked by TF) outside plain training.
  const bool check_stats = !st->training || st->avg_factor != 1.0f;
  KILN_RETURN_IF_ERROR(
      CheckBatchNormShapes(ctx, 0, kVersion == 3, st->channels_first,
                           std::span<const int>(kVectors, check_stats ? 4 : 2),
                           std::span<const char* const>(kNames, check_stats ? 4 : 2), &c));
  ctx.outputs.push_back(TensorSpec{st->t, ctx.inputs[0].shape});
  for (int i = 0; i < 4; ++i) ctx.outputs.push_back(TensorSpec{u, PartialShape{c}});
  if (kVersion == 3) ctx.outputs.push_back(TensorSpec{u, PartialShape::Scalar()});
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- FusedBatchNormGradV3 -------------------------------------------------------------------

// V3 has a sixth input (reserve_space_3); V1 takes float only and has no U attr.
template <int kVersion>
Status PrepareFusedBatchNormGrad(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(kVersion == 3 ? 6 : 5));
  auto st = std::make_shared<BatchNormState>();
  KILN_PREPARE_ASSIGN(ctx, st->t, ctx.attrs.GetType("T"));
  if (kVersion == 1) {
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->t, {DType::kFloat}));
  } else {
    KILN_RETURN_IF_ERROR(
        ExpectAttrDTypeIn(ctx, "T", st->t, {DType::kFloat, DType::kHalf, DType::kBFloat16}));
  }
  DType u = DType::kFloat;
  if (kVersion != 1) {
    KILN_PREPARE_ASSIGN(ctx, u, ctx.attrs.GetType("U"));
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "U", u, {DType::kFloat}));
  }
  KILN_PREPARE_ASSIGN(ctx, st->epsilon, ctx.attrs.GetFloat("epsilon", 1e-4f));
  KILN_PREPARE_ASSIGN(ctx, st->training, ctx.attrs.GetBool("is_training", true));
  KILN_RETURN_IF_ERROR(ReadFormat(ctx, true, &st->channels_first));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "y_backprop", st->t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "x", st->t));
  static constexpr const char* kNames[] = {"scale", "reserve_space_1", "reserve_space_2"};
  for (int i = 2; i < 5; ++i) KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, kNames[i - 2], u));
  if (kVersion == 3) KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 5, "reserve_space_3", u));
  const PartialShape& dy = ctx.inputs[0].shape;
  const PartialShape& x = ctx.inputs[1].shape;
  if (!dy.IsCompatibleWith(x)) {
    return ctx.Error("inputs 'x' and 'y_backprop' must have the same shape, got ",
                     x.ToPythonString(), " and ", dy.ToPythonString());
  }
  int64_t c = -1;
  static constexpr int kVectors[] = {2, 3, 4};
  KILN_RETURN_IF_ERROR(
      CheckBatchNormShapes(ctx, 1, true, st->channels_first, kVectors, kNames, &c));
  KILN_PREPARE_ASSIGN(ctx, PartialShape shape, x.MergeWith(dy));
  ctx.outputs = {TensorSpec{st->t, shape}, TensorSpec{u, PartialShape{c}},
                 TensorSpec{u, PartialShape{c}}, TensorSpec{u, PartialShape{0}},
                 TensorSpec{u, PartialShape{0}}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- LRN -----------------------------------------------------------------------------------

Status ReadLrnAttrs(PrepareContext& ctx, LrnState* st) {
  KILN_PREPARE_ASSIGN(ctx, st->radius, ctx.attrs.GetInt("depth_radius", 5));
  KILN_PREPARE_ASSIGN(ctx, st->bias, ctx.attrs.GetFloat("bias", 1.0f));
  KILN_PREPARE_ASSIGN(ctx, st->alpha, ctx.attrs.GetFloat("alpha", 1.0f));
  KILN_PREPARE_ASSIGN(ctx, st->beta, ctx.attrs.GetFloat("beta", 0.5f));
  if (st->radius < 0 || st->radius > std::numeric_limits<int32_t>::max()) {
    return ctx.Error("attr 'depth_radius' must be in [0, 2^31), got ", st->radius);
  }
  return OkStatus();
}

Status PrepareLrn(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T", DType::kFloat));
  KILN_RETURN_IF_ERROR(
      ExpectAttrDTypeIn(ctx, "T", t, {DType::kFloat, DType::kHalf, DType::kBFloat16}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "input", 4));
  auto st = std::make_shared<LrnState>();
  KILN_RETURN_IF_ERROR(ReadLrnAttrs(ctx, st.get()));
  ctx.outputs = {TensorSpec{t, ctx.inputs[0].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- LRNGrad -------------------------------------------------------------------------------

Status PrepareLrnGrad(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T", DType::kFloat));
  KILN_RETURN_IF_ERROR(
      ExpectAttrDTypeIn(ctx, "T", t, {DType::kFloat, DType::kHalf, DType::kBFloat16}));
  static constexpr const char* kNames[] = {"input_grads", "input_image", "output_image"};
  for (int i = 0; i < 3; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, kNames[i], t));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, i, kNames[i], 4));
  }
  auto st = std::make_shared<LrnState>();
  KILN_RETURN_IF_ERROR(ReadLrnAttrs(ctx, st.get()));
  ctx.outputs = {TensorSpec{t, ctx.inputs[1].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"FusedBatchNorm", "y,batch_mean,batch_variance,reserve_space_1,reserve_space_2",
     kOpFreshOutputs, PrepareFusedBatchNorm<1>},
    {"FusedBatchNormV2", "y,batch_mean,batch_variance,reserve_space_1,reserve_space_2",
     kOpFreshOutputs, PrepareFusedBatchNorm<2>},
    {"FusedBatchNormV3",
     "y,batch_mean,batch_variance,reserve_space_1,reserve_space_2,reserve_space_3", kOpFreshOutputs,
     PrepareFusedBatchNorm<3>},
    {"FusedBatchNormGrad",
     "x_backprop,scale_backprop,offset_backprop,reserve_space_3,reserve_space_4", kOpFreshOutputs,
     PrepareFusedBatchNormGrad<1>},
    {"FusedBatchNormGradV2",
     "x_backprop,scale_backprop,offset_backprop,reserve_space_3,reserve_space_4", kOpFreshOutputs,
     PrepareFusedBatchNormGrad<2>},
    {"FusedBatchNormGradV3",
     "x_backprop,scale_backprop,offset_backprop,reserve_space_4,reserve_space_5", kOpFreshOutputs,
     PrepareFusedBatchNormGrad<3>},
    {"LRN", "output", kOpFreshOutputs, PrepareLrn},
    {"LRNGrad", "output", kOpFreshOutputs, PrepareLrnGrad},
};

}  // namespace

std::span<const OpDefinition> NormOpDefs() { return kDefs; }

}  // namespace kiln::exec
