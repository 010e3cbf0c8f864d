// What the ragged string ops' definitions and CPU kernels (string_ragged_ops.cc) share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/kernel_util.h"

namespace kiln::exec::string_ragged {

// StringNGrams.
struct NGramsState : OpState {
  std::string separator, left_pad, right_pad;
  std::vector<int64_t> widths;
  int64_t pad_width = -1;
  bool preserve_short = false;
};

// UnicodeEncode.
enum class Encoding { kUtf8, kUtf16Be, kUtf32Be };
enum class EncodeErrors { kStrict, kReplace, kIgnore };

struct UnicodeEncodeState : OpState {
  Encoding encoding = Encoding::kUtf8;
  EncodeErrors errors = EncodeErrors::kReplace;
  int32_t replacement = 0xFFFD;
};

// ICU's U_IS_UNICODE_CHAR (noncharacters such as U+FFFE count as characters).
inline bool IsUnicodeChar(int64_t c) {
  return c >= 0 && c <= 0x10FFFF && !(c >= 0xD800 && c <= 0xDFFF);
}

}  // namespace kiln::exec::string_ragged
