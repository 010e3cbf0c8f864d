// Error paths of the string families (string_convert_ops, string_text_ops, regex_ops): bad
// attrs fail at prepare naming the node and attr, bad values at run time naming the element.
// Values are checked by the op tester (tests/ops/cases_strings.cc) and tests/tf.
#include <doctest/doctest.h>

#include "exec/kernel_test_util.h"

namespace kiln::exec {
namespace {

using testing::CheckError;
using testing::Make;
using testing::OpRunner;

Tensor Strs(const std::vector<std::string>& v) {
  return Make<std::string>(v, Shape{static_cast<int64_t>(v.size())});
}

TEST_CASE("AsString: attrs TF refuses are refused at prepare") {
  auto prep = [](DType t, auto&& set) {
    OpRunner r("AsString", "as");
    r.T(t).InputSpec({t, Shape{2}});
    set(r);
    return r.Prepare();
  };
  CheckError(prep(DType::kInt32, [](OpRunner& r) { r.Int("precision", 2); }),
             {"node 'as'", "'precision'", "int32"});
  CheckError(prep(DType::kBool, [](OpRunner& r) { r.Bool("scientific", true); }),
             {"'scientific'", "bool"});
  CheckError(
      prep(DType::kFloat, [](OpRunner& r) { r.Bool("scientific", true).Bool("shortest", true); }),
      {"cannot both be set"});
  CheckError(prep(DType::kFloat, [](OpRunner& r) { r.String("fill", "00"); }),
             {"'fill'", "one or fewer"});
  CheckError(prep(DType::kFloat, [](OpRunner& r) { r.String("fill", "x"); }),
             {"'fill'", "\"x\" is not supported"});
  CheckError(prep(DType::kResource, [](OpRunner&) {}), {"attr 'T'", "resource"});
  CheckError(prep(DType::kFloat, [](OpRunner& r) { r.Int("width", 1 << 20); }), {"at most 4096"});
}

TEST_CASE("StringToNumber: unparsable strings name the string and the dtype") {
  auto run = [](DType out, const std::string& s) {
    return OpRunner("StringToNumber", "num").Type("out_type", out).Input(Strs({"1", s})).Run();
  };
  for (const std::string bad : {"", "  ", "1.5x", "1e", "0x", "+-1", "1 2"})
    CheckError(run(DType::kFloat, bad).status(), {"node 'num'", "\"" + bad + "\"", "float32"});
  for (const std::string bad : {"1.5", "2147483648", "0x10", "inf", "1e3"})
    CheckError(run(DType::kInt32, bad).status(), {"\"" + bad + "\"", "int32"});
  CheckError(run(DType::kInt64, "9223372036854775808").status(), {"int64"});
  for (const std::string bad : {"-1", "-0", "4294967296"})
    CheckError(run(DType::kUInt32, bad).status(), {"uint32"});
  OpRunner r("StringToNumber");
  r.Type("out_type", DType::kHalf).InputSpec({DType::kString, Shape{1}});
  CheckError(r.Prepare(), {"attr 'out_type'", "float16"});
}

TEST_CASE("DecodeBase64: TF's two errors, on the element at fault") {
  auto run = [](const std::string& s) {
    return OpRunner("DecodeBase64", "b64").Input(Strs({"YQ", s})).Run();
  };
  for (const std::string bad : {"Y", "YWJjZ"})
    CheckError(run(bad).status(), {"node 'b64'", "element 1", "1 modulo 4"});
  for (const std::string bad : {"YQ=", "YQ===", "+/8=", "YW Jj", "YQ==\n", "===="})
    CheckError(run(bad).status(), {"element 1", "invalid character"});
}

TEST_CASE("hash buckets: num_buckets and key attrs") {
  OpRunner fast("StringToHashBucketFast", "h");
  fast.Int("num_buckets", 0).InputSpec({DType::kString, Shape{1}});
  CheckError(fast.Prepare(), {"node 'h'", "'num_buckets'", "at least 1"});
  OpRunner strong("StringToHashBucketStrong", "h");
  strong.Int("num_buckets", 5).IntList("key", {1}).InputSpec({DType::kString, Shape{1}});
  CheckError(strong.Prepare(), {"'key'", "2 elements"});
  OpRunner nokey("StringToHashBucketStrong", "h");
  nokey.Int("num_buckets", 5).InputSpec({DType::kString, Shape{1}});
  CheckError(nokey.Prepare(), {"'key'"});
}

TEST_CASE("StringLength, Substr, case ops: unit and encoding attrs") {
  OpRunner len("StringLength", "n");
  len.String("unit", "CHAR").InputSpec({DType::kString, Shape{1}});
  CheckError(len.Prepare(), {"node 'n'", "'unit'", "UTF8_CHAR"});
  OpRunner up("StringUpper", "u");
  up.String("encoding", "latin1").InputSpec({DType::kString, Shape{1}});
  CheckError(up.Prepare(), {"'encoding'", "utf-8", "latin1"});
  OpRunner sub("Substr", "s");
  sub.T(DType::kInt32)
      .String("unit", "BYTES")
      .InputSpec({DType::kString, Shape{1}})
      .InputSpec({DType::kInt32, Shape{1}})
      .InputSpec({DType::kInt32, Shape{1}});
  CheckError(sub.Prepare(), {"'unit'"});
}

TEST_CASE("Substr: out-of-range positions and mismatched shapes") {
  auto run = [](const std::string& unit, int32_t pos) {
    return OpRunner("Substr", "s")
        .T(DType::kInt32)
        .String("unit", unit)
        .Input(Strs({"hello"}))
        .Input(Make<int32_t>({pos}, {1}))
        .Input(Make<int32_t>({2}, {1}))
        .Run();
  };
  CheckError(run("BYTE", 6).status(), {"node 's'", "pos 6 out of range", "\"hello\"", "index 0"});
  CheckError(run("BYTE", -6).status(), {"pos -6 out of range"});
  CheckError(run("UTF8_CHAR", 6).status(), {"pos 6 out of range", "index 0"});
  CheckError(run("UTF8_CHAR", -6).status(), {"pos -6 out of range"});
  CHECK(run("BYTE", 5).ok());
  CHECK(run("BYTE", -5).ok());

  OpRunner shapes("Substr", "s");
  shapes.T(DType::kInt32)
      .InputSpec({DType::kString, Shape{3}})
      .InputSpec({DType::kInt32, Shape{2}})
      .InputSpec({DType::kInt32, Shape{}});
  CheckError(shapes.Prepare(), {"'pos' and 'len' must have the same shape"});
  OpRunner bcast("Substr", "s");
  bcast.T(DType::kInt32)
      .InputSpec({DType::kString, Shape{3}})
      .InputSpec({DType::kInt32, Shape{2}})
      .InputSpec({DType::kInt32, Shape{2}});
  CheckError(bcast.Prepare(), {"'input' and 'pos'", "broadcast"});
  OpRunner types("Substr", "s");
  types.T(DType::kInt32)
      .InputSpec({DType::kString, Shape{1}})
      .InputSpec({DType::kInt32, Shape{1}})
      .InputSpec({DType::kInt64, Shape{1}});
  CheckError(types.Prepare(), {"input 'len'", "int32"});
}

TEST_CASE("StringSplitV2: input must be a vector and sep a scalar") {
  OpRunner rank("StringSplitV2", "sp");
  rank.InputSpec({DType::kString, Shape{1, 1}}).InputSpec({DType::kString, Shape{}});
  CheckError(rank.Prepare(), {"node 'sp'", "input 'input'", "rank 1"});
  OpRunner sep("StringSplitV2", "sp");
  sep.InputSpec({DType::kString, Shape{1}}).InputSpec({DType::kString, Shape{1}});
  CheckError(sep.Prepare(), {"input 'sep'", "rank 0"});
  // Unknown ranks are checked when running.
  auto run = OpRunner("StringSplitV2", "sp")
                 .Input(Strs({"a"}), TensorSpec{DType::kString, PartialShape::UnknownRank()})
                 .Input(Strs({","}), TensorSpec{DType::kString, PartialShape::UnknownRank()})
                 .Run();
  CheckError(run.status(), {"sep must be a scalar"});
}

TEST_CASE("UnicodeDecode: attrs, strict errors") {
  auto prep = [](auto&& set) {
    OpRunner r("UnicodeDecode", "ud");
    r.InputSpec({DType::kString, Shape{1}});
    set(r);
    return r.Prepare();
  };
  CheckError(prep([](OpRunner&) {}), {"node 'ud'", "input_encoding"});
  CheckError(prep([](OpRunner& r) { r.String("input_encoding", "BOGUS-ENCODING"); }),
             {"'input_encoding'", "BOGUS-ENCODING"});
  CheckError(
      prep([](OpRunner& r) { r.String("input_encoding", "UTF-8").String("errors", "skip"); }),
      {"'errors'", "\"skip\""});
  CheckError(prep([](OpRunner& r) {
               r.String("input_encoding", "UTF-8").Int("replacement_char", 0x110000);
             }),
             {"'replacement_char'", "1114112"});
  CheckError(
      prep([](OpRunner& r) { r.String("input_encoding", "UTF-8").Type("Tsplits", DType::kInt16); }),
      {"'Tsplits'"});
  auto strict = OpRunner("UnicodeDecode", "ud")
                    .String("input_encoding", "UTF-8")
                    .String("errors", "strict")
                    .Input(Strs({"ok", "a\xff"}))
                    .Run();
  CheckError(strict.status(), {"node 'ud'", "invalid formatting", "index 1"});
  // Valid input passes strict mode.
  CHECK(OpRunner("UnicodeDecode")
            .String("input_encoding", "UTF-8")
            .String("errors", "strict")
            .Input(Strs({"h\xc3\xa9"}))
            .Run()
            .ok());
}

TEST_CASE("regex ops: bad patterns fail at prepare (static) or run time, naming the pattern") {
  OpRunner full("StaticRegexFullMatch", "m");
  full.String("pattern", "[").InputSpec({DType::kString, Shape{1}});
  CheckError(full.Prepare(), {"node 'm'", "attr 'pattern'", "\"[\"", "missing ]"});
  OpRunner rep("StaticRegexReplace", "r");
  rep.String("pattern", "(").String("rewrite", "x").InputSpec({DType::kString, Shape{1}});
  CheckError(rep.Prepare(), {"attr 'pattern'", "missing )"});
  auto dynamic = OpRunner("RegexReplace", "r")
                     .Input(Strs({"abc"}))
                     .Input(Tensor::StringScalar("a(b"))
                     .Input(Tensor::StringScalar("x"))
                     .Run();
  CheckError(dynamic.status(), {"node 'r'", "invalid pattern \"a(b\""});
  OpRunner rank("RegexReplace", "r");
  rank.InputSpec({DType::kString, Shape{1}})
      .InputSpec({DType::kString, Shape{2}})
      .InputSpec({DType::kString, Shape{}});
  CheckError(rank.Prepare(), {"input 'pattern'", "rank 0"});
  // A rewrite naming a group the pattern lacks leaves the string as it is (RE2, as in TF).
  auto unchanged = OpRunner("StaticRegexReplace")
                       .String("pattern", "a")
                       .String("rewrite", "\\1")
                       .Input(Strs({"abc"}))
                       .Run1();
  REQUIRE(unchanged.ok());
  CHECK(unchanged->data<std::string>()[0] == "abc");
}

}  // namespace
}  // namespace kiln::exec
