// The CPU kernels of the ragged string ops in kernels/string_ragged_ops.cc, following
// TensorFlow's string_ngrams_op.cc and unicode_ops.cc.
#include "kernels/string_ragged_ops.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/ragged_util.h"

namespace kiln::exec {
namespace {

using string_ragged::EncodeErrors;
using string_ragged::Encoding;
using string_ragged::IsUnicodeChar;
using string_ragged::NGramsState;
using string_ragged::UnicodeEncodeState;

// ---- StringNGrams ----------------------------------------------------------------------------
// For each row of tokens and each width w in ngram_widths: the windows of w tokens over the row
// padded with up to pad_width left_pad / right_pad tokens (pad_width -1: w - 1), joined by
// separator. preserve_short_sequences makes a row too short for any n-gram give one n-gram of
// all its tokens (padded by pad_width).

int64_t PadWidth(const NGramsState& st, int64_t width) {
  return std::min(st.pad_width < 0 ? width - 1 : st.pad_width, width - 1);
}

int64_t NumNGrams(const NGramsState& st, int64_t length, int64_t width) {
  return std::max<int64_t>(0, length + 2 * PadWidth(st, width) - width + 1);
}

// The n-grams of width `width` over tokens [data, data + length): `count` of them into out.
void MakeNGrams(const NGramsState& st, const std::string* data, int64_t count, int64_t width,
                std::string* out) {
  const int64_t pad = PadWidth(st, width);
  for (int64_t g = 0; g < count; ++g) {
    const int64_t left = std::max<int64_t>(0, pad - g);
    const int64_t right = std::max<int64_t>(0, pad - (count - (g + 1)));
    const int64_t tokens = width - (left + right);
    const int64_t first = left > 0 ? 0 : g - pad;
    std::string& s = out[g];
    s.clear();
    // Padding, tokens and padding joined by the separator.
    bool any = false;
    auto add = [&](const std::string& piece) {
      if (any) s += st.separator;
      s += piece;
      any = true;
    };
    for (int64_t k = 0; k < left; ++k) add(st.left_pad);
    for (int64_t k = 0; k < tokens; ++k) add(data[first + k]);
    for (int64_t k = 0; k < right; ++k) add(st.right_pad);
  }
}

Status ComputeStringNGrams(const KernelContext& ctx) {
  const auto& st = ctx.state<NGramsState>();
  const Tensor& data = ctx.input(0);
  const int64_t n = data.NumElements();
  const Splits splits = IndexValues(ctx.input(1));
  if (!splits.empty()) {
    Status valid = ValidateNestedSplits({splits}, n, "input 'data_splits'");
    if (!valid.ok()) return Wrap(ctx, valid);
  }
  const int64_t rows = std::max<int64_t>(static_cast<int64_t>(splits.size()) - 1, 0);
  Splits out_splits(splits.size(), 0);
  if (n == 0 || splits.empty()) {
    KILN_RETURN_IF_ERROR(WriteSplitsOutput(ctx, 1, out_splits));
    KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{0}));
    (void)out;
    return OkStatus();
  }
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t length = splits[r + 1] - splits[r];
    int64_t count = 0;
    for (int64_t w : st.widths) count += NumNGrams(st, length, w);
    if (st.preserve_short && length > 0 && count == 0) count = 1;
    out_splits[r + 1] = out_splits[r] + count;
    if (out_splits[r + 1] > std::numeric_limits<int32_t>::max()) {
      return ctx.Error("more than 2^31 - 1 n-grams (TensorFlow's limit)");
    }
  }
  KILN_RETURN_IF_ERROR(WriteSplitsOutput(ctx, 1, out_splits));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{out_splits[rows]}));
  std::string* o = out->data<std::string>();
  const std::string* d = data.data<std::string>();
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t length = splits[r + 1] - splits[r];
    int64_t at = out_splits[r];
    for (int64_t w : st.widths) {
      const int64_t count = NumNGrams(st, length, w);
      MakeNGrams(st, d + splits[r], count, w, o + at);
      at += count;
    }
    if (st.preserve_short && at == out_splits[r] && length > 0) {
      // Too short for every width: one n-gram of the whole row, padded by pad_width.
      if (st.pad_width < 0) {
        return ctx.Error(
            "attr 'pad_width' must be >= 0 when preserve_short_sequences is true "
            "and a row is shorter than every n-gram width, got ",
            st.pad_width);
      }
      MakeNGrams(st, d + splits[r], 1, length + 2 * st.pad_width, o + at);
    }
  }
  return OkStatus();
}

// ---- UnicodeEncode ---------------------------------------------------------------------------
// Row i of the code points (input_values[input_splits[i]:input_splits[i + 1]]) encoded into one
// string in output_encoding (UTF-8, UTF-16-BE or UTF-32-BE). Values that are no Unicode scalar
// value (negative, past U+10FFFF, surrogates, even a high + low pair) fail ("strict"), become
// replacement_char ("replace") or are dropped ("ignore"), as TensorFlow 2.21 does.

void AppendUnit(std::string* s, uint32_t v, int bytes) {
  for (int k = bytes - 1; k >= 0; --k) s->push_back(static_cast<char>((v >> (8 * k)) & 0xFF));
}

// Appends scalar value c (not a surrogate, at most 0x10FFFF).
void AppendCodePoint(Encoding e, uint32_t c, std::string* s) {
  switch (e) {
    case Encoding::kUtf8:
      if (c < 0x80) {
        s->push_back(static_cast<char>(c));
      } else if (c < 0x800) {
        s->push_back(static_cast<char>(0xC0 | (c >> 6)));
        s->push_back(static_cast<char>(0x80 | (c & 0x3F)));
      } else if (c < 0x10000) {
        s->push_back(static_cast<char>(0xE0 | (c >> 12)));
        s->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
        s->push_back(static_cast<char>(0x80 | (c & 0x3F)));
      } else {
        s->push_back(static_cast<char>(0xF0 | (c >> 18)));
        s->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
        s->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
        s->push_back(static_cast<char>(0x80 | (c & 0x3F)));
      }
      return;
    case Encoding::kUtf16Be:
      if (c < 0x10000) {
        AppendUnit(s, c, 2);
      } else {
        AppendUnit(s, 0xD800 + ((c - 0x10000) >> 10), 2);
        AppendUnit(s, 0xDC00 + ((c - 0x10000) & 0x3FF), 2);
      }
      return;
    case Encoding::kUtf32Be:
      AppendUnit(s, c, 4);
      return;
  }
}

Status ComputeUnicodeEncode(const KernelContext& ctx) {
  const auto& st = ctx.state<UnicodeEncodeState>();
  const Tensor& values = ctx.input(0);
  const Splits splits = IndexValues(ctx.input(1));
  Status valid = ValidateNestedSplits({splits}, values.NumElements(), "input 'input_splits'");
  if (!valid.ok()) return Wrap(ctx, valid);
  const int64_t rows = static_cast<int64_t>(splits.size()) - 1;
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{rows}));
  const int32_t* v = values.data<int32_t>();
  std::string* o = out->data<std::string>();
  for (int64_t r = 0; r < rows; ++r) {
    std::string& s = o[r];
    s.clear();
    for (int64_t i = splits[r]; i < splits[r + 1]; ++i) {
      int64_t c = v[i];
      if (!IsUnicodeChar(c)) {
        if (st.errors == EncodeErrors::kStrict) {
          return ctx.Error("code point ", c, " at index ", i,
                           " is out of range for Unicode, or a noncharacter");
        }
        if (st.errors == EncodeErrors::kIgnore) continue;
        c = st.replacement;
      }
      AppendCodePoint(st.encoding, static_cast<uint32_t>(c), &s);
    }
  }
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"StringNGrams", ComputeStringNGrams},
    {"UnicodeEncode", ComputeUnicodeEncode},
};

}  // namespace

std::span<const KernelEntry> StringRaggedCpuKernels() { return kCpu; }

}  // namespace kiln::exec
