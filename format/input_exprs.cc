#include "input_exprs.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <span>
#include <type_traits>

namespace kiln::cli {
namespace {

constexpr int kMaxDepth = kMaxRank;

// "(2, 3)", "(5,)": a list's shape as numpy prints it.
std::string ShapeOfDims(std::span<const int64_t> dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

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
        "' (only numbers, true/false, quoted strings, [nested, lists], {'key': value} dicts and "
        "a few np.* calls are allowed)");
  }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  Result<Literal> ParseValue(int depth) {
    SkipSpace();
    if (pos_ >= text_.size()) return Error("unexpected end of input");
    const char c = text_[pos_];
    if (c == '[') return ParseList(depth);
    if (c == '(') return ParseTuple(depth);
    if (c == '{') return ParseDict(depth);
    if (c == '+' || c == '-' || c == '.' || std::isdigit(static_cast<unsigned char>(c)))
      return ParseNumber();
    if (c == '"' || c == '\'') return ParseString();
    if (c == 'b' && pos_ + 1 < text_.size() &&
        (text_[pos_ + 1] == '"' || text_[pos_ + 1] == '\'')) {
      ++pos_;
      KILN_ASSIGN_OR_RETURN(Literal v, ParseString());
      v.bytes = true;
      v.text.insert(0, 1, 'b');
      return v;
    }
    if (std::isalpha(static_cast<unsigned char>(c))) return ParseWord(depth);
    return Error("unexpected '" + std::string(1, c) + "'");
  }

  Result<Literal> ParseList(int depth) {
    bool trailing_comma = false;
    return ParseSequence(depth, '[', ']', &trailing_comma);
  }

  // (1, 2) and (5,) are lists, as numpy takes them; (5) is 5.
  Result<Literal> ParseTuple(int depth) {
    bool trailing_comma = false;
    KILN_ASSIGN_OR_RETURN(Literal list, ParseSequence(depth, '(', ')', &trailing_comma));
    if (list.items.size() == 1 && !trailing_comma) return std::move(list.items[0]);
    return list;
  }

  Result<Literal> ParseSequence(int depth, char open, char close, bool* trailing_comma) {
    if (depth >= kMaxDepth) return Error("lists nested deeper than " + std::to_string(kMaxDepth));
    const size_t start = pos_;
    ++pos_;  // open
    Literal list;
    list.kind = Literal::Kind::kList;
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == close) {
      ++pos_;
      list.text = std::string(text_.substr(start, pos_ - start));
      return list;
    }
    while (true) {
      KILN_ASSIGN_OR_RETURN(Literal item, ParseValue(depth + 1));
      list.items.push_back(std::move(item));
      SkipSpace();
      if (pos_ >= text_.size())
        return Error(std::string("unbalanced '") + open + "': missing '" + close + "'");
      if (text_[pos_] == close) {
        ++pos_;
        break;
      }
      if (text_[pos_] != ',') return Error(std::string("expected ',' or '") + close + "'");
      ++pos_;
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == close) {  // trailing comma
        ++pos_;
        *trailing_comma = true;
        break;
      }
    }
    list.text = std::string(text_.substr(start, pos_ - start));
    return list;
  }

  Result<Literal> ParseDict(int depth) {
    if (depth >= kMaxDepth) return Error("dicts nested deeper than " + std::to_string(kMaxDepth));
    const size_t start = pos_;
    ++pos_;  // '{'
    Literal dict;
    dict.kind = Literal::Kind::kDict;
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size()) return Error("unbalanced '{': missing '}'");
      if (text_[pos_] == '}') {  // the end of an empty dict, or after an entry
        ++pos_;
        break;
      }
      if (!dict.items.empty()) {
        if (text_[pos_] != ',') return Error("expected ',' or '}'");
        ++pos_;
        SkipSpace();
        if (pos_ < text_.size() && text_[pos_] == '}') {
          ++pos_;
          break;
        }
      }
      const size_t key_pos = pos_;
      KILN_ASSIGN_OR_RETURN(Literal key, ParseValue(depth + 1));
      if (key.kind != Literal::Kind::kString) {
        pos_ = key_pos;
        return Error("dict key " + key.text + " is not a quoted string");
      }
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != ':') return Error("expected ':' after a dict key");
      ++pos_;
      KILN_ASSIGN_OR_RETURN(Literal value, ParseValue(depth + 1));
      // Python keeps a repeated key where it first appeared, with its last value.
      auto it = std::find(dict.keys.begin(), dict.keys.end(), key.s);
      if (it != dict.keys.end()) {
        dict.items[static_cast<size_t>(it - dict.keys.begin())] = std::move(value);
      } else {
        dict.keys.push_back(std::move(key.s));
        dict.items.push_back(std::move(value));
      }
    }
    dict.text = std::string(text_.substr(start, pos_ - start));
    return dict;
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

  // An identifier with dots: true, np.zeros, numpy.random.rand.
  std::string_view ReadName() {
    const size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
                                   text_[pos_] == '_' || text_[pos_] == '.'))
      ++pos_;
    return text_.substr(start, pos_ - start);
  }

  Result<Literal> ParseWord(int depth) {
    const size_t start = pos_;
    std::string_view word = ReadName();
    Literal v;
    v.kind = Literal::Kind::kBool;
    v.text = std::string(word);
    if (word == "true" || word == "True") {
      v.b = true;
      return v;
    }
    if (word == "false" || word == "False") return v;
    std::string fn;
    if (word.starts_with("np.")) fn = word.substr(3);
    if (word.starts_with("numpy.")) fn = word.substr(6);
    SkipSpace();
    if (!fn.empty() && pos_ < text_.size() && text_[pos_] == '(') {
      if (depth != 0) {
        pos_ = start;
        return Error("np." + fn + "(...) inside a list (an np.* call must be the whole value)");
      }
      return ParseNumpyCall(fn, start);
    }
    pos_ = start;
    return Error("unexpected word '" + std::string(word) + "'");
  }

  // A call's arguments: positional values, and keyword=value pairs (dtype's value may be a
  // name: np.float32, int, 'float32').
  struct CallArgs {
    std::vector<Literal> positional;
    std::vector<std::pair<std::string, Literal>> keywords;
  };

  Result<CallArgs> ParseCallArgs() {
    CallArgs args;
    ++pos_;  // '('
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size()) return Error("unbalanced '(': missing ')'");
      if (text_[pos_] == ')') {
        ++pos_;
        return args;
      }
      if (!args.positional.empty() || !args.keywords.empty()) {
        if (text_[pos_] != ',') return Error("expected ',' or ')'");
        ++pos_;
        SkipSpace();
        if (pos_ < text_.size() && text_[pos_] == ')') continue;
      }
      const size_t arg_start = pos_;
      std::string_view name =
          pos_ < text_.size() && std::isalpha(static_cast<unsigned char>(text_[pos_]))
              ? ReadName()
              : std::string_view();
      SkipSpace();
      if (!name.empty() && name.find('.') == std::string_view::npos && pos_ < text_.size() &&
          text_[pos_] == '=' && (pos_ + 1 >= text_.size() || text_[pos_ + 1] != '=')) {
        ++pos_;
        SkipSpace();
        Literal value;
        if (name == "dtype" && pos_ < text_.size() &&
            std::isalpha(static_cast<unsigned char>(text_[pos_]))) {
          value.kind = Literal::Kind::kString;
          value.s = std::string(ReadName());
          value.text = value.s;
        } else {
          KILN_ASSIGN_OR_RETURN(value, ParseValue(1));
        }
        args.keywords.emplace_back(std::string(name), std::move(value));
        continue;
      }
      if (!args.keywords.empty()) {
        pos_ = arg_start;
        return Error("a positional argument after a keyword argument");
      }
      Literal value;
      if (!name.empty() && name != "true" && name != "True" && name != "false" && name != "False" &&
          (pos_ >= text_.size() || text_[pos_] != '(')) {
        value.kind = Literal::Kind::kString;  // a name: .astype(np.float32)
        value.s = std::string(name);
        value.text = value.s;
      } else {
        pos_ = arg_start;
        KILN_ASSIGN_OR_RETURN(value, ParseValue(1));
      }
      args.positional.push_back(std::move(value));
    }
  }

  // numpy's dtype spellings: np.float32, numpy.int64, float, int, bool, 'float32', "int8".
  Result<bool> IntegralDType(const Literal& dtype) {
    std::string name = dtype.s;
    if (name.starts_with("np.")) name = name.substr(3);
    if (name.starts_with("numpy.")) name = name.substr(6);
    static const char* const kFloats[] = {"float",  "float16", "float32", "float64",
                                          "double", "half",    "single"};
    static const char* const kInts[] = {"int",    "int8",   "int16",  "int32", "int64", "uint8",
                                        "uint16", "uint32", "uint64", "bool",  "bool_"};
    if (dtype.kind == Literal::Kind::kString) {
      for (const char* f : kFloats)
        if (name == f) return false;
      for (const char* i : kInts)
        if (name == i) return true;
    }
    return Error("unknown dtype " + dtype.text);
  }

  // A shape argument: an int, or a list/tuple of ints (>= 0).
  Result<std::vector<int64_t>> ShapeArg(const Literal& v, const std::string& fn) {
    std::vector<int64_t> dims;
    auto dim = [&](const Literal& d) -> Status {
      if (d.kind != Literal::Kind::kInt || d.i < 0)
        return Error("np." + fn + ": " + d.text + " is not a dimension (an int >= 0)");
      dims.push_back(d.i);
      return OkStatus();
    };
    if (v.kind == Literal::Kind::kList) {
      if (v.items.size() > static_cast<size_t>(kMaxRank))
        return Error("np." + fn + ": more than " + std::to_string(kMaxRank) + " dimensions");
      for (const Literal& d : v.items) KILN_RETURN_IF_ERROR(dim(d));
    } else {
      KILN_RETURN_IF_ERROR(dim(v));
    }
    return dims;
  }

  static Result<double> Number(const Literal& v) {
    if (v.kind == Literal::Kind::kInt) return static_cast<double>(v.i);
    if (v.kind == Literal::Kind::kFloat) return v.f;
    if (v.kind == Literal::Kind::kBool) return v.b ? 1.0 : 0.0;
    return InvalidArgument(v.text, " is not a number");
  }

  Result<Literal> ParseNumpyCall(const std::string& fn, size_t start) {
    KILN_ASSIGN_OR_RETURN(CallArgs args, ParseCallArgs());
    Literal v;
    v.kind = Literal::Kind::kArray;
    NumpyArray& a = v.array;
    std::optional<Literal> dtype;
    for (auto& [name, value] : args.keywords) {
      if (name != "dtype") return Error("np." + fn + ": unsupported keyword '" + name + "'");
      dtype = value;
    }
    const size_t n = args.positional.size();
    auto count = [&](size_t lo, size_t hi) -> Status {
      if (n < lo || n > hi)
        return Error("np." + fn + " takes " + std::to_string(lo) +
                     (hi == lo ? "" : (hi > 8 ? " or more" : " to " + std::to_string(hi))) +
                     " positional arguments, got " + std::to_string(n));
      return OkStatus();
    };
    if (fn == "zeros" || fn == "ones" || fn == "full") {
      KILN_RETURN_IF_ERROR(count(fn == "full" ? 2 : 1, fn == "full" ? 2 : 1));
      KILN_ASSIGN_OR_RETURN(a.dims, ShapeArg(args.positional[0], fn));
      a.value = fn == "ones" ? 1.0 : 0.0;
      if (fn == "full") {
        const Literal& fill = args.positional[1];
        if (fill.kind != Literal::Kind::kInt && fill.kind != Literal::Kind::kFloat &&
            fill.kind != Literal::Kind::kBool)
          return Error("np.full: the fill value " + fill.text + " is not a number");
        a.value = *Number(fill);
        a.integral = fill.kind != Literal::Kind::kFloat;
      }
    } else if (fn == "arange") {
      KILN_RETURN_IF_ERROR(count(1, 3));
      double num[3] = {0, 0, 1};
      a.integral = true;
      for (size_t i = 0; i < n; ++i) {
        const Literal& x = args.positional[i];
        if (x.kind != Literal::Kind::kInt && x.kind != Literal::Kind::kFloat)
          return Error("np.arange: " + x.text + " is not a number");
        num[n == 1 ? 1 : i] = *Number(x);
        a.integral = a.integral && x.kind == Literal::Kind::kInt;
      }
      if (num[2] == 0 || !std::isfinite(num[0]) || !std::isfinite(num[1]) || !std::isfinite(num[2]))
        return Error("np.arange: the step must be finite and non-zero");
      const double len = std::ceil((num[1] - num[0]) / num[2]);
      if (!(len < 9e18)) return Error("np.arange: too many elements");
      a.fill = NumpyArray::Fill::kArange;
      a.value = num[0];
      a.step = num[2];
      a.dims = {len > 0 ? static_cast<int64_t>(len) : 0};
    } else if (fn == "random.rand" || fn == "random.randn") {
      KILN_RETURN_IF_ERROR(count(0, kMaxRank));
      if (dtype) return Error("np." + fn + " takes no dtype");
      for (const Literal& d : args.positional) {
        KILN_ASSIGN_OR_RETURN(std::vector<int64_t> one, ShapeArg(d, fn));
        if (d.kind == Literal::Kind::kList)
          return Error("np." + fn + " takes dimensions, not a shape");
        a.dims.push_back(one[0]);
      }
      a.fill = fn == "random.rand" ? NumpyArray::Fill::kUniform : NumpyArray::Fill::kNormal;
    } else {
      pos_ = start;
      return Error("np." + fn +
                   " is not one of the np.* calls --input_exprs takes (zeros, ones, full, "
                   "arange, random.rand, random.randn)");
    }
    if (dtype) {
      KILN_ASSIGN_OR_RETURN(a.integral, IntegralDType(*dtype));
    }
    // Methods: .reshape(shape) / .reshape(d0, d1, ...) with one -1, .astype(dtype).
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '.') break;
      ++pos_;
      const std::string method(ReadName());
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '(') return Error("expected '(' after ." + method);
      KILN_ASSIGN_OR_RETURN(CallArgs margs, ParseCallArgs());
      if (method == "astype") {
        if (margs.positional.size() != 1 || !margs.keywords.empty())
          return Error(".astype takes one dtype");
        Literal name = margs.positional[0];
        if (name.kind != Literal::Kind::kString) return Error("unknown dtype " + name.text);
        KILN_ASSIGN_OR_RETURN(a.integral, IntegralDType(name));
      } else if (method == "reshape") {
        if (!margs.keywords.empty() || margs.positional.empty())
          return Error(".reshape takes a shape");
        std::vector<const Literal*> dims;
        if (margs.positional.size() == 1 && margs.positional[0].kind == Literal::Kind::kList) {
          for (const Literal& d : margs.positional[0].items) dims.push_back(&d);
        } else {
          for (const Literal& d : margs.positional) dims.push_back(&d);
        }
        KILN_RETURN_IF_ERROR(Reshape(dims, &a));
      } else {
        return Error("." + method + " is not a method --input_exprs takes (reshape, astype)");
      }
    }
    v.text = std::string(text_.substr(start, pos_ - start));
    return v;
  }

  Status Reshape(const std::vector<const Literal*>& dims, NumpyArray* a) {
    if (dims.size() > static_cast<size_t>(kMaxRank))
      return Error(".reshape: more than " + std::to_string(kMaxRank) + " dimensions");
    std::vector<int64_t> shape;
    int unknown = -1;
    for (const Literal* d : dims) {
      if (d->kind != Literal::Kind::kInt || d->i < -1)
        return Error(".reshape: " + d->text + " is not a dimension");
      if (d->i == -1) {
        if (unknown >= 0) return Error(".reshape: more than one -1");
        unknown = static_cast<int>(shape.size());
      }
      shape.push_back(d->i == -1 ? 1 : d->i);
    }
    const std::optional<int64_t> total = Elements(a->dims);
    const std::optional<int64_t> known = Elements(shape);
    if (unknown >= 0 && total && known && *known > 0 && *total % *known == 0)
      shape[unknown] = *total / *known;
    if (!total || Elements(shape) != total || (unknown >= 0 && known == 0))
      return Error(".reshape: cannot reshape an array of shape " + ShapeOfDims(a->dims) + " into " +
                   ShapeOfDims(shape));
    a->dims = std::move(shape);
    return OkStatus();
  }

  // The product of dims, or nothing when it overflows int64.
  static std::optional<int64_t> Elements(const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (int64_t d : dims)
      if (__builtin_mul_overflow(n, d, &n)) return std::nullopt;
    return n;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

// The shape of a nested list, refusing ragged nesting; leaves are collected in order.
Status Flatten(const Literal& v, std::vector<int64_t>* dims, size_t depth,
               std::vector<const Literal*>* leaves, std::string_view key) {
  if (v.kind == Literal::Kind::kDict)
    return InvalidArgument("input '", key, "': ", v.text,
                           " is a dict; dicts describe tf.Examples, given with --input_examples");
  if (v.kind == Literal::Kind::kArray)
    return InvalidArgument("input '", key, "': ", v.text, " inside a list");
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

// The most elements an np.* call may make (1 GiB of float32): a bigger input comes from a file.
constexpr int64_t kMaxArrayElements = int64_t{1} << 28;

// An np.* call's tensor: its values made one by one and cast as a literal's (CastLeaf's checks:
// np.arange(0, 1, 0.5) cannot feed an int input). Random values come from a fixed seed.
template <typename T>
Result<Tensor> BuildArray(const Literal& v, const Shape& shape, DType dtype, std::string_view key) {
  const NumpyArray& a = v.array;
  Tensor t(dtype, shape);
  T* data = t.data<T>();
  std::mt19937_64 gen(0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  Literal leaf;
  leaf.kind = a.integral ? Literal::Kind::kInt : Literal::Kind::kFloat;
  const int64_t n = shape.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    double x = a.value;
    if (a.fill == NumpyArray::Fill::kArange) x = a.value + static_cast<double>(i) * a.step;
    if (a.fill == NumpyArray::Fill::kUniform) x = uniform(gen);
    if (a.fill == NumpyArray::Fill::kNormal) x = normal(gen);
    // An integer array holds numpy's truncation of the value (np.full(2, 1.5, dtype=int) is 1).
    if (a.integral) {
      if (!(std::fabs(x) < 9.2e18))
        return InvalidArgument("input '", key, "': ", v.text, " has a value out of range");
      leaf.i = static_cast<int64_t>(x);
    } else {
      leaf.f = x;
    }
    auto cast = CastLeaf<T>(leaf, dtype, key);
    if (!cast.ok()) {
      leaf.text = v.text + " element " + std::to_string(i) + " (" + std::to_string(x) + ")";
      return CastLeaf<T>(leaf, dtype, key).status();
    }
    data[i] = *cast;
  }
  return t;
}

Result<Tensor> ArrayToTensor(const Literal& v, DType dtype, std::string_view key) {
  int64_t n = 1;
  for (int64_t d : v.array.dims)
    if (__builtin_mul_overflow(n, d, &n) || n > kMaxArrayElements)
      return InvalidArgument("input '", key, "': ", v.text, " would have more than ",
                             kMaxArrayElements,
                             " elements; give so large an input with --inputs and a .npy file");
  KILN_ASSIGN_OR_RETURN_CTX(Shape shape, Shape::FromDims(v.array.dims), "input '", key, "'");
  switch (dtype) {
    case DType::kFloat:
      return BuildArray<float>(v, shape, dtype, key);
    case DType::kDouble:
      return BuildArray<double>(v, shape, dtype, key);
    case DType::kInt8:
      return BuildArray<int8_t>(v, shape, dtype, key);
    case DType::kInt16:
      return BuildArray<int16_t>(v, shape, dtype, key);
    case DType::kInt32:
      return BuildArray<int32_t>(v, shape, dtype, key);
    case DType::kInt64:
      return BuildArray<int64_t>(v, shape, dtype, key);
    case DType::kUInt8:
      return BuildArray<uint8_t>(v, shape, dtype, key);
    case DType::kUInt16:
      return BuildArray<uint16_t>(v, shape, dtype, key);
    case DType::kUInt32:
      return BuildArray<uint32_t>(v, shape, dtype, key);
    case DType::kUInt64:
      return BuildArray<uint64_t>(v, shape, dtype, key);
    default:
      return InvalidArgument("input '", key, "' has dtype ", DTypeShortName(dtype), ", which ",
                             v.text, " cannot feed (np.* calls make numeric arrays)");
  }
}

bool AnyKind(const Literal& v, Literal::Kind kind) {
  if (v.kind == kind) return true;
  for (const Literal& item : v.items)
    if (AnyKind(item, kind)) return true;
  return false;
}

// The ';'-separated key=literal pairs of --input_exprs and --input_examples (`flag`).
Result<std::vector<std::pair<std::string, Literal>>> ParsePairs(std::string_view arg,
                                                                std::string_view flag,
                                                                std::string_view value_form) {
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
      return InvalidArgument(flag, " '", piece, "' is not in the form <input_key>=", value_form);
    std::string key(piece.substr(0, eq));
    while (!key.empty() && std::isspace(static_cast<unsigned char>(key.back()))) key.pop_back();
    KILN_ASSIGN_OR_RETURN_CTX(Literal value, ParseLiteral(piece.substr(eq + 1)), flag, " input '",
                              key, "'");
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

// Python's name for a literal's type, as TensorFlow's messages give it.
std::string_view TypeName(const Literal& v) {
  switch (v.kind) {
    case Literal::Kind::kInt:
      return "int";
    case Literal::Kind::kFloat:
      return "float";
    case Literal::Kind::kBool:
      return "bool";
    case Literal::Kind::kString:
      return v.bytes ? "bytes" : "str";
    case Literal::Kind::kList:
      return "list";
    case Literal::Kind::kDict:
      return "dict";
    case Literal::Kind::kArray:
      return "numpy array";
  }
  return "?";
}

// Protobuf's wire format, for the three tf.Example messages.
void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutBytesField(std::string* out, uint32_t field, std::string_view bytes) {
  PutVarint(out, (uint64_t{field} << 3) | 2);  // wire type 2: length-delimited
  PutVarint(out, bytes.size());
  out->append(bytes);
}

// A double as protobuf's Python float field stores it: rounded to float32, ±inf beyond its range
// (a C++ cast would be undefined there).
float ToFloat32(double d) {
  constexpr double kMax = std::numeric_limits<float>::max();
  // Halfway between float's max and the next power of two: from here on, rounding gives inf.
  const double overflow = kMax + std::ldexp(1.0, std::numeric_limits<float>::max_exponent - 25);
  constexpr float kInf = std::numeric_limits<float>::infinity();
  if (std::isfinite(d) && std::fabs(d) >= overflow) return d > 0 ? kInf : -kInf;
  if (std::isfinite(d) && std::fabs(d) > kMax) return static_cast<float>(std::copysign(kMax, d));
  return static_cast<float>(d);
}

// One Feature message from a feature's list of values.
Result<std::string> SerializeFeature(const Literal& values, std::string_view feature,
                                     std::string_view where) {
  auto error = [&](const auto&... what) {
    return InvalidArgument(where, ", feature '", feature, "': ", what...);
  };
  if (values.kind != Literal::Kind::kList)
    return error("feature value must be a list, but ", values.text, " is ", TypeName(values));
  // TensorFlow reads the first value for the kind (an IndexError for []).
  if (values.items.empty())
    return error(
        "the list is empty, but its first value is what picks the feature's kind "
        "(float, int, str or bytes); give at least one value");
  const Literal& first = values.items.front();
  std::string list, packed;
  uint32_t field = 0;  // Feature's field: 1 bytes_list, 2 float_list, 3 int64_list
  for (size_t i = 0; i < values.items.size(); ++i) {
    const Literal& v = values.items[i];
    auto mismatch = [&](std::string_view list_kind) {
      return error("value ", v.text, " (", TypeName(v), ") cannot go in ", list_kind,
                   ", which the first value ", first.text, " (", TypeName(first), ") picked");
    };
    switch (first.kind) {
      case Literal::Kind::kFloat: {
        field = 2;
        // protobuf takes ints and bools in a float field too.
        double d = 0;
        if (v.kind == Literal::Kind::kFloat) {
          d = v.f;
        } else if (v.kind == Literal::Kind::kInt) {
          d = static_cast<double>(v.i);
        } else if (v.kind == Literal::Kind::kBool) {
          d = v.b ? 1 : 0;
        } else {
          return mismatch("a float_list");
        }
        const float f = ToFloat32(d);
        uint32_t bits = 0;
        std::memcpy(&bits, &f, sizeof bits);
        for (int b = 0; b < 4; ++b) packed.push_back(static_cast<char>((bits >> (8 * b)) & 0xff));
        break;
      }
      case Literal::Kind::kInt:
        field = 3;
        // Not bools or floats: protobuf refuses both in an int64 field.
        if (v.kind != Literal::Kind::kInt) return mismatch("an int64_list");
        PutVarint(&packed, static_cast<uint64_t>(v.i));
        break;
      case Literal::Kind::kString:
        field = 1;
        // str values are encoded to UTF-8 (they are already), bytes kept; TensorFlow refuses a
        // mix of the two.
        if (v.kind != Literal::Kind::kString || v.bytes != first.bytes)
          return mismatch("a bytes_list");
        PutBytesField(&list, 1, v.s);
        break;
      case Literal::Kind::kBool:
        return error("value ", first.text,
                     " is a bool, which protobuf refuses in an int64_list (use 1 or 0)");
      default:
        return error("type ", TypeName(first), " for value ", first.text,
                     " is not supported for tf.train.Feature (expected float, int, str or bytes)");
    }
  }
  if (field != 1) PutBytesField(&list, 1, packed);  // a packed repeated field
  std::string out;
  PutBytesField(&out, field, list);
  return out;
}

// One Example; `where` names the input (and the example) in errors.
Result<std::string> SerializeExampleAt(const Literal& features, const std::string& where) {
  if (features.kind != Literal::Kind::kDict)
    return InvalidArgument(where, ": ", features.text, " is ", TypeName(features),
                           ", but each tf.Example must be a dictionary of feature lists");
  // In key order, so the bytes do not depend on how the dict was written.
  std::vector<size_t> order(features.keys.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return features.keys[a] < features.keys[b]; });
  std::string map;  // Features: one map entry {1: key, 2: Feature} per feature
  for (size_t i : order) {
    KILN_ASSIGN_OR_RETURN(std::string feature,
                          SerializeFeature(features.items[i], features.keys[i], where));
    std::string entry;
    PutBytesField(&entry, 1, features.keys[i]);
    PutBytesField(&entry, 2, feature);
    PutBytesField(&map, 1, entry);
  }
  std::string example;
  // An empty dict is an Example with no features set, as TensorFlow serializes it: no bytes.
  if (!features.items.empty()) PutBytesField(&example, 1, map);
  return example;
}

std::string Where(std::string_view key) {
  return "--input_examples input '" + std::string(key) + "'";
}

}  // namespace

Result<Literal> ParseLiteral(std::string_view text) { return Parser(text).ParseAll(); }

Result<std::vector<std::pair<std::string, Literal>>> ParseInputExprs(std::string_view arg) {
  return ParsePairs(arg, "--input_exprs", "<value>");
}

Result<std::string> SerializeExample(const Literal& features, std::string_view key) {
  return SerializeExampleAt(features, Where(key));
}

Result<Tensor> ExamplesToTensor(const Literal& examples, std::string_view key) {
  if (examples.kind != Literal::Kind::kList)
    return InvalidArgument(Where(key), ": tf.Example input must be a list of dictionaries, but \"",
                           examples.text, "\" is ", TypeName(examples));
  Tensor t(DType::kString, Shape{static_cast<int64_t>(examples.items.size())});
  std::string* data = t.data<std::string>();
  for (size_t i = 0; i < examples.items.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(data[i], SerializeExampleAt(examples.items[i], Where(key) + ", example " +
                                                                             std::to_string(i)));
  }
  return t;
}

Status CheckExamplesInput(std::string_view key, DType want) {
  if (want == DType::kString) return OkStatus();
  return InvalidArgument("--input_examples input '", key, "': the signature's input is ",
                         DTypeShortName(want),
                         ", but serialized tf.Examples are strings (a string input that "
                         "ParseExample reads is expected)");
}

Result<std::vector<std::pair<std::string, Tensor>>> ParseInputExamples(std::string_view arg) {
  KILN_ASSIGN_OR_RETURN(auto pairs,
                        ParsePairs(arg, "--input_examples", "[{<feature>: [<values>]}, ...]"));
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& [key, literal] : pairs) {
    KILN_ASSIGN_OR_RETURN(Tensor t, ExamplesToTensor(literal, key));
    out.emplace_back(key, std::move(t));
  }
  return out;
}

Result<Tensor> LiteralToTensor(const Literal& literal, DType dtype, std::string_view key) {
  if (literal.kind == Literal::Kind::kArray) return ArrayToTensor(literal, dtype, key);
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
  if (literal.kind == Literal::Kind::kArray)
    return literal.array.integral ? DType::kInt64 : DType::kDouble;  // numpy's defaults
  if (AnyKind(literal, Literal::Kind::kString)) return DType::kString;
  if (AnyKind(literal, Literal::Kind::kBool)) return DType::kBool;
  if (AnyKind(literal, Literal::Kind::kFloat)) return DType::kFloat;
  return DType::kInt32;
}

}  // namespace kiln::cli
