#include "json_util.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kiln/serve/base64.h"

namespace kiln::serve::json_util {

Status CheckCost(std::string_view body, int max_depth, int64_t max_parsed_bytes) {
  // Costs of nlohmann::json's parsed form on a 64-bit build, rounded up: a value is 16 bytes
  // (twice that for vector growth), a container's allocation 64, an object member's map node
  // with its key 96, a string's allocation 48 plus its bytes.
  constexpr int64_t kValue = 32, kContainer = 64, kMember = 96, kString = 48;
  int depth = 0;
  int64_t cost = kValue;
  bool in_string = false;
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      ++cost;
      continue;
    }
    if (c == '"') {
      in_string = true;
      cost += kString;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth)
        return InvalidArgument("JSON is nested deeper than the limit of ", max_depth,
                               " levels (at byte ", i, ")");
      cost += kContainer;
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ',') {
      cost += kValue;
    } else if (c == ':') {
      cost += kMember;
    }
    if (cost > max_parsed_bytes)
      return ResourceExhausted("JSON body would take more than the limit of ", max_parsed_bytes,
                               " bytes once parsed (", body.size(),
                               " bytes of small values; send fewer or use the binary format)");
  }
  return OkStatus();
}

namespace {

// TF Serving's JSON accepts bare NaN, Infinity and -Infinity (what Python's json module writes,
// and what we write back); nlohmann's parser does not, so outside strings they become strings
// of their spelling behind a NUL (NonFiniteNumber reads them): a client's own string "NaN"
// stays a string where that matters (a tf.Example's bytes feature). Empty when the body has
// none.
std::string QuoteNonFinite(std::string_view body) {
  if (body.find("NaN") == std::string_view::npos && body.find("Infinity") == std::string_view::npos)
    return {};
  std::string out;
  bool in_string = false, changed = false;
  out.reserve(body.size() + 16);
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (in_string) {
      out.push_back(c);
      if (c == '\\' && i + 1 < body.size()) {
        out.push_back(body[++i]);
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    std::string_view token;
    for (std::string_view t : {"NaN", "Infinity", "-Infinity"})
      if (body.substr(i, t.size()) == t) token = t;
    if (token.empty()) {
      out.push_back(c);
      continue;
    }
    out.append("\"\\u0000");
    out.append(token);
    out.push_back('"');
    i += token.size() - 1;
    changed = true;
  }
  return changed ? out : std::string();
}

}  // namespace

Result<Json> Parse(std::string_view body, const RequestLimits& limits) {
  KILN_RETURN_IF_ERROR(CheckCost(body, limits.max_json_depth, limits.max_json_parsed_bytes));
  const std::string quoted = QuoteNonFinite(body);
  if (!quoted.empty()) body = quoted;
  try {
    return Json::parse(body.begin(), body.end());
  } catch (const Json::exception& e) {
    return InvalidArgument("malformed JSON: ", e.what());
  }
}

std::optional<double> NonFiniteNumber(const Json& v) {
  if (!v.is_string()) return std::nullopt;
  std::string_view s = v.get_ref<const std::string&>();
  if (s.empty() || s[0] != '\0') return std::nullopt;
  s.remove_prefix(1);
  if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (s == "Infinity") return std::numeric_limits<double>::infinity();
  if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
  return std::nullopt;
}

bool IsB64(const Json& v) {
  return v.is_object() && v.size() == 1 && v.begin().key() == "b64" && v.begin()->is_string();
}

Status InferShape(const Json& v, std::vector<int64_t>* dims, std::string_view what) {
  const Json* cur = &v;
  while (cur->is_array()) {
    if (dims->size() >= static_cast<size_t>(kMaxRank))
      return InvalidArgument(what, ": lists nested deeper than the maximum rank ", kMaxRank);
    dims->push_back(static_cast<int64_t>(cur->size()));
    if (cur->empty()) break;
    cur = &(*cur)[0];
  }
  return OkStatus();
}

namespace {

// float16 and bfloat16 travel as JSON numbers (TF Serving reads and writes their half_val as
// floats): round to nearest even on the way in.
float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign != 0 ? -v : v;
  }
  const uint32_t bits =
      exp == 0x1f ? sign | 0x7f800000u | (mant << 13) : sign | ((exp + 112) << 23) | (mant << 13);
  return std::bit_cast<float>(bits);
}

uint16_t FloatToHalf(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) return sign | (a > 0x7f800000u ? 0x7e00 : 0x7c00);
  if (a >= 0x477ff000u) return sign | 0x7c00;  // 65520 and up round to infinity
  if (a < 0x38800000u) {                       // below 2^-14: a subnormal half, exact scaling
    const float v = std::nearbyint(std::bit_cast<float>(a) * 16777216.0f);
    return sign | static_cast<uint16_t>(v);
  }
  a += 0xc8000fffu + ((a >> 13) & 1u);  // rebias the exponent, round to nearest even
  return sign | static_cast<uint16_t>(a >> 13);
}

float BFloat16ToFloat(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

uint16_t FloatToBFloat16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

template <typename T>
Status SetInt(const Json& v, Tensor* t, int64_t index, std::string_view what) {
  if (v.is_number_unsigned()) {
    const uint64_t x = v.get<uint64_t>();
    if (x > static_cast<uint64_t>(std::numeric_limits<T>::max()))
      return InvalidArgument(what, ": ", x, " is out of range for ", DTypeShortName(t->dtype()));
    t->data<T>()[index] = static_cast<T>(x);
    return OkStatus();
  }
  if (v.is_number_integer()) {
    const int64_t x = v.get<int64_t>();
    if constexpr (std::is_unsigned_v<T>) {
      if (x < 0)
        return InvalidArgument(what, ": ", x, " is out of range for ", DTypeShortName(t->dtype()));
    } else {
      if (x < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
          x > static_cast<int64_t>(std::numeric_limits<T>::max()))
        return InvalidArgument(what, ": ", x, " is out of range for ", DTypeShortName(t->dtype()));
    }
    t->data<T>()[index] = static_cast<T>(x);
    return OkStatus();
  }
  return InvalidArgument(what, ": expected an integer for a ", DTypeShortName(t->dtype()),
                         " tensor, got ", v.type_name(), " ", v.dump());
}

template <typename T>
Status SetFloat(const Json& v, Tensor* t, int64_t index, std::string_view what) {
  if (v.is_number()) {
    const double x = v.get<double>();
    // As TF Serving: a finite number beyond the type's range is refused, not made infinite.
    if (std::isfinite(x) && (x > static_cast<double>(std::numeric_limits<T>::max()) ||
                             x < static_cast<double>(std::numeric_limits<T>::lowest())))
      return InvalidArgument(what, ": cannot convert ", v.dump(), " to ",
                             DTypeShortName(t->dtype()), " without loss of precision");
    t->data<T>()[index] = static_cast<T>(x);
    return OkStatus();
  }
  if (auto x = NonFiniteNumber(v)) {
    t->data<T>()[index] = static_cast<T>(*x);
    return OkStatus();
  }
  if (v.is_string()) {  // quoted spellings, as TF Serving writes non-finite values in strings
    const auto& s = v.get_ref<const std::string&>();
    if (s == "NaN") {
      t->data<T>()[index] = std::numeric_limits<T>::quiet_NaN();
      return OkStatus();
    }
    if (s == "Infinity" || s == "-Infinity") {
      t->data<T>()[index] =
          s[0] == '-' ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
      return OkStatus();
    }
  }
  return InvalidArgument(what, ": expected a number for a ", DTypeShortName(t->dtype()),
                         " tensor, got ", v.type_name());
}

}  // namespace

Status SetElement(const Json& v, Tensor* t, int64_t index, std::string_view what) {
  switch (t->dtype()) {
    case DType::kFloat:
      return SetFloat<float>(v, t, index, what);
    case DType::kDouble:
      return SetFloat<double>(v, t, index, what);
    case DType::kHalf:
    case DType::kBFloat16: {
      Tensor f(DType::kFloat, Shape{1});
      KILN_RETURN_IF_ERROR(SetFloat<float>(v, &f, 0, what));
      const float x = f.data<float>()[0];
      if (t->dtype() == DType::kHalf) {
        t->data<Half>()[index].bits = FloatToHalf(x);
      } else {
        t->data<BFloat16>()[index].bits = FloatToBFloat16(x);
      }
      return OkStatus();
    }
    case DType::kInt8:
      return SetInt<int8_t>(v, t, index, what);
    case DType::kInt16:
      return SetInt<int16_t>(v, t, index, what);
    case DType::kInt32:
      return SetInt<int32_t>(v, t, index, what);
    case DType::kInt64:
      return SetInt<int64_t>(v, t, index, what);
    case DType::kUInt8:
      return SetInt<uint8_t>(v, t, index, what);
    case DType::kUInt16:
      return SetInt<uint16_t>(v, t, index, what);
    case DType::kUInt32:
      return SetInt<uint32_t>(v, t, index, what);
    case DType::kUInt64:
      return SetInt<uint64_t>(v, t, index, what);
    case DType::kBool:
      if (!v.is_boolean())
        return InvalidArgument(what, ": expected true or false for a bool tensor, got ",
                               v.type_name());
      t->data<bool>()[index] = v.get<bool>();
      return OkStatus();
    case DType::kString:
      if (NonFiniteNumber(v))
        return InvalidArgument(what, ": expected a string for a string tensor, got the number ",
                               v.get_ref<const std::string&>().substr(1));
      if (v.is_string()) {
        t->data<std::string>()[index] = v.get<std::string>();
        return OkStatus();
      }
      if (IsB64(v)) {
        KILN_ASSIGN_OR_RETURN_CTX(t->data<std::string>()[index],
                                  Base64Decode(v.begin()->get_ref<const std::string&>()), what);
        return OkStatus();
      }
      return InvalidArgument(
          what, ": expected a string or {\"b64\": ...} for a string tensor, got ", v.type_name());
    default:
      return Unimplemented(what, ": ", DTypeShortName(t->dtype()),
                           " tensors cannot be sent as JSON");
  }
}

Status Fill(const Json& v, std::span<const int64_t> dims, size_t level, Tensor* t, int64_t* index,
            std::string_view what) {
  if (level == dims.size()) {
    if (v.is_array())
      return InvalidArgument(what, ": lists are nested deeper than the shape ",
                             Shape::FromDims(dims)->ToString(), " of the first elements");
    return SetElement(v, t, (*index)++, what);
  }
  if (!v.is_array() || static_cast<int64_t>(v.size()) != dims[level])
    return InvalidArgument(what, ": ragged or mismatched lists: expected a list of ", dims[level],
                           " at depth ", level, ", got ",
                           v.is_array() ? std::to_string(v.size()) + " elements" : v.type_name());
  for (const Json& e : v) KILN_RETURN_IF_ERROR(Fill(e, dims, level + 1, t, index, what));
  return OkStatus();
}

namespace {

// The length of the valid UTF-8 sequence at s[i] (RFC 3629: no overlongs, no surrogates,
// nothing above U+10FFFF), or 0.
size_t Utf8Length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const auto cont = [&](size_t k) { return i + k < s.size() && (b(k) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if ((c == 0xE0 && b(1) < 0xA0) || (c == 0xED && b(1) > 0x9F)) return 0;
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if ((c == 0xF0 && b(1) < 0x90) || (c == 0xF4 && b(1) > 0x8F)) return 0;
    return 4;
  }
  return 0;
}

}  // namespace

void AppendString(std::string* out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\r':
        *out += "\\r";
        break;
      case '\t':
        *out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          *out += "\\u00";
          out->push_back(kHex[(c >> 4) & 0xf]);
          out->push_back(kHex[c & 0xf]);
        } else if (static_cast<unsigned char>(c) >= 0x80) {
          // JSON text is UTF-8: a byte that starts no valid sequence (a raw URL byte, a
          // binary string) becomes U+FFFD, as nlohmann::json's "replace" handler writes it.
          const size_t n = Utf8Length(s, i);
          if (n == 0) {
            *out += "\\ufffd";
            ++i;
            continue;
          }
          out->append(s.substr(i, n));
          i += n;
          continue;
        } else {
          out->push_back(c);
        }
    }
    ++i;
  }
  out->push_back('"');
}

namespace {

template <typename T>
void AppendFloat(std::string* out, T v) {
  if (std::isnan(v)) {
    *out += "NaN";
  } else if (std::isinf(v)) {
    *out += v < 0 ? "-Infinity" : "Infinity";
  } else {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof(buf), v);
    out->append(buf, r.ptr);
    // A whole number keeps a ".0", as TF Serving writes it: a client infers float from the
    // token (a list of 4.0 and 2.5 stays a list of floats).
    if (std::string_view(buf, r.ptr - buf).find_first_of(".e") == std::string_view::npos)
      out->append(".0");
  }
}

template <typename T>
void AppendInt(std::string* out, T v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr);
}

}  // namespace

void AppendElement(std::string* out, const Tensor& t, int64_t i, bool b64) {
  switch (t.dtype()) {
    case DType::kFloat:
      return AppendFloat(out, t.data<float>()[i]);
    case DType::kDouble:
      return AppendFloat(out, t.data<double>()[i]);
    case DType::kHalf:
      return AppendFloat(out, HalfToFloat(t.data<Half>()[i].bits));
    case DType::kBFloat16:
      return AppendFloat(out, BFloat16ToFloat(t.data<BFloat16>()[i].bits));
    case DType::kComplex64:  // [real, imaginary]
    case DType::kComplex128: {
      const bool single = t.dtype() == DType::kComplex64;
      const double re = single ? t.data<std::complex<float>>()[i].real()
                               : t.data<std::complex<double>>()[i].real();
      const double im = single ? t.data<std::complex<float>>()[i].imag()
                               : t.data<std::complex<double>>()[i].imag();
      out->push_back('[');
      if (single) {
        AppendFloat(out, static_cast<float>(re));
        out->push_back(',');
        AppendFloat(out, static_cast<float>(im));
      } else {
        AppendFloat(out, re);
        out->push_back(',');
        AppendFloat(out, im);
      }
      out->push_back(']');
      return;
    }
    case DType::kInt8:
      return AppendInt(out, static_cast<int>(t.data<int8_t>()[i]));
    case DType::kInt16:
      return AppendInt(out, t.data<int16_t>()[i]);
    case DType::kInt32:
      return AppendInt(out, t.data<int32_t>()[i]);
    case DType::kInt64:
      return AppendInt(out, t.data<int64_t>()[i]);
    case DType::kUInt8:
      return AppendInt(out, static_cast<unsigned>(t.data<uint8_t>()[i]));
    case DType::kUInt16:
      return AppendInt(out, t.data<uint16_t>()[i]);
    case DType::kUInt32:
      return AppendInt(out, t.data<uint32_t>()[i]);
    case DType::kUInt64:
      return AppendInt(out, t.data<uint64_t>()[i]);
    case DType::kBool:
      *out += t.data<bool>()[i] ? "true" : "false";
      return;
    case DType::kString:
      if (b64) {
        *out += "{\"b64\": ";
        AppendString(out, Base64Encode(t.data<std::string>()[i]));
        out->push_back('}');
      } else {
        AppendString(out, t.data<std::string>()[i]);
      }
      return;
    default:
      *out += "null";
  }
}

void AppendNested(std::string* out, const Tensor& t, int level, int64_t offset, bool b64) {
  if (level >= t.rank()) return AppendElement(out, t, offset, b64);
  int64_t stride = 1;
  for (int i = level + 1; i < t.rank(); ++i) stride *= t.dim(i);
  out->push_back('[');
  for (int64_t i = 0; i < t.dim(level); ++i) {
    if (i) out->push_back(',');
    AppendNested(out, t, level + 1, offset + i * stride, b64);
  }
  out->push_back(']');
}

void AppendFlat(std::string* out, const Tensor& t, bool b64) {
  out->push_back('[');
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    if (i) out->push_back(',');
    AppendElement(out, t, i, b64);
  }
  out->push_back(']');
}

}  // namespace kiln::serve::json_util
