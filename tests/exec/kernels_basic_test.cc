// Basic kernels (Const, Placeholder, identities, NoOp) and the op table itself.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "exec/kernel_test_util.h"

namespace kiln::exec {
namespace {

using testing::CheckError;
using testing::Make;
using testing::OpRunner;

TEST_CASE("Const outputs its value attr") {
  Tensor value = Make<float>({1.5f, -2, 3}, {3});
  OpRunner r("Const", "c");
  r.Type("dtype", DType::kFloat).TensorAttr("value", value);
  auto got = r.Run1();
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  CHECK(TensorsEqual(*got, value));
  CHECK(r.output_specs()[0] == TensorSpec{DType::kFloat, PartialShape{3}});

  auto s = OpRunner("Const")
               .Type("dtype", DType::kString)
               .TensorAttr("value", Tensor::StringScalar("hi"))
               .Run1();
  REQUIRE(s.ok());
  CHECK(TensorsEqual(*s, Tensor::StringScalar("hi")));
}

TEST_CASE("Const: prepare errors") {
  OpRunner mismatch("Const", "c");
  mismatch.Type("dtype", DType::kInt32).TensorAttr("value", Make<float>({1}, {1}));
  CheckError(mismatch.Prepare(), {"node 'c'", "attr 'value'", "float32", "'dtype' is int32"});
  OpRunner missing("Const", "c");
  missing.Type("dtype", DType::kInt32);
  CheckError(missing.Prepare(), {"node 'c'", "missing attr 'value'"});
  OpRunner wrong_kind("Const");
  wrong_kind.Type("dtype", DType::kInt32).Int("value", 3);
  CheckError(wrong_kind.Prepare(), {"attr 'value'", "expected tensor", "got int"});
  OpRunner inputs("Const");
  inputs.Type("dtype", DType::kInt32)
      .TensorAttr("value", Tensor::Scalar<int32_t>(1))
      .InputSpec({DType::kInt32, Shape{}});
  CheckError(inputs.Prepare(), {"expected 0 inputs", "got 1"});
}

TEST_CASE("Placeholder: spec from attrs, running it unfed fails") {
  OpRunner r("Placeholder", "images");
  r.Type("dtype", DType::kFloat).ShapeAttr("shape", PartialShape{-1, 784});
  REQUIRE(r.Prepare().ok());
  CHECK(r.output_specs()[0] == TensorSpec{DType::kFloat, PartialShape{-1, 784}});
  CheckError(r.Run1().status(), {"placeholder 'images' was not fed"});

  OpRunner no_shape("Placeholder");
  no_shape.Type("dtype", DType::kInt32);
  REQUIRE(no_shape.Prepare().ok());
  CHECK(no_shape.output_specs()[0].shape.unknown_rank());
  OpRunner no_dtype("Placeholder");
  CheckError(no_dtype.Prepare(), {"missing attr 'dtype'"});
}

TEST_CASE("Identity and StopGradient pass the input through, Snapshot copies") {
  Tensor x = Make<int32_t>({1, 2, 3, 4}, {2, 2});
  for (const char* op : {"Identity", "StopGradient", "Snapshot"}) {
    CAPTURE(op);
    OpRunner r(op);
    r.T(DType::kInt32).Input(x, {DType::kInt32, PartialShape{-1, 2}});
    auto got = r.Run1();
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    CHECK(TensorsEqual(*got, x));
    CHECK(r.output_specs()[0] == TensorSpec{DType::kInt32, PartialShape{-1, 2}});
    CHECK(got->SharesBufferWith(x) == (std::string(op) != "Snapshot"));
  }
  Tensor s = Make<std::string>({"a", "b"}, {2});
  auto snap = OpRunner("Snapshot").T(DType::kString).Input(s).Run1();
  REQUIRE(snap.ok());
  CHECK(TensorsEqual(*snap, s));

  OpRunner wrong("Identity", "id");
  wrong.T(DType::kFloat).InputSpec({DType::kInt32, Shape{}});
  CheckError(wrong.Prepare(),
             {"node 'id'", "input 'input'", "expected dtype float32", "got int32"});
  OpRunner missing("Identity");
  missing.InputSpec({DType::kInt32, Shape{}});
  CheckError(missing.Prepare(), {"missing attr 'T'"});
}

TEST_CASE("IdentityN passes every input through") {
  Tensor a = Make<float>({1, 2}, {2});
  Tensor b = Tensor::StringScalar("s");
  Tensor c = Make<int64_t>({7}, {1, 1});
  OpRunner r("IdentityN");
  r.TypeList("T", {DType::kFloat, DType::kString, DType::kInt64}).Input(a).Input(b).Input(c);
  auto got = r.Run();
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  REQUIRE(got->size() == 3);
  CHECK(TensorsEqual((*got)[0], a));
  CHECK(TensorsEqual((*got)[1], b));
  CHECK(TensorsEqual((*got)[2], c));
  REQUIRE(r.output_specs().size() == 3);
  CHECK(r.output_specs()[1] == TensorSpec{DType::kString, PartialShape::Scalar()});

  OpRunner count("IdentityN");
  count.TypeList("T", {DType::kFloat, DType::kFloat}).InputSpec({DType::kFloat, Shape{}});
  CheckError(count.Prepare(), {"expected 2 inputs", "got 1"});
  OpRunner types("IdentityN");
  types.TypeList("T", {DType::kFloat, DType::kFloat})
      .InputSpec({DType::kFloat, Shape{}})
      .InputSpec({DType::kBool, Shape{}});
  CheckError(types.Prepare(), {"input:1", "expected dtype float32", "got bool"});
  OpRunner kind("IdentityN");
  kind.Type("T", DType::kFloat).InputSpec({DType::kFloat, Shape{}});
  CheckError(kind.Prepare(), {"attr 'T'", "expected list(type)", "got type"});
}

TEST_CASE("NoOp has no inputs and no outputs") {
  OpRunner r("NoOp");
  auto got = r.Run();
  REQUIRE(got.ok());
  CHECK(got->empty());
  OpRunner bad("NoOp");
  bad.InputSpec({DType::kFloat, Shape{}});
  CheckError(bad.Prepare(), {"expected 0 inputs"});
}

// ---- the op table ----------------------------------------------------------------------------

TEST_CASE("every op in the table has a CPU kernel, a prepare function and a unique name") {
  std::set<std::string_view> names;
  REQUIRE(AllOps().size() > 40);
  for (const OpDefinition& def : AllOps()) {
    CAPTURE(def.name);
    CHECK(static_cast<bool>(def.prepare != nullptr));
    CHECK(static_cast<bool>(FindCpuKernel(def.name) != nullptr));
    CHECK(FindOp(def.name) == &def);
    CHECK(names.insert(def.name).second);
  }
  for (const char* op : {"Const",
                         "Placeholder",
                         "Identity",
                         "IdentityN",
                         "NoOp",
                         "StopGradient",
                         "Snapshot",
                         "AddV2",
                         "Add",
                         "Sub",
                         "Mul",
                         "RealDiv",
                         "Maximum",
                         "Minimum",
                         "Neg",
                         "Abs",
                         "Square",
                         "Sqrt",
                         "Exp",
                         "Log",
                         "Tanh",
                         "Sigmoid",
                         "MatMul",
                         "Cast",
                         "BiasAdd",
                         "Relu",
                         "Relu6",
                         "Elu",
                         "Softmax",
                         "LogSoftmax",
                         "StringFormat",
                         "PrintV2",
                         "StringJoin",
                         "VarHandleOp",
                         "ReadVariableOp",
                         "AssignVariableOp",
                         "AssignAddVariableOp",
                         "AssignSubVariableOp",
                         "VarIsInitializedOp",
                         "DestroyResourceOp"}) {
    CAPTURE(op);
    CHECK(FindOp(op) != nullptr);
  }
  CHECK(FindOp("NoSuchOp") == nullptr);
  CHECK(FindOp("") == nullptr);
  CHECK(static_cast<bool>(FindCpuKernel("NoSuchOp") == nullptr));
}

TEST_CASE("output arg names follow TensorFlow's OpDefs") {
  auto args = [](const char* op) {
    const OpDefinition* def = FindOp(op);
    REQUIRE(def != nullptr);
    return std::string(def->output_args);
  };
  CHECK(args("MatMul") == "product");
  CHECK(args("AddV2") == "z");
  CHECK(args("Neg") == "y");
  CHECK(args("Cast") == "y");
  CHECK(args("Relu") == "activations");
  CHECK(args("Softmax") == "softmax");
  CHECK(args("LogSoftmax") == "logsoftmax");
  CHECK(args("Const") == "output");
  CHECK(args("IdentityN") == "output");
  CHECK(args("ReadVariableOp") == "value");
  CHECK(args("VarHandleOp") == "resource");
  CHECK(args("VarIsInitializedOp") == "is_initialized");
  CHECK(args("NoOp") == "");
  CHECK(args("AssignVariableOp") == "");
}

TEST_CASE("FlatOutputIndex and OutputArgOf") {
  const OpDefinition* matmul = FindOp("MatMul");
  REQUIRE(matmul != nullptr);
  auto i = FlatOutputIndex(*matmul, "product", 0);
  REQUIRE(i.ok());
  CHECK(*i == 0);
  CheckError(FlatOutputIndex(*matmul, "z", 0).status(), {"MatMul", "no output arg 'z'", "product"});
  CHECK(OutputArgOf(*matmul, 0) == std::pair<std::string_view, int>("product", 0));

  // One list output: the index goes straight through.
  const OpDefinition* idn = FindOp("IdentityN");
  REQUIRE(idn != nullptr);
  CHECK(*FlatOutputIndex(*idn, "output", 2) == 2);
  CHECK(OutputArgOf(*idn, 3) == std::pair<std::string_view, int>("output", 3));

  // Several single outputs map by position (as Unique's "y,idx").
  const OpDefinition multi{"Multi", "y,idx,count", kOpNone, nullptr};
  CHECK(*FlatOutputIndex(multi, "y", 0) == 0);
  CHECK(*FlatOutputIndex(multi, "idx", 0) == 1);
  CHECK(*FlatOutputIndex(multi, "count", 0) == 2);
  CheckError(FlatOutputIndex(multi, "idx", 1).status(), {"'idx'", "index 1"});
  CheckError(FlatOutputIndex(multi, "other", 0).status(), {"no output arg 'other'"});
  CheckError(FlatOutputIndex(multi, "y", -1).status(), {"negative"});
  CHECK(OutputArgOf(multi, 0) == std::pair<std::string_view, int>("y", 0));
  CHECK(OutputArgOf(multi, 2) == std::pair<std::string_view, int>("count", 0));

  const OpDefinition* noop = FindOp("NoOp");
  REQUIRE(noop != nullptr);
  CheckError(FlatOutputIndex(*noop, "output", 0).status(), {"no output arg 'output'", "none"});
}

}  // namespace
}  // namespace kiln::exec
