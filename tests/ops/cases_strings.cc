// Op-tester cases of the string families: StringFormat, StringJoin, AsString, StringToNumber,
// DecodeCSV, base64, hash buckets, StringLength, case mapping, StringStrip, Substr,
// StringSplitV2, StringSplit, UnicodeScript, UnicodeDecode and the regex ops. References are plain
// loops or known values (the hash values and the Unicode cases are TensorFlow 2.21's outputs;
// tests/tf checks more of them live).
#include <cstdio>
#include <string>

#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

using Strings = std::vector<std::string>;

Tensor Str(const Strings& v, const Shape& shape) { return Make<std::string>(v, shape); }
Tensor Str(const Strings& v) { return Make<std::string>(v, Shape{static_cast<int64_t>(v.size())}); }

// Applies f to every string of input 0 (the shape is kept).
template <typename Out, typename F>
std::function<Tensor(const std::vector<Tensor>&)> MapStrings(F f) {
  return [f](const std::vector<Tensor>& in) {
    Tensor out(kDTypeOf<Out>, in[0].shape());
    for (int64_t i = 0; i < in[0].NumElements(); ++i)
      out.data<Out>()[i] = f(in[0].data<std::string>()[i]);
    return out;
  };
}

// Random printable words with spaces, tabs and a few non-ASCII bytes, for the ops whose
// reference is a plain loop.
Tensor Words(const Shape& shape, uint32_t seed) {
  Tensor t(DType::kString, shape);
  uint32_t state = seed * 2654435761u + 1;
  const std::string alphabet = "abcXYZ019 \t,-_.\xc3\xa9";
  for (std::string& s : t.flat<std::string>()) {
    state = state * 1664525u + 1013904223u;
    const int n = static_cast<int>(state >> 28);
    for (int k = 0; k < n; ++k) {
      state = state * 1664525u + 1013904223u;
      s += alphabet[(state >> 8) % alphabet.size()];
    }
  }
  return t;
}

void AddAsString(std::vector<OpCase>* c) {
  c->push_back(OpCaseBuilder("AsString", "AsString int32 default format")
                   .T(DType::kInt32)
                   .Input(Make<int32_t>({0, -7, 123456, 2147483647}, {2, 2}))
                   .Reference1([](const std::vector<Tensor>& in) {
                     Tensor out(DType::kString, in[0].shape());
                     for (int64_t i = 0; i < 4; ++i)
                       out.data<std::string>()[i] = std::to_string(in[0].data<int32_t>()[i]);
                     return out;
                   })
                   .Build());
  c->push_back(OpCaseBuilder("AsString", "AsString uint64 and int8")
                   .T(DType::kUInt64)
                   .Input(Make<uint64_t>({18446744073709551615ull, 5}, {2}))
                   .Reference1([](const auto&) {
                     return Str({"18446744073709551615", "5"});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("AsString", "AsString int8")
                   .T(DType::kInt8)
                   .Input(Make<int8_t>({-128, 127}, {2}))
                   .Reference1([](const auto&) {
                     return Str({"-128", "127"});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("AsString", "AsString float default is %f")
                   .T(DType::kFloat)
                   .Input(Make<float>({1.5f, -2.25f, 0.0f}, {3}))
                   .Reference1([](const auto&) {
                     return Str({"1.500000", "-2.250000", "0.000000"});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("AsString", "AsString float width 8 fill 0 precision 2")
                   .T(DType::kFloat)
                   .Int("width", 8)
                   .String("fill", "0")
                   .Int("precision", 2)
                   .Input(Make<float>({3.14159f, -1.5f}, {2}))
                   .Reference1([](const auto&) {
                     return Str({"00003.14", "-0001.50"});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("AsString", "AsString double scientific")
                   .T(DType::kDouble)
                   .Bool("scientific", true)
                   .Int("precision", 2)
                   .Input(Make<double>({1234.5, 0.001}, {2}))
                   .Reference1([](const auto&) {
                     return Str({"1.23e+03", "1.00e-03"});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("AsString", "AsString float shortest")
                   .T(DType::kFloat)
                   .Bool("shortest", true)
                   .Input(Make<float>({1234.5f, 0.1f, 1e20f}, {3}))
                   .Reference1([](const auto&) {
                     return Str({"1234.5", "0.1", "1e+20"});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("AsString", "AsString half (through float)")
                   .T(DType::kHalf)
                   .Bool("shortest", true)
                   .Input(RefUnaryDouble(
                       Make<float>({0.1f, 2.5f}, {2}), [](double x) { return x; }, DType::kHalf))
                   .Reference1([](const auto&) {
                     return Str({"0.0999756", "2.5"});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("AsString", "AsString bool")
                   .T(DType::kBool)
                   .Input(Make<bool>({true, false}, {2}))
                   .Reference1([](const auto&) {
                     return Str({"true", "false"});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("AsString", "AsString string width, fill '-' left-justifies")
                   .T(DType::kString)
                   .Int("width", 4)
                   .String("fill", "-")
                   .Input(Str({"ab", "abcdef"}))
                   .Reference1([](const auto&) {
                     return Str({"ab  ", "abcdef"});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("AsString", "AsString int32 fill '+'")
                   .T(DType::kInt32)
                   .String("fill", "+")
                   .Input(Make<int32_t>({-7, 7}, {2}))
                   .Reference1([](const auto&) {
                     return Str({"-7", "+7"});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("AsString", "AsString complex64")
                   .T(DType::kComplex64)
                   .Input(Make<std::complex<float>>({{1, 2}}, {1}))
                   .Reference1([](const auto&) { return Str({"(1.000000,2.000000)"}); })
                   .Build());
  // Many elements: the threaded path.
  c->push_back(OpCaseBuilder("AsString", "AsString int64 large")
                   .T(DType::kInt64)
                   .Input(RandomOf(DType::kInt64, Shape{64, 300}, 3, -1e12, 1e12))
                   .Reference1([](const std::vector<Tensor>& in) {
                     Tensor out(DType::kString, in[0].shape());
                     for (int64_t i = 0; i < in[0].NumElements(); ++i)
                       out.data<std::string>()[i] = std::to_string(in[0].data<int64_t>()[i]);
                     return out;
                   })
                   .Build());
}

void AddStringToNumber(std::vector<OpCase>* c) {
  // DecodeCSV: quoted fields with escaped quotes and the delimiter inside, empty fields taking
  // the defaults, a trailing delimiter's empty last field, nan (TF 2.21's outputs).
  const float nan = std::numeric_limits<float>::quiet_NaN();
  c->push_back(
      OpCaseBuilder("DecodeCSV", "DecodeCSV quotes and defaults")
          .TypeList("OUT_TYPE", {DType::kInt32, DType::kFloat, DType::kString, DType::kString})
          .Input(Str({"1,2.5,\"a,\"\"b\"\",c\",x", ",,,", "3,-1e3,plain,", "7,nan,\"\",zz"}))
          .Input(Make<int32_t>({0}, {1}))
          .Input(Make<float>({9}, {1}))
          .Input(Str({"dflt"}))
          .Input(Str({"q"}))
          .Reference([nan](const auto&) {
            return std::vector<Tensor>{
                Make<int32_t>({1, 0, 3, 7}, {4}), Make<float>({2.5f, 9, -1000, nan}, {4}),
                Str({"a,\"b\",c", "dflt", "plain", "dflt"}), Str({"x", "q", "q", "zz"})};
          })
          .Build());
  c->push_back(OpCaseBuilder("DecodeCSV", "DecodeCSV select_cols, na_value, delimiter")
                   .TypeList("OUT_TYPE", {DType::kInt64, DType::kDouble})
                   .String("field_delim", ";")
                   .String("na_value", "NA")
                   .IntList("select_cols", {1, 3})
                   .Input(Str({"1;2;3;4", "5;6;7;NA"}, Shape{2, 1}))
                   .Input(Tensor(DType::kInt64, Shape{0}))
                   .Input(Make<double>({-1}, {1}))
                   .Reference([](const auto&) {
                     return std::vector<Tensor>{Make<int64_t>({2, 6}, {2, 1}),
                                                Make<double>({4, -1}, {2, 1})};
                   })
                   .Build());
  c->push_back(OpCaseBuilder("StringToNumber", "StringToNumber float (default out_type)")
                   .Input(Str({"1.5", " 2 ", "1e3", "0x10", "-inf", "Infinity", "-0", ".5"}))
                   .Reference1([](const auto&) {
                     return Make<float>({1.5f, 2, 1000, 16, -INFINITY, INFINITY, -0.0f, 0.5f}, {8});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("StringToNumber", "StringToNumber float64 overflow is inf")
                   .Type("out_type", DType::kDouble)
                   .Input(Str({"1e400", "1e-400", "0x1p3", "\t7\n"}))
                   .Reference1([](const auto&) {
                     return Make<double>({INFINITY, 0, 8, 7}, {4});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("StringToNumber", "StringToNumber int32")
                   .Type("out_type", DType::kInt32)
                   .Input(Str({"+3", "-2147483648", "2147483647", "010", " 5 "}, Shape{5}))
                   .Reference1([](const auto&) {
                     return Make<int32_t>({3, INT32_MIN, INT32_MAX, 10, 5}, {5});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("StringToNumber", "StringToNumber int64 and uint64")
                   .Type("out_type", DType::kInt64)
                   .Input(Str({"-9223372036854775808", "9223372036854775807"}))
                   .Reference1([](const auto&) {
                     return Make<int64_t>({INT64_MIN, INT64_MAX}, {2});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("StringToNumber", "StringToNumber uint64")
                   .Type("out_type", DType::kUInt64)
                   .Input(Str({"18446744073709551615", "+0"}))
                   .Reference1([](const auto&) {
                     return Make<uint64_t>({18446744073709551615ull, 0}, {2});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("StringToNumber", "StringToNumber uint32")
                   .Type("out_type", DType::kUInt32)
                   .Input(Str({"4294967295"}))
                   .Reference1([](const auto&) { return Make<uint32_t>({4294967295u}, {1}); })
                   .Build());
  // Round trip of many random integers.
  Tensor ints = RandomOf(DType::kInt64, Shape{100, 50}, 9, -1e15, 1e15);
  Tensor text(DType::kString, ints.shape());
  for (int64_t i = 0; i < ints.NumElements(); ++i)
    text.data<std::string>()[i] = std::to_string(ints.data<int64_t>()[i]);
  c->push_back(OpCaseBuilder("StringToNumber", "StringToNumber int64 large")
                   .Type("out_type", DType::kInt64)
                   .Input(text)
                   .Reference1([ints](const auto&) { return ints; })
                   .Build());
}

// Plain base64 with the web-safe alphabet, bit by bit (the reference).
std::string RefBase64(const std::string& in, bool pad) {
  const char* chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string bits;
  for (unsigned char ch : in)
    for (int b = 7; b >= 0; --b) bits += ((ch >> b) & 1) ? '1' : '0';
  while (bits.size() % 6) bits += '0';
  std::string out;
  for (size_t i = 0; i < bits.size(); i += 6)
    out += chars[std::stoi(bits.substr(i, 6), nullptr, 2)];
  if (pad)
    while (out.size() % 4) out += '=';
  return out;
}

void AddBase64(std::vector<OpCase>* c) {
  Tensor bytes(DType::kString, Shape{40});
  uint32_t state = 5;
  for (int64_t i = 0; i < 40; ++i) {
    for (int64_t k = 0; k < i; ++k) {
      state = state * 1664525u + 1013904223u;
      bytes.data<std::string>()[i] += static_cast<char>(state >> 24);
    }
  }
  for (bool pad : {false, true}) {
    c->push_back(OpCaseBuilder("EncodeBase64", pad ? "EncodeBase64 pad" : "EncodeBase64")
                     .Bool("pad", pad)
                     .Input(bytes)
                     .Reference1(MapStrings<std::string>(
                         [pad](const std::string& s) { return RefBase64(s, pad); }))
                     .Build());
    // Decoding what the reference encodes gives the bytes back (padded or not).
    Tensor encoded(DType::kString, bytes.shape());
    for (int64_t i = 0; i < 40; ++i)
      encoded.data<std::string>()[i] = RefBase64(bytes.data<std::string>()[i], pad);
    c->push_back(OpCaseBuilder("DecodeBase64", pad ? "DecodeBase64 padded" : "DecodeBase64")
                     .Input(encoded)
                     .Reference1([bytes](const auto&) { return bytes; })
                     .Build());
  }
  c->push_back(OpCaseBuilder("DecodeBase64", "DecodeBase64 ignores unused low bits")
                   .Input(Str({"YR", "YR==", "_-8", ""}))
                   .Reference1([](const auto&) {
                     return Str({"a", "a", "\xff\xef", ""});
                   })
                   .Build());
}

void AddHashes(std::vector<OpCase>* c) {
  // TensorFlow 2.21's values (num_buckets 2^63 - 1 keeps nearly the whole fingerprint); the
  // lengths reach every FarmHash branch (0-16, 17-32, 33-64, over 64 bytes).
  const Tensor words = Str({"", "a", "hello", std::string(17, 'x'), std::string(33, 'x'),
                            std::string(65, 'y'), std::string(200, 'z')});
  c->push_back(OpCaseBuilder("StringToHashBucketFast", "StringToHashBucketFast TF values")
                   .Int("num_buckets", 9223372036854775807)
                   .Input(words)
                   .Reference1([](const auto&) {
                     return Make<int64_t>(
                         {1936946117179621456, 3694432073954588132, 3786372426573024489,
                          2082709914559524774, 3046993373088323128, 4023130470993650269,
                          8728890208429024092},
                         {7});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("StringToHashBucketFast", "StringToHashBucketFast 10 buckets")
                   .Int("num_buckets", 10)
                   .Input(Str({"", "a", "hello"}, Shape{3, 1}))
                   .Reference1([](const auto&) {
                     return Make<int64_t>({3, 9, 6}, {3, 1});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("StringToHashBucketStrong", "StringToHashBucketStrong TF values")
                   .Int("num_buckets", 9223372036854775807)
                   .IntList("key", {1, 2})
                   .Input(Str({"", "a", "hello", std::string(100, 'z')}))
                   .Reference1([](const auto&) {
                     return Make<int64_t>({443797209252341628, 5158252350249958646,
                                           2957200328589801622, 6906133569635578472},
                                          {4});
                   })
                   .Build());
  c->push_back(
      OpCaseBuilder("StringToHashBucketStrong", "StringToHashBucketStrong negative key")
          .Int("num_buckets", 9223372036854775807)
          .IntList("key", {-1, -2})
          .Input(Str({"a"}))
          .Reference1([](const auto&) { return Make<int64_t>({1941128815117203887}, {1}); })
          .Build());
  c->push_back(OpCaseBuilder("StringToHashBucketFast", "StringToHashBucketFast large")
                   .Int("num_buckets", 1000)
                   .Input(Words(Shape{80, 100}, 4))
                   .Build());
}

void AddText(std::vector<OpCase>* c) {
  const Tensor words = Words(Shape{6, 7}, 1);
  c->push_back(OpCaseBuilder("StringLength", "StringLength bytes")
                   .Input(words)
                   .Reference1(MapStrings<int32_t>(
                       [](const std::string& s) { return static_cast<int32_t>(s.size()); }))
                   .Build());
  c->push_back(OpCaseBuilder("StringLength", "StringLength UTF8_CHAR")
                   .String("unit", "UTF8_CHAR")
                   .Input(Str({"", "abc", "h\xc3\xa9llo", "\xff\xfe", "a\xc3", "\xe2\x82"}))
                   .Reference1([](const auto&) {
                     return Make<int32_t>({0, 3, 5, 2, 2, 1}, {6});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("StringLower", "StringLower ASCII")
                   .Input(words)
                   .Reference1(MapStrings<std::string>([](std::string s) {
                     for (char& ch : s)
                       if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch + 32);
                     return s;
                   }))
                   .Build());
  c->push_back(OpCaseBuilder("StringUpper", "StringUpper ASCII leaves other bytes")
                   .Input(Str({"abc\xc3\xa9\xff", "x1y"}))
                   .Reference1([](const auto&) {
                     return Str({"ABC\xc3\xa9\xff", "X1Y"});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("StringUpper", "StringUpper utf-8 full case mapping")
                   .String("encoding", "utf-8")
                   .Input(Str({"stra\xc3\x9f"
                               "e \xc7\x86 \xef\xac\x80",
                               "a\xe2\x82"
                               "b\xed\xa0\x80"}))
                   .Reference1([](const auto&) {
                     return Str({"STRASSE \xc7\x84 FF",
                                 "A\xef\xbf\xbd"
                                 "B\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"});
                   })
                   .Build());
  c->push_back(
      OpCaseBuilder("StringLower", "StringLower utf-8 final sigma")
          .String("encoding", "utf-8")
          .Input(Str({"\xce\x9f\xce\x94\xce\x9f\xce\xa3 \xce\xa3\xce\x91", "\xc4\xb0I"}))
          .Reference1([](const auto&) {
            return Str({"\xce\xbf\xce\xb4\xce\xbf\xcf\x82 \xcf\x83\xce\xb1", "i\xcc\x87i"});
          })
          .Build());
  c->push_back(OpCaseBuilder("StringStrip")
                   .Input(words)
                   .Reference1(MapStrings<std::string>([](const std::string& s) {
                     size_t b = 0, e = s.size();
                     while (b < e && std::string(" \t\n\v\f\r").find(s[b]) != std::string::npos)
                       ++b;
                     while (e > b && std::string(" \t\n\v\f\r").find(s[e - 1]) != std::string::npos)
                       --e;
                     return s.substr(b, e - b);
                   }))
                   .Build());
}

void AddSubstr(std::vector<OpCase>* c) {
  c->push_back(OpCaseBuilder("Substr", "Substr bytes, element-wise")
                   .T(DType::kInt32)
                   .Input(Str({"hello", "world", "hello", "hello"}))
                   .Input(Make<int32_t>({1, 0, -2, 5}, {4}))
                   .Input(Make<int32_t>({3, 100, 3, 2}, {4}))
                   .Reference1([](const auto&) {
                     return Str({"ell", "world", "lo", ""});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("Substr", "Substr negative len is the rest")
                   .T(DType::kInt64)
                   .Input(Str({"hello"}))
                   .Input(Make<int64_t>({-3}, {1}))
                   .Input(Make<int64_t>({-2}, {1}))
                   .Reference1([](const auto&) { return Str({"llo"}); })
                   .Build());
  c->push_back(OpCaseBuilder("Substr", "Substr broadcast input against pos")
                   .T(DType::kInt32)
                   .Input(Str({"ab", "cd", "ef", "gh"}, Shape{2, 2}))
                   .ConstInput(Make<int32_t>({0, 1}, {2}))
                   .ConstInput(Make<int32_t>({1, 1}, {2}))
                   .Reference1([](const auto&) {
                     return Str({"a", "d", "e", "h"}, Shape{2, 2});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("Substr", "Substr scalar input, vector pos")
                   .T(DType::kInt32)
                   .Input(Tensor::StringScalar("abcdef"))
                   .Input(Make<int32_t>({0, 1, 2}, {3}))
                   .Input(Make<int32_t>({1, 2, 3}, {3}))
                   .Reference1([](const auto&) {
                     return Str({"a", "bc", "cde"});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("Substr", "Substr UTF8_CHAR")
                   .T(DType::kInt32)
                   .String("unit", "UTF8_CHAR")
                   .Input(Str({"h\xc3\xa9llo", "h\xc3\xa9llo", "h\xc3\xa9llo",
                               "ab\xe2\x82\xac\x82\x82"
                               "c"}))
                   .Input(Make<int32_t>({1, -4, 5, -3}, {4}))
                   .Input(Make<int32_t>({3, 2, 2, 2}, {4}))
                   .Reference1([](const auto&) {
                     return Str({"\xc3\xa9ll", "\xc3\xa9l", "", "b\xe2\x82\xac\x82\x82"});
                   })
                   .Build());
}

// The reference split: Python's str.split as TF's SplitV2 does it, written plainly.
std::vector<std::string> RefSplit(const std::string& s, const std::string& sep, int64_t maxsplit) {
  if (maxsplit == 0) return {s};
  std::vector<std::string> out;
  auto space = [](char ch) { return std::string(" \t\n\v\f\r").find(ch) != std::string::npos; };
  size_t i = 0;
  int64_t splits = 0;
  if (sep.empty()) {
    while (i < s.size() && space(s[i])) ++i;
    while (i < s.size()) {
      size_t j = i;
      while (j < s.size() && !space(s[j])) ++j;
      out.push_back(s.substr(i, j - i));
      i = j;
      while (i < s.size() && space(s[i])) ++i;
      if (maxsplit > 0 && ++splits == maxsplit) {
        out.push_back(s.substr(i));
        return out;
      }
    }
    return out;
  }
  while (true) {
    size_t p = s.find(sep, i);
    if (p == std::string::npos || (maxsplit > 0 && splits == maxsplit)) break;
    out.push_back(s.substr(i, p - i));
    i = p + sep.size();
    ++splits;
  }
  out.push_back(s.substr(i));
  return out;
}

void AddSplit(std::vector<OpCase>* c) {
  struct Split {
    Tensor input;
    std::string sep;
    int64_t maxsplit;
  };
  const std::vector<Split> splits = {
      {Str({"a b  c", " x ", "", "  "}), "", -1},
      {Str({"a,b,,c", ",", ""}), ",", -1},
      {Str({"a,b,,c", "  a b c  "}), ",", 1},
      {Str({"  a b  c  ", "a "}), "", 1},
      {Str({" a b ", "a,b"}), "", 0},
      {Str({"a<>b<>", "<><>"}), "<>", -1},
      {Words(Shape{50}, 7), " ", -1},
      {Str({}), "", -1},
  };
  for (const Split& sp : splits) {
    const std::string sep = sp.sep;
    const int64_t maxsplit = sp.maxsplit;
    c->push_back(OpCaseBuilder("StringSplitV2", "StringSplitV2 sep '" + sep + "' maxsplit " +
                                                    std::to_string(maxsplit) + " (" +
                                                    sp.input.shape().ToString() + ")")
                     .Int("maxsplit", maxsplit)
                     .Input(sp.input)
                     .Input(Tensor::StringScalar(sep))
                     .Reference([sep, maxsplit](const std::vector<Tensor>& in) {
                       std::vector<int64_t> idx;
                       std::vector<std::string> values;
                       int64_t widest = 0;
                       for (int64_t i = 0; i < in[0].NumElements(); ++i) {
                         auto parts = RefSplit(in[0].data<std::string>()[i], sep, maxsplit);
                         widest = std::max<int64_t>(widest, static_cast<int64_t>(parts.size()));
                         for (size_t j = 0; j < parts.size(); ++j) {
                           idx.push_back(i);
                           idx.push_back(static_cast<int64_t>(j));
                           values.push_back(parts[j]);
                         }
                       }
                       const int64_t n = static_cast<int64_t>(values.size());
                       return std::vector<Tensor>{
                           Make<int64_t>(idx, {n, 2}), Make<std::string>(values, {n}),
                           Make<int64_t>({in[0].NumElements(), widest}, {2})};
                     })
                     .Build());
  }
  // UnicodeScript: ICU's script codes, -1 for values that are no code point (TF 2.21's outputs).
  c->push_back(
      OpCaseBuilder("UnicodeScript")
          .Input(Make<int32_t>({72, 0x3b1, 0x4e2d, 0x0627, 48, -1, 0x110000, 0x1F600}, {8}))
          .Reference1([](const auto&) {
            return Make<int32_t>({25, 14, 17, 2, 0, -1, -1, 0}, {8});
          })
          .Build());
  // StringSplit (v1): any character of the delimiter separates; skip_empty drops empty tokens;
  // an empty delimiter makes every byte a token. Written out by hand.
  struct V1 {
    std::vector<std::string> input;
    std::string delimiter;
    bool skip_empty;
    std::vector<std::vector<std::string>> tokens;
  };
  const std::vector<V1> v1 = {
      {{"a b,c", ",,x", ""}, " ,", true, {{"a", "b", "c"}, {"x"}, {}}},
      {{"a b,c", ",,x", "", " "}, " ,", false, {{"a", "b", "c"}, {"", "", "x"}, {}, {"", ""}}},
      {{"ab", "c"}, "", true, {{"a", "b"}, {"c"}}},
  };
  for (const V1& v : v1) {
    std::vector<int64_t> idx;
    std::vector<std::string> values;
    int64_t widest = 0;
    for (size_t i = 0; i < v.tokens.size(); ++i) {
      widest = std::max<int64_t>(widest, static_cast<int64_t>(v.tokens[i].size()));
      for (size_t j = 0; j < v.tokens[i].size(); ++j) {
        idx.push_back(static_cast<int64_t>(i));
        idx.push_back(static_cast<int64_t>(j));
        values.push_back(v.tokens[i][j]);
      }
    }
    const int64_t n = static_cast<int64_t>(values.size());
    const std::vector<Tensor> want = {
        Make<int64_t>(idx, {n, 2}), Make<std::string>(values, {n}),
        Make<int64_t>({static_cast<int64_t>(v.input.size()), widest}, {2})};
    c->push_back(OpCaseBuilder("StringSplit", "StringSplit '" + v.delimiter + "'" +
                                                  (v.skip_empty ? " skip_empty" : ""))
                     .Bool("skip_empty", v.skip_empty)
                     .Input(Str(v.input))
                     .Input(Tensor::StringScalar(v.delimiter))
                     .Reference([want](const auto&) { return want; })
                     .Build());
  }
}

void AddUnicodeDecode(std::vector<OpCase>* c) {
  c->push_back(OpCaseBuilder("UnicodeDecode", "UnicodeDecode UTF-8")
                   .String("input_encoding", "UTF-8")
                   .Input(Str({"h\xc3\xa9llo", "", "a\xe2\x82\xac\xf0\x9d\x84\x9e"}))
                   .Reference([](const auto&) {
                     return std::vector<Tensor>{
                         Make<int64_t>({0, 5, 5, 8}, {4}),
                         Make<int32_t>({104, 233, 108, 108, 111, 97, 8364, 119070}, {8})};
                   })
                   .Build());
  // Malformed input: one replacement per maximal malformed subpart (ICU), as TF gives.
  const Tensor bad =
      Str({"a\xff"
           "b",
           "\xc3", "\xe2\x82\xac\xe2\x82", "\xf0\x9d\x84", "\xed\xa0\x80", "\xc0\xaf"});
  c->push_back(OpCaseBuilder("UnicodeDecode", "UnicodeDecode malformed, replace")
                   .String("input_encoding", "UTF-8")
                   .Input(bad)
                   .Reference([](const auto&) {
                     const int32_t r = 65533;
                     return std::vector<Tensor>{
                         Make<int64_t>({0, 3, 4, 6, 7, 10, 12}, {7}),
                         Make<int32_t>({97, r, 98, r, 8364, r, r, r, r, r, r, r}, {12})};
                   })
                   .Build());
  c->push_back(OpCaseBuilder("UnicodeDecode", "UnicodeDecode malformed, ignore, int32 splits")
                   .String("input_encoding", "UTF-8")
                   .String("errors", "ignore")
                   .Type("Tsplits", DType::kInt32)
                   .Input(bad)
                   .Reference([](const auto&) {
                     return std::vector<Tensor>{Make<int32_t>({0, 2, 2, 3, 3, 3, 3}, {7}),
                                                Make<int32_t>({97, 98, 8364}, {3})};
                   })
                   .Build());
  c->push_back(OpCaseBuilder("UnicodeDecode", "UnicodeDecode control characters, UTF-16-BE")
                   .String("input_encoding", "UTF-16-BE")
                   .Bool("replace_control_characters", true)
                   .Int("replacement_char", 63)
                   .Input(Str({std::string("\0a\0\x01\x20\xac\0\x7f", 8)}, Shape{1, 1}))
                   .Reference([](const auto&) {
                     return std::vector<Tensor>{Make<int64_t>({0, 4}, {2}),
                                                Make<int32_t>({97, 63, 8364, 127}, {4})};
                   })
                   .Build());
}

void AddRegex(std::vector<OpCase>* c) {
  c->push_back(OpCaseBuilder("RegexReplace", "RegexReplace global with groups")
                   .Input(Str({"ab12cd34", "xyz"}))
                   .Input(Tensor::StringScalar("(\\d)(\\d)"))
                   .Input(Tensor::StringScalar("<\\2\\1>"))
                   .Reference1([](const auto&) {
                     return Str({"ab<21>cd<43>", "xyz"});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("RegexReplace", "RegexReplace first only, constant pattern")
                   .Bool("replace_global", false)
                   .Input(Str({"aaa", "bab"}, Shape{2, 1}))
                   .ConstInput(Tensor::StringScalar("a"))
                   .ConstInput(Tensor::StringScalar("b"))
                   .Reference1([](const auto&) {
                     return Str({"baa", "bbb"}, Shape{2, 1});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("StaticRegexReplace", "StaticRegexReplace empty matches")
                   .String("pattern", "x*")
                   .String("rewrite", "-")
                   .Input(Str({"abc", ""}))
                   .Reference1([](const auto&) {
                     return Str({"-a-b-c-", "-"});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("StaticRegexReplace", "StaticRegexReplace UTF-8 aware")
                   .String("pattern", ".")
                   .String("rewrite", "x")
                   .Input(Str({"h\xc3\xa9llo",
                               "a\xff"
                               "b"}))
                   .Reference1([](const auto&) {
                     return Str({"xxxxx", "x\xffx"});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("StaticRegexFullMatch")
                   .String("pattern", "abc|^s3://.*")
                   .Input(Str({"abc", "abcd", "s3://bucket", ""}, Shape{2, 2}))
                   .Reference1([](const auto&) {
                     return Make<bool>({true, false, true, false}, {2, 2});
                   })
                   .Build());
  // RegexFullMatch: the pattern a constant (compiled at prepare) or fed.
  for (bool constant : {true, false}) {
    OpCaseBuilder b("RegexFullMatch", std::string("RegexFullMatch ") +
                                          (constant ? "constant pattern" : "fed pattern"));
    b.Input(Str({"abc", "abcd", "s3://bucket", ""}, Shape{2, 2}));
    const Tensor pattern = Tensor::StringScalar("abc|^s3://.*");
    if (constant) {
      b.ConstInput(pattern);
    } else {
      b.Input(pattern);
    }
    c->push_back(b.Reference1([](const auto&) {
                    return Make<bool>({true, false, true, false}, {2, 2});
                  }).Build());
  }
  const Tensor many = Words(Shape{40, 30}, 8);
  c->push_back(OpCaseBuilder("StaticRegexReplace", "StaticRegexReplace large")
                   .String("pattern", "[0-9]")
                   .String("rewrite", "#")
                   .Input(many)
                   .Reference1(MapStrings<std::string>([](std::string s) {
                     for (char& ch : s)
                       if (ch >= '0' && ch <= '9') ch = '#';
                     return s;
                   }))
                   .Build());
}

void AddFormatAndJoin(std::vector<OpCase>* c) {
  const Tensor v = Make<int32_t>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {10});
  c->push_back(OpCaseBuilder("StringFormat", "StringFormat summarize 2")
                   .TypeList("T", {DType::kInt32, DType::kFloat})
                   .String("template", "a={} b={}")
                   .String("placeholder", "{}")
                   .Int("summarize", 2)
                   .Input(v)
                   .Input(Make<float>({0.5f, -1}, {2, 1}))
                   .Reference1([](const auto&) {
                     return Tensor::StringScalar("a=[0 1 ... 8 9] b=[[0.5]\n [-1]]");
                   })
                   .Build());
  c->push_back(OpCaseBuilder("StringJoin", "StringJoin scalars repeat")
                   .Int("N", 3)
                   .String("separator", "-")
                   .Input(Str({"a", "b"}))
                   .Input(Tensor::StringScalar("x"))
                   .Input(Str({"1", "2"}))
                   .Reference1([](const auto&) {
                     return Str({"a-x-1", "b-x-2"});
                   })
                   .Build());
}

// StringNGrams and UnicodeEncode: TensorFlow 2.21's outputs for the same inputs.
void AddRaggedText(std::vector<OpCase>* c) {
  const Tensor data = Str({"a", "b", "c", "d", "e", "f"});
  struct NGramCase {
    std::string sep, left, right;
    std::vector<int64_t> widths;
    int64_t pad;
    bool preserve;
    Strings ngrams;
    std::vector<int64_t> splits;
  };
  const std::vector<NGramCase> cases = {
      {" ",
       "",
       "",
       {1, 2},
       0,
       false,
       {"a", "b", "c", "a b", "b c", "d", "e", "f", "e f"},
       {0, 5, 5, 6, 9}},
      {"|",
       "<",
       ">",
       {2, 3},
       -1,
       false,
       {"<|a",   "a|b", "b|c",   "c|>",   "<|<|a", "<|a|b", "a|b|c", "b|c|>",
        "c|>|>", "<|>", "<|<|>", "<|>|>", "<|d",   "d|>",   "<|<|d", "<|d|>",
        "d|>|>", "<|e", "e|f",   "f|>",   "<|<|e", "<|e|f", "e|f|>", "f|>|>"},
       {0, 9, 12, 17, 24}},
      {"_",
       "L",
       "R",
       {3},
       1,
       true,
       {"L_a_b", "a_b_c", "b_c_R", "L_d_R", "L_e_f", "e_f_R"},
       {0, 3, 3, 4, 6}},
      {"_", "L", "R", {4}, 0, true, {"a_b_c", "d", "e_f"}, {0, 1, 1, 2, 3}},
      {"+",
       "L",
       "R",
       {5},
       2,
       false,
       {"L+L+a+b+c", "L+a+b+c+R", "a+b+c+R+R", "L+L+d+R+R", "L+L+e+f+R", "L+e+f+R+R"},
       {0, 3, 3, 4, 6}},
  };
  int k = 0;
  for (const NGramCase& n : cases) {
    for (DType t : {DType::kInt64, DType::kInt32}) {
      const Tensor splits = t == DType::kInt64 ? Make<int64_t>({0, 3, 3, 4, 6}, {5})
                                               : Make<int32_t>({0, 3, 3, 4, 6}, {5});
      c->push_back(OpCaseBuilder("StringNGrams", "StringNGrams TF values #" + std::to_string(k) +
                                                     " " + DTypeShortName(t))
                       .String("separator", n.sep)
                       .IntList("ngram_widths", n.widths)
                       .String("left_pad", n.left)
                       .String("right_pad", n.right)
                       .Int("pad_width", n.pad)
                       .Bool("preserve_short_sequences", n.preserve)
                       .Type("Tsplits", t)
                       .Input(data)
                       .Input(splits)
                       .Reference([n, t](const auto&) {
                         std::vector<Tensor> out = {Str(n.ngrams), Tensor()};
                         const int64_t len = static_cast<int64_t>(n.splits.size());
                         if (t == DType::kInt64) {
                           out[1] = Make<int64_t>(n.splits, {len});
                         } else {
                           out[1] = Make<int32_t>(
                               std::vector<int32_t>(n.splits.begin(), n.splits.end()), {len});
                         }
                         return out;
                       })
                       .Build());
    }
    ++k;
  }
  // Values: 'H', U+263A, U+1F600 | (empty) | -1, two lone surrogates, U+FFFE (a noncharacter,
  // kept), past U+10FFFF | a surrogate pair (invalid as code points), 'i'. replacement '?'.
  const Tensor cps = Make<int32_t>(
      {72, 0x263A, 0x1F600, -1, 0xD800, 0xDC00, 0xFFFE, 0x110000, 0xD83D, 0xDE00, 105}, {11});
  const Tensor cp_splits = Make<int64_t>({0, 3, 3, 8, 11}, {5});
  auto hex = [](const std::string& h) {
    std::string s;
    for (size_t i = 0; i < h.size(); i += 2)
      s.push_back(static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16)));
    return s;
  };
  const std::vector<std::tuple<std::string, std::string, Strings>> enc = {
      {"UTF-8", "replace", {"48e298baf09f9880", "", "3f3f3fefbfbe3f", "3f3f69"}},
      {"UTF-8", "ignore", {"48e298baf09f9880", "", "efbfbe", "69"}},
      {"UTF-16-BE", "replace", {"0048263ad83dde00", "", "003f003f003ffffe003f", "003f003f0069"}},
      {"UTF-16-BE", "ignore", {"0048263ad83dde00", "", "fffe", "0069"}},
      {"UTF-32-BE",
       "replace",
       {"000000480000263a0001f600", "", "0000003f0000003f0000003f0000fffe0000003f",
        "0000003f0000003f00000069"}},
      {"UTF-32-BE", "ignore", {"000000480000263a0001f600", "", "0000fffe", "00000069"}},
  };
  for (const auto& e : enc) {
    Strings want;
    for (const std::string& h : std::get<2>(e)) want.push_back(hex(h));
    c->push_back(OpCaseBuilder("UnicodeEncode", "UnicodeEncode " + std::get<0>(e) + " " +
                                                    std::get<1>(e) + " TF values")
                     .String("output_encoding", std::get<0>(e))
                     .String("errors", std::get<1>(e))
                     .Int("replacement_char", 63)
                     .Type("Tsplits", DType::kInt64)
                     .Input(cps)
                     .Input(cp_splits)
                     .Reference1([want](const auto&) { return Str(want); })
                     .Build());
  }
}

}  // namespace

namespace {

// UnicodeDecodeWithOffsets, UnicodeTranscode, StringToHashBucket and Fingerprint against
// TensorFlow 2.21's values.
void AddTranscodeAndHashes(std::vector<OpCase>* c) {
  const Tensor words = Make<std::string>({"h\xc3\xa9llo",
                                          "a\xff"
                                          "b",
                                          "", "\xe6\x97\xa5\xe6\x9c\xac"},
                                         {4});
  c->push_back(
      OpCaseBuilder("UnicodeDecodeWithOffsets", "UnicodeDecodeWithOffsets, TF values")
          .String("input_encoding", "UTF-8")
          .Type("Tsplits", DType::kInt64)
          .Input(words)
          .Reference([](const auto&) {
            return std::vector<Tensor>{
                Make<int64_t>({0, 5, 8, 8, 10}, {5}),
                Make<int32_t>({104, 233, 108, 108, 111, 97, 65533, 98, 26085, 26412}, {10}),
                Make<int64_t>({0, 1, 3, 4, 5, 0, 1, 2, 0, 3}, {10})};
          })
          .Build());
  c->push_back(OpCaseBuilder("UnicodeTranscode", "UnicodeTranscode to UTF-16-BE, TF values")
                   .String("input_encoding", "UTF-8")
                   .String("output_encoding", "UTF-16-BE")
                   .Input(words)
                   .Reference1([](const auto&) {
                     return Make<std::string>({std::string("\0h\0\xe9\0l\0l\0o", 10),
                                               std::string("\0a\xff\xfd\0b", 6), "", "e\xe5g,"},
                                              {4});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("UnicodeTranscode", "UnicodeTranscode to UTF-32-BE, errors ignored")
                   .String("input_encoding", "UTF-8")
                   .String("output_encoding", "UTF-32-BE")
                   .String("errors", "ignore")
                   .Input(words)
                   .Reference1([](const auto&) {
                     return Make<std::string>(
                         {std::string("\0\0\0h\0\0\0\xe9\0\0\0l\0\0\0l\0\0\0o", 20),
                          std::string("\0\0\0a\0\0\0b", 8), "", std::string("\0\0e\xe5\0\0g,", 8)},
                         {4});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("UnicodeTranscode", "UnicodeTranscode replacing control characters")
                   .String("input_encoding", "UTF-8")
                   .String("output_encoding", "UTF-8")
                   .Bool("replace_control_characters", true)
                   .Int("replacement_char", 63)
                   .Input(Make<std::string>({"x\x01y"}, {1}))
                   .Reference1([](const auto&) { return Make<std::string>({"x?y"}, {1}); })
                   .Build());
  c->push_back(OpCaseBuilder("StringToHashBucket", "StringToHashBucket, TF values")
                   .Int("num_buckets", 1000000007)
                   .Input(Make<std::string>({"", "a", "hello world", "abcdefghijklmnopq"}, {4}))
                   .Reference1([](const auto&) {
                     return Make<int64_t>({727638525, 395105680, 651585384, 479563336}, {4});
                   })
                   .Build());
  auto bytes = [](const std::vector<std::vector<int>>& rows) {
    std::vector<uint8_t> v;
    for (const auto& r : rows)
      for (int b : r) v.push_back(static_cast<uint8_t>(b));
    return Make<uint8_t>(v, {static_cast<int64_t>(rows.size()), 8});
  };
  const Tensor fp_strings =
      bytes({{79, 64, 144, 47, 59, 106, 225, 154}, {232, 12, 56, 49, 169, 229, 139, 180}});
  const Tensor fp_rows =
      bytes({{122, 64, 59, 169, 136, 60, 55, 83}, {52, 252, 224, 38, 64, 226, 155, 60}});
  const Tensor fp_ints =
      bytes({{76, 18, 253, 133, 168, 204, 240, 10}, {254, 162, 60, 240, 103, 244, 53, 255}});
  struct F {
    std::string name;
    Tensor data, want;
  };
  for (const F& f : {F{"strings", Make<std::string>({"", "hello"}, {2}), fp_strings},
                     F{"string rows", Make<std::string>({"a", "b", "c", "d"}, {2, 2}), fp_rows},
                     F{"int32 rows", Make<int32_t>({1, 2, 3, 4}, {2, 2}), fp_ints}}) {
    c->push_back(OpCaseBuilder("Fingerprint", "Fingerprint " + f.name + ", TF values")
                     .T(f.data.dtype())
                     .Input(f.data)
                     .ConstInput(Tensor::StringScalar("farmhash64"))
                     .Reference1([want = f.want](const auto&) { return want; })
                     .Build());
  }
}

}  // namespace

std::vector<OpCase> StringCases() {
  std::vector<OpCase> c;
  AddAsString(&c);
  AddStringToNumber(&c);
  AddBase64(&c);
  AddHashes(&c);
  AddText(&c);
  AddSubstr(&c);
  AddSplit(&c);
  AddUnicodeDecode(&c);
  AddRaggedText(&c);
  AddRegex(&c);
  AddFormatAndJoin(&c);
  AddTranscodeAndHashes(&c);
  return c;
}

}  // namespace kiln::testing
