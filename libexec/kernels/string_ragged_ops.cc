// String ops over ragged rows (flat values + row splits), the ones Keras' TextVectorization
// runs: StringNGrams (the n-grams of each row's tokens, with padding) and UnicodeEncode (code
// points back into one string per row). Semantics follow TensorFlow's string_ngrams_op.cc and
// unicode_ops.cc. The CPU kernels are in kernels/cpu/string_ragged_ops.cc.
#include "kernels/string_ragged_ops.h"

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using string_ragged::EncodeErrors;
using string_ragged::Encoding;
using string_ragged::IsUnicodeChar;
using string_ragged::NGramsState;
using string_ragged::UnicodeEncodeState;

constexpr std::initializer_list<DType> kSplitDTypes = {DType::kInt32, DType::kInt64};

// ---- StringNGrams ----------------------------------------------------------------------------
// For each row of tokens and each width w in ngram_widths: the windows of w tokens over the row
// padded with up to pad_width left_pad / right_pad tokens (pad_width -1: w - 1), joined by
// separator. preserve_short_sequences makes a row too short for any n-gram give one n-gram of
// all its tokens (padded by pad_width).

Status PrepareStringNGrams(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  auto st = std::make_shared<NGramsState>();
  KILN_PREPARE_ASSIGN(ctx, st->separator, ctx.attrs.GetString("separator"));
  KILN_PREPARE_ASSIGN(ctx, st->widths, ctx.attrs.GetIntList("ngram_widths"));
  KILN_PREPARE_ASSIGN(ctx, st->left_pad, ctx.attrs.GetString("left_pad"));
  KILN_PREPARE_ASSIGN(ctx, st->right_pad, ctx.attrs.GetString("right_pad"));
  KILN_PREPARE_ASSIGN(ctx, st->pad_width, ctx.attrs.GetInt("pad_width"));
  KILN_PREPARE_ASSIGN(ctx, st->preserve_short,
                      ctx.attrs.GetBool("preserve_short_sequences", false));
  KILN_PREPARE_ASSIGN(ctx, DType splits, ctx.attrs.GetType("Tsplits", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tsplits", splits, kSplitDTypes));
  for (int64_t w : st->widths) {
    if (w <= 0 || w > std::numeric_limits<int32_t>::max()) {
      return ctx.Error("attr 'ngram_widths' must hold positive int32 values, got ", w);
    }
  }
  if (st->pad_width > std::numeric_limits<int32_t>::max()) {
    return ctx.Error("attr 'pad_width' must fit int32, got ", st->pad_width);
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "data", DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "data", 1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "data_splits", splits));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "data_splits", 1));
  ctx.outputs = {TensorSpec{DType::kString, UnknownDims(1)},
                 TensorSpec{splits, PartialShape{KnownLength(ctx.inputs[1].shape)}}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- UnicodeEncode ---------------------------------------------------------------------------
// Row i of the code points (input_values[input_splits[i]:input_splits[i + 1]]) encoded into one
// string in output_encoding (UTF-8, UTF-16-BE or UTF-32-BE). Values that are no Unicode scalar
// value (negative, past U+10FFFF, surrogates, even a high + low pair) fail ("strict"), become
// replacement_char ("replace") or are dropped ("ignore"), as TensorFlow 2.21 does.

Status PrepareUnicodeEncode(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  auto st = std::make_shared<UnicodeEncodeState>();
  KILN_PREPARE_ASSIGN(ctx, std::string enc, ctx.attrs.GetString("output_encoding"));
  if (enc == "UTF-8") {
    st->encoding = Encoding::kUtf8;
  } else if (enc == "UTF-16-BE") {
    st->encoding = Encoding::kUtf16Be;
  } else if (enc == "UTF-32-BE") {
    st->encoding = Encoding::kUtf32Be;
  } else {
    return ctx.Error("attr 'output_encoding' must be \"UTF-8\", \"UTF-16-BE\" or \"UTF-32-BE\", ",
                     "got \"", enc, "\"");
  }
  KILN_PREPARE_ASSIGN(ctx, std::string errors, ctx.attrs.GetString("errors", "replace"));
  if (errors == "strict") {
    st->errors = EncodeErrors::kStrict;
  } else if (errors == "ignore") {
    st->errors = EncodeErrors::kIgnore;
  } else if (errors != "replace") {
    return ctx.Error("attr 'errors' must be \"strict\", \"replace\" or \"ignore\", got \"", errors,
                     "\"");
  }
  KILN_PREPARE_ASSIGN(ctx, int64_t replacement, ctx.attrs.GetInt("replacement_char", 0xFFFD));
  if (!IsUnicodeChar(replacement)) {
    return ctx.Error("attr 'replacement_char' must be a Unicode scalar value, got ", replacement);
  }
  st->replacement = static_cast<int32_t>(replacement);
  KILN_PREPARE_ASSIGN(ctx, DType splits, ctx.attrs.GetType("Tsplits", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tsplits", splits, kSplitDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input_values", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "input_values", 1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "input_splits", splits));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "input_splits", 1));
  const int64_t ns = KnownLength(ctx.inputs[1].shape);
  if (ns == 0) return ctx.Error("input 'input_splits' must not be empty");
  ctx.outputs = {TensorSpec{DType::kString, PartialShape{ns < 0 ? -1 : ns - 1}}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"StringNGrams", "ngrams,ngrams_splits", kOpFreshOutputs, PrepareStringNGrams},
    {"UnicodeEncode", "output", kOpFreshOutputs, PrepareUnicodeEncode},
};

}  // namespace

std::span<const OpDefinition> StringRaggedOpDefs() { return kDefs; }

}  // namespace kiln::exec
