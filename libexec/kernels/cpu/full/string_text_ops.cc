// The CPU kernels of the string text ops in kernels/full/string_text_ops.cc. Unicode case
// mapping and decoding use ICU, as TensorFlow does, so invalid input and special cases (final
// sigma, ß -> SS, maximal-subpart replacement of malformed UTF-8) come out the same.
#include "kernels/full/string_text_ops.h"

#include <unicode/locid.h>
#include <unicode/uchar.h>
#include <unicode/ucnv.h>
#include <unicode/ucnv_err.h>
#include <unicode/unistr.h>
#include <unicode/uscript.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/string_util.h"

namespace kiln::exec {
namespace {

using string_text::OpenConverter;
using string_text::SplitState;
using string_text::SubstrState;
using string_text::UnicodeDecodeState;

// ---- StringLength ----------------------------------------------------------------------------
// unit BYTE: bytes; UTF8_CHAR: bytes that do not continue a UTF-8 sequence (TF's count, which
// counts each byte of malformed input as a character).

int64_t Utf8CharCount(std::string_view s) {
  return std::count_if(s.begin(), s.end(), [](char c) { return !IsUtf8Trail(c); });
}

Status ComputeStringLength(const KernelContext& ctx) {
  const bool utf8 = ctx.state<TypedOpState<bool>>().value;
  const Tensor& in = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, in.shape()));
  const std::string* src = in.data<std::string>();
  int32_t* dst = out->data<int32_t>();
  ctx.threads().ParallelFor(in.NumElements(), 8192, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      dst[i] = static_cast<int32_t>(utf8 ? Utf8CharCount(src[i]) : src[i].size());
  });
  return OkStatus();
}

// ---- StringLower, StringUpper ----------------------------------------------------------------
// encoding "": ASCII letters only, other bytes unchanged; "utf-8": Unicode full case mapping
// (root locale), malformed input replaced by U+FFFD.

template <bool kUpper>
std::string ChangeCase(const std::string& s, bool utf8) {
  if (!utf8) {
    std::string out = s;
    for (char& c : out) {
      if (kUpper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
      if (!kUpper && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
  }
  icu::UnicodeString u = icu::UnicodeString::fromUTF8(icu::StringPiece(s.data(), s.size()));
  if (kUpper) {
    u.toUpper(icu::Locale::getRoot());
  } else {
    u.toLower(icu::Locale::getRoot());
  }
  std::string out;
  u.toUTF8String(out);
  return out;
}

template <bool kUpper>
Status ComputeCase(const KernelContext& ctx) {
  const bool utf8 = ctx.state<TypedOpState<bool>>().value;
  const Tensor& in = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, in.shape()));
  const std::string* src = in.data<std::string>();
  std::string* dst = out->data<std::string>();
  ctx.threads().ParallelFor(in.NumElements(), 1024, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) dst[i] = ChangeCase<kUpper>(src[i], utf8);
  });
  return OkStatus();
}

// ---- StringStrip -----------------------------------------------------------------------------

Status ComputeStringStrip(const KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, in.shape()));
  const std::string* src = in.data<std::string>();
  std::string* dst = out->data<std::string>();
  ctx.threads().ParallelFor(in.NumElements(), 4096, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) dst[i] = std::string(StripAsciiSpace(src[i]));
  });
  return OkStatus();
}

// ---- Substr ----------------------------------------------------------------------------------
// input broadcasts against pos; pos and len have the same shape. pos may be negative (from the
// end) and must lie in [-n, n] (n characters); a negative len means "to the end" for BYTE and
// nothing for UTF8_CHAR, as in TF.

// Byte offset after moving `n` characters forward from `pos`; false when the string ends first.
bool ForwardChars(std::string_view s, int64_t n, size_t* pos) {
  int64_t counted = 0;
  while (counted < n && *pos < s.size()) {
    do {
      ++*pos;
    } while (*pos < s.size() && IsUtf8Trail(s[*pos]));
    ++counted;
  }
  return counted == n;
}
bool BackChars(std::string_view s, int64_t n, size_t* pos) {
  int64_t counted = 0;
  while (counted<n&& * pos> 0) {
    do {
      --*pos;
    } while (*pos > 0 && IsUtf8Trail(s[*pos]));
    ++counted;
  }
  return counted == n;
}

Status SubstrOne(const KernelContext& ctx, bool utf8, const std::string& s, int64_t pos,
                 int64_t len, int64_t index, std::string* out) {
  const int64_t size = static_cast<int64_t>(s.size());
  if (!utf8) {
    const int64_t p = pos < 0 ? pos + size : pos;
    if (p < 0 || p > size)
      return ctx.Error("pos ", pos, " out of range for string \"", s, "\" at index ", index);
    const int64_t n = len < 0 ? size - p : std::min(len, size - p);
    out->assign(s, static_cast<size_t>(p), static_cast<size_t>(n));
    return OkStatus();
  }
  size_t begin = pos >= 0 ? 0 : s.size();
  const bool ok = pos >= 0 ? ForwardChars(s, pos, &begin) : BackChars(s, -pos, &begin);
  if (!ok) return ctx.Error("pos ", pos, " out of range for string at index ", index);
  size_t end = begin;
  if (len > 0) ForwardChars(s, len, &end);
  out->assign(s, begin, end - begin);
  return OkStatus();
}

Status ComputeSubstr(const KernelContext& ctx) {
  const bool utf8 = ctx.state<SubstrState>().utf8;
  const Tensor& in = ctx.input(0);
  const Tensor& pos_t = ctx.input(1);
  const Tensor& len_t = ctx.input(2);
  if (pos_t.shape() != len_t.shape())
    return ctx.Error("inputs 'pos' and 'len' must have the same shape, got ",
                     pos_t.shape().ToString(), " and ", len_t.shape().ToString());
  auto shape = BroadcastShapes(in.shape(), pos_t.shape());
  if (!shape.ok()) return Wrap(ctx, shape.status());
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, *shape));
  const std::vector<int64_t> pos = IndexValues(pos_t), len = IndexValues(len_t);
  const std::string* src = in.data<std::string>();
  std::string* dst = out->data<std::string>();
  const int64_t n = shape->num_elements();
  if (in.shape() == pos_t.shape()) {
    return ParallelForEach(ctx, n, 1024, [&](int64_t i) {
      return SubstrOne(ctx, utf8, src[i], pos[i], len[i], i, &dst[i]);
    });
  }
  // Broadcast: each output index maps to an input index and a pos/len index.
  const BroadcastPlan plan = MakeBroadcastPlan(in.shape(), pos_t.shape(), *shape);
  return ParallelForEach(ctx, n, 1024, [&](int64_t i) {
    int64_t a = 0, b = 0, rest = i;
    for (int d = plan.rank - 1; d >= 0; --d) {
      const int64_t k = rest % plan.dims[d];
      rest /= plan.dims[d];
      a += k * plan.a_strides[d];
      b += k * plan.b_strides[d];
    }
    return SubstrOne(ctx, utf8, src[a], pos[b], len[b], a, &dst[i]);
  });
}

// ---- StringSplitV2 ---------------------------------------------------------------------------
// A vector of strings split as Python's str.split does (TF's SplitV2): with an empty sep, runs
// of ASCII whitespace separate and ends are trimmed; otherwise every sep separates. maxsplit 0
// keeps each string whole. Outputs a SparseTensor: indices [n, 2], values [n], dense shape [2].

void SplitOne(std::string_view text, std::string_view sep, int64_t maxsplit,
              std::vector<std::string_view>* out) {
  if (maxsplit == 0) {
    out->push_back(text);
    return;
  }
  int64_t splits = 0;
  if (sep.empty()) {
    auto skip_space = [&] {
      while (!text.empty() && IsAsciiSpace(text.front())) text.remove_prefix(1);
    };
    skip_space();
    while (!text.empty()) {
      size_t n = 0;
      while (n < text.size() && !IsAsciiSpace(text[n])) ++n;
      out->push_back(text.substr(0, n));
      text.remove_prefix(n);
      skip_space();
      if (maxsplit > 0 && ++splits == maxsplit) {
        out->push_back(text);
        return;
      }
    }
    return;
  }
  for (size_t p; (p = text.find(sep)) != std::string_view::npos;) {
    out->push_back(text.substr(0, p));
    text.remove_prefix(p + sep.size());
    if (maxsplit > 0 && ++splits == maxsplit) break;
  }
  out->push_back(text);
}

// StringSplit (v1, tf.compat.v1.string_split): every character of the delimiter separates (an
// empty delimiter: every byte is a token); skip_empty drops empty tokens; an empty string has
// none.
void SplitAnyChar(std::string_view text, std::string_view delims, bool skip_empty,
                  std::vector<std::string_view>* out) {
  if (delims.empty()) {
    for (size_t i = 0; i < text.size(); ++i) out->push_back(text.substr(i, 1));
    return;
  }
  if (text.empty()) return;  // no tokens, not one empty token (TF's str_util::Split)
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && delims.find(text[i]) == std::string_view::npos) continue;
    if (!skip_empty || i > start) out->push_back(text.substr(start, i - start));
    start = i + 1;
  }
}

Status ComputeStringSplit(const KernelContext& ctx) {
  const auto& st = ctx.state<SplitState>();
  const Tensor& in = ctx.input(0);
  const Tensor& sep_t = ctx.input(1);
  if (in.rank() != 1) return ctx.Error("input must be a vector, got shape ", in.shape().ToString());
  if (sep_t.rank() != 0)
    return ctx.Error("sep must be a scalar, got shape ", sep_t.shape().ToString());
  const std::string& sep = sep_t.scalar<std::string>();
  const int64_t batch = in.NumElements();
  std::vector<std::string_view> tokens;
  std::vector<int64_t> row_of;  // the input row of each token
  int64_t widest = 0;
  for (int64_t i = 0; i < batch; ++i) {
    const size_t before = tokens.size();
    if (st.v1) {
      SplitAnyChar(in.data<std::string>()[i], sep, st.skip_empty, &tokens);
    } else {
      SplitOne(in.data<std::string>()[i], sep, st.maxsplit, &tokens);
    }
    const int64_t count = static_cast<int64_t>(tokens.size() - before);
    widest = std::max(widest, count);
    row_of.insert(row_of.end(), static_cast<size_t>(count), i);
  }
  const int64_t n = static_cast<int64_t>(tokens.size());
  KILN_ASSIGN_OR_RETURN(Tensor * indices, ctx.AllocateOutput(0, Shape{n, 2}));
  KILN_ASSIGN_OR_RETURN(Tensor * values, ctx.AllocateOutput(1, Shape{n}));
  KILN_ASSIGN_OR_RETURN(Tensor * shape, ctx.AllocateOutput(2, Shape{2}));
  int64_t* idx = indices->data<int64_t>();
  std::string* val = values->data<std::string>();
  for (int64_t k = 0, col = 0; k < n; ++k) {
    col = k > 0 && row_of[k] == row_of[k - 1] ? col + 1 : 0;
    idx[2 * k] = row_of[k];
    idx[2 * k + 1] = col;
    val[k] = std::string(tokens[k]);
  }
  shape->data<int64_t>()[0] = batch;
  shape->data<int64_t>()[1] = widest;
  return OkStatus();
}

// ---- UnicodeScript -----------------------------------------------------------------------------
// The ICU script code of each int32 code point (USCRIPT_COMMON 0, Latin 25, ...), -1 where ICU
// fails (a value that is no code point), as TensorFlow's kernel.

Status ComputeUnicodeScript(const KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, in.shape()));
  const int32_t* src = in.data<int32_t>();
  int32_t* dst = out->data<int32_t>();
  for (int64_t i = 0; i < in.NumElements(); ++i) {
    UErrorCode err = U_ZERO_ERROR;
    const UScriptCode code = uscript_getScript(src[i], &err);
    dst[i] = U_FAILURE(err) ? -1 : static_cast<int32_t>(code);
  }
  return OkStatus();
}

// ---- UnicodeDecode ---------------------------------------------------------------------------
// Every string of the input (any shape, flattened) decoded with an ICU converter for
// input_encoding into code points: row_splits [n + 1] (Tsplits) and char_values [total] (int32).
// Malformed sequences become replacement_char (errors "replace"), are dropped ("ignore") or fail
// ("strict"); replace_control_characters also replaces C0 controls (U+0000..U+001F).

// ICU calls this for each malformed or unmappable sequence: note it, then substitute as
// ICU's default callback does (one U+FFFD per maximal malformed subpart).
void MarkFormatError(const void* context, UConverterToUnicodeArgs* args, const char* units,
                     int32_t length, UConverterCallbackReason reason, UErrorCode* err) {
  if (reason == UCNV_UNASSIGNED || reason == UCNV_ILLEGAL || reason == UCNV_IRREGULAR)
    *static_cast<bool*>(const_cast<void*>(context)) = true;
  UCNV_TO_U_CALLBACK_SUBSTITUTE(nullptr, args, units, length, reason, err);
}

// Decodes string `s` (item i of the input), calling emit(code point, byte offset) for each
// character kept: malformed or unmappable sequences (and control characters when asked) become
// the replacement character, are dropped ("ignore"), or fail ("strict").
template <typename Emit>
Status DecodeOne(const KernelContext& ctx, const UnicodeDecodeState& st, UConverter* conv,
                 bool* format_error, const std::string& s, int64_t i, Emit&& emit) {
  ucnv_reset(conv);
  const char* p = s.data();
  const char* limit = s.data() + s.size();
  while (p < limit) {
    UErrorCode status = U_ZERO_ERROR;
    *format_error = false;
    const int64_t start = p - s.data();
    UChar32 c = ucnv_getNextUChar(conv, &p, limit, &status);
    if (U_FAILURE(status)) {  // cannot go on with this string
      p = limit;
      *format_error = true;
    }
    if (*format_error && st.errors == UnicodeDecodeState::Errors::kStrict)
      return ctx.Error("invalid formatting in input string at index ", i, " for encoding \"",
                       st.encoding, "\"");
    if (*format_error || (st.replace_control && c >= 0 && c <= 0x1F)) {
      if (st.errors == UnicodeDecodeState::Errors::kIgnore) continue;
      c = st.replacement;
    }
    emit(c, start);
  }
  return OkStatus();
}

Status SetErrorCallback(const KernelContext& ctx, UConverter* conv, bool* format_error) {
  UErrorCode status = U_ZERO_ERROR;
  ucnv_setToUCallBack(conv, MarkFormatError, format_error, nullptr, nullptr, &status);
  if (U_FAILURE(status)) return ctx.Error("cannot set the ICU converter callback");
  return OkStatus();
}

template <typename S>
Status DecodeAll(const KernelContext& ctx, const UnicodeDecodeState& st, UConverter* conv) {
  const Tensor& in = ctx.input(0);
  const int64_t n = in.NumElements();
  KILN_ASSIGN_OR_RETURN(Tensor * splits_t, ctx.AllocateOutput(0, Shape{n + 1}));
  S* splits = splits_t->data<S>();
  std::vector<int32_t> chars;
  std::vector<int64_t> starts;
  bool format_error = false;
  KILN_RETURN_IF_ERROR(SetErrorCallback(ctx, conv, &format_error));
  splits[0] = 0;
  for (int64_t i = 0; i < n; ++i) {
    KILN_RETURN_IF_ERROR(DecodeOne(ctx, st, conv, &format_error, in.data<std::string>()[i], i,
                                   [&](UChar32 c, int64_t start) {
                                     chars.push_back(static_cast<int32_t>(c));
                                     if (st.offsets) starts.push_back(start);
                                   }));
    if (chars.size() > static_cast<size_t>(std::numeric_limits<S>::max()))
      return ctx.Error("more than ", std::numeric_limits<S>::max(),
                       " characters do not fit Tsplits");
    splits[i + 1] = static_cast<S>(chars.size());
  }
  const Shape shape{static_cast<int64_t>(chars.size())};
  KILN_ASSIGN_OR_RETURN(Tensor * values, ctx.AllocateOutput(1, shape));
  std::copy(chars.begin(), chars.end(), values->data<int32_t>());
  if (st.offsets) {
    KILN_ASSIGN_OR_RETURN(Tensor * offsets, ctx.AllocateOutput(2, shape));
    std::copy(starts.begin(), starts.end(), offsets->data<int64_t>());
  }
  return OkStatus();
}

Status ComputeUnicodeDecode(const KernelContext& ctx) {
  const auto& st = ctx.state<UnicodeDecodeState>();
  auto conv = OpenConverter(st.encoding);
  if (!conv.ok()) return Wrap(ctx, conv.status());
  if (st.splits == DType::kInt32) return DecodeAll<int32_t>(ctx, st, conv->get());
  return DecodeAll<int64_t>(ctx, st, conv->get());
}

// Appends code point c in `encoding` (UTF-8, UTF-16-BE or UTF-32-BE).
void AppendEncoded(const std::string& encoding, UChar32 c, std::string* out) {
  auto put = [out](uint32_t v, int bytes) {
    for (int b = bytes - 1; b >= 0; --b) out->push_back(static_cast<char>((v >> (8 * b)) & 0xFF));
  };
  const auto u = static_cast<uint32_t>(c);
  if (encoding == "UTF-32-BE") {
    put(u, 4);
  } else if (encoding == "UTF-16-BE") {
    if (u < 0x10000) {
      put(u, 2);
    } else {
      put(0xD800 + ((u - 0x10000) >> 10), 2);
      put(0xDC00 + ((u - 0x10000) & 0x3FF), 2);
    }
  } else if (u < 0x80) {
    out->push_back(static_cast<char>(u));
  } else if (u < 0x800) {
    put(0xC080 | ((u << 2) & 0x1F00) | (u & 0x3F), 2);
  } else if (u < 0x10000) {
    put(0xE08080 | ((u << 4) & 0x0F0000) | ((u << 2) & 0x3F00) | (u & 0x3F), 3);
  } else {
    put(0xF0808080 | ((u << 6) & 0x07000000) | ((u << 4) & 0x3F0000) | ((u << 2) & 0x3F00) |
            (u & 0x3F),
        4);
  }
}

// Each string decoded and encoded again in the output encoding.
Status ComputeUnicodeTranscode(const KernelContext& ctx) {
  const auto& st = ctx.state<UnicodeDecodeState>();
  auto conv = OpenConverter(st.encoding);
  if (!conv.ok()) return Wrap(ctx, conv.status());
  const Tensor& in = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, in.shape()));
  bool format_error = false;
  KILN_RETURN_IF_ERROR(SetErrorCallback(ctx, conv->get(), &format_error));
  for (int64_t i = 0; i < in.NumElements(); ++i) {
    std::string& o = out->data<std::string>()[i];
    o.clear();
    KILN_RETURN_IF_ERROR(
        DecodeOne(ctx, st, conv->get(), &format_error, in.data<std::string>()[i], i,
                  [&](UChar32 c, int64_t) { AppendEncoded(st.output_encoding, c, &o); }));
  }
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"StringLength", ComputeStringLength},
    {"StringLower", ComputeCase<false>},
    {"StringUpper", ComputeCase<true>},
    {"StringStrip", ComputeStringStrip},
    {"Substr", ComputeSubstr},
    {"StringSplitV2", ComputeStringSplit},
    {"StringSplit", ComputeStringSplit},
    {"UnicodeScript", ComputeUnicodeScript},
    {"UnicodeDecode", ComputeUnicodeDecode},
    {"UnicodeDecodeWithOffsets", ComputeUnicodeDecode},
    {"UnicodeTranscode", ComputeUnicodeTranscode},
};

}  // namespace

std::span<const KernelEntry> StringTextCpuKernels() { return kCpu; }

}  // namespace kiln::exec
