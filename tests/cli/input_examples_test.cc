// --input_examples: Python dict literals and the tf.Example protos they describe, checked by
// parsing the bytes back with protobuf and against bytes TensorFlow's saved_model_cli wrote.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include "input_exprs.h"
#include "tensorflow/example.pb.h"

namespace kiln::cli {
namespace {

Literal Parse(const std::string& text) {
  auto lit = ParseLiteral(text);
  REQUIRE_MESSAGE(lit.ok(), lit.status().ToString());
  return *lit;
}

std::string ParseError(const std::string& text) {
  auto lit = ParseLiteral(text);
  REQUIRE(!lit.ok());
  CHECK(lit.status().code() == StatusCode::kInvalidArgument);
  return lit.status().message();
}

std::string Hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

// The serialized Examples of one input's list of dicts.
std::vector<std::string> Serialize(const std::string& list) {
  auto t = ExamplesToTensor(Parse(list), "x");
  REQUIRE_MESSAGE(t.ok(), t.status().ToString());
  REQUIRE(t->dtype() == DType::kString);
  REQUIRE(t->rank() == 1);
  const std::string* data = t->data<std::string>();
  return {data, data + t->NumElements()};
}

tensorflow::Example ParseBack(const std::string& bytes) {
  tensorflow::Example example;
  REQUIRE(example.ParseFromString(bytes));
  return example;
}

std::string ExamplesError(const std::string& list) {
  auto t = ExamplesToTensor(Parse(list), "x");
  REQUIRE(!t.ok());
  CHECK(t.status().code() == StatusCode::kInvalidArgument);
  return t.status().message();
}

TEST_CASE("dict literals: quoted keys, any values, trailing commas, a repeated key") {
  Literal d = Parse("{'a': [1], \"b\": [2.5],}");
  REQUIRE(d.kind == Literal::Kind::kDict);
  REQUIRE(d.keys.size() == 2);
  CHECK(d.keys[0] == "a");
  CHECK(d.keys[1] == "b");
  CHECK(d.items[0].kind == Literal::Kind::kList);
  CHECK(d.items[1].items[0].f == 2.5);
  CHECK(d.text == "{'a': [1], \"b\": [2.5],}");

  CHECK(Parse("{}").keys.empty());
  CHECK(Parse(" { } ").kind == Literal::Kind::kDict);
  Literal nested = Parse("[{'a': {'b': 'c'}}, {}]");
  REQUIRE(nested.items.size() == 2);
  CHECK(nested.items[0].items[0].kind == Literal::Kind::kDict);
  CHECK(nested.items[0].items[0].items[0].s == "c");
  CHECK(Parse("{b'k': 1}").keys[0] == "k");  // bytes keys, as Python allows

  // As in Python: the key keeps its first place and takes its last value.
  Literal dup = Parse("{'a': 1, 'b': 2, 'a': 3}");
  REQUIRE(dup.keys.size() == 2);
  CHECK(dup.keys[0] == "a");
  CHECK(dup.items[0].i == 3);
  CHECK(dup.items[1].i == 2);

  CHECK(Parse("b'x'").bytes);
  CHECK(Parse("b'x'").text == "b'x'");
  CHECK(!Parse("'x'").bytes);
}

TEST_CASE("bad dict literals say where and what") {
  CHECK(ParseError("{1: [2]}").find("dict key 1 is not a quoted string at position 1") !=
        std::string::npos);
  CHECK(ParseError("{'a' [1]}").find("expected ':' after a dict key") != std::string::npos);
  CHECK(ParseError("{'a': [1]").find("unbalanced '{'") != std::string::npos);
  CHECK(ParseError("{'a': [1] 'b': [2]}").find("expected ',' or '}'") != std::string::npos);
  CHECK(ParseError("{,}").find("unexpected ','") != std::string::npos);
  CHECK(ParseError("{'a': }").find("unexpected '}'") != std::string::npos);
  CHECK(ParseError("{'a': [1]}}").find("unexpected '}'") != std::string::npos);
  CHECK(ParseError("{'a': {'b': {'c': {'d': {'e': {'f': {'g': {'h': {'i': 1}}}}}}}}}")
            .find("nested deeper") != std::string::npos);
}

TEST_CASE("a dict is not a tensor: --input_exprs refuses it and names --input_examples") {
  auto t = LiteralToTensor(Parse("{'a': [1]}"), DType::kFloat, "x");
  REQUIRE(!t.ok());
  CHECK(t.status().message().find("input 'x': {'a': [1]} is a dict") != std::string::npos);
  CHECK(t.status().message().find("--input_examples") != std::string::npos);
  CHECK(!LiteralToTensor(Parse("[{'a': [1]}]"), DType::kString, "x").ok());
}

TEST_CASE("serialized examples are the bytes TensorFlow's saved_model_cli writes") {
  // From tensorflow.python.tools.saved_model_cli.preprocess_input_examples_arg_string (TF 2.20,
  // upb protobuf), one feature each: with several, protobuf's map order is its own.
  CHECK(Hex(Serialize("[{'n': [-1, 0, 300]}]")[0]) ==
        "0a180a160a016e12111a0f0a0dffffffffffffffffff0100ac02");
  const auto strings = Serialize("[{'s': ['h\xc3\xa9', 'x']}, {'t': [b'\\n\\t']}]");
  REQUIRE(strings.size() == 2);
  CHECK(Hex(strings[0]) == "0a110a0f0a0173120a0a080a0368c3a90a0178");
  CHECK(Hex(strings[1]) == "0a0d0a0b0a017412060a040a020a09");
  // 1e300 overflows float32 to inf, True is 1.0, -3 an int in a float list.
  CHECK(Hex(Serialize("[{'f': [1e300, True, -3]}]")[0]) ==
        "0a170a150a01661210120e0a0c0000807f0000803f000040c0");
  CHECK(Serialize("[{}]")[0].empty());  // no features: an empty message
}

TEST_CASE("each feature's kind is picked by its list's first value") {
  const auto examples = Serialize(
      "[{'f': [1.5, 2, False], 'i': [7, -9223372036854775808], 's': ['caf\xc3\xa9', ''], "
      "'b': [b'\\\\', b'\\''], 'big': [3.40282356e38, -1e39]}, {'f': [0.1]}]");
  REQUIRE(examples.size() == 2);
  const tensorflow::Example e = ParseBack(examples[0]);
  const auto& features = e.features().feature();
  REQUIRE(features.size() == 5);

  const tensorflow::Feature& f = features.at("f");
  REQUIRE(f.kind_case() == tensorflow::Feature::kFloatList);
  REQUIRE(f.float_list().value_size() == 3);
  CHECK(f.float_list().value(0) == 1.5f);
  CHECK(f.float_list().value(1) == 2.0f);
  CHECK(f.float_list().value(2) == 0.0f);

  const tensorflow::Feature& i = features.at("i");
  REQUIRE(i.kind_case() == tensorflow::Feature::kInt64List);
  REQUIRE(i.int64_list().value_size() == 2);
  CHECK(i.int64_list().value(0) == 7);
  CHECK(i.int64_list().value(1) == std::numeric_limits<int64_t>::min());

  const tensorflow::Feature& s = features.at("s");
  REQUIRE(s.kind_case() == tensorflow::Feature::kBytesList);
  REQUIRE(s.bytes_list().value_size() == 2);
  CHECK(s.bytes_list().value(0) == "caf\xc3\xa9");  // str: its UTF-8 bytes
  CHECK(s.bytes_list().value(1) == "");

  const tensorflow::Feature& b = features.at("b");
  REQUIRE(b.kind_case() == tensorflow::Feature::kBytesList);
  REQUIRE(b.bytes_list().value_size() == 2);
  CHECK(b.bytes_list().value(0) == "\\");
  CHECK(b.bytes_list().value(1) == "'");

  // Beyond float32's range: its max up to halfway to the next power of two, inf from there.
  const tensorflow::Feature& big = features.at("big");
  REQUIRE(big.float_list().value_size() == 2);
  CHECK(big.float_list().value(0) == std::numeric_limits<float>::max());
  CHECK(std::isinf(big.float_list().value(1)));
  CHECK(big.float_list().value(1) < 0);

  const tensorflow::Example second = ParseBack(examples[1]);
  CHECK(second.features().feature().at("f").float_list().value(0) == 0.1f);

  // Written in any order, the bytes are the same (features sorted by name).
  CHECK(Serialize("[{'a': [1], 'b': ['x']}]") == Serialize("[{'b': ['x'], 'a': [1]}]"));
}

TEST_CASE("values that do not fit the picked kind, and other bad examples, are refused") {
  CHECK(ExamplesError("{'a': [1]}") ==
        "--input_examples input 'x': tf.Example input must be a list of dictionaries, but "
        "\"{'a': [1]}\" is dict");
  CHECK(ExamplesError("[{'a': [1]}, 5]") ==
        "--input_examples input 'x', example 1: 5 is int, but each tf.Example must be a "
        "dictionary of feature lists");
  CHECK(ExamplesError("[{'a': 1.5}]") ==
        "--input_examples input 'x', example 0, feature 'a': feature value must be a list, but "
        "1.5 is float");
  // TensorFlow fails with an IndexError here.
  CHECK(ExamplesError("[{'a': []}]").find("feature 'a': the list is empty") != std::string::npos);
  CHECK(ExamplesError("[{'a': [[1]]}]").find("type list for value [1] is not supported") !=
        std::string::npos);
  CHECK(ExamplesError("[{'a': [{'b': 1}]}]").find("type dict") != std::string::npos);
  CHECK(ExamplesError("[{'a': [True]}]").find("True is a bool") != std::string::npos);
  CHECK(ExamplesError("[{'a': [1, 2.5]}]") ==
        "--input_examples input 'x', example 0, feature 'a': value 2.5 (float) cannot go in an "
        "int64_list, which the first value 1 (int) picked");
  CHECK(ExamplesError("[{'a': [1, True]}]").find("True (bool) cannot go in an int64_list") !=
        std::string::npos);
  CHECK(ExamplesError("[{'a': [1.5, 'x']}]").find("'x' (str) cannot go in a float_list") !=
        std::string::npos);
  CHECK(ExamplesError("[{'a': ['x', 1]}]").find("1 (int) cannot go in a bytes_list") !=
        std::string::npos);
  // As in TensorFlow: str values are encoded, bytes kept, and the two do not mix.
  CHECK(ExamplesError("[{'a': ['x', b'y']}]").find("b'y' (bytes) cannot go in a bytes_list") !=
        std::string::npos);
  CHECK(ExamplesError("[{'a': [b'x', 'y']}]").find("'y' (str) cannot go") != std::string::npos);
}

TEST_CASE("the --input_examples argument: one 1-D string tensor per input key") {
  auto r = ParseInputExamples(
      "inputs=[{'x': [1.0]}, {'x': [2.0]}, {'x': [3.0]}]; other = [] ;;inputs=[{'x': [4.0]}]");
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  REQUIRE(r->size() == 2);
  // A later key replaces an earlier one, keeping its place.
  CHECK((*r)[0].first == "inputs");
  CHECK((*r)[0].second.shape() == Shape{1});
  CHECK(ParseBack((*r)[0].second.data<std::string>()[0])
            .features()
            .feature()
            .at("x")
            .float_list()
            .value(0) == 4.0f);
  CHECK((*r)[1].first == "other");
  CHECK((*r)[1].second.dtype() == DType::kString);
  CHECK((*r)[1].second.shape() == Shape{0});
  CHECK(ParseInputExamples("")->empty());

  auto bad = ParseInputExamples("inputs:[{}]");
  REQUIRE(!bad.ok());
  CHECK(bad.status().message().find("--input_examples 'inputs:[{}]' is not in the form "
                                    "<input_key>=[{<feature>: [<values>]}, ...]") !=
        std::string::npos);
  auto unparsed = ParseInputExamples("a=[{'x': [1.0]}];b=[{'x': __import__('os')}]");
  REQUIRE(!unparsed.ok());
  CHECK(unparsed.status().message().find("--input_examples input 'b'") != std::string::npos);
  auto wrong = ParseInputExamples("a=[{'x': [1.0]}];b=[{'x': 'y'}]");
  REQUIRE(!wrong.ok());
  CHECK(wrong.status().message().find("input 'b', example 0, feature 'x'") != std::string::npos);

  auto one = SerializeExample(Parse("{'x': [1]}"), "k");
  REQUIRE(one.ok());
  CHECK(ParseBack(*one).features().feature().at("x").int64_list().value(0) == 1);
}

}  // namespace
}  // namespace kiln::cli
