// Errors of the serialization ops: ParseTensor's type check and bad bytes, DecodeCompressed's
// bad streams and compression types, the Example and SequenceExample parsers on malformed records
// and mismatched types, and the sparse serialize ops on unsorted or inconsistent input (TF's
// messages, naming what is wrong).
#include <doctest/doctest.h>

#include <string>

#include "exec/kernel_test_util.h"

namespace kiln::exec {
namespace {

using testing::CheckError;
using testing::Make;
using testing::OpRunner;

std::string Field(int field, const std::string& bytes) {
  return std::string(1, static_cast<char>(field << 3 | 2)) +
         std::string(1, static_cast<char>(bytes.size())) + bytes;
}

TEST_CASE("ParseTensor checks out_type and the bytes") {
  // A float32 scalar 1.5 in tensor_content.
  const std::string f = std::string("\x08\x01\x12\x00\x22\x04\x00\x00\xc0\x3f", 10);
  auto ok =
      OpRunner("ParseTensor").Type("out_type", DType::kFloat).Input(Tensor::StringScalar(f)).Run1();
  REQUIRE(ok.ok());
  CHECK(ok->data<float>()[0] == 1.5f);
  auto wrong =
      OpRunner("ParseTensor").Type("out_type", DType::kInt32).Input(Tensor::StringScalar(f)).Run1();
  CheckError(wrong.status(), {"Type mismatch", "float", "int32"});
  auto garbage = OpRunner("ParseTensor")
                     .Type("out_type", DType::kFloat)
                     .Input(Tensor::StringScalar("\xff\xff"))
                     .Run1();
  CheckError(garbage.status(), {"`serialized`", "TensorProto"});
  // Two elements declared, one element of bytes.
  const std::string short_content =
      std::string("\x08\x01\x12\x04\x12\x02\x08\x02\x22\x04\x00\x00\xc0\x3f", 14);
  auto bad = OpRunner("ParseTensor")
                 .Type("out_type", DType::kFloat)
                 .Input(Tensor::StringScalar(short_content))
                 .Run1();
  CheckError(bad.status(), {"tensor_content"});
}

TEST_CASE("DecodeCompressed refuses bad streams and unknown compressions") {
  auto garbage = OpRunner("DecodeCompressed")
                     .String("compression_type", "ZLIB")
                     .Input(Make<std::string>({"garbage"}, Shape{1}))
                     .Run1();
  CheckError(garbage.status(), {"inflate() failed", "incorrect header check"});
  auto lz = OpRunner("DecodeCompressed")
                .String("compression_type", "LZ4")
                .Input(Make<std::string>({"x"}, Shape{1}))
                .Run1();
  CheckError(lz.status(), {"attr 'compression_type'", "LZ4", "ZLIB, GZIP"});
}

// ParseSequenceExampleV2 with one context sparse feature "k" of type `t`.
OpRunner SparseContextParse(DType t, const std::string& record) {
  auto keys = [](const std::vector<std::string>& k) {
    const auto n = static_cast<int64_t>(k.size());
    return Make<std::string>(k, Shape{n});
  };
  OpRunner r("ParseSequenceExampleV2");
  r.Int("Ncontext_sparse", 1)
      .TypeList("context_sparse_types", {t})
      .Input(Make<std::string>({record}, Shape{1}))
      .Input(Tensor(DType::kString, Shape{0}))
      .Input(keys({"k"}));
  for (int i = 0; i < 5; ++i) r.Input(Tensor(DType::kString, Shape{0}));
  r.Input(Tensor(DType::kBool, Shape{0}));
  return r;
}

TEST_CASE("the SequenceExample parsers name malformed records and type mismatches") {
  // context { feature { key: "k" value { float_list { value: [] } } } }
  const std::string floats = Field(1, Field(1, Field(1, "k") + Field(2, Field(2, ""))));
  auto ok = SparseContextParse(DType::kFloat, floats).Run();
  REQUIRE(ok.ok());
  CHECK((*ok)[1].NumElements() == 0);
  auto mismatch = SparseContextParse(DType::kInt64, floats).Run();
  CheckError(mismatch.status(), {"Context feature: k", "Data types don't match", "int64"});
  auto truncated = SparseContextParse(DType::kFloat, floats.substr(0, floats.size() - 2)).Run();
  CheckError(truncated.status(), {"Invalid protocol message input", "<unknown>"});
}

// ParseExampleV2 over `records` with a float feature "x" (shape [], default `dflt`: none makes
// it required) and an int64 VarLen feature "v".
OpRunner ParseXV(const std::vector<std::string>& records,
                 const Tensor& dflt = Make<float>({0.f}, Shape{})) {
  const auto n = static_cast<int64_t>(records.size());
  OpRunner r("ParseExampleV2");
  r.Int("num_sparse", 1)
      .TypeList("sparse_types", {DType::kInt64})
      .TypeList("Tdense", {DType::kFloat})
      .ShapeListAttr("dense_shapes", {PartialShape::Scalar()})
      .TypeList("ragged_value_types", {})
      .TypeList("ragged_split_types", {})
      .Input(Make<std::string>(records, Shape{n}))
      .Input(Tensor(DType::kString, Shape{0}))
      .Input(Make<std::string>({"v"}, Shape{1}))
      .Input(Make<std::string>({"x"}, Shape{1}))
      .Input(Tensor(DType::kString, Shape{0}))
      .Input(dflt);
  return r;
}

// ParseSingleExample of `record` with a required float feature "x" (shape []).
OpRunner ParseSingleX(const std::string& record) {
  OpRunner r("ParseSingleExample");
  r.Int("num_sparse", 0)
      .StringList("sparse_keys", {})
      .StringList("dense_keys", {"x"})
      .TypeList("sparse_types", {})
      .TypeList("Tdense", {DType::kFloat})
      .ShapeListAttr("dense_shapes", {PartialShape::Scalar()})
      .Input(Tensor::StringScalar(record))
      .Input(Tensor(DType::kFloat, Shape{0}));
  return r;
}

TEST_CASE("the Example parsers word malformed records as TF does") {
  // features { feature { key: k value { float_list: <list> } } }
  auto record = [](const std::string& k, const std::string& list) {
    return Field(1, Field(1, Field(1, k) + Field(2, Field(2, list))));
  };
  const std::string one = record("x", std::string("\x0d\x00\x00\x80\x3f", 5));  // [1.0]
  auto ok = ParseXV({"", one}).Run();
  REQUIRE_MESSAGE(ok.ok(), ok.status().ToString());
  CHECK((*ok)[3].data<float>()[1] == 1.f);
  // Bytes that are no Example: TF's "Could not parse example input", the record quoted.
  auto garbage = ParseXV({"", "garbage"}).Run();
  CheckError(garbage.status(), {"Could not parse example input, value: 'garbage'"});
  // A long record is cut in the message, its size given.
  auto long_garbage = ParseXV({std::string(5000, 'g')}).Run();
  CheckError(long_garbage.status(), {"Could not parse example input, value: 'ggg", "(5000 bytes)"});
  CHECK(long_garbage.status().message().size() < 1200);
  // Binary bytes are escaped, not echoed raw into a terminal or a log.
  auto binary = ParseXV({std::string("\x0a\xff'\\z", 5)}).Run();
  CheckError(binary.status(), {"value: '\\x0a\\xff\\'\\\\z'"});
  // A wanted feature's list that is malformed (a varint where floats go): named by key and
  // record in a batch, by key and list alone for a single record.
  const std::string bad_list = record("x", std::string("\x08\x01", 2));
  auto bad = ParseXV({"", bad_list}).Run();
  CheckError(bad.status(), {"Name: <unknown>, Key: x, Index: 1.  Can't parse serialized Example."});
  auto bad_single = ParseSingleX(bad_list).Run();
  CheckError(bad_single.status(),
             {"Key: x.  Can't parse serialized Example: Parsing float_list failed."});
  // A malformed list of a feature nobody asked for is not read, as in TF.
  CHECK(ParseXV({record("other", std::string("\x08\x01", 2))}).Run().ok());
  // A required feature missing: TF's batch and single-record words.
  auto missing = ParseXV({one, ""}, Tensor(DType::kFloat, Shape{0})).Run();
  CheckError(
      missing.status(),
      {"Name: <unknown>, Feature: x (data type: float) is required but could not be found."});
  auto missing_single = ParseSingleX("").Run();
  CheckError(missing_single.status(), {"node': Feature: x (data type: float) is required"});
}

TEST_CASE("the sparse serialize ops refuse unsorted and inconsistent input") {
  auto unsorted = OpRunner("SerializeManySparse")
                      .T(DType::kFloat)
                      .Input(Make<int64_t>({1, 0, 0, 1}, Shape{2, 2}))
                      .Input(Make<float>({1, 2}, Shape{2}))
                      .Input(Make<int64_t>({2, 2}, Shape{2}))
                      .Run1();
  CheckError(unsorted.status(), {"indices[1] = [0,1]", "out of order"});
  auto outside = OpRunner("SerializeManySparse")
                     .T(DType::kFloat)
                     .Input(Make<int64_t>({0, 5}, Shape{1, 2}))
                     .Input(Make<float>({1}, Shape{1}))
                     .Input(Make<int64_t>({2, 2}, Shape{2}))
                     .Run1();
  CheckError(outside.status(), {"indices[0] = [0,5]", "out of bounds"});
  auto rank1 = OpRunner("SerializeManySparse")
                   .T(DType::kFloat)
                   .Input(Make<int64_t>({0}, Shape{1, 1}))
                   .Input(Make<float>({1}, Shape{1}))
                   .Input(Make<int64_t>({2}, Shape{1}))
                   .Run1();
  CheckError(rank1.status(), {"Rank of input SparseTensor should be > 1"});
  auto one = OpRunner("SerializeSparse")
                 .T(DType::kFloat)
                 .Input(Make<int64_t>({0, 1}, Shape{1, 2}))
                 .Input(Make<float>({1}, Shape{1}))
                 .Input(Make<int64_t>({2, 2}, Shape{2}))
                 .Run1();
  REQUIRE(one.ok());
  auto as_int = OpRunner("DeserializeSparse").Type("dtype", DType::kInt32).Input(*one).Run();
  CheckError(as_int.status(), {"Requested SparseTensor of type int32", "float"});
  auto no_triple = OpRunner("DeserializeSparse")
                       .Type("dtype", DType::kFloat)
                       .Input(Make<std::string>({"a", "b"}, Shape{2}))
                       .Run();
  CheckError(no_triple.status(), {"3 as the last dimension"});
  auto variant = OpRunner("SerializeSparse")
                     .T(DType::kFloat)
                     .Type("out_type", DType::kVariant)
                     .Input(Make<int64_t>({0, 1}, Shape{1, 2}))
                     .Input(Make<float>({1}, Shape{1}))
                     .Input(Make<int64_t>({2, 2}, Shape{2}))
                     .Run1();
  CheckError(variant.status(), {"attr 'out_type'", "variant"});
}

}  // namespace
}  // namespace kiln::exec
