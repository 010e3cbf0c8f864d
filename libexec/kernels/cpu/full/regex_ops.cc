// The CPU kernels of the regex ops in kernels/full/regex_ops.cc: RE2's Replace, GlobalReplace
// and FullMatch over each string, in parallel.
#include "kernels/full/regex_ops.h"

#include <re2/re2.h>

#include <cstdint>
#include <memory>
#include <string>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using regex::Compile;
using regex::StaticReplaceState;

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

Status ComputeStaticRegexReplace(const KernelContext& ctx) {
  const auto& st = ctx.state<StaticReplaceState>();
  return ReplaceAll(ctx, *st.re, st.rewrite, st.global);
}

// ---- StaticRegexFullMatch --------------------------------------------------------------------

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

constexpr KernelEntry kCpu[] = {
    {"RegexReplace", ComputeRegexReplace},
    {"StaticRegexReplace", ComputeStaticRegexReplace},
    {"StaticRegexFullMatch", ComputeStaticRegexFullMatch},
    {"RegexFullMatch", ComputeRegexFullMatch},
};

}  // namespace

std::span<const KernelEntry> RegexCpuKernels() { return kCpu; }

}  // namespace kiln::exec
