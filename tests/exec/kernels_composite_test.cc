// Composite-tensor variants: metadata TF wrote (a RaggedTensorSpec's, type_state and all) read
// for its TypeSpec class, a round trip through both ops, the metadata protobuf would refuse, and
// TF's errors of CompositeTensorVariantToComponents in its words.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "kernel_test_util.h"

namespace kiln::testing {
namespace {

using namespace std::string_literals;

// What TF 2.21 puts in the metadata attr for tf.ragged.constant([[1.0, 2.0], [], [3.0]]).
const std::string kTfRagged =
    "\012\077\010\003\022'\242\003$\012\024\372\001\021\022\002\010\003\022\013\010\377\377\377"
    "\377\377\377\377\377\377\001\012\003\200\002\001\012\002`\002\012\003\200\002\011\032\020"
    "RaggedTensorSpec \002"s;
const std::string kSparse = "\x0a\x02\x08\x01"s;

Result<Tensor> From(const std::string& metadata, const std::vector<Tensor>& parts) {
  OpRunner r("CompositeTensorVariantFromComponents");
  std::vector<DType> types;
  for (const Tensor& t : parts) {
    types.push_back(t.dtype());
    r.Input(t);
  }
  return r.String("metadata", metadata).TypeList("Tcomponents", types).Run1();
}

Result<std::vector<Tensor>> To(const std::string& metadata, const Tensor& encoded,
                               const std::vector<DType>& types) {
  return OpRunner("CompositeTensorVariantToComponents")
      .String("metadata", metadata)
      .TypeList("Tcomponents", types)
      .Input(encoded)
      .Run();
}

bool Has(const Status& s, const std::string& text) {
  return std::string(s.message()).find(text) != std::string::npos;
}

TEST_CASE("CompositeTensorVariant: TF's ragged metadata, there and back") {
  const Tensor values = Make<float>({1, 2, 3}, {3});
  const Tensor splits = Make<int64_t>({0, 2, 2, 3}, {4});
  auto v = From(kTfRagged, {values, splits});
  REQUIRE_MESSAGE(v.ok(), v.status().ToString());
  const std::string shown = v->scalar<std::shared_ptr<const VariantBase>>()->DebugString();
  CHECK(shown.find("<CompositeTensorVariant type=RAGGED_TENSOR_SPEC, components=[") == 0);
  // Other metadata of the same class is accepted: TF compares only the class.
  auto parts = To("\x0a\x02\x08\x03"s, *v, {DType::kFloat, DType::kInt64});
  REQUIRE_MESSAGE(parts.ok(), parts.status().ToString());
  CheckClose<float>((*parts)[0], values);
  CheckClose<int64_t>((*parts)[1], splits);
}

TEST_CASE("CompositeTensorVariantToComponents: TF's errors") {
  auto v = From(kTfRagged, {Make<float>({1}, {1}), Make<int64_t>({0, 1}, {2})});
  REQUIRE(v.ok());
  Status s = To(kSparse, *v, {DType::kFloat, DType::kInt64}).status();
  CHECK(Has(s,
            "Expected a SPARSE_TENSOR_SPEC (based on `type_spec`), but `encoded` contains a "
            "RAGGED_TENSOR_SPEC"));
  // A class the enum does not name has no name (protobuf's TypeSpecClass_Name gives "").
  s = To("\x0a\x02\x08\x63"s, *v, {DType::kFloat, DType::kInt64}).status();
  CHECK(Has(s, "Expected a  (based on `type_spec`), but `encoded` contains a RAGGED_TENSOR_SPEC"));
  s = To(kTfRagged, *v, {DType::kInt64}).status();
  CHECK(Has(s, "Encoded value has 2 tensor components; expected 1 components based on type_spec"));
  s = To(kTfRagged, *v, {DType::kFloat, DType::kInt32}).status();
  CHECK(Has(s, "Tensor component 1 had dtype int64; expected dtype int32"));
  auto list = OpRunner("EmptyTensorMap").Run1();
  REQUIRE(list.ok());
  s = To(kTfRagged, *list, {DType::kFloat, DType::kInt64}).status();
  CHECK(Has(s, "The input `encoded` is not a valid CompositeTensorVariant tensor"));
  s = OpRunner("CompositeTensorVariantToComponents")
          .String("metadata", kTfRagged)
          .TypeList("Tcomponents", {DType::kFloat})
          .Input(Tensor(DType::kVariant, Shape{0}),
                 TensorSpec{DType::kVariant, PartialShape::UnknownRank()})
          .Run()
          .status();
  CHECK(Has(s, "Input `encoded` must not be an empty variant tensor"));
}

TEST_CASE("Optional: an empty optional's value is TF's error, a wrong variant is named") {
  auto none = OpRunner("OptionalNone").Run1();
  REQUIRE(none.ok());
  Status s = OpRunner("OptionalGetValue", "get")
                 .TypeList("output_types", {DType::kFloat})
                 .ShapeListAttr("output_shapes", {PartialShape::UnknownRank()})
                 .Input(*none)
                 .Run()
                 .status();
  CHECK(Has(s, "node 'get'"));
  CHECK(Has(s, "The optional does not have a value"));
  auto map = OpRunner("EmptyTensorMap").Run1();
  REQUIRE(map.ok());
  s = OpRunner("OptionalHasValue").Input(*map).Run().status();
  CHECK(Has(s, "expected an Optional, got"));
}

TEST_CASE("CompositeTensorVariant: metadata that does not parse as protobuf would refuse it") {
  const Tensor x = Make<float>({1}, {1});
  for (const std::string& bad : {"\x0a\x03\x08\x03"s,              // truncated message
                                 "\x0a\x02\x08"s,                  // truncated varint
                                 "\x0a\x05\x1a\x03\xff\xfe\x41"s,  // a class name not UTF-8
                                 "\x00\x01"s,                      // field number 0
                                 "\x0c"s,                          // an end group without a start
                                 "\x0f"s}) {                       // wire type 7
    CAPTURE(bad.size());
    CHECK(Has(From(bad, {x}).status(), "Error parsing metadata"));
    CHECK(Has(To(bad, Tensor(DType::kVariant, Shape{}), {DType::kFloat}).status(),
              "Error parsing `metadata`"));
  }
  // Unknown fields, groups included, are skipped; later fields override earlier ones.
  auto v = From("\x0b\x08\x01\x0c\x0a\x02\x08\x01\x0a\x02\x08\x03\x25\x01\x02\x03\x04"s, {x});
  REQUIRE_MESSAGE(v.ok(), v.status().ToString());
  CHECK(To("\x0a\x02\x08\x03"s, *v, {DType::kFloat}).ok());
}

}  // namespace
}  // namespace kiln::testing
