// What the string text ops' definitions (kernels/full/string_text_ops.cc) and CPU kernels
// (kernels/cpu/full/string_text_ops.cc) share: their states, and opening an ICU converter.
#pragma once

#include <unicode/ucnv.h>
#include <unicode/umachine.h>
#include <unicode/utypes.h>

#include <cstdint>
#include <memory>
#include <string>

#include "kiln/core/dtype.h"
#include "kiln/core/status.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::string_text {

struct SubstrState : OpState {
  bool utf8 = false;
};

struct SplitState : OpState {
  bool v1 = false;
  int64_t maxsplit = -1;   // StringSplitV2
  bool skip_empty = true;  // StringSplit
};

struct UnicodeDecodeState : OpState {
  std::string encoding;
  enum class Errors { kStrict, kReplace, kIgnore } errors = Errors::kReplace;
  UChar32 replacement = 0xFFFD;
  bool replace_control = false;
  DType splits = DType::kInt64;
  bool offsets = false;         // UnicodeDecodeWithOffsets
  std::string output_encoding;  // UnicodeTranscode: UTF-8, UTF-16-BE or UTF-32-BE
};

struct ConverterCloser {
  void operator()(UConverter* c) const { ucnv_close(c); }
};
using Converter = std::unique_ptr<UConverter, ConverterCloser>;

inline Result<Converter> OpenConverter(const std::string& encoding) {
  UErrorCode status = U_ZERO_ERROR;
  Converter c(ucnv_open(encoding.c_str(), &status));
  if (U_FAILURE(status) || c == nullptr)
    return InvalidArgument("could not create a converter for input encoding \"", encoding,
                           "\": ", u_errorName(status));
  return c;
}

}  // namespace kiln::exec::string_text
