#include "input_exprs.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <span>
#include <type_traits>

namespace kiln::cli {
namespace {

constexpr int kMaxDepth = kMaxRank;

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Result<Literal> ParseAll() {
    KILN_ASSIGN_OR_RETURN(Literal v, ParseValue(0));
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected '" + std::string(1, text_[pos_]) + "'");
    return v;
  }

 private:
  Status Error(const std::string& what) const {
    return InvalidArgument(
        what, " at position ", pos_, " in '", text_,
        "' (only numbers, true/false, quoted strings and [nested, lists] are allowed)");
  }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  Result<Literal> ParseValue(int depth) {
    SkipSpace();
    if (pos_ >= text_.size()) return Error("unexpected end of input");
    const char c = text_[pos_];
    if (c == '[') return ParseList(depth);
    if (c == '+' || c == '-' || c == '.' || std::isdigit(static_cast<unsigned char>(c)))
      return ParseNumber();
    if (c == '"' || c == '\'') return ParseString();
    if (c == 'b' && pos_ + 1 < text_.size() &&
        (text_[pos_ + 1] == '"' || text_[pos_ + 1] == '\'')) {
      ++pos_;
      return ParseString();
    }
    if (std::isalpha(static_cast<unsigned char>(c))) return ParseWord();
    return Error("unexpected '" + std::string(1, c) + "'");
  }

  Result<Literal> ParseList(int depth) {
    if (depth >= kMaxDepth) return Error("lists nested deeper than " + std::to_string(kMaxDepth));
    const size_t start = pos_;
    ++pos_;  // '['
    Literal list;
    list.kind = Literal::Kind::kList;
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      list.text = std::string(text_.substr(start, pos_ - start));
      return list;
    }
    while (true) {
      KILN_ASSIGN_OR_RETURN(Literal item, ParseValue(depth + 1));
      list.items.push_back(std::move(item));
      SkipSpace();
      if (pos_ >= text_.size()) return Error("unbalanced '[': missing ']'");
      if (text_[pos_] == ']') {
        ++pos_;
        break;
      }
      if (text_[pos_] != ',') return Error("expected ',' or ']'");
      ++pos_;
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == ']') {  // trailing comma
        ++pos_;
        break;
      }
    }
    list.text = std::string(text_.substr(start, pos_ - start));
    return list;
  }

  Result<Literal> ParseNumber() {
    const size_t start = pos_;
    if (text_[pos_] == '+' || text_[pos_] == '-') ++pos_;
    size_t int_digits = 0, frac_digits = 0;
    bool is_float = false;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
      ++int_digits;
    }
    if (pos_ < text_.size() && text_[pos_] == '.') {
      is_float = true;
      ++pos_;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        ++pos_;
        ++frac_digits;
      }
    }
    if (int_digits + frac_digits == 0) return Error("expected a number");
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      is_float = true;
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      size_t exp_digits = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        ++pos_;
        ++exp_digits;
      }
      if (exp_digits == 0) return Error("expected exponent digits");
    }
    if (pos_ < text_.size() &&
        (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      return Error("unexpected '" + std::string(1, text_[pos_]) + "' in a number");
    Literal v;
    v.text = std::string(text_.substr(start, pos_ - start));
    // from_chars takes no leading '+'.
    std::string digits = v.text[0] == '+' ? v.text.substr(1) : v.text;
    const char* first = digits.data();
    const char* last = digits.data() + digits.size();
    if (is_float) {
      v.kind = Literal::Kind::kFloat;
      auto [p, ec] = std::from_chars(first, last, v.f);
      if (ec == std::errc::result_out_of_range) {
        // strtod gives the right overflow (inf) or underflow (0) value; casts check ranges.
        v.f = std::strtod(digits.c_str(), nullptr);
      } else if (ec != std::errc() || p != last) {
        return Error("bad number '" + v.text + "'");
      }
    } else {
      v.kind = Literal::Kind::kInt;
      auto [p, ec] = std::from_chars(first, last, v.i);
      if (ec == std::errc::result_out_of_range)
        return Error("integer " + v.text + " does not fit in 64 bits");
      if (ec != std::errc() || p != last) return Error("bad number '" + v.text + "'");
    }
    return v;
  }

  // A quoted string; the only escapes are \\ \" \' \n \t (nothing is evaluated).
  Result<Literal> ParseString() {
    const size_t start = pos_;
    const char quote = text_[pos_++];
    Literal v;
    v.kind = Literal::Kind::kString;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      char ch = text_[pos_++];
      if (ch == '\\') {
        if (pos_ >= text_.size()) break;
        const char e = text_[pos_++];
        switch (e) {
          case 'n':
            ch = '\n';
            break;
          case 't':
            ch = '\t';
            break;
          case '\\':
          case '"':
          case '\'':
            ch = e;
            break;
          default:
            pos_ = start;
            return Error(std::string("unsupported escape '\\") + e + "' in a string");
        }
      }
      v.s += ch;
    }
    if (pos_ >= text_.size()) {
      pos_ = start;
      return Error("unterminated string");
    }
    ++pos_;  // closing quote
    v.text = std::string(text_.substr(start, pos_ - start));
    return v;
  }

  Result<Literal> ParseWord() {
    const size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    const std::string_view word = text_.substr(start, pos_ - start);
    Literal v;
    v.kind = Literal::Kind::kBool;
    v.text = std::string(word);
    if (word == "true" || word == "True") {
      v.b = true;
      return v;
    }
    if (word == "false" || word == "False") return v;
    pos_ = start;
    return Error("unexpected word '" + std::string(word) + "'");
  }

  std::string_view text_;
  size_t pos_ = 0;
};

// "(2, 3)", "(5,)": a list's shape as numpy prints it.
std::string ShapeOfDims(std::span<const int64_t> dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

// The shape of a nested list, refusing ragged nesting; leaves are collected in order.
Status Flatten(const Literal& v, std::vector<int64_t>* dims, size_t depth,
               std::vector<const Literal*>* leaves, std::string_view key) {
  if (v.kind != Literal::Kind::kList) {
    if (depth != dims->size())
      return InvalidArgument("input '", key, "': ragged list: ", v.text,
                             " is a number where a list of shape ",
                             ShapeOfDims(std::span(*dims).subspan(depth)), " was expected");
    leaves->push_back(&v);
    return OkStatus();
  }
  const int64_t n = static_cast<int64_t>(v.items.size());
  if (depth == dims->size()) {
    if (!leaves->empty())
      return InvalidArgument("input '", key, "': ragged list: ", v.text,
                             " is a list where a number was expected");
    dims->push_back(n);
  } else if ((*dims)[depth] != n) {
    return InvalidArgument("input '", key, "': ragged list: ", v.text, " has ", n,
                           " elements but its siblings have ", (*dims)[depth]);
  }
  for (const Literal& item : v.items)
    KILN_RETURN_IF_ERROR(Flatten(item, dims, depth + 1, leaves, key));
  // An empty list fixes no deeper dims; a sibling that is non-empty must then match nothing.
  if (n == 0 && depth + 1 < dims->size())
    return InvalidArgument("input '", key, "': ragged list: ", v.text,
                           " is empty but its siblings are not");
  return OkStatus();
}

template <typename T>
Result<T> CastLeaf(const Literal& v, DType dtype, std::string_view key) {
  const std::string type = DTypeShortName(dtype);
  if constexpr (std::is_same_v<T, std::string>) {
    if (v.kind != Literal::Kind::kString)
      return InvalidArgument("input '", key, "': ", v.text,
                             " is not a quoted string but the input is string");
    return v.s;
  } else if constexpr (std::is_same_v<T, bool>) {
    if (v.kind != Literal::Kind::kBool)
      return InvalidArgument("input '", key, "': ", v.text, " is a number but the input is bool");
    return v.b;
  } else {
    if (v.kind == Literal::Kind::kBool)
      return InvalidArgument("input '", key, "': ", v.text, " is a bool but the input is ", type);
    if (v.kind == Literal::Kind::kString)
      return InvalidArgument("input '", key, "': ", v.text, " is a string but the input is ", type);
    if constexpr (std::is_floating_point_v<T>) {
      const double d = v.kind == Literal::Kind::kInt ? static_cast<double>(v.i) : v.f;
      if (std::isfinite(d) && std::fabs(d) > static_cast<double>(std::numeric_limits<T>::max()))
        return InvalidArgument("input '", key, "': ", v.text, " is out of range for ", type);
      return static_cast<T>(d);
    } else {
      using Lim = std::numeric_limits<T>;
      if (v.kind == Literal::Kind::kInt) {
        const bool fits = std::is_signed_v<T> ? (v.i >= static_cast<int64_t>(Lim::min()) &&
                                                 v.i <= static_cast<int64_t>(Lim::max()))
                                              : (v.i >= 0 && static_cast<uint64_t>(v.i) <=
                                                                 static_cast<uint64_t>(Lim::max()));
        if (!fits)
          return InvalidArgument("input '", key, "': ", v.text, " is out of range for ", type);
        return static_cast<T>(v.i);
      }
      if (!std::isfinite(v.f) || v.f != std::floor(v.f))
        return InvalidArgument("input '", key, "': ", v.text, " is not representable as ", type);
      // Bounds as doubles: -2^63 and 2^63 are exact, so the comparison is exact too.
      const double lo = static_cast<double>(Lim::min());
      const double hi = std::ldexp(1.0, Lim::digits);  // one past max
      if (v.f < lo || v.f >= hi)
        return InvalidArgument("input '", key, "': ", v.text, " is out of range for ", type);
      return static_cast<T>(v.f);
    }
  }
}

template <typename T>
Result<Tensor> Build(const std::vector<const Literal*>& leaves, const Shape& shape, DType dtype,
                     std::string_view key) {
  Tensor t(dtype, shape);
  T* data = t.data<T>();
  for (size_t i = 0; i < leaves.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(data[i], CastLeaf<T>(*leaves[i], dtype, key));
  }
  return t;
}

bool AnyKind(const Literal& v, Literal::Kind kind) {
  if (v.kind == kind) return true;
  for (const Literal& item : v.items)
    if (AnyKind(item, kind)) return true;
  return false;
}

}  // namespace

Result<Literal> ParseLiteral(std::string_view text) { return Parser(text).ParseAll(); }

Result<std::vector<std::pair<std::string, Literal>>> ParseInputExprs(std::string_view arg) {
  std::vector<std::pair<std::string, Literal>> out;
  size_t start = 0;
  while (start <= arg.size()) {
    size_t end = arg.find(';', start);
    if (end == std::string_view::npos) end = arg.size();
    std::string_view piece = arg.substr(start, end - start);
    start = end + 1;
    while (!piece.empty() && std::isspace(static_cast<unsigned char>(piece.front())))
      piece.remove_prefix(1);
    while (!piece.empty() && std::isspace(static_cast<unsigned char>(piece.back())))
      piece.remove_suffix(1);
    if (piece.empty()) continue;
    const size_t eq = piece.find('=');
    if (eq == std::string_view::npos || eq == 0)
      return InvalidArgument("--input_exprs '", piece, "' is not in the form <input_key>=<value>");
    std::string key(piece.substr(0, eq));
    while (!key.empty() && std::isspace(static_cast<unsigned char>(key.back()))) key.pop_back();
    KILN_ASSIGN_OR_RETURN_CTX(Literal value, ParseLiteral(piece.substr(eq + 1)),
                              "--input_exprs input '", key, "'");
    bool replaced = false;
    for (auto& [k, v] : out) {
      if (k == key) {
        v = value;
        replaced = true;
      }
    }
    if (!replaced) out.emplace_back(std::move(key), std::move(value));
  }
  return out;
}

Result<Tensor> LiteralToTensor(const Literal& literal, DType dtype, std::string_view key) {
  std::vector<int64_t> dims;
  std::vector<const Literal*> leaves;
  KILN_RETURN_IF_ERROR(Flatten(literal, &dims, 0, &leaves, key));
  KILN_ASSIGN_OR_RETURN_CTX(Shape shape, Shape::FromDims(dims), "input '", key, "'");
  switch (dtype) {
    case DType::kFloat:
      return Build<float>(leaves, shape, dtype, key);
    case DType::kDouble:
      return Build<double>(leaves, shape, dtype, key);
    case DType::kInt8:
      return Build<int8_t>(leaves, shape, dtype, key);
    case DType::kInt16:
      return Build<int16_t>(leaves, shape, dtype, key);
    case DType::kInt32:
      return Build<int32_t>(leaves, shape, dtype, key);
    case DType::kInt64:
      return Build<int64_t>(leaves, shape, dtype, key);
    case DType::kUInt8:
      return Build<uint8_t>(leaves, shape, dtype, key);
    case DType::kUInt16:
      return Build<uint16_t>(leaves, shape, dtype, key);
    case DType::kUInt32:
      return Build<uint32_t>(leaves, shape, dtype, key);
    case DType::kUInt64:
      return Build<uint64_t>(leaves, shape, dtype, key);
    case DType::kBool:
      return Build<bool>(leaves, shape, dtype, key);
    case DType::kString:
      return Build<std::string>(leaves, shape, dtype, key);
    default:
      return InvalidArgument(
          "input '", key, "' has dtype ", DTypeShortName(dtype),
          ", which --input_exprs cannot produce (numbers, bools and strings only); use "
          "--inputs with a .npy file");
  }
}

DType NaturalDType(const Literal& literal) {
  if (AnyKind(literal, Literal::Kind::kString)) return DType::kString;
  if (AnyKind(literal, Literal::Kind::kBool)) return DType::kBool;
  if (AnyKind(literal, Literal::Kind::kFloat)) return DType::kFloat;
  return DType::kInt32;
}

}  // namespace kiln::cli
