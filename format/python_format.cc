#include "python_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace kiln::cli {

namespace {

// Python's quoting of str and bytes: single quotes unless the text has a single quote and no
// double quote; backslash, the quote, \n \r \t escaped; other control bytes as \xNN. bytes
// also escape every byte >= 0x7f; str keeps printable UTF-8 but shows U+0080..U+009F as \xNN.
std::string PyQuoted(std::string_view s, bool bytes) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out = bytes ? "b" : "";
  out += quote;
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    char buf[8];
    if (c == '\\' || c == static_cast<unsigned char>(quote)) {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f || (bytes && c > 0x7f)) {
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else if (!bytes && c == 0xc2 && i + 1 < s.size() &&
               static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(s[i + 1]) <= 0x9f) {
      // U+0080..U+009F are not printable: Python shows them as \x80.
      std::snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned char>(s[i + 1]));
      out += buf;
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += quote;
  return out;
}

}  // namespace

std::string PyReprString(std::string_view s) { return PyQuoted(s, false); }

std::string PyReprBytes(std::string_view s) { return PyQuoted(s, true); }

std::string PyFormatShortest(bool negative, const std::string& digits, int exponent) {
  std::string out = negative ? "-" : "";
  const int n = static_cast<int>(digits.size());
  if (exponent <= -4 || exponent > 16) {
    out += digits[0];
    if (n > 1) out += "." + digits.substr(1);
    const int e = exponent - 1;
    char buf[16];
    std::snprintf(buf, sizeof(buf), "e%c%02d", e < 0 ? '-' : '+', std::abs(e));
    return out + buf;
  }
  if (exponent <= 0) return out + "0." + std::string(-exponent, '0') + digits;
  if (exponent >= n) return out + digits + std::string(exponent - n, '0') + ".0";
  return out + digits.substr(0, exponent) + "." + digits.substr(exponent);
}

std::string PyReprDouble(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), std::fabs(v), std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // "d.ddde+XX"
  const size_t e = sci.find('e');
  std::string digits = sci.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int exp10 = std::atoi(sci.c_str() + e + 1);
  return PyFormatShortest(v < 0, digits, exp10 + 1);
}

std::string PyReprStringList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += PyReprString(items[i]);
  }
  return out + "]";
}

std::string PyReprSortedStringSet(std::vector<std::string> items) {
  std::sort(items.begin(), items.end());
  items.erase(std::unique(items.begin(), items.end()), items.end());
  if (items.empty()) return "set()";
  std::string out = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += PyReprString(items[i]);
  }
  return out + "}";
}

namespace {

struct TfTypeName {
  int number;
  const char* enum_name;
  const char* py_name;
};

// TensorFlow's DataType enum (types.proto); ref types are these plus 100.
constexpr TfTypeName kTfTypes[] = {
    {0, "DT_INVALID", ""},
    {1, "DT_FLOAT", "float32"},
    {2, "DT_DOUBLE", "float64"},
    {3, "DT_INT32", "int32"},
    {4, "DT_UINT8", "uint8"},
    {5, "DT_INT16", "int16"},
    {6, "DT_INT8", "int8"},
    {7, "DT_STRING", "string"},
    {8, "DT_COMPLEX64", "complex64"},
    {9, "DT_INT64", "int64"},
    {10, "DT_BOOL", "bool"},
    {11, "DT_QINT8", "qint8"},
    {12, "DT_QUINT8", "quint8"},
    {13, "DT_QINT32", "qint32"},
    {14, "DT_BFLOAT16", "bfloat16"},
    {15, "DT_QINT16", "qint16"},
    {16, "DT_QUINT16", "quint16"},
    {17, "DT_UINT16", "uint16"},
    {18, "DT_COMPLEX128", "complex128"},
    {19, "DT_HALF", "float16"},
    {20, "DT_RESOURCE", "resource"},
    {21, "DT_VARIANT", "variant"},
    {22, "DT_UINT32", "uint32"},
    {23, "DT_UINT64", "uint64"},
    {24, "DT_FLOAT8_E5M2", "float8_e5m2"},
    {25, "DT_FLOAT8_E4M3FN", "float8_e4m3fn"},
    {26, "DT_FLOAT8_E4M3FNUZ", "float8_e4m3fnuz"},
    {27, "DT_FLOAT8_E4M3B11FNUZ", "float8_e4m3b11fnuz"},
    {28, "DT_FLOAT8_E5M2FNUZ", "float8_e5m2fnuz"},
    {29, "DT_INT4", "int4"},
    {30, "DT_UINT4", "uint4"},
    {31, "DT_INT2", "int2"},
    {32, "DT_UINT2", "uint2"},
};

const TfTypeName* FindType(int n) {
  for (const auto& t : kTfTypes)
    if (t.number == n) return &t;
  return nullptr;
}

}  // namespace

std::string TfDataTypeEnumName(int dtype) {
  if (dtype > 100) {
    const TfTypeName* t = FindType(dtype - 100);
    return t && t->number != 0 ? std::string(t->enum_name) + "_REF" : "";
  }
  const TfTypeName* t = FindType(dtype);
  return t ? t->enum_name : "";
}

std::string TfDTypePythonName(int dtype) {
  if (dtype > 100) {
    const TfTypeName* t = FindType(dtype - 100);
    return t && t->number != 0 ? std::string(t->py_name) + "_ref" : "";
  }
  const TfTypeName* t = FindType(dtype);
  return t ? t->py_name : "";
}

}  // namespace kiln::cli
