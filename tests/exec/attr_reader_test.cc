// AttrReader, TensorSpec::ToString, PrepareContext input checks and the default print sink.
#include <doctest/doctest.h>

#include "core/native_attrs.h"
#include "exec/kernel_test_util.h"

namespace kiln::exec {
namespace {

using testing::CheckError;

class Attrs {
 public:
  tensorflow::AttrValue& operator[](const std::string& name) { return map_[name]; }
  AttrReader reader() const { return AttrReader(&map_); }

 private:
  ProtoAttrMap map_;
};

TEST_CASE("AttrReader reads every kind, with defaults for missing attrs") {
  Attrs a;
  a["t"].set_type(tensorflow::DT_INT64);
  a["i"].set_i(-7);
  a["f"].set_f(0.25f);
  a["b"].set_b(true);
  a["s"].set_s("hello");
  a["il"].mutable_list()->add_i(3);
  a["il"].mutable_list()->add_i(4);
  a["tl"].mutable_list()->add_type(tensorflow::DT_FLOAT);
  a["tl"].mutable_list()->add_type(tensorflow::DT_STRING);
  a["sl"].mutable_list()->add_s("x");
  PartialShapeToProto(PartialShape{-1, 3}, a["shape"].mutable_shape());
  PartialShapeToProto(PartialShape{2}, a["shl"].mutable_list()->add_shape());
  a["fn"].mutable_func()->set_name("body_fn");
  a["empty"].mutable_list();
  REQUIRE(TensorToProto(Tensor::Scalar<int32_t>(5), a["tensor"].mutable_tensor()).ok());
  AttrReader r = a.reader();

  CHECK(*r.GetType("t") == DType::kInt64);
  CHECK(*r.GetType("missing", DType::kBool) == DType::kBool);
  CHECK(*r.GetInt("i") == -7);
  CHECK(*r.GetInt("missing", 9) == 9);
  CHECK(*r.GetFloat("f", 1) == 0.25f);
  CHECK(*r.GetFloat("missing", 1.5f) == 1.5f);
  CHECK(*r.GetBool("b", false) == true);
  CHECK(*r.GetBool("missing", true) == true);
  CHECK(*r.GetString("s") == "hello");
  CHECK(*r.GetString("missing", "dflt") == "dflt");
  CHECK(*r.GetIntList("il") == std::vector<int64_t>{3, 4});
  CHECK(*r.GetIntList("missing", {1}) == std::vector<int64_t>{1});
  CHECK(*r.GetTypeList("tl") == std::vector<DType>{DType::kFloat, DType::kString});
  CHECK(r.GetTypeList("empty")->empty());
  CHECK(*r.GetStringList("sl") == std::vector<std::string>{"x"});
  CHECK(*r.GetShape("shape") == PartialShape({-1, 3}));
  CHECK(r.GetShape("missing", PartialShape::UnknownRank())->unknown_rank());
  CHECK(*r.GetShapeList("shl") == std::vector<PartialShape>{PartialShape{2}});
  CHECK(*r.GetFunctionName("fn") == "body_fn");
  CHECK(TensorsEqual(*r.GetTensor("tensor"), Tensor::Scalar<int32_t>(5)));
  CHECK(r.Has("i"));
  CHECK_FALSE(r.Has("missing"));
  CHECK(r.Find("missing") == nullptr);
}

TEST_CASE("AttrReader errors name the attr and the expected type") {
  Attrs a;
  a["i"].set_i(1);
  a["s"].set_s("x");
  a["ph"].set_placeholder("T");
  a["bad_type"].set_type(static_cast<tensorflow::DataType>(999));
  AttrReader r = a.reader();
  CheckError(r.GetType("i").status(), {"attr 'i'", "expected type", "got int"});
  CheckError(r.GetInt("s").status(), {"attr 's'", "expected int", "got string"});
  CheckError(r.GetBool("i", false).status(), {"attr 'i'", "expected bool", "got int"});
  CheckError(r.GetFloat("s", 0).status(), {"attr 's'", "expected float"});
  CheckError(r.GetShape("i").status(), {"attr 'i'", "expected shape"});
  CheckError(r.GetTensor("s").status(), {"attr 's'", "expected tensor"});
  CheckError(r.GetTypeList("i").status(), {"attr 'i'", "expected list(type)", "got int"});
  CheckError(r.GetFunctionName("s").status(), {"attr 's'", "expected func"});
  CheckError(r.GetString("ph").status(), {"attr 'ph'", "placeholder 'T'"});
  CheckError(r.GetType("bad_type").status(), {"attr 'bad_type'", "999"});
  CheckError(r.GetType("nope").status(), {"missing attr 'nope'", "type"});
  CheckError(r.GetString("nope").status(), {"missing attr 'nope'"});
  CheckError(r.GetIntList("nope").status(), {"missing attr 'nope'"});

  AttrReader none;
  CHECK_FALSE(none.Has("x"));
  CHECK(*none.GetInt("x", 4) == 4);
  CheckError(none.GetInt("x").status(), {"missing attr 'x'"});
}

TEST_CASE("TensorSpec::ToString") {
  CHECK(TensorSpec{DType::kFloat, PartialShape{-1, 784}}.ToString() ==
        "TensorSpec(shape=(None, 784), dtype=float32)");
  CHECK(TensorSpec{DType::kInt32, PartialShape::Scalar()}.ToString() ==
        "TensorSpec(shape=(), dtype=int32)");
  CHECK(TensorSpec{DType::kString, PartialShape{3}}.ToString() ==
        "TensorSpec(shape=(3,), dtype=string)");
  CHECK(TensorSpec{DType::kFloat, PartialShape{-1, 784}} ==
        TensorSpec{DType::kFloat, PartialShape{-1, 784}});
  CHECK_FALSE(TensorSpec{DType::kFloat, PartialShape{3}} ==
              TensorSpec{DType::kDouble, PartialShape{3}});
}

TEST_CASE("PrepareContext::ExpectInputs names the node and the counts") {
  PrepareContext ctx;
  ctx.node_name = "n1";
  ctx.op = "Foo";
  ctx.inputs.resize(2);
  CHECK(ctx.ExpectInputs(2).ok());
  CheckError(ctx.ExpectInputs(3), {"node 'n1' (Foo)", "expected 3 inputs", "got 2"});
  CheckError(ctx.ExpectInputs(1), {"expected 1 input,", "got 2"});
  CHECK(ctx.ExpectInputsAtLeast(1).ok());
  CHECK(ctx.ExpectInputsAtLeast(2).ok());
  CheckError(ctx.ExpectInputsAtLeast(3), {"node 'n1'", "at least 3 inputs", "got 2"});
}

TEST_CASE("SetDefaultPrintSink replaces the process-wide sink, and an empty one restores it") {
  std::vector<std::string> seen;
  SetDefaultPrintSink([&](std::string_view stream, std::string_view text) {
    seen.push_back(std::string(stream) + ":" + std::string(text));
  });
  DefaultPrintSink()("stdout", "hi\n");
  SetDefaultPrintSink(nullptr);
  REQUIRE(seen.size() == 1);
  CHECK(seen[0] == "stdout:hi\n");
  REQUIRE(static_cast<bool>(DefaultPrintSink()));
  DefaultPrintSink()("stderr", "");  // the process default: writes nothing visible here
  CHECK(seen.size() == 1);
}

NativeAttr Native(std::string name, NativeAttr::Kind kind) {
  NativeAttr a;
  a.name = std::move(name);
  a.kind = kind;
  return a;
}

TEST_CASE("AttrReader reads a serving plan's native attrs as it reads protobuf ones") {
  using Kind = NativeAttr::Kind;
  const Tensor five = Tensor::Scalar<int32_t>(5);
  std::vector<NativeAttr> v;
  v.push_back(Native("t", Kind::kType));
  v.back().type = 9;  // DT_INT64
  v.push_back(Native("i", Kind::kInt));
  v.back().i = -7;
  v.push_back(Native("f", Kind::kFloat));
  v.back().f = 0.25f;
  v.push_back(Native("b", Kind::kBool));
  v.back().b = true;
  v.push_back(Native("s", Kind::kString));
  v.back().s = "hello";
  v.push_back(Native("il", Kind::kList));
  v.back().ints = {3, 4};
  v.push_back(Native("fl", Kind::kList));
  v.back().floats = {0.5f, 1.5f};
  v.push_back(Native("tl", Kind::kList));
  v.back().types = {1, 7};
  v.push_back(Native("shape", Kind::kShape));
  v.back().shape = PartialShape{-1, 3};
  v.push_back(Native("fn", Kind::kFunc));
  v.back().s = "body_fn";
  v.push_back(Native("fns", Kind::kList));
  v.back().strings = {"then_fn", "else_fn"};
  v.push_back(Native("none", Kind::kNone));
  v.push_back(Native("tensor", Kind::kTensor));
  v.back().tensor = &five;
  v.push_back(Native("bad_type", Kind::kType));
  v.back().type = 999;
  const NativeAttrMap map(std::move(v));
  const AttrReader r(&map);

  CHECK(*r.GetType("t") == DType::kInt64);
  CHECK(*r.GetInt("i") == -7);
  CHECK(*r.GetInt("missing", 9) == 9);
  CHECK(*r.GetFloat("f", 1) == 0.25f);
  CHECK(*r.GetBool("b", false) == true);
  CHECK(*r.GetString("s") == "hello");
  CHECK(*r.GetIntList("il") == std::vector<int64_t>{3, 4});
  CHECK(*r.GetFloatList("fl") == std::vector<float>{0.5f, 1.5f});
  CHECK(*r.GetTypeList("tl") == std::vector<DType>{DType::kFloat, DType::kString});
  CHECK(r.GetTypeList("none")->empty());  // an empty list may be stored as no value
  CHECK(*r.GetShape("shape") == PartialShape({-1, 3}));
  CHECK(*r.GetFunctionName("fn") == "body_fn");
  CHECK(*r.GetFunctionNameList("fns") == std::vector<std::string>{"then_fn", "else_fn"});
  CHECK(TensorsEqual(*r.GetTensor("tensor"), five));
  CHECK(r.Has("i"));
  CHECK_FALSE(r.Has("missing"));
  CHECK(r.Find("i") == nullptr);  // no protobuf value behind native attrs

  // The same errors, in the same words, as for protobuf attrs.
  CheckError(r.GetType("i").status(), {"attr 'i'", "expected type", "got int"});
  CheckError(r.GetInt("s").status(), {"attr 's'", "expected int", "got string"});
  CheckError(r.GetTypeList("i").status(), {"attr 'i'", "expected list(type)", "got int"});
  CheckError(r.GetFloatList("s").status(), {"attr 's'", "expected list(float)", "got string"});
  CheckError(r.GetFunctionName("s").status(), {"attr 's'", "expected func"});
  CheckError(r.GetType("bad_type").status(), {"attr 'bad_type'", "999"});
  CheckError(r.GetInt("nope").status(), {"missing attr 'nope'", "int"});
  CheckError(r.GetFunctionNameList("nope").status(), {"missing attr 'nope'", "list(func)"});
}

TEST_CASE("AttrReader reads float and function lists of protobuf attrs") {
  Attrs a;
  a["fl"].mutable_list()->add_f(0.5f);
  a["fns"].mutable_list()->add_func()->set_name("b0");
  a["fns"].mutable_list()->add_func()->set_name("b1");
  a["i"].set_i(1);
  AttrReader r = a.reader();
  CHECK(*r.GetFloatList("fl") == std::vector<float>{0.5f});
  CHECK(*r.GetFunctionNameList("fns") == std::vector<std::string>{"b0", "b1"});
  CheckError(r.GetFloatList("i").status(), {"attr 'i'", "expected list(float)", "got int"});
  CheckError(r.GetFloatList("nope").status(), {"missing attr 'nope'", "list(float)"});
}

}  // namespace
}  // namespace kiln::exec
