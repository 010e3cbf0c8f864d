// The --input_exprs literal parser: numbers, bools, nested lists and a few np.* calls, never
// evaluated.
#include "input_exprs.h"

#include <doctest/doctest.h>

#include <string>

namespace kiln::cli {
namespace {

Tensor ToTensor(const std::string& text, DType dtype) {
  auto lit = ParseLiteral(text);
  REQUIRE_MESSAGE(lit.ok(), lit.status().ToString());
  auto t = LiteralToTensor(*lit, dtype, "x");
  REQUIRE_MESSAGE(t.ok(), t.status().ToString());
  return *t;
}

std::string TensorError(const std::string& text, DType dtype) {
  auto lit = ParseLiteral(text);
  REQUIRE_MESSAGE(lit.ok(), lit.status().ToString());
  auto t = LiteralToTensor(*lit, dtype, "x");
  REQUIRE(!t.ok());
  return t.status().message();
}

std::string ParseError(const std::string& text) {
  auto lit = ParseLiteral(text);
  REQUIRE(!lit.ok());
  CHECK(lit.status().code() == StatusCode::kInvalidArgument);
  return lit.status().message();
}

TEST_CASE("numbers") {
  CHECK(ToTensor("5.0", DType::kFloat).scalar<float>() == 5.0f);
  CHECK(ToTensor("-1.5e3", DType::kFloat).scalar<float>() == -1500.0f);
  CHECK(ToTensor("+.5", DType::kDouble).scalar<double>() == 0.5);
  CHECK(ToTensor("1.", DType::kDouble).scalar<double>() == 1.0);
  CHECK(ToTensor("2E-2", DType::kDouble).scalar<double>() == 0.02);
  CHECK(ToTensor(" 7 ", DType::kInt32).scalar<int32_t>() == 7);
  CHECK(ToTensor("-9223372036854775808", DType::kInt64).scalar<int64_t>() ==
        std::numeric_limits<int64_t>::min());
  CHECK(ToTensor("3", DType::kFloat).scalar<float>() == 3.0f);   // ints cast to float inputs
  CHECK(ToTensor("2.0", DType::kInt32).scalar<int32_t>() == 2);  // integral floats fit ints
  CHECK(ToTensor("1e3", DType::kUInt16).scalar<uint16_t>() == 1000);
  CHECK(ToTensor("true", DType::kBool).scalar<bool>() == true);
  CHECK(ToTensor("False", DType::kBool).scalar<bool>() == false);
  CHECK(ToTensor("5", DType::kFloat).rank() == 0);
}

TEST_CASE("nested lists give shapes") {
  Tensor t = ToTensor("[[1,2],[3,4]]", DType::kFloat);
  CHECK(t.shape() == Shape({2, 2}));
  CHECK(t.data<float>()[3] == 4.0f);
  Tensor v = ToTensor("[1, 2, 3,]", DType::kInt64);  // trailing comma, as Python allows
  CHECK(v.shape() == Shape({3}));
  CHECK(v.data<int64_t>()[2] == 3);
  CHECK(ToTensor("[]", DType::kFloat).shape() == Shape({0}));
  CHECK(ToTensor("[[], []]", DType::kFloat).shape() == Shape({2, 0}));
  CHECK(ToTensor("[[[true]], [[false]]]", DType::kBool).shape() == Shape({2, 1, 1}));
  CHECK(ToTensor("[ [ 1 , 2 ] ]", DType::kInt8).shape() == Shape({1, 2}));
}

TEST_CASE("tuples are lists, as numpy takes them") {
  CHECK(ToTensor("(1, 2)", DType::kInt32).shape() == Shape({2}));
  CHECK(ToTensor("(5,)", DType::kInt32).shape() == Shape({1}));
  CHECK(ToTensor("(5)", DType::kInt32).rank() == 0);
  CHECK(ToTensor("[(1, 2), (3, 4)]", DType::kFloat).shape() == Shape({2, 2}));
}

TEST_CASE("np.zeros, ones, full, arange and random.rand/randn, with dtype, reshape and astype") {
  Tensor t = ToTensor("np.ones((2, 3))", DType::kFloat);
  CHECK(t.shape() == Shape({2, 3}));
  CHECK(t.data<float>()[5] == 1.0f);
  t = ToTensor("np.zeros([1, 28, 28, 1], dtype=np.float32)", DType::kFloat);
  CHECK(t.shape() == Shape({1, 28, 28, 1}));
  CHECK(t.data<float>()[783] == 0.0f);
  t = ToTensor("numpy.full((2,), 7)", DType::kInt32);
  CHECK(t.shape() == Shape({2}));
  CHECK(t.data<int32_t>()[1] == 7);
  t = ToTensor("np.arange(6).reshape(2, -1)", DType::kInt64);
  CHECK(t.shape() == Shape({2, 3}));
  CHECK(t.data<int64_t>()[4] == 4);
  t = ToTensor("np.arange(1, 2, 0.25)", DType::kFloat);
  CHECK(t.shape() == Shape({4}));
  CHECK(t.data<float>()[3] == 1.75f);
  CHECK(ToTensor("np.arange(5, 1)", DType::kInt32).shape() == Shape({0}));
  t = ToTensor("np.full(3, 1.5, dtype=int)", DType::kInt64);  // numpy truncates into ints
  CHECK(t.data<int64_t>()[2] == 1);
  CHECK(ToTensor("np.ones(4).astype('int8').reshape((2, 2))", DType::kInt8).shape() ==
        Shape({2, 2}));
  CHECK(ToTensor("np.ones(())", DType::kFloat).rank() == 0);
  // Random values come from a fixed seed: in [0, 1) for rand, the same on every run.
  Tensor r = ToTensor("np.random.rand(2, 3)", DType::kFloat);
  CHECK(r.shape() == Shape({2, 3}));
  Tensor again = ToTensor("np.random.rand(2, 3)", DType::kFloat);
  for (int i = 0; i < 6; ++i) {
    CHECK(r.data<float>()[i] >= 0.0f);
    CHECK(r.data<float>()[i] < 1.0f);
    CHECK(r.data<float>()[i] == again.data<float>()[i]);
  }
  CHECK(ToTensor("np.random.randn(3)", DType::kDouble).shape() == Shape({3}));
  CHECK(NaturalDType(*ParseLiteral("np.arange(3)")) == DType::kInt64);
  CHECK(NaturalDType(*ParseLiteral("np.ones(3)")) == DType::kDouble);
}

TEST_CASE("np.* calls outside the subset, or whose values the input cannot hold, are refused") {
  CHECK(TensorError("np.arange(0, 1, 0.5)", DType::kInt32).find("not representable") !=
        std::string::npos);
  CHECK(TensorError("np.full(2, 300)", DType::kUInt8).find("out of range") != std::string::npos);
  CHECK(TensorError("np.ones(2)", DType::kString).find("numeric arrays") != std::string::npos);
  CHECK(TensorError("np.zeros((65536, 65536))", DType::kFloat).find("--inputs") !=
        std::string::npos);
  CHECK(TensorError("np.zeros((4294967296, 4294967296, 4))", DType::kFloat).find("more than") !=
        std::string::npos);
  CHECK(ParseError("np.eye(3)").find("not one of the np.* calls") != std::string::npos);
  CHECK(ParseError("np.ones(3).tolist()").find("not a method") != std::string::npos);
  CHECK(ParseError("np.ones((2, 3)).reshape(4)").find("cannot reshape") != std::string::npos);
  CHECK(ParseError("np.ones(6).reshape(-1, -1)").find("more than one -1") != std::string::npos);
  CHECK(ParseError("[np.ones(2)]").find("inside a list") != std::string::npos);
  CHECK(ParseError("np.ones(-1)").find("not a dimension") != std::string::npos);
  CHECK(ParseError("np.ones(2.5)").find("not a dimension") != std::string::npos);
  CHECK(ParseError("np.ones(3, dtype=np.complex64)").find("unknown dtype") != std::string::npos);
  CHECK(ParseError("np.ones(3, order='C')").find("unsupported keyword") != std::string::npos);
  CHECK(ParseError("np.full((2,))").find("takes 2 positional") != std::string::npos);
  CHECK(ParseError("np.random.rand((2, 3))").find("dimensions, not a shape") != std::string::npos);
  CHECK(ParseError("np.arange(0, 1, 0)").find("non-zero") != std::string::npos);
  CHECK(ParseError("np.ones(3").find("unbalanced '('") != std::string::npos);
  CHECK(ParseError("np.ones(3) + 1").find("unexpected '+'") != std::string::npos);
}

TEST_CASE("values the input dtype cannot hold are refused") {
  CHECK(TensorError("1.5", DType::kInt32).find("1.5 is not representable as int32") !=
        std::string::npos);
  CHECK(TensorError("3e9", DType::kInt32).find("out of range for int32") != std::string::npos);
  CHECK(TensorError("-1", DType::kUInt8).find("out of range for uint8") != std::string::npos);
  CHECK(TensorError("256", DType::kUInt8).find("out of range") != std::string::npos);
  CHECK(TensorError("1e39", DType::kFloat).find("out of range for float32") != std::string::npos);
  CHECK(TensorError("true", DType::kFloat).find("is a bool") != std::string::npos);
  CHECK(TensorError("1", DType::kBool).find("is a number") != std::string::npos);
  CHECK(TensorError("1", DType::kString).find("string") != std::string::npos);
  CHECK(TensorError("[1, 2.5]", DType::kInt32).find("2.5") != std::string::npos);
}

TEST_CASE("ragged lists are refused") {
  CHECK(TensorError("[[1,2],[3]]", DType::kFloat).find("ragged") != std::string::npos);
  CHECK(TensorError("[1,[2]]", DType::kFloat).find("ragged") != std::string::npos);
  CHECK(TensorError("[[1],2]", DType::kFloat).find("ragged") != std::string::npos);
  CHECK(TensorError("[[],[1]]", DType::kFloat).find("ragged") != std::string::npos);
}

TEST_CASE("anything that is not a literal is refused, never evaluated") {
  CHECK(ParseError("__import__('os')").find("unexpected '_'") != std::string::npos);
  CHECK(ParseError("__import__('os').system('echo hacked')").find("position 0") !=
        std::string::npos);
  CHECK(ParseError("os.system('ls')").find("unexpected word 'os.system'") != std::string::npos);
  CHECK(ParseError("np.load('x.npy')").find("not one of the np.* calls") != std::string::npos);
  CHECK(ParseError("[1, 2").find("unbalanced") != std::string::npos);
  CHECK(ParseError("[[1, 2]").find("unbalanced") != std::string::npos);
  CHECK(ParseError("[1, 2]]").find("unexpected ']'") != std::string::npos);
  CHECK(ParseError("1 2").find("unexpected '2'") != std::string::npos);
  CHECK(ParseError("").find("unexpected end") != std::string::npos);
  CHECK(ParseError("1e").find("exponent") != std::string::npos);
  CHECK(ParseError("0x10").find("in a number") != std::string::npos);
  CHECK(ParseError("(1, 2").find("unbalanced '('") != std::string::npos);
  CHECK(ParseError("{'a', 1}").find("expected ':'") != std::string::npos);  // a set
  CHECK(ParseError("[1,,2]").find("unexpected ','") != std::string::npos);
  CHECK(ParseError("99999999999999999999").find("64 bits") != std::string::npos);
  CHECK(ParseError("-").find("expected a number") != std::string::npos);
  CHECK(ParseError("[[[[[[[[[1]]]]]]]]]").find("nested deeper") != std::string::npos);
}

TEST_CASE("the --input_exprs argument: key=value pairs separated by semicolons") {
  auto r = ParseInputExprs("a=5.0;b=[[1,2],[3,4]];; c = true ");
  REQUIRE(r.ok());
  REQUIRE(r->size() == 3);
  CHECK((*r)[0].first == "a");
  CHECK((*r)[0].second.kind == Literal::Kind::kFloat);
  CHECK((*r)[1].first == "b");
  CHECK((*r)[1].second.items.size() == 2);
  CHECK((*r)[2].first == "c");
  CHECK((*r)[2].second.b == true);

  auto dup = ParseInputExprs("a=1;a=2");
  REQUIRE(dup.ok());
  REQUIRE(dup->size() == 1);
  CHECK((*dup)[0].second.i == 2);

  auto bad = ParseInputExprs("a:5");
  REQUIRE(!bad.ok());
  CHECK(bad.status().message().find("<input_key>=<value>") != std::string::npos);
  auto evil = ParseInputExprs("a=__import__('os')");
  REQUIRE(!evil.ok());
  CHECK(evil.status().message().find("input 'a'") != std::string::npos);
  CHECK(ParseInputExprs("")->empty());

  CHECK(NaturalDType(*ParseLiteral("[1, 2]")) == DType::kInt32);
  CHECK(NaturalDType(*ParseLiteral("[1, 2.5]")) == DType::kFloat);
  CHECK(NaturalDType(*ParseLiteral("true")) == DType::kBool);
}

}  // namespace
}  // namespace kiln::cli

namespace kiln::cli {
namespace {

TEST_CASE("quoted strings give string tensors, escapes are the only processing") {
  Tensor s = ToTensor("\"hello\"", DType::kString);
  CHECK(s.rank() == 0);
  CHECK(s.scalar<std::string>() == "hello");
  Tensor b = ToTensor("b'a\\'b\\n'", DType::kString);
  CHECK(b.scalar<std::string>() == "a'b\n");
  Tensor v = ToTensor("['x', \"y\"]", DType::kString);
  CHECK(v.shape() == Shape{2});
  CHECK(v.data<std::string>()[1] == "y");
  CHECK(TensorError("1", DType::kString).find("not a quoted string") != std::string::npos);
  CHECK(TensorError("'1'", DType::kInt32).find("is a string") != std::string::npos);
  CHECK(ParseError("'open").find("unterminated") != std::string::npos);
  CHECK(ParseError("'\\x41'").find("unsupported escape") != std::string::npos);
  auto lit = ParseLiteral("'a'");
  REQUIRE(lit.ok());
  CHECK(NaturalDType(*lit) == DType::kString);
}

}  // namespace
}  // namespace kiln::cli
