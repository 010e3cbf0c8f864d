// Follows numpy/core/arrayprint.py (array2string with the default options: precision=8,
// floatmode='maxprec', suppress=False, threshold=1000, edgeitems=3, linewidth=75) and numpy's
// scalar str() for 0-d arrays. Comments name the numpy piece each function mirrors.
#include "numpy_format.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>

#include "kiln/core/float8.h"
#include "python_format.h"

namespace kiln::cli {
namespace {

constexpr int kPrecision = 8;
constexpr int kLineWidth = 75;
constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;

// ---- float digits -------------------------------------------------------------------------

enum class FloatKind { kFloat8E5M2, kFloat8E4M3FN, kHalf, kBFloat16, kFloat, kDouble };

float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  const int exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ffu;
  float f;
  if (exp == 0) {
    f = std::ldexp(static_cast<float>(mant), -24);
  } else if (exp == 31) {
    f = mant ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  } else {
    f = std::ldexp(static_cast<float>(mant | 0x400u), exp - 25);
  }
  return sign ? -f : f;
}

float BFloat16ToFloat(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// Whether `candidate` rounds to the same value of the given kind as `value`.
bool SameInKind(double value, double candidate, FloatKind kind) {
  switch (kind) {
    case FloatKind::kDouble:
      return value == candidate;
    case FloatKind::kFloat:
      return static_cast<float>(value) == static_cast<float>(candidate);
    // The 8-bit floats: the candidate rounded to the type (ml_dtypes prints them through float
    // with the shortest digits that round-trip).
    case FloatKind::kFloat8E5M2:
      return F8E5M2::Decode(F8E5M2::Encode(candidate)) == value;
    case FloatKind::kFloat8E4M3FN:
      return F8E4M3FN::Decode(F8E4M3FN::Encode(candidate)) == value;
    case FloatKind::kHalf: {
      // Half has 11 significant bits: round the candidate to that precision and compare.
      int e;
      std::frexp(candidate, &e);
      const int bits = e - 1 < -14 ? 11 - (-14 - (e - 1)) : 11;
      const double scale = std::ldexp(1.0, bits - e);
      return std::nearbyint(candidate * scale) / scale == value;
    }
    case FloatKind::kBFloat16: {
      int e;
      std::frexp(candidate, &e);
      const double scale = std::ldexp(1.0, 8 - e);
      return std::nearbyint(candidate * scale) / scale == value;
    }
  }
  return false;
}

// Shortest digits that round-trip in `kind`: |v| = 0.DIGITS x 10^exponent. v finite, non-zero.
void ShortestDigits(double v, FloatKind kind, std::string* digits, int* exponent) {
  char buf[64];
  std::string sci;
  if (kind == FloatKind::kDouble || kind == FloatKind::kFloat) {
    auto res =
        kind == FloatKind::kDouble
            ? std::to_chars(buf, buf + sizeof(buf), std::fabs(v), std::chars_format::scientific)
            : std::to_chars(buf, buf + sizeof(buf), std::fabs(static_cast<float>(v)),
                            std::chars_format::scientific);
    sci.assign(buf, res.ptr);
  } else {
    for (int p = 0; p < 17; ++p) {
      std::snprintf(buf, sizeof(buf), "%.*e", p, std::fabs(v));
      if (SameInKind(std::fabs(v), std::strtod(buf, nullptr), kind)) break;
    }
    sci = buf;
  }
  const size_t e = sci.find('e');
  *digits = sci.substr(0, e);
  digits->erase(std::remove(digits->begin(), digits->end(), '.'), digits->end());
  while (digits->size() > 1 && digits->back() == '0') digits->pop_back();
  *exponent = std::atoi(sci.c_str() + e + 1) + 1;
}

struct FloatParts {
  std::string int_part;  // with the sign
  std::string frac;
  std::string exp;  // "+10", "-05"; empty in positional form
};

void StripZeros(std::string* frac) {
  while (!frac->empty() && frac->back() == '0') frac->pop_back();
}

std::string SignOf(double v, bool sign_plus) {
  return std::signbit(v) ? "-" : sign_plus ? "+" : "";
}

// dragon4_positional(x, precision=8, unique=True, fractional=True, trim='.')
FloatParts Positional(double v, FloatKind kind, bool sign_plus) {
  FloatParts p;
  const std::string sign = SignOf(v, sign_plus);
  if (v == 0) return {sign + "0", "", ""};
  std::string digits;
  int exponent;
  ShortestDigits(v, kind, &digits, &exponent);
  const int n = static_cast<int>(digits.size());
  if (n - exponent > kPrecision) {
    char buf[512];
    auto res =
        std::to_chars(buf, buf + sizeof(buf), std::fabs(v), std::chars_format::fixed, kPrecision);
    std::string s(buf, res.ptr);
    const size_t dot = s.find('.');
    p.int_part = sign + s.substr(0, dot);
    p.frac = s.substr(dot + 1);
    StripZeros(&p.frac);
    return p;
  }
  if (exponent > 0) {
    p.int_part = sign + digits.substr(0, std::min(n, exponent)) +
                 std::string(std::max(0, exponent - n), '0');
    p.frac = exponent < n ? digits.substr(exponent) : "";
  } else {
    p.int_part = sign + "0";
    p.frac = std::string(-exponent, '0') + digits;
  }
  return p;
}

std::string ExpString(int e, int min_digits) {
  std::string d = std::to_string(std::abs(e));
  if (static_cast<int>(d.size()) < min_digits) d = std::string(min_digits - d.size(), '0') + d;
  return (e < 0 ? "-" : "+") + d;
}

// dragon4_scientific(x, precision=8, unique=True, trim='.')
FloatParts Scientific(double v, FloatKind kind, bool sign_plus) {
  FloatParts p;
  const std::string sign = SignOf(v, sign_plus);
  if (v == 0) return {sign + "0", "", "+00"};
  std::string digits;
  int exponent;
  ShortestDigits(v, kind, &digits, &exponent);
  if (static_cast<int>(digits.size()) - 1 > kPrecision) {
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof(buf), std::fabs(v), std::chars_format::scientific,
                             kPrecision);
    std::string s(buf, res.ptr);
    const size_t e = s.find('e');
    p.int_part = sign + s.substr(0, 1);
    p.frac = s.substr(2, e - 2);
    StripZeros(&p.frac);
    p.exp = ExpString(std::atoi(s.c_str() + e + 1), 2);
    return p;
  }
  p.int_part = sign + digits.substr(0, 1);
  p.frac = digits.substr(1);
  p.exp = ExpString(exponent - 1, 2);
  return p;
}

// FloatingFormat: one format for all printed values of an array.
class FloatFormat {
 public:
  FloatFormat(const std::vector<double>& values, FloatKind kind, bool sign_plus)
      : kind_(kind), sign_plus_(sign_plus) {
    std::vector<double> finite;
    for (double v : values)
      if (std::isfinite(v)) finite.push_back(v);
    double max_val = 0, min_val = std::numeric_limits<double>::infinity();
    bool any_nonzero = false;
    for (double v : finite) {
      if (v == 0) continue;
      any_nonzero = true;
      max_val = std::max(max_val, std::fabs(v));
      min_val = std::min(min_val, std::fabs(v));
    }
    if (any_nonzero && (max_val >= 1e8 || min_val < 0.0001 || max_val / min_val > 1000.0))
      exp_format_ = true;
    if (finite.empty()) {
      pad_left_ = pad_right_ = 0;
    } else if (exp_format_) {
      size_t exp_len = 0, frac_len = 0, int_len = 0;
      for (double v : finite) {
        FloatParts p = Scientific(v, kind_, sign_plus_);
        exp_len = std::max(exp_len, p.exp.size());
        frac_len = std::max(frac_len, p.frac.size());
        int_len = std::max(int_len, p.int_part.size());
      }
      exp_size_ = static_cast<int>(exp_len) - 1;
      precision_ = static_cast<int>(frac_len);
      pad_left_ = static_cast<int>(int_len);
      pad_right_ = exp_size_ + 2 + precision_;
    } else {
      size_t frac_len = 0, int_len = 0;
      for (double v : finite) {
        FloatParts p = Positional(v, kind_, sign_plus_);
        frac_len = std::max(frac_len, p.frac.size());
        int_len = std::max(int_len, p.int_part.size());
      }
      pad_left_ = static_cast<int>(int_len);
      pad_right_ = static_cast<int>(frac_len);
    }
    if (finite.size() != values.size()) {
      bool neginf = sign_plus_;
      for (double v : values)
        if (std::isinf(v) && v < 0) neginf = true;
      const int offset = pad_right_ + 1;
      pad_left_ = std::max({pad_left_, 3 - offset, 3 + (neginf ? 1 : 0) - offset});
    }
  }

  std::string operator()(double v) const {
    if (!std::isfinite(v)) {
      std::string ret = std::isnan(v) ? (sign_plus_ ? "+nan" : "nan")
                                      : (v < 0        ? "-inf"
                                         : sign_plus_ ? "+inf"
                                                      : "inf");
      const int width = pad_left_ + pad_right_ + 1;
      return std::string(std::max(0, width - static_cast<int>(ret.size())), ' ') + ret;
    }
    if (exp_format_) {
      FloatParts p = Scientific(v, kind_, sign_plus_);
      std::string frac =
          p.frac + std::string(std::max(0, precision_ - static_cast<int>(p.frac.size())), '0');
      std::string exp = p.exp.substr(1);
      if (static_cast<int>(exp.size()) < exp_size_)
        exp = std::string(exp_size_ - exp.size(), '0') + exp;
      return Pad(p.int_part) + "." + frac + "e" + p.exp[0] + exp;
    }
    FloatParts p = Positional(v, kind_, sign_plus_);
    return Pad(p.int_part) + "." + p.frac +
           std::string(std::max(0, pad_right_ - static_cast<int>(p.frac.size())), ' ');
  }

 private:
  std::string Pad(const std::string& int_part) const {
    return std::string(std::max(0, pad_left_ - static_cast<int>(int_part.size())), ' ') + int_part;
  }

  FloatKind kind_;
  bool sign_plus_;
  bool exp_format_ = false;
  int pad_left_ = 0, pad_right_ = 0, precision_ = 0, exp_size_ = -1;
};

// ---- element access -----------------------------------------------------------------------

FloatKind KindOf(DType t) {
  switch (t) {
    case DType::kFloat8E5M2:
      return FloatKind::kFloat8E5M2;
    case DType::kFloat8E4M3FN:
      return FloatKind::kFloat8E4M3FN;
    case DType::kHalf:
      return FloatKind::kHalf;
    case DType::kBFloat16:
      return FloatKind::kBFloat16;
    case DType::kFloat:
      return FloatKind::kFloat;
    default:
      return FloatKind::kDouble;
  }
}

double FloatAt(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat:
      return t.data<float>()[i];
    case DType::kDouble:
      return t.data<double>()[i];
    case DType::kHalf:
      return HalfToFloat(t.data<Half>()[i].bits);
    case DType::kBFloat16:
      return BFloat16ToFloat(t.data<BFloat16>()[i].bits);
    case DType::kFloat8E5M2:
      return F8E5M2::Decode(t.data<Float8E5M2>()[i].bits);
    case DType::kFloat8E4M3FN:
      return F8E4M3FN::Decode(t.data<Float8E4M3FN>()[i].bits);
    default:
      return 0;
  }
}

std::complex<double> ComplexAt(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::kComplex64) {
    auto c = t.data<std::complex<float>>()[i];
    return {c.real(), c.imag()};
  }
  return t.data<std::complex<double>>()[i];
}

std::string IntAt(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kInt8:
      return std::to_string(t.data<int8_t>()[i]);
    case DType::kInt16:
      return std::to_string(t.data<int16_t>()[i]);
    case DType::kInt32:
      return std::to_string(t.data<int32_t>()[i]);
    case DType::kInt64:
      return std::to_string(t.data<int64_t>()[i]);
    case DType::kUInt8:
      return std::to_string(t.data<uint8_t>()[i]);
    case DType::kUInt16:
      return std::to_string(t.data<uint16_t>()[i]);
    case DType::kUInt32:
      return std::to_string(t.data<uint32_t>()[i]);
    case DType::kUInt64:
      return std::to_string(t.data<uint64_t>()[i]);
    default:
      return "?";
  }
}

// ---- scalars (str of a numpy scalar) ------------------------------------------------------

// An 8-bit float as ml_dtypes prints one (str(float8_e4m3fn(0.1)) is '0.101562'): C's %g.
std::string Float8Str(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

std::string FloatScalarStr(double v, FloatKind kind, bool add_dot_zero) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  std::string s;
  if (v == 0) {
    s = std::signbit(v) ? "-0.0" : "0.0";
  } else {
    std::string digits;
    int exponent;
    ShortestDigits(v, kind, &digits, &exponent);
    s = PyFormatShortest(v < 0, digits, exponent);
  }
  if (!add_dot_zero && s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0)
    s.resize(s.size() - 2);
  return s;
}

std::string ComplexScalarStr(std::complex<double> c, FloatKind kind) {
  const std::string im = FloatScalarStr(c.imag(), kind, false) + "j";
  if (c.real() == 0 && !std::signbit(c.real())) return im;
  std::string re = FloatScalarStr(c.real(), kind, false);
  const bool im_neg = std::signbit(c.imag()) && !std::isnan(c.imag());
  return "(" + re + (im_neg ? "" : "+") + im + ")";
}

std::string ScalarStr(const Tensor& t) {
  const DType d = t.dtype();
  if (d == DType::kFloat8E5M2 || d == DType::kFloat8E4M3FN) return Float8Str(FloatAt(t, 0));
  if (IsFloatingPoint(d)) return FloatScalarStr(FloatAt(t, 0), KindOf(d), true);
  if (IsInteger(d)) return IntAt(t, 0);
  if (d == DType::kBool) return t.data<bool>()[0] ? "True" : "False";
  if (d == DType::kString) return PyReprBytes(t.data<std::string>()[0]);
  if (IsComplex(d))
    return ComplexScalarStr(ComplexAt(t, 0),
                            d == DType::kComplex64 ? FloatKind::kFloat : FloatKind::kDouble);
  return "<" + DTypeShortName(d) + ">";
}

// ---- arrays: _formatArray -----------------------------------------------------------------

class ArrayFormatter {
 public:
  ArrayFormatter(const Tensor& t) : t_(t), rank_(t.rank()) {
    strides_.assign(rank_, 1);
    for (int i = rank_ - 2; i >= 0; --i) strides_[i] = strides_[i + 1] * t.dim(i + 1);
    summarize_ = t.NumElements() > kThreshold;
  }

  std::string Format() {
    // First pass: which elements are printed, so the format fits exactly those (as numpy
    // formats the _leading_trailing part of a summarized array).
    std::vector<int64_t> printed;
    collect_ = &printed;
    std::vector<int64_t> index;
    Recurse(index, " ", kLineWidth);
    collect_ = nullptr;
    BuildFormat(printed);
    index.clear();
    return Recurse(index, " ", kLineWidth);
  }

 private:
  void BuildFormat(const std::vector<int64_t>& printed) {
    const DType d = t_.dtype();
    if (d == DType::kFloat8E5M2 || d == DType::kFloat8E4M3FN) {
      // ml_dtypes' scalars print as C's %g, and NumPy pads no element of such a dtype.
      elem_ = [this](int64_t i) { return Float8Str(FloatAt(t_, i)); };
      return;
    }
    if (IsFloatingPoint(d)) {
      std::vector<double> values;
      for (int64_t i : printed) values.push_back(FloatAt(t_, i));
      auto fmt = std::make_shared<FloatFormat>(values, KindOf(d), false);
      elem_ = [this, fmt](int64_t i) { return (*fmt)(FloatAt(t_, i)); };
    } else if (IsInteger(d)) {
      size_t width = 0;
      for (int64_t i : printed) width = std::max(width, IntAt(t_, i).size());
      elem_ = [this, width](int64_t i) {
        std::string s = IntAt(t_, i);
        return std::string(width - std::min(width, s.size()), ' ') + s;
      };
    } else if (d == DType::kBool) {
      elem_ = [this](int64_t i) { return std::string(t_.data<bool>()[i] ? " True" : "False"); };
    } else if (d == DType::kString) {
      elem_ = [this](int64_t i) { return PyReprBytes(t_.data<std::string>()[i]); };
    } else if (IsComplex(d)) {
      const FloatKind kind = d == DType::kComplex64 ? FloatKind::kFloat : FloatKind::kDouble;
      std::vector<double> re, im;
      for (int64_t i : printed) {
        re.push_back(ComplexAt(t_, i).real());
        im.push_back(ComplexAt(t_, i).imag());
      }
      auto re_fmt = std::make_shared<FloatFormat>(re, kind, false);
      auto im_fmt = std::make_shared<FloatFormat>(im, kind, true);
      elem_ = [this, re_fmt, im_fmt](int64_t i) {
        std::string r = (*re_fmt)(ComplexAt(t_, i).real());
        std::string m = (*im_fmt)(ComplexAt(t_, i).imag());
        size_t sp = m.find_last_not_of(' ') + 1;
        return r + m.substr(0, sp) + "j" + m.substr(sp);
      };
    } else {
      const std::string name = "<" + DTypeShortName(d) + ">";
      elem_ = [name](int64_t) { return name; };
    }
  }

  int64_t Flat(const std::vector<int64_t>& index) const {
    int64_t f = 0;
    for (size_t k = 0; k < index.size(); ++k) f += index[k] * strides_[k];
    return f;
  }

  std::string Element(const std::vector<int64_t>& index) {
    const int64_t f = Flat(index);
    if (collect_) {
      collect_->push_back(f);
      return "";
    }
    return elem_(f);
  }

  // _extendLine
  static void ExtendLine(std::string* s, std::string* line, const std::string& word, int width,
                         const std::string& next_line_prefix) {
    bool needs_wrap = static_cast<int>(line->size() + word.size()) > width;
    if (line->size() <= next_line_prefix.size()) needs_wrap = false;
    if (needs_wrap) {
      std::string l = *line;
      while (!l.empty() && l.back() == ' ') l.pop_back();
      *s += l + "\n";
      *line = next_line_prefix;
    }
    *line += word;
  }

  std::string Recurse(std::vector<int64_t>& index, const std::string& hanging_indent,
                      int curr_width) {
    const int axis = static_cast<int>(index.size());
    const int axes_left = rank_ - axis;
    if (axes_left == 0) return Element(index);
    const std::string next_hanging_indent = hanging_indent + " ";
    const int next_width = curr_width - 1;
    const int64_t a_len = t_.dim(axis);
    const bool show_summary = summarize_ && 2 * kEdgeItems < a_len;
    const int64_t leading = show_summary ? kEdgeItems : 0;
    const int64_t trailing = show_summary ? kEdgeItems : a_len;
    auto child = [&](int64_t i) {
      index.push_back(i);
      std::string r = Recurse(index, next_hanging_indent, next_width);
      index.pop_back();
      return r;
    };
    std::string s;
    if (axes_left == 1) {
      const int elem_width = curr_width - 1;
      std::string line = hanging_indent;
      for (int64_t i = 0; i < leading; ++i) {
        ExtendLine(&s, &line, child(i), elem_width, hanging_indent);
        line += " ";
      }
      if (show_summary) {
        ExtendLine(&s, &line, "...", elem_width, hanging_indent);
        line += " ";
      }
      for (int64_t i = trailing; i > 1; --i) {
        ExtendLine(&s, &line, child(a_len - i), elem_width, hanging_indent);
        line += " ";
      }
      ExtendLine(&s, &line, child(a_len - 1), elem_width, hanging_indent);
      s += line;
    } else {
      const std::string line_sep(axes_left - 1, '\n');
      for (int64_t i = 0; i < leading; ++i) s += hanging_indent + child(i) + line_sep;
      if (show_summary) s += hanging_indent + "..." + line_sep;
      for (int64_t i = trailing; i > 1; --i) s += hanging_indent + child(a_len - i) + line_sep;
      s += hanging_indent + child(a_len - 1);
    }
    return "[" + s.substr(hanging_indent.size()) + "]";
  }

  const Tensor& t_;
  int rank_;
  std::vector<int64_t> strides_;
  bool summarize_ = false;
  std::vector<int64_t>* collect_ = nullptr;
  std::function<std::string(int64_t)> elem_;
};

}  // namespace

std::string NumpyStr(const Tensor& tensor) {
  if (tensor.rank() == 0) return ScalarStr(tensor);
  if (tensor.NumElements() == 0) return "[]";
  return ArrayFormatter(tensor).Format();
}

}  // namespace kiln::cli
