// The CPU kernels of the string conversion ops in kernels/string_convert_ops.cc.
#include "kernels/string_convert_ops.h"

#include <complex>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/string_hash.h"
#include "kernels/string_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using string_convert::AsStringState;
using string_convert::DecodeCsvState;
using string_convert::HashBucketState;

// ---- AsString --------------------------------------------------------------------------------
// T: float32/64, float16, bfloat16, (u)int8..64, complex64/128, bool, string. The value is
// printed with a printf format built from the attrs, as TF's kernel does: "%<fill><width>.
// <precision><conv>". Bools print true/false whatever the attrs; strings take width and fill.

// printf into a std::string (the format comes from Prepare, never from data).
template <typename... Args>
std::string Format(const std::string& format, Args... args) {
  char small[64];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  int n = std::snprintf(small, sizeof(small), format.c_str(), args...);
  if (n < 0) return std::string();
  if (static_cast<size_t>(n) < sizeof(small)) return std::string(small, n);
  std::string out(static_cast<size_t>(n) + 1, '\0');
  std::snprintf(out.data(), out.size(), format.c_str(), args...);
#pragma GCC diagnostic pop
  out.resize(static_cast<size_t>(n));
  return out;
}

float HalfToFloat(Half h) { return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(h)); }
float HalfToFloat(BFloat16 h) {
  return static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(h));
}

template <typename T>
std::string AsStringOne(const AsStringState& st, const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (st.width < 0 || v.size() >= static_cast<size_t>(st.width)) return v;
    const std::string pad(static_cast<size_t>(st.width) - v.size(), ' ');
    return st.left ? v + pad : pad + v;
  } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return Format(st.format, static_cast<double>(HalfToFloat(v)));
  } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                       std::is_same_v<T, std::complex<double>>) {
    return Format(st.format, static_cast<double>(v.real()), static_cast<double>(v.imag()));
  } else if constexpr (std::is_floating_point_v<T>) {
    return Format(st.format, static_cast<double>(v));
  } else if constexpr (std::is_signed_v<T>) {
    if constexpr (sizeof(T) == 8) {
      return Format(st.format, static_cast<int64_t>(v));
    } else {
      return Format(st.format, static_cast<int>(v));
    }
  } else {
    if constexpr (sizeof(T) == 8) {
      return Format(st.format, static_cast<uint64_t>(v));
    } else {
      return Format(st.format, static_cast<unsigned>(v));
    }
  }
}

using AsStringTypes =
    TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
             uint32_t, uint64_t, std::complex<float>, std::complex<double>, bool, std::string>;

Status ComputeAsString(const KernelContext& ctx) {
  const auto& st = ctx.state<AsStringState>();
  const Tensor& in = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, in.shape()));
  std::string* dst = out->data<std::string>();
  return Dispatch<AsStringTypes>(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = in.data<T>();
    ctx.threads().ParallelFor(in.NumElements(), 4096, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) dst[i] = AsStringOne<T>(st, src[i]);
    });
    return OkStatus();
  });
}

// ---- StringToNumber --------------------------------------------------------------------------
// Floats parse as strtod does (decimal, hex, inf/infinity, nan, case-insensitive) after ASCII
// whitespace is stripped; out-of-range values become inf or 0. Integers are decimal digits with
// an optional sign ('-' not for unsigned) and must fit the type.

Status ComputeStringToNumber(const KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, in.shape()));
  const std::string* src = in.data<std::string>();
  return Dispatch<TypeList<float, double, int32_t, int64_t, uint32_t, uint64_t>>(
      out->dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        T* dst = out->data<T>();
        return ParallelForEach(ctx, in.NumElements(), 4096, [&](int64_t i) {
          if (ParseNumber<T>(src[i], &dst[i])) return OkStatus();
          return ctx.Error("StringToNumber could not convert string \"", src[i], "\" to ",
                           DTypeShortName(kDTypeOf<T>));
        });
      });
}

// ---- DecodeCSV -------------------------------------------------------------------------------
// Each record (any shape) split into fields as TF's kernel splits it: field_delim separates;
// with use_quote_delim a field may be "quoted" (a "" inside is one quote, the closing quote must
// end the record or precede the delimiter); \r and \n outside quotes are skipped; select_cols
// keeps the listed columns. An empty field or one equal to na_value takes its column's default
// (an error when the column has none); the rest parse as the column's type (float32/64, int32/64,
// string). Output k has the records' shape.

// The fields of one record (TF's ExtractFields); an error names what is malformed.
Status SplitCsvRecord(std::string_view in, const DecodeCsvState& st,
                      std::vector<std::string>* fields) {
  fields->clear();
  if (in.empty()) return OkStatus();
  const bool all = st.select_cols.empty();
  size_t pos = 0, selected = 0;
  int64_t parsed = 0;
  while (pos < in.size()) {
    if (in[pos] == '\n' || in[pos] == '\r') {
      ++pos;
      continue;
    }
    const bool include = all || st.select_cols[selected] == parsed;
    std::string field;
    if (!(st.quotes && in[pos] == '"')) {
      while (pos < in.size() && in[pos] != st.delim) {
        if ((st.quotes && in[pos] == '"') || in[pos] == '\n' || in[pos] == '\r')
          return InvalidArgument("unquoted fields cannot have quotes or CR/LF inside");
        if (include) field += in[pos];
        ++pos;
      }
      ++pos;
    } else {
      ++pos;  // the opening quote
      while (pos + 1 < in.size() && (in[pos] != '"' || in[pos + 1] != st.delim)) {
        if (in[pos] != '"') {
          if (include) field += in[pos];
          ++pos;
        } else {
          if (in[pos + 1] != '"')
            return InvalidArgument("a quote inside a string has to be escaped by another quote");
          if (include) field += '"';
          pos += 2;
        }
      }
      if (!(pos < in.size() && in[pos] == '"' && (pos + 1 == in.size() || in[pos + 1] == st.delim)))
        return InvalidArgument(
            "a quoted field has to end with a quote followed by the delimiter "
            "or the end of the record");
      pos += 2;
    }
    ++parsed;
    if (include) {
      fields->push_back(std::move(field));
      if (!all && ++selected == st.select_cols.size()) return OkStatus();
    }
  }
  // A record that ends in the delimiter has an empty last field.
  if ((all || (selected < st.select_cols.size() && st.select_cols[selected] == parsed)) &&
      in.back() == st.delim)
    fields->emplace_back();
  return OkStatus();
}

Status ComputeDecodeCsv(const KernelContext& ctx) {
  const auto& st = ctx.state<DecodeCsvState>();
  const Tensor& records = ctx.input(0);
  const size_t cols = st.types.size();
  for (size_t k = 0; k < cols; ++k)
    if (ctx.input(1 + static_cast<int>(k)).NumElements() > 1)
      return ctx.Error("record_defaults[", k, "] must have at most one element, has ",
                       ctx.input(1 + static_cast<int>(k)).NumElements());
  std::vector<Tensor*> outs(cols);
  for (size_t k = 0; k < cols; ++k) {
    KILN_ASSIGN_OR_RETURN(outs[k], ctx.AllocateOutput(static_cast<int>(k), records.shape()));
  }
  std::vector<std::string> fields;
  for (int64_t i = 0; i < records.NumElements(); ++i) {
    Status split = SplitCsvRecord(records.data<std::string>()[i], st, &fields);
    if (!split.ok()) return ctx.Error("record ", i, ": ", split.message());
    if (fields.size() != cols)
      return ctx.Error("expect ", cols, " fields but have ", fields.size(), " in record ", i);
    for (size_t k = 0; k < cols; ++k) {
      const std::string& f = fields[k];
      const Tensor& dflt = ctx.input(1 + static_cast<int>(k));
      const bool missing = f.empty() || f == st.na_value;
      if (missing && dflt.NumElements() != 1)
        return ctx.Error("field ", k, " is required but missing in record ", i);
      if (st.types[k] == DType::kString) {
        outs[k]->data<std::string>()[i] = missing ? dflt.data<std::string>()[0] : f;
        continue;
      }
      auto parse = [&](auto* dst) -> Status {
        using T = std::remove_pointer_t<decltype(dst)>;
        if (missing) {
          *dst = dflt.data<T>()[0];
          return OkStatus();
        }
        if (!ParseNumber<T>(f, dst))
          return ctx.Error("field ", k, " in record ", i, " is not a valid ",
                           DTypeShortName(kDTypeOf<T>), ": ", f);
        return OkStatus();
      };
      switch (st.types[k]) {
        case DType::kFloat:
          KILN_RETURN_IF_ERROR(parse(outs[k]->data<float>() + i));
          break;
        case DType::kDouble:
          KILN_RETURN_IF_ERROR(parse(outs[k]->data<double>() + i));
          break;
        case DType::kInt32:
          KILN_RETURN_IF_ERROR(parse(outs[k]->data<int32_t>() + i));
          break;
        default:
          KILN_RETURN_IF_ERROR(parse(outs[k]->data<int64_t>() + i));
          break;
      }
    }
  }
  return OkStatus();
}

// ---- EncodeBase64, DecodeBase64 --------------------------------------------------------------
// The web-safe alphabet (- and _), as TF's ops use; padding with '=' only on request.

constexpr char kBase64Chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string EncodeBase64(std::string_view in, bool pad) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  auto byte = [&](size_t k) { return static_cast<uint32_t>(static_cast<unsigned char>(in[k])); };
  for (; i + 3 <= in.size(); i += 3) {
    const uint32_t v = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
    for (int s = 18; s >= 0; s -= 6) out += kBase64Chars[(v >> s) & 63];
  }
  const size_t rest = in.size() - i;
  if (rest > 0) {
    uint32_t v = byte(i) << 16;
    if (rest == 2) v |= byte(i + 1) << 8;
    out += kBase64Chars[(v >> 18) & 63];
    out += kBase64Chars[(v >> 12) & 63];
    if (rest == 2) out += kBase64Chars[(v >> 6) & 63];
    if (pad) out.append(rest == 1 ? "==" : "=");
  }
  return out;
}

Status ComputeEncodeBase64(const KernelContext& ctx) {
  const bool pad = ctx.state<TypedOpState<bool>>().value;
  const Tensor& in = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, in.shape()));
  const std::string* src = in.data<std::string>();
  std::string* dst = out->data<std::string>();
  ctx.threads().ParallelFor(in.NumElements(), 1024, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) dst[i] = EncodeBase64(src[i], pad);
  });
  return OkStatus();
}

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-') return 62;
  if (c == '_') return 63;
  return -1;
}

// Groups of four characters; a final group of two or three decodes to one or two bytes (its
// unused low bits are ignored), "==" or "=" may pad the last group of four. Anything else is an
// error, with TF's two messages.
Status DecodeBase64(std::string_view in, std::string* out) {
  out->clear();
  if (in.empty()) return OkStatus();
  out->reserve(in.size() / 4 * 3 + 3);
  size_t end = in.size();
  size_t pos = 0;
  auto group = [&](std::string_view g) -> Status {
    uint32_t v = 0;
    for (size_t k = 0; k < 4; ++k) {
      const int d = k < g.size() ? Base64Value(g[k]) : 0;
      if (d < 0) return InvalidArgument("invalid character in base64 input");
      v = v << 6 | static_cast<uint32_t>(d);
    }
    const size_t bytes = g.size() - 1;  // 4 chars: 3 bytes, 3: 2, 2: 1
    for (size_t k = 0; k < bytes; ++k) out->push_back(static_cast<char>((v >> (16 - 8 * k)) & 255));
    return OkStatus();
  };
  while (end - pos > 4) {
    KILN_RETURN_IF_ERROR(group(in.substr(pos, 4)));
    pos += 4;
  }
  if (end - pos == 4) {
    if (in[pos + 2] == '=' && in[pos + 3] == '=') {
      end -= 2;
    } else if (in[pos + 3] == '=') {
      end -= 1;
    }
  }
  if (end - pos == 1) return InvalidArgument("base64 string length cannot be 1 modulo 4");
  return group(in.substr(pos, end - pos));
}

Status ComputeDecodeBase64(const KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, in.shape()));
  const std::string* src = in.data<std::string>();
  std::string* dst = out->data<std::string>();
  return ParallelForEach(ctx, in.NumElements(), 1024, [&](int64_t i) {
    Status s = DecodeBase64(src[i], &dst[i]);
    if (s.ok()) return s;
    return ctx.Error("element ", i, ": ", s.message());
  });
}

// ---- StringToHashBucketFast, StringToHashBucketStrong ----------------------------------------

enum class BucketHash { kFast, kStrong, kLegacy };

template <BucketHash kHash>
Status ComputeHashBucket(const KernelContext& ctx) {
  const auto& st = ctx.state<HashBucketState>();
  const Tensor& in = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, in.shape()));
  const std::string* src = in.data<std::string>();
  int64_t* dst = out->data<int64_t>();
  ctx.threads().ParallelFor(in.NumElements(), 4096, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const uint64_t h = kHash == BucketHash::kStrong   ? SipHash24(st.key[0], st.key[1], src[i])
                         : kHash == BucketHash::kLegacy ? LegacyHash64(src[i])
                                                        : Fingerprint64(src[i]);
      dst[i] = static_cast<int64_t>(h % st.num_buckets);
    }
  });
  return OkStatus();
}

// ---- Fingerprint ------------------------------------------------------------------------------

// One 8-byte little-endian FarmHash fingerprint per row (dim 0) of the data: of the row's bytes,
// or, for strings, of the string (one per row) or of the row's strings' fingerprints.
Status ComputeFingerprint(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::string& method = ctx.input(1).scalar<std::string>();
  if (method != "farmhash64") return ctx.Error("Unsupported fingerprint method: ", method);
  if (x.rank() == 0) {
    return ctx.Error("`data` should have at least one dimension: ", x.shape().ToString());
  }
  const int64_t rows = x.dim(0), per = rows == 0 ? 0 : x.NumElements() / rows;
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{rows, 8}));
  uint8_t* o = out->data<uint8_t>();
  auto put = [](uint64_t v, uint8_t* to) {
    for (int b = 0; b < 8; ++b) to[b] = static_cast<uint8_t>(v >> (8 * b));
  };
  for (int64_t r = 0; r < rows; ++r) {
    uint64_t fp;
    if (x.dtype() == DType::kString) {
      const std::string* strs = x.data<std::string>() + r * per;
      if (per == 1) {
        fp = Fingerprint64(strs[0]);
      } else {
        std::string buf(per * 8, '\0');
        for (int64_t k = 0; k < per; ++k)
          put(Fingerprint64(strs[k]), reinterpret_cast<uint8_t*>(buf.data()) + k * 8);
        fp = Fingerprint64(buf);
      }
    } else {
      const size_t bytes = static_cast<size_t>(per) * DTypeSize(x.dtype());
      fp = Fingerprint64(
          std::string_view(static_cast<const char*>(x.raw_data()) + r * bytes, bytes));
    }
    put(fp, o + r * 8);
  }
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"AsString", ComputeAsString},
    {"StringToNumber", ComputeStringToNumber},
    {"DecodeCSV", ComputeDecodeCsv},
    {"EncodeBase64", ComputeEncodeBase64},
    {"DecodeBase64", ComputeDecodeBase64},
    {"StringToHashBucketFast", ComputeHashBucket<BucketHash::kFast>},
    {"StringToHashBucketStrong", ComputeHashBucket<BucketHash::kStrong>},
    {"StringToHashBucket", ComputeHashBucket<BucketHash::kLegacy>},
    {"Fingerprint", ComputeFingerprint},
};

}  // namespace

std::span<const KernelEntry> StringConvertCpuKernels() { return kCpu; }

}  // namespace kiln::exec
