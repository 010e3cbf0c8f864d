// Conversions between strings and other values: AsString, StringToNumber, DecodeCSV (records to
// typed columns), EncodeBase64, DecodeBase64, StringToHashBucket(Fast, Strong) and Fingerprint.
// The CPU kernels are in kernels/cpu/string_convert_ops.cc.
#include "kernels/string_convert_ops.h"

#include <cinttypes>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/string_util.h"

namespace kiln::exec {
namespace {

using string_convert::AsStringState;
using string_convert::DecodeCsvState;
using string_convert::HashBucketState;

// ---- AsString --------------------------------------------------------------------------------
// T: float32/64, float16, bfloat16, (u)int8..64, complex64/128, bool, string. The value is
// printed with a printf format built from the attrs, as TF's kernel does: "%<fill><width>.
// <precision><conv>". Bools print true/false whatever the attrs; strings take width and fill.

bool IsFloatLike(DType t) {
  return t == DType::kFloat || t == DType::kDouble || t == DType::kHalf || t == DType::kBFloat16 ||
         t == DType::kComplex64 || t == DType::kComplex128;
}

Status PrepareAsString(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(
      ctx, "T", t,
      {DType::kFloat, DType::kDouble, DType::kHalf, DType::kBFloat16, DType::kInt8, DType::kInt16,
       DType::kInt32, DType::kInt64, DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64,
       DType::kComplex64, DType::kComplex128, DType::kBool, DType::kString}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  KILN_PREPARE_ASSIGN(ctx, int64_t precision, ctx.attrs.GetInt("precision", -1));
  KILN_PREPARE_ASSIGN(ctx, bool scientific, ctx.attrs.GetBool("scientific", false));
  KILN_PREPARE_ASSIGN(ctx, bool shortest, ctx.attrs.GetBool("shortest", false));
  KILN_PREPARE_ASSIGN(ctx, int64_t width, ctx.attrs.GetInt("width", -1));
  KILN_PREPARE_ASSIGN(ctx, std::string fill, ctx.attrs.GetString("fill", ""));
  if (!IsFloatLike(t) && t != DType::kString) {
    if (scientific || shortest)
      return ctx.Error("attrs 'scientific' and 'shortest' are not supported for dtype ",
                       DTypeShortName(t));
    if (precision >= 0)
      return ctx.Error("attr 'precision' is not supported for dtype ", DTypeShortName(t));
  }
  if (fill.size() > 1)
    return ctx.Error("attr 'fill' must be one or fewer characters, got \"", fill, "\"");
  if (!fill.empty() && std::string_view(" +-0#").find(fill[0]) == std::string_view::npos)
    return ctx.Error("attr 'fill': \"", fill, "\" is not supported (expected one of ' ', '+', ",
                     "'-', '0', '#')");
  if (scientific && shortest)
    return ctx.Error("attrs 'scientific' and 'shortest' cannot both be set");
  // Bounds keep the printf format (and the output) of sane size.
  if (width > 4096 || precision > 4096)
    return ctx.Error("attrs 'width' and 'precision' must be at most 4096, got ", width, " and ",
                     precision);

  auto st = std::make_shared<AsStringState>();
  st->dtype = t;
  st->width = static_cast<int>(width);
  st->left = fill == "-";
  std::string f = "%" + fill;
  if (width > -1) f += std::to_string(width);
  if (precision > -1) f += "." + std::to_string(precision);
  switch (t) {
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
      f += "d";
      break;
    case DType::kInt64:
      f += PRId64;
      break;
    case DType::kUInt8:
    case DType::kUInt16:
    case DType::kUInt32:
      f += "u";
      break;
    case DType::kUInt64:
      f += PRIu64;
      break;
    default:  // floats and complex
      f += shortest ? "g" : scientific ? "e" : "f";
      break;
  }
  if (t == DType::kComplex64 || t == DType::kComplex128) f = "(" + f + "," + f + ")";
  st->format = std::move(f);
  ctx.outputs = {TensorSpec{DType::kString, ctx.inputs[0].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- StringToNumber --------------------------------------------------------------------------

Status PrepareStringToNumber(PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, DType out, ctx.attrs.GetType("out_type", DType::kFloat));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "out_type", out,
                                         {DType::kFloat, DType::kDouble, DType::kInt32,
                                          DType::kInt64, DType::kUInt32, DType::kUInt64}));
  return PrepareStringUnary(ctx, "string_tensor", out);
}

// ---- DecodeCSV -------------------------------------------------------------------------------

Status PrepareDecodeCsv(PrepareContext& ctx) {
  auto st = std::make_shared<DecodeCsvState>();
  KILN_PREPARE_ASSIGN(ctx, st->types, ctx.attrs.GetTypeList("OUT_TYPE"));
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1 + static_cast<int>(st->types.size())));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "records", DType::kString));
  KILN_PREPARE_ASSIGN(ctx, std::string delim, ctx.attrs.GetString("field_delim", ","));
  if (delim.size() != 1)
    return ctx.Error("attr 'field_delim' must be one character, got '", delim, "'");
  st->delim = delim[0];
  KILN_PREPARE_ASSIGN(ctx, st->quotes, ctx.attrs.GetBool("use_quote_delim", true));
  KILN_PREPARE_ASSIGN(ctx, st->na_value, ctx.attrs.GetString("na_value", ""));
  KILN_PREPARE_ASSIGN(ctx, st->select_cols, ctx.attrs.GetIntList("select_cols", {}));
  for (size_t i = 0; i < st->select_cols.size(); ++i) {
    if (st->select_cols[i] < 0 || (i > 0 && st->select_cols[i] <= st->select_cols[i - 1]))
      return ctx.Error("attr 'select_cols' must be non-negative and increasing");
  }
  if (!st->select_cols.empty() && st->select_cols.size() != st->types.size())
    return ctx.Error("attr 'select_cols' lists ", st->select_cols.size(), " columns for ",
                     st->types.size(), " outputs");
  for (size_t k = 0; k < st->types.size(); ++k) {
    const DType t = st->types[k];
    if (t != DType::kFloat && t != DType::kDouble && t != DType::kInt32 && t != DType::kInt64 &&
        t != DType::kString)
      return ctx.Error("attr 'OUT_TYPE'[", k,
                       "] must be float32, float64, int32, int64 or string, got ",
                       DTypeShortName(t));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1 + static_cast<int>(k), "record_defaults", t));
    const PartialShape& d = ctx.inputs[1 + k].shape;
    if (!d.unknown_rank() && d.rank() > 1)
      return ctx.Error("record_defaults[", k, "] must be a scalar or a vector, got ",
                       d.ToPythonString());
  }
  for (DType t : st->types) ctx.outputs.push_back(TensorSpec{t, ctx.inputs[0].shape});
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- EncodeBase64, DecodeBase64 --------------------------------------------------------------

Status PrepareEncodeBase64(PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, bool pad, ctx.attrs.GetBool("pad", false));
  ctx.state = std::make_shared<TypedOpState<bool>>(pad);
  return PrepareStringUnary(ctx, "input", DType::kString);
}

// ---- StringToHashBucketFast, StringToHashBucketStrong ----------------------------------------

Result<std::shared_ptr<HashBucketState>> ReadNumBuckets(PrepareContext& ctx) {
  auto st = std::make_shared<HashBucketState>();
  KILN_PREPARE_ASSIGN(ctx, int64_t n, ctx.attrs.GetInt("num_buckets"));
  if (n < 1) return ctx.Error("attr 'num_buckets' must be at least 1, got ", n);
  st->num_buckets = static_cast<uint64_t>(n);
  return st;
}

Status PrepareHashBucketFast(PrepareContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ctx.state, ReadNumBuckets(ctx));
  return PrepareStringUnary(ctx, "input", DType::kInt64);
}

// StringToHashBucket (v1) names its input string_tensor.
Status PrepareHashBucketLegacy(PrepareContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ctx.state, ReadNumBuckets(ctx));
  return PrepareStringUnary(ctx, "string_tensor", DType::kInt64);
}

Status PrepareHashBucketStrong(PrepareContext& ctx) {
  KILN_ASSIGN_OR_RETURN(auto st, ReadNumBuckets(ctx));
  KILN_PREPARE_ASSIGN(ctx, std::vector<int64_t> key, ctx.attrs.GetIntList("key"));
  if (key.size() != 2) return ctx.Error("attr 'key' must have 2 elements, got ", key.size());
  st->key[0] = static_cast<uint64_t>(key[0]);
  st->key[1] = static_cast<uint64_t>(key[1]);
  ctx.state = std::move(st);
  return PrepareStringUnary(ctx, "input", DType::kInt64);
}

// ---- Fingerprint ------------------------------------------------------------------------------

Status PrepareFingerprint(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "data"));
  if (!HoldsData(t)) return ctx.Error("Data type not supported: ", DTypeShortName(t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "method", DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "method", 0));
  if (const Tensor* m = ConstantInput(ctx, 1);
      m != nullptr && m->scalar<std::string>() != "farmhash64") {
    return ctx.Error("Unsupported fingerprint method: ", m->scalar<std::string>());
  }
  const PartialShape& s = ctx.inputs[0].shape;
  if (!s.unknown_rank() && s.rank() == 0) {
    return ctx.Error("`data` should have at least one dimension: ", s.ToPythonString());
  }
  ctx.outputs = {TensorSpec{DType::kUInt8, PartialShape{s.unknown_rank() ? -1 : s.dim(0), 8}}};
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"AsString", "output", kOpFreshOutputs, PrepareAsString},
    {"StringToNumber", "output", kOpFreshOutputs, PrepareStringToNumber},
    {"DecodeCSV", "output", kOpFreshOutputs, PrepareDecodeCsv},
    {"EncodeBase64", "output", kOpFreshOutputs, PrepareEncodeBase64},
    {"DecodeBase64", "output", kOpFreshOutputs,
     [](PrepareContext& ctx) { return PrepareStringUnary(ctx, "input", DType::kString); }},
    {"StringToHashBucketFast", "output", kOpFreshOutputs, PrepareHashBucketFast},
    {"StringToHashBucketStrong", "output", kOpFreshOutputs, PrepareHashBucketStrong},
    {"StringToHashBucket", "output", kOpFreshOutputs, PrepareHashBucketLegacy},
    {"Fingerprint", "fingerprint", kOpFreshOutputs, PrepareFingerprint},
};

}  // namespace

std::span<const OpDefinition> StringConvertOpDefs() { return kDefs; }

}  // namespace kiln::exec
