#include "input_exprs.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
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
        "' (only numbers, true/false, quoted strings, [nested, lists] and {'key': value} dicts "
        "are allowed)");
  }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  Result<Literal> ParseValue(int depth) {
    SkipSpace();
    if (pos_ >= text_.size()) return Error("unexpected end of input");
    const char c = text_[pos_];
    if (c == '[') return ParseList(depth);
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
  if (v.kind == Literal::Kind::kDict)
    return InvalidArgument("input '", key, "': ", v.text,
                           " is a dict; dicts describe tf.Examples, given with --input_examples");
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
