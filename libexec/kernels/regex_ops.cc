// Regular expressions with RE2 (TensorFlow's engine, so syntax and matching agree):
// RegexReplace and RegexFullMatch (pattern and rewrite are inputs; a constant pattern compiles
// once at prepare time), StaticRegexReplace and StaticRegexFullMatch (pattern in an attr,
// compiled once at prepare time).
#include <re2/re2.h>

#include <memory>
#include <string>

#include "kernels/array_util.h"
#include "kernels/string_util.h"

namespace kiln::exec {
namespace {

// RE2 with its default (UTF-8) syntax; errors come back to us instead of going to stderr.
Result<std::shared_ptr<const RE2>> Compile(const std::string& pattern) {
  RE2::Options options;
  options.set_log_errors(false);
  auto re = std::make_shared<const RE2>(pattern, options);
  if (!re->ok()) return InvalidArgument("invalid pattern \"", pattern, "\": ", re->error());
  return re;
}

// Replaces the first or every match of `re` in each string; a rewrite that names a group the
// pattern lacks leaves the string unchanged, as RE2 (and so TF) does.
Status ReplaceAll(const KernelContext& ctx, const RE2& re, const std::string& rewrite,
                  bool global) {
  const Tensor& in = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, in.shape()));
  const std::string* src = in.data<std::string>();
  std::string* dst = out->data<std::string>();
  ctx.threads().ParallelFor(in.NumElements(), 256, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      dst[i] = src[i];
      if (global) {
        RE2::GlobalReplace(&dst[i], re, rewrite);
      } else {
        RE2::Replace(&dst[i], re, rewrite);
      }
    }
  });
  return OkStatus();
}

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

Status ComputeRegexReplace(const KernelContext& ctx) {
  const Tensor& pattern = ctx.input(1);
  const Tensor& rewrite = ctx.input(2);
  if (pattern.rank() != 0)
    return ctx.Error("input 'pattern' must be a scalar, got shape ", pattern.shape().ToString());
  if (rewrite.rank() != 0)
    return ctx.Error("input 'rewrite' must be a scalar, got shape ", rewrite.shape().ToString());
  auto re = Compile(pattern.scalar<std::string>());
  if (!re.ok()) return Wrap(ctx, re.status());
  return ReplaceAll(ctx, **re, rewrite.scalar<std::string>(),
                    ctx.state<TypedOpState<bool>>().value);
}

// ---- StaticRegexReplace ----------------------------------------------------------------------

struct StaticReplaceState : OpState {
  std::shared_ptr<const RE2> re;
  std::string rewrite;
  bool global = true;
};

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

Status ComputeStaticRegexReplace(const KernelContext& ctx) {
  const auto& st = ctx.state<StaticReplaceState>();
  return ReplaceAll(ctx, *st.re, st.rewrite, st.global);
}

// ---- StaticRegexFullMatch --------------------------------------------------------------------

Status PrepareStaticRegexFullMatch(PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, std::string pattern, ctx.attrs.GetString("pattern"));
  auto re = Compile(pattern);
  if (!re.ok()) return ctx.Error("attr 'pattern': ", re.status().message());
  ctx.state = std::make_shared<TypedOpState<std::shared_ptr<const RE2>>>(*re);
  return PrepareStringUnary(ctx, "input", DType::kBool);
}

// Whether each string matches `re` as a whole.
Status FullMatchAll(const KernelContext& ctx, const RE2& re) {
  const Tensor& in = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, in.shape()));
  const std::string* src = in.data<std::string>();
  bool* dst = out->data<bool>();
  ctx.threads().ParallelFor(in.NumElements(), 256, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) dst[i] = RE2::FullMatch(src[i], re);
  });
  return OkStatus();
}

Status ComputeStaticRegexFullMatch(const KernelContext& ctx) {
  return FullMatchAll(ctx, *ctx.state<TypedOpState<std::shared_ptr<const RE2>>>().value);
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

Status ComputeRegexFullMatch(const KernelContext& ctx) {
  if (const auto& re = ctx.state<TypedOpState<std::shared_ptr<const RE2>>>().value)
    return FullMatchAll(ctx, *re);
  const Tensor& pattern = ctx.input(1);
  if (pattern.rank() != 0)
    return ctx.Error("input 'pattern' must be a scalar, got shape ", pattern.shape().ToString());
  auto re = Compile(pattern.scalar<std::string>());
  if (!re.ok()) return Wrap(ctx, re.status());
  return FullMatchAll(ctx, **re);
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"RegexReplace", "output", kOpFreshOutputs, PrepareRegexReplace},
    {"StaticRegexReplace", "output", kOpFreshOutputs, PrepareStaticRegexReplace},
    {"StaticRegexFullMatch", "output", kOpFreshOutputs, PrepareStaticRegexFullMatch},
    {"RegexFullMatch", "output", kOpFreshOutputs, PrepareRegexFullMatch},
};

constexpr KernelEntry kCpu[] = {
    {"RegexReplace", ComputeRegexReplace},
    {"StaticRegexReplace", ComputeStaticRegexReplace},
    {"StaticRegexFullMatch", ComputeStaticRegexFullMatch},
    {"RegexFullMatch", ComputeRegexFullMatch},
};

}  // namespace

std::span<const OpDefinition> RegexOpDefs() { return kDefs; }
std::span<const KernelEntry> RegexCpuKernels() { return kCpu; }

}  // namespace kiln::exec
