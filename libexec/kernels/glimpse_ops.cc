// ExtractGlimpse and ExtractGlimpseV2 (tensorflow/core/kernels/image/attention_ops.cc over
// Eigen's ExtractGlimpses, eigen_attention.h): definitions. The CPU kernels, and how they place
// the window and fill what leaves the image, are in kernels/cpu/glimpse_ops.cc.
//
// The noise attrs read as TF's: noise "" picks uniform when uniform_noise is true, else gaussian;
// a non-empty noise wins (so uniform_noise=false with the default noise "uniform" is uniform
// noise); uniform_noise=true with "gaussian" or "zero" is an error. Each node's noise stream gets a
// random seed here.
#include "kernels/glimpse_ops.h"

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/philox.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

using glimpse::GlimpseState;
using glimpse::Noise;

Status PrepareGlimpse(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  auto st = std::make_shared<GlimpseState>();
  st->version = ctx.op == "ExtractGlimpse" ? 1 : 2;
  KILN_PREPARE_ASSIGN(ctx, st->normalized, ctx.attrs.GetBool("normalized", true));
  KILN_PREPARE_ASSIGN(ctx, st->centered, ctx.attrs.GetBool("centered", true));
  KILN_PREPARE_ASSIGN(ctx, bool uniform_noise, ctx.attrs.GetBool("uniform_noise", true));
  KILN_PREPARE_ASSIGN(ctx, std::string noise, ctx.attrs.GetString("noise", "uniform"));
  if (uniform_noise && !noise.empty() && noise != "uniform")
    return ctx.Error("The uniform_noise and noise could not be specified at the same time");
  if (noise.empty()) {
    st->noise = uniform_noise ? Noise::kUniform : Noise::kGaussian;
  } else if (noise == "uniform") {
    st->noise = Noise::kUniform;
  } else if (noise == "gaussian") {
    st->noise = Noise::kGaussian;
  } else if (noise == "zero") {
    st->noise = Noise::kZero;
  } else {
    return ctx.Error("The noise could only be uniform, gaussian, or zero, got ", noise);
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "size", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "offsets", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "input", 4));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "size", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "offsets", 2));
  const std::vector<int64_t> in = DimsOrUnknown(ctx.inputs[0].shape, 4);
  int64_t h = -1, w = -1;
  if (const Tensor* size = ConstantInput(ctx, 1)) {
    const std::vector<int64_t> v = IndexValues(*size);
    if (v.size() != 2)
      return ctx.Error("input must be a vector of size 2 (height, width), got ", DimsString(v));
    for (int64_t d : v)
      if (d < 0) return ctx.Error("Expected a non-negative size, got ", d);
    h = v[0];
    w = v[1];
  }
  ctx.outputs = {TensorSpec{DType::kFloat, PartialShape{in[0], h, w, in[3]}}};
  std::random_device rd;  // unseeded, as TF's Eigen generators
  st->generator = random::Philox((uint64_t{rd()} << 32) | rd(), (uint64_t{rd()} << 32) | rd());
  ctx.state = std::move(st);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"ExtractGlimpse", "glimpse", kOpFreshOutputs, PrepareGlimpse},
    {"ExtractGlimpseV2", "glimpse", kOpFreshOutputs, PrepareGlimpse},
};

}  // namespace

std::span<const OpDefinition> GlimpseOpDefs() { return kDefs; }

}  // namespace kiln::exec
