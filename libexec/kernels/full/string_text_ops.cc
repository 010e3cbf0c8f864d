// Working on the text of strings: StringLength, StringLower, StringUpper, StringStrip, Substr,
// StringSplitV2, StringSplit (v1), UnicodeScript, UnicodeDecode(WithOffsets) and
// UnicodeTranscode. Unicode case mapping and
// decoding use ICU, as TensorFlow does, so invalid input and special cases (final sigma, ß -> SS,
// maximal-subpart replacement of malformed UTF-8) come out the same.
// The CPU kernels are in kernels/cpu/full/string_text_ops.cc.
#include "kernels/full/string_text_ops.h"

#include <unicode/umachine.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

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

Status PrepareStringLength(PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, std::string unit, ctx.attrs.GetString("unit", "BYTE"));
  if (unit != "BYTE" && unit != "UTF8_CHAR")
    return ctx.Error("attr 'unit' must be \"BYTE\" or \"UTF8_CHAR\", got \"", unit, "\"");
  ctx.state = std::make_shared<TypedOpState<bool>>(unit == "UTF8_CHAR");
  return PrepareStringUnary(ctx, "input", DType::kInt32);
}

// ---- StringLower, StringUpper ----------------------------------------------------------------
// encoding "": ASCII letters only, other bytes unchanged; "utf-8": Unicode full case mapping
// (root locale), malformed input replaced by U+FFFD.

Status PrepareCase(PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, std::string encoding, ctx.attrs.GetString("encoding", ""));
  if (!encoding.empty() && encoding != "utf-8")
    return ctx.Error("attr 'encoding' must be \"\" (ASCII) or \"utf-8\", got \"", encoding, "\"");
  ctx.state = std::make_shared<TypedOpState<bool>>(!encoding.empty());
  return PrepareStringUnary(ctx, "input", DType::kString);
}

// ---- Substr ----------------------------------------------------------------------------------
// input broadcasts against pos; pos and len have the same shape. pos may be negative (from the
// end) and must lie in [-n, n] (n characters); a negative len means "to the end" for BYTE and
// nothing for UTF8_CHAR, as in TF.

Status PrepareSubstr(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_ASSIGN_OR_RETURN(DType t, IndexInputDType(ctx, 1, "pos", "T"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "len", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", DType::kString));
  KILN_PREPARE_ASSIGN(ctx, std::string unit, ctx.attrs.GetString("unit", "BYTE"));
  if (unit != "BYTE" && unit != "UTF8_CHAR")
    return ctx.Error("attr 'unit' must be \"BYTE\" or \"UTF8_CHAR\", got \"", unit, "\"");
  const PartialShape& pos = ctx.inputs[1].shape;
  const PartialShape& len = ctx.inputs[2].shape;
  if (!pos.IsCompatibleWith(len))
    return ctx.Error("inputs 'pos' and 'len' must have the same shape, got ", pos.ToPythonString(),
                     " and ", len.ToPythonString());
  auto out = BroadcastPartialShapes(ctx.inputs[0].shape, pos);
  if (!out.ok()) return ctx.Error("inputs 'input' and 'pos': ", out.status().message());
  auto st = std::make_shared<SubstrState>();
  st->utf8 = unit == "UTF8_CHAR";
  ctx.outputs = {TensorSpec{DType::kString, *out}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- StringSplitV2 ---------------------------------------------------------------------------
// A vector of strings split as Python's str.split does (TF's SplitV2): with an empty sep, runs
// of ASCII whitespace separate and ends are trimmed; otherwise every sep separates. maxsplit 0
// keeps each string whole. Outputs a SparseTensor: indices [n, 2], values [n], dense shape [2].

// StringSplitV2 (input, sep; maxsplit) and StringSplit (input, delimiter; skip_empty): the same
// inputs and SparseTensor outputs.
Status PrepareStringSplit(PrepareContext& ctx) {
  const bool v1 = ctx.op == "StringSplit";
  const char* sep = v1 ? "delimiter" : "sep";
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, sep, DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "input", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, sep, 0));
  auto st = std::make_shared<SplitState>();
  st->v1 = v1;
  if (v1) {
    KILN_PREPARE_ASSIGN(ctx, st->skip_empty, ctx.attrs.GetBool("skip_empty", true));
  } else {
    KILN_PREPARE_ASSIGN(ctx, st->maxsplit, ctx.attrs.GetInt("maxsplit", -1));
  }
  ctx.state = std::move(st);
  ctx.outputs = {TensorSpec{DType::kInt64, UnknownDims(2)},
                 TensorSpec{DType::kString, UnknownDims(1)},
                 TensorSpec{DType::kInt64, PartialShape(Shape{2})}};
  return OkStatus();
}

// ---- UnicodeScript -----------------------------------------------------------------------------
// The ICU script code of each int32 code point (USCRIPT_COMMON 0, Latin 25, ...), -1 where ICU
// fails (a value that is no code point), as TensorFlow's kernel.

Status PrepareUnicodeScript(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", DType::kInt32));
  ctx.outputs = {TensorSpec{DType::kInt32, ctx.inputs[0].shape}};
  return OkStatus();
}

// ---- UnicodeDecode ---------------------------------------------------------------------------
// Every string of the input (any shape, flattened) decoded with an ICU converter for
// input_encoding into code points: row_splits [n + 1] (Tsplits) and char_values [total] (int32).
// Malformed sequences become replacement_char (errors "replace"), are dropped ("ignore") or fail
// ("strict"); replace_control_characters also replaces C0 controls (U+0000..U+001F).

Status PrepareUnicodeDecode(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", DType::kString));
  auto st = std::make_shared<UnicodeDecodeState>();
  st->offsets = ctx.op == "UnicodeDecodeWithOffsets";
  const bool transcode = ctx.op == "UnicodeTranscode";
  if (transcode) {
    KILN_PREPARE_ASSIGN(ctx, st->output_encoding, ctx.attrs.GetString("output_encoding"));
    if (st->output_encoding != "UTF-8" && st->output_encoding != "UTF-16-BE" &&
        st->output_encoding != "UTF-32-BE") {
      return ctx.Error("attr 'output_encoding' must be UTF-8, UTF-16-BE or UTF-32-BE, got \"",
                       st->output_encoding, "\"");
    }
  }
  KILN_PREPARE_ASSIGN(ctx, st->encoding, ctx.attrs.GetString("input_encoding"));
  KILN_PREPARE_ASSIGN(ctx, std::string errors, ctx.attrs.GetString("errors", "replace"));
  KILN_PREPARE_ASSIGN(ctx, int64_t replacement, ctx.attrs.GetInt("replacement_char", 0xFFFD));
  KILN_PREPARE_ASSIGN(ctx, st->replace_control,
                      ctx.attrs.GetBool("replace_control_characters", false));
  KILN_PREPARE_ASSIGN(ctx, DType splits, ctx.attrs.GetType("Tsplits", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tsplits", splits, {DType::kInt32, DType::kInt64}));
  st->splits = splits;
  if (errors == "strict") {
    st->errors = UnicodeDecodeState::Errors::kStrict;
  } else if (errors == "ignore") {
    st->errors = UnicodeDecodeState::Errors::kIgnore;
  } else if (errors != "replace") {
    return ctx.Error("attr 'errors' must be \"strict\", \"replace\" or \"ignore\", got \"", errors,
                     "\"");
  }
  if (replacement < 0 || replacement > 0x10FFFF)
    return ctx.Error("attr 'replacement_char' ", replacement,
                     " is out of the Unicode code point range [0, 0x10FFFF]");
  st->replacement = static_cast<UChar32>(replacement);
  auto probe = OpenConverter(st->encoding);
  if (!probe.ok()) return ctx.Error("attr 'input_encoding': ", probe.status().message());
  if (transcode) {
    ctx.outputs = {TensorSpec{DType::kString, ctx.inputs[0].shape}};
  } else {
    ctx.outputs = {TensorSpec{splits, UnknownDims(1)}, TensorSpec{DType::kInt32, UnknownDims(1)}};
    if (st->offsets) ctx.outputs.push_back(TensorSpec{DType::kInt64, UnknownDims(1)});
  }
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"StringLength", "output", kOpFreshOutputs, PrepareStringLength},
    {"StringLower", "output", kOpFreshOutputs, PrepareCase},
    {"StringUpper", "output", kOpFreshOutputs, PrepareCase},
    {"StringStrip", "output", kOpFreshOutputs,
     [](PrepareContext& ctx) { return PrepareStringUnary(ctx, "input", DType::kString); }},
    {"Substr", "output", kOpFreshOutputs, PrepareSubstr},
    {"StringSplitV2", "indices,values,shape", kOpFreshOutputs, PrepareStringSplit},
    {"StringSplit", "indices,values,shape", kOpFreshOutputs, PrepareStringSplit},
    {"UnicodeScript", "output", kOpFreshOutputs, PrepareUnicodeScript},
    {"UnicodeDecode", "row_splits,char_values", kOpFreshOutputs, PrepareUnicodeDecode},
    {"UnicodeDecodeWithOffsets", "row_splits,char_values,char_to_byte_starts", kOpFreshOutputs,
     PrepareUnicodeDecode},
    {"UnicodeTranscode", "output", kOpFreshOutputs, PrepareUnicodeDecode},
};

}  // namespace

std::span<const OpDefinition> StringTextOpDefs() { return kDefs; }

}  // namespace kiln::exec
