// Regular expressions with RE2 (TensorFlow's engine, so syntax and matching agree):
// RegexReplace and RegexFullMatch (pattern and rewrite are inputs; a constant pattern compiles
// once at prepare time), StaticRegexReplace and StaticRegexFullMatch (pattern in an attr,
// compiled once at prepare time).
// The CPU kernels are in kernels/cpu/full/regex_ops.cc.
#include "kernels/full/regex_ops.h"

#include <memory>
#include <string>
#include <utility>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/string_util.h"

namespace kiln::exec {
namespace {

using regex::Compile;
using regex::StaticReplaceState;

// ---- RegexReplace ----------------------------------------------------------------------------

Status PrepareRegexReplace(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "pattern", DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "rewrite", DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "pattern", 0));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "rewrite", 0));
  KILN_PREPARE_ASSIGN(ctx, bool global, ctx.attrs.GetBool("replace_global", true));
  ctx.state = std::make_shared<TypedOpState<bool>>(global);
  ctx.outputs = {TensorSpec{DType::kString, ctx.inputs[0].shape}};
  return OkStatus();
}

// ---- StaticRegexReplace ----------------------------------------------------------------------

Status PrepareStaticRegexReplace(PrepareContext& ctx) {
  auto st = std::make_shared<StaticReplaceState>();
  KILN_PREPARE_ASSIGN(ctx, std::string pattern, ctx.attrs.GetString("pattern"));
  KILN_PREPARE_ASSIGN(ctx, st->rewrite, ctx.attrs.GetString("rewrite"));
  KILN_PREPARE_ASSIGN(ctx, st->global, ctx.attrs.GetBool("replace_global", true));
  auto re = Compile(pattern);
  if (!re.ok()) return ctx.Error("attr 'pattern': ", re.status().message());
  st->re = *re;
  ctx.state = std::move(st);
  return PrepareStringUnary(ctx, "input", DType::kString);
}

// ---- StaticRegexFullMatch --------------------------------------------------------------------

Status PrepareStaticRegexFullMatch(PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, std::string pattern, ctx.attrs.GetString("pattern"));
  auto re = Compile(pattern);
  if (!re.ok()) return ctx.Error("attr 'pattern': ", re.status().message());
  ctx.state = std::make_shared<TypedOpState<std::shared_ptr<const RE2>>>(*re);
  return PrepareStringUnary(ctx, "input", DType::kBool);
}

// ---- RegexFullMatch (the pattern an input) -----------------------------------------------------

Status PrepareRegexFullMatch(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "pattern", DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "pattern", 0));
  // A constant pattern is compiled once here; null: compiled per call.
  std::shared_ptr<const RE2> compiled;
  if (const Tensor* pattern = ConstantInput(ctx, 1)) {
    auto re = Compile(pattern->scalar<std::string>());
    if (!re.ok()) return ctx.Error("input 'pattern': ", re.status().message());
    compiled = *re;
  }
  ctx.state = std::make_shared<TypedOpState<std::shared_ptr<const RE2>>>(std::move(compiled));
  ctx.outputs = {TensorSpec{DType::kBool, ctx.inputs[0].shape}};
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"RegexReplace", "output", kOpFreshOutputs, PrepareRegexReplace},
    {"StaticRegexReplace", "output", kOpFreshOutputs, PrepareStaticRegexReplace},
    {"StaticRegexFullMatch", "output", kOpFreshOutputs, PrepareStaticRegexFullMatch},
    {"RegexFullMatch", "output", kOpFreshOutputs, PrepareRegexFullMatch},
};

}  // namespace

std::span<const OpDefinition> RegexOpDefs() { return kDefs; }

}  // namespace kiln::exec
