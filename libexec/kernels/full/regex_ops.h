// What the regex ops' definitions (kernels/full/regex_ops.cc) and CPU kernels
// (kernels/cpu/full/regex_ops.cc) share: compiling a pattern with RE2, and StaticRegexReplace's
// state.
#pragma once

#include <re2/re2.h>

#include <memory>
#include <string>

#include "kiln/core/status.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::regex {

// RE2 with its default (UTF-8) syntax; errors come back to us instead of going to stderr.
inline Result<std::shared_ptr<const RE2>> Compile(const std::string& pattern) {
  RE2::Options options;
  options.set_log_errors(false);
  auto re = std::make_shared<const RE2>(pattern, options);
  if (!re->ok()) return InvalidArgument("invalid pattern \"", pattern, "\": ", re->error());
  return re;
}

struct StaticReplaceState : OpState {
  std::shared_ptr<const RE2> re;
  std::string rewrite;
  bool global = true;
};

}  // namespace kiln::exec::regex
