// RestoreV2 through the op table: prepare (attrs, input specs) and the CPU kernel, called the
// way the executor calls them.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "exec/test_util.h"
#include "kiln/exec/op_runner.h"
#include "kiln/exec/op_table.h"
#include "kiln/exec/tensor_bundle.h"
#include "tensorflow/framework.pb.h"

namespace kiln::exec {
namespace {

using kiln::testing::Fixture;

const std::string kPrefix =
    (Fixture("VarsAndArithmeticObjectGraph") / "variables" / "variables").string();

struct RestoreRun {
  Status prepare;
  Status compute;
  std::vector<TensorSpec> specs;
  std::vector<Tensor> outputs;
};

Tensor Strings(std::vector<std::string> v) {
  auto t = Tensor::FromVector<std::string>(v, Shape{static_cast<int64_t>(v.size())});
  REQUIRE(t.ok());
  return *t;
}

// Prepares and runs one RestoreV2 node. Constant inputs are offered to prepare when
// `constants` is set, as the executor does for Const inputs.
RestoreRun RunRestore(const std::string& prefix, std::vector<std::string> names,
                      std::vector<std::string> slices, std::vector<DType> dtypes,
                      bool constants = false) {
  RestoreRun run;
  tensorflow::NodeDef node;
  auto* list = (*node.mutable_attr())["dtypes"].mutable_list();
  for (DType t : dtypes) list->add_type(static_cast<tensorflow::DataType>(static_cast<int>(t)));

  std::vector<Tensor> inputs = {Tensor::StringScalar(prefix), Strings(names), Strings(slices)};
  const std::vector<TensorSpec> specs = {
      TensorSpec{DType::kString, Shape()},
      TensorSpec{DType::kString, Shape{static_cast<int64_t>(names.size())}},
      TensorSpec{DType::kString, Shape{static_cast<int64_t>(slices.size())}}};
  const std::vector<const Tensor*> values = {nullptr, constants ? &inputs[1] : nullptr,
                                             constants ? &inputs[2] : nullptr};
  auto op = SingleOp::Prepare("RestoreV2", "restore", node.attr(), specs, values);
  run.prepare = op.status();
  if (!op.ok()) return run;
  run.specs = op->output_specs();
  auto outputs = op->Run(inputs);
  run.compute = outputs.status();
  if (outputs.ok()) run.outputs = *outputs;
  return run;
}

TEST_CASE("RestoreV2: is a stateful op with one list output") {
  const OpDefinition* def = FindOp("RestoreV2");
  REQUIRE(def != nullptr);
  CHECK((def->flags & kOpStateful) != 0);
  CHECK(def->output_args == "tensors");
}

TEST_CASE("RestoreV2: restores the fixture's variables and object graph") {
  RestoreRun run =
      RunRestore(kPrefix,
                 {"x/.ATTRIBUTES/VARIABLE_VALUE", "child/z/.ATTRIBUTES/VARIABLE_VALUE",
                  "_CHECKPOINTABLE_OBJECT_GRAPH"},
                 {"", "", ""}, {DType::kFloat, DType::kFloat, DType::kString}, /*constants=*/true);
  REQUIRE_MESSAGE(run.prepare.ok(), run.prepare.ToString());
  REQUIRE(run.specs.size() == 3);
  CHECK(run.specs[0].dtype == DType::kFloat);
  CHECK(run.specs[2].dtype == DType::kString);
  REQUIRE_MESSAGE(run.compute.ok(), run.compute.ToString());
  CHECK(run.outputs[0].scalar<float>() == 1.0f);
  CHECK(run.outputs[1].scalar<float>() == 3.0f);
  CHECK(run.outputs[2].scalar<std::string>().size() == 250);
}

TEST_CASE("RestoreV2: a dtype that differs from the checkpoint names the key") {
  RestoreRun run = RunRestore(kPrefix, {"y/.ATTRIBUTES/VARIABLE_VALUE"}, {""}, {DType::kInt32});
  REQUIRE(run.prepare.ok());
  REQUIRE(!run.compute.ok());
  CHECK(run.compute.message().find("y/.ATTRIBUTES/VARIABLE_VALUE") != std::string::npos);
  CHECK(run.compute.message().find("int32") != std::string::npos);
  CHECK(run.compute.message().find("float32") != std::string::npos);
}

TEST_CASE("RestoreV2: a slice spec reads a block of a whole entry, bad specs are named") {
  kiln::testing::TempDir dir;
  const std::string prefix = (dir.path() / "ckpt").string();
  Tensor m(DType::kFloat, Shape{4, 3});
  for (int i = 0; i < 12; ++i) m.data<float>()[i] = static_cast<float>(i);
  BundleWriter w(prefix);
  REQUIRE(w.Add("m", m).ok());
  REQUIRE(w.Finish().ok());
  RestoreRun rows = RunRestore(prefix, {"m", "m"}, {"4 3 1,2:0,3", "4 3 -:1,1"},
                               {DType::kFloat, DType::kFloat}, /*constants=*/true);
  REQUIRE_MESSAGE(rows.prepare.ok(), rows.prepare.ToString());
  REQUIRE_MESSAGE(rows.compute.ok(), rows.compute.ToString());
  CHECK(rows.outputs[0].shape() == Shape{2, 3});
  CHECK(std::vector<float>(rows.outputs[0].data<float>(), rows.outputs[0].data<float>() + 6) ==
        std::vector<float>{3, 4, 5, 6, 7, 8});
  CHECK(rows.outputs[1].shape() == Shape{4, 1});
  CHECK(std::vector<float>(rows.outputs[1].data<float>(), rows.outputs[1].data<float>() + 4) ==
        std::vector<float>{1, 4, 7, 10});
  const std::pair<const char*, const char*> bad[] = {
      {"5 3 0,1:-", "is not the stored (4, 3)"},
      {"4 3 3,2:-", "does not fit dimension 0"},
      {"4 3 0,1", "1 extents for 2 dimensions"},
      {"4 3 x,1:-", "not an integer"},
  };
  for (const auto& [spec, why] : bad) {
    RestoreRun r = RunRestore(prefix, {"m"}, {spec}, {DType::kFloat});
    REQUIRE(r.prepare.ok());
    REQUIRE_FALSE(r.compute.ok());
    CHECK_MESSAGE(r.compute.message().find(why) != std::string::npos, r.compute.message());
  }
}

TEST_CASE("RestoreV2: missing keys, missing bundles and count mismatches are errors") {
  RestoreRun no_key = RunRestore(kPrefix, {"w/.ATTRIBUTES/VARIABLE_VALUE"}, {""}, {DType::kFloat});
  REQUIRE(no_key.prepare.ok());
  CHECK(no_key.compute.code() == StatusCode::kNotFound);
  CHECK(no_key.compute.message().find("w/.ATTRIBUTES/VARIABLE_VALUE") != std::string::npos);

  RestoreRun no_bundle = RunRestore("/nonexistent/variables", {"x"}, {""}, {DType::kFloat});
  REQUIRE(no_bundle.prepare.ok());
  CHECK(no_bundle.compute.code() == StatusCode::kNotFound);
  CHECK(no_bundle.compute.message().find("/nonexistent/variables.index") != std::string::npos);

  RestoreRun count = RunRestore(kPrefix, {"a", "b"}, {"", ""}, {DType::kFloat});
  CHECK(count.prepare.code() == StatusCode::kInvalidArgument);
  CHECK(count.prepare.message().find("tensor_names") != std::string::npos);
}

}  // namespace
}  // namespace kiln::exec
