// Resource variables: VariableResource, ResourceManager and the variable ops.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "exec/kernel_test_util.h"
#include "kiln/exec/resources.h"

namespace kiln::exec {
namespace {

using testing::CheckError;
using testing::Make;
using testing::OpRunner;

using Handle = std::shared_ptr<ResourceBase>;

// Runs VarHandleOp for `shared_name` and returns the handle tensor.
Tensor MakeHandle(ResourceManager* rm, const std::string& shared_name, DType dtype,
                  const PartialShape& shape) {
  OpRunner r("VarHandleOp", "handle_node");
  r.Type("dtype", dtype).ShapeAttr("shape", shape).String("shared_name", shared_name);
  r.String("container", "").Resources(rm);
  auto out = r.Run1();
  REQUIRE_MESSAGE(out.ok(), out.status().ToString());
  REQUIRE(out->dtype() == DType::kResource);
  REQUIRE(out->rank() == 0);
  return *out;
}

Result<Tensor> ReadVar(const Tensor& handle, DType dtype, const std::string& node = "read") {
  return OpRunner("ReadVariableOp", node).Type("dtype", dtype).Input(handle).Run1();
}

Status Assign(const std::string& op, const Tensor& handle, const Tensor& value,
              const std::string& node = "assign") {
  auto outs = OpRunner(op, node).Type("dtype", value.dtype()).Input(handle).Input(value).Run();
  if (outs.ok()) CHECK(outs->empty());
  return outs.status();
}

TEST_CASE("VariableResource: read, assign, update, errors name the variable") {
  VariableResource v("layer/kernel", DType::kFloat, PartialShape{-1, 2});
  CHECK_FALSE(v.initialized());
  CheckError(v.Read().status(), {"layer/kernel", "not initialized"});
  CheckError(v.Update([](const Tensor& t) -> Result<Tensor> { return t; }),
             {"layer/kernel", "not initialized"});
  CheckError(v.Assign(Make<int32_t>({1, 2}, {1, 2})), {"layer/kernel", "float32", "int32"});
  CheckError(v.Assign(Make<float>({1, 2, 3}, {1, 3})), {"layer/kernel", "(1, 3)", "(None, 2)"});

  Tensor value = Make<float>({1, 2, 3, 4}, {2, 2});
  REQUIRE(v.Assign(value).ok());
  CHECK(v.initialized());
  value.data<float>()[0] = 100;  // the variable keeps its own copy
  auto read = v.Read();
  REQUIRE(read.ok());
  CHECK(TensorsEqual(*read, Make<float>({1, 2, 3, 4}, {2, 2})));

  // A reader keeps its value while the variable is reassigned.
  REQUIRE(v.Assign(Make<float>({5, 6}, {1, 2})).ok());
  CHECK(TensorsEqual(*read, Make<float>({1, 2, 3, 4}, {2, 2})));
  CHECK(TensorsEqual(*v.Read(), Make<float>({5, 6}, {1, 2})));

  REQUIRE(v.Update([](const Tensor& t) -> Result<Tensor> {
             Tensor n = t.DeepCopy();
             n.data<float>()[1] = 60;
             return n;
           }).ok());
  CHECK(TensorsEqual(*v.Read(), Make<float>({5, 60}, {1, 2})));
  CheckError(v.Update([](const Tensor&) -> Result<Tensor> { return Tensor::Scalar<float>(1); }),
             {"layer/kernel", "()"});
  CHECK(testing::Contains(v.DebugString(), "layer/kernel"));
}

TEST_CASE("ResourceManager: LookupOrCreate returns one resource per name") {
  ResourceManager rm;
  CHECK(rm.Lookup("v") == nullptr);
  int created = 0;
  auto make = [&] {
    ++created;
    return std::make_shared<VariableResource>("v", DType::kInt32, PartialShape::Scalar());
  };
  Handle a = rm.LookupOrCreate("v", make);
  Handle b = rm.LookupOrCreate("v", make);
  CHECK(a != nullptr);
  CHECK(a == b);
  CHECK(created == 1);
  CHECK(rm.Lookup("v") == a);
  CHECK(rm.LookupOrCreate("w", make) != a);
  CHECK(created == 2);
}

TEST_CASE("VarHandleOp, AssignVariableOp, ReadVariableOp, VarIsInitializedOp") {
  ResourceManager rm;
  Tensor h = MakeHandle(&rm, "counter", DType::kInt64, PartialShape::Scalar());
  auto* var = dynamic_cast<VariableResource*>(rm.Lookup("counter").get());
  REQUIRE(var != nullptr);
  CHECK(h.scalar<Handle>().get() == var);
  CHECK(var->dtype() == DType::kInt64);

  auto init = OpRunner("VarIsInitializedOp").Input(h).Run1();
  REQUIRE(init.ok());
  CHECK(TensorsEqual(*init, Tensor::Scalar<bool>(false)));

  CheckError(ReadVar(h, DType::kInt64, "reader").status(),
             {"node 'reader'", "counter", "not initialized"});

  REQUIRE(Assign("AssignVariableOp", h, Tensor::Scalar<int64_t>(41)).ok());
  auto v = ReadVar(h, DType::kInt64);
  REQUIRE(v.ok());
  CHECK(TensorsEqual(*v, Tensor::Scalar<int64_t>(41)));
  init = OpRunner("VarIsInitializedOp").Input(h).Run1();
  REQUIRE(init.ok());
  CHECK(TensorsEqual(*init, Tensor::Scalar<bool>(true)));

  // A second VarHandleOp with the same shared name sees the same variable.
  Tensor h2 = MakeHandle(&rm, "counter", DType::kInt64, PartialShape::Scalar());
  CHECK(h2.scalar<Handle>() == h.scalar<Handle>());
  REQUIRE(Assign("AssignAddVariableOp", h2, Tensor::Scalar<int64_t>(1)).ok());
  CHECK(TensorsEqual(*ReadVar(h, DType::kInt64), Tensor::Scalar<int64_t>(42)));

  // The node name is the variable's name when shared_name is empty.
  OpRunner anon("VarHandleOp", "my_var");
  anon.Type("dtype", DType::kFloat).ShapeAttr("shape", PartialShape{2}).Resources(&rm);
  REQUIRE(anon.Run1().ok());
  CHECK(rm.Lookup("my_var") != nullptr);

  REQUIRE(OpRunner("DestroyResourceOp").Input(h).Run().ok());
}

TEST_CASE("AssignAddVariableOp and AssignSubVariableOp against a reference") {
  ResourceManager rm;
  Tensor h = MakeHandle(&rm, "w", DType::kFloat, PartialShape{2, 3});
  Tensor start = testing::Random<float>({2, 3}, 1);
  Tensor delta = testing::Random<float>({2, 3}, 2);
  REQUIRE(Assign("AssignVariableOp", h, start).ok());
  REQUIRE(Assign("AssignAddVariableOp", h, delta).ok());
  REQUIRE(Assign("AssignAddVariableOp", h, delta).ok());
  REQUIRE(Assign("AssignSubVariableOp", h, start).ok());
  Tensor want(DType::kFloat, Shape{2, 3});
  for (int i = 0; i < 6; ++i) {
    want.data<float>()[i] = start.data<float>()[i] + delta.data<float>()[i] +
                            delta.data<float>()[i] - start.data<float>()[i];
  }
  auto got = ReadVar(h, DType::kFloat);
  REQUIRE(got.ok());
  testing::CheckClose<float>(*got, want, 1e-6);

  Tensor hi = MakeHandle(&rm, "i", DType::kInt32, PartialShape{3});
  REQUIRE(Assign("AssignVariableOp", hi, Make<int32_t>({1, 2, 3}, {3})).ok());
  REQUIRE(Assign("AssignSubVariableOp", hi, Make<int32_t>({10, 10, 10}, {3})).ok());
  CHECK(TensorsEqual(*ReadVar(hi, DType::kInt32), Make<int32_t>({-9, -8, -7}, {3})));
  CheckError(Assign("AssignAddVariableOp", hi, Make<int32_t>({1, 2}, {2}), "add"),
             {"node 'add'", "'i'", "(3,)", "(2,)", "shapes must be equal"});
}

TEST_CASE("ResourceCountUpTo counts to its limit, then fails and leaves the variable") {
  ResourceManager rm;
  const Tensor h = MakeHandle(&rm, "counter", DType::kInt32, PartialShape::Scalar());
  REQUIRE(Assign("AssignVariableOp", h, Tensor::Scalar<int32_t>(1)).ok());
  for (int32_t want : {1, 2}) {
    auto out = OpRunner("ResourceCountUpTo", "count")
                   .Type("T", DType::kInt32)
                   .Int("limit", 3)
                   .Input(h)
                   .Run1();
    REQUIRE_MESSAGE(out.ok(), out.status().ToString());
    CHECK(out->scalar<int32_t>() == want);
  }
  auto at_limit = OpRunner("ResourceCountUpTo", "count")
                      .Type("T", DType::kInt32)
                      .Int("limit", 3)
                      .Input(h)
                      .Run1();
  CheckError(at_limit.status(), {"count", "Reached limit of 3"});
  CHECK(at_limit.status().code() == StatusCode::kOutOfRange);
  auto read = ReadVar(h, DType::kInt32);
  REQUIRE(read.ok());
  CHECK(read->scalar<int32_t>() == 3);
  CheckError(OpRunner("ResourceCountUpTo", "count")
                 .Type("T", DType::kInt64)
                 .Int("limit", 3)
                 .Input(h)
                 .Run1()
                 .status(),
             {"count", "int32"});
}

TEST_CASE("AssignAddVariableOp loses no updates under concurrency") {
  ResourceManager rm;
  Tensor h = MakeHandle(&rm, "hits", DType::kInt64, PartialShape{2});
  REQUIRE(Assign("AssignVariableOp", h, Make<int64_t>({0, 0}, {2})).ok());
  constexpr int kThreads = 8, kPerThread = 200;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  const Tensor delta = Make<int64_t>({1, 2}, {2});
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) {
        // No doctest macros off the main thread (no outputs, so Run() checks none).
        Status s = OpRunner("AssignAddVariableOp")
                       .Type("dtype", DType::kInt64)
                       .Input(h)
                       .Input(delta)
                       .Run()
                       .status();
        if (!s.ok()) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(failures == 0);
  CHECK(TensorsEqual(*ReadVar(h, DType::kInt64),
                     Make<int64_t>({kThreads * kPerThread, 2 * kThreads * kPerThread}, {2})));
}

TEST_CASE("variable ops: dtype errors name the variable") {
  ResourceManager rm;
  Tensor h = MakeHandle(&rm, "dense/bias", DType::kFloat, PartialShape{2});
  REQUIRE(Assign("AssignVariableOp", h, Make<float>({1, 2}, {2})).ok());
  CheckError(ReadVar(h, DType::kInt32, "r").status(),
             {"node 'r'", "dense/bias", "float32", "int32"});
  CheckError(Assign("AssignVariableOp", h, Make<int32_t>({1, 2}, {2}), "a"),
             {"node 'a'", "dense/bias", "float32", "int32"});
  CheckError(Assign("AssignVariableOp", h, Make<float>({1, 2, 3}, {3}), "a"),
             {"node 'a'", "dense/bias", "(3,)", "(2,)"});

  // A handle known at prepare time lets ReadVariableOp infer the shape and check the dtype.
  OpRunner known("ReadVariableOp", "rk");
  known.Type("dtype", DType::kFloat).ConstantInput(h);
  REQUIRE(known.Prepare().ok());
  CHECK(known.output_specs()[0] == TensorSpec{DType::kFloat, PartialShape{2}});
  OpRunner bad("ReadVariableOp", "rb");
  bad.Type("dtype", DType::kDouble).ConstantInput(h);
  CheckError(bad.Prepare(), {"node 'rb'", "dense/bias", "float32", "float64"});
  OpRunner unknown("ReadVariableOp");
  unknown.Type("dtype", DType::kFloat).InputSpec({DType::kResource, PartialShape::Scalar()});
  REQUIRE(unknown.Prepare().ok());
  CHECK(unknown.output_specs()[0].shape.unknown_rank());

  // The same shared name with another dtype is refused.
  OpRunner clash("VarHandleOp", "clash");
  clash.Type("dtype", DType::kInt32)
      .ShapeAttr("shape", PartialShape{2})
      .String("shared_name", "dense/bias");
  clash.Resources(&rm);
  CheckError(clash.Prepare(), {"node 'clash'", "dense/bias", "float32", "int32"});
}

TEST_CASE("variable ops: handle and prepare errors") {
  SUBCASE("not a resource") {
    OpRunner r("ReadVariableOp", "r");
    r.Type("dtype", DType::kFloat).InputSpec({DType::kFloat, PartialShape::Scalar()});
    CheckError(r.Prepare(), {"node 'r'", "input 'resource'", "expected dtype resource"});
  }
  SUBCASE("a resource that is not a variable") {
    struct Other : ResourceBase {
      std::string DebugString() const override { return "OtherThing"; }
      const void* TypeTag() const override { return this; }
    };
    Tensor h(DType::kResource, Shape());
    h.scalar<Handle>() = std::make_shared<Other>();
    CheckError(ReadVar(h, DType::kFloat).status(), {"OtherThing", "not a variable"});
  }
  SUBCASE("missing attrs") {
    OpRunner r("VarHandleOp");
    r.Type("dtype", DType::kFloat);
    CheckError(r.Prepare(), {"missing attr 'shape'"});
    OpRunner a("AssignVariableOp");
    a.InputSpec({DType::kResource, PartialShape::Scalar()}).InputSpec({DType::kFloat, Shape{}});
    CheckError(a.Prepare(), {"missing attr 'dtype'"});
  }
  SUBCASE("value dtype differs from attr") {
    OpRunner a("AssignAddVariableOp");
    a.Type("dtype", DType::kFloat)
        .InputSpec({DType::kResource, PartialShape::Scalar()})
        .InputSpec({DType::kInt32, Shape{}});
    CheckError(a.Prepare(), {"input 'value'", "expected dtype float32", "got int32"});
  }
  SUBCASE("arithmetic on strings") {
    OpRunner a("AssignAddVariableOp");
    a.Type("dtype", DType::kString)
        .InputSpec({DType::kResource, PartialShape::Scalar()})
        .InputSpec({DType::kString, Shape{}});
    CheckError(a.Prepare(), {"attr 'dtype'", "string", "not supported"});
  }
  SUBCASE("no resource manager: shapes only, running fails") {
    OpRunner r("VarHandleOp", "v");
    r.Type("dtype", DType::kFloat).ShapeAttr("shape", PartialShape{3});
    REQUIRE(r.Prepare().ok());
    CHECK(r.output_specs()[0] == TensorSpec{DType::kResource, PartialShape::Scalar()});
    CheckError(r.Run1().status(), {"node 'v'", "resource manager"});
  }
}

TEST_CASE("variable ops are stateful") {
  for (const char* op : {"VarHandleOp", "ReadVariableOp", "AssignVariableOp", "AssignAddVariableOp",
                         "AssignSubVariableOp", "VarIsInitializedOp", "DestroyResourceOp"}) {
    CAPTURE(op);
    const OpDefinition* def = FindOp(op);
    REQUIRE(def != nullptr);
    CHECK((def->flags & kOpStateful) != 0);
  }
}

}  // namespace
}  // namespace kiln::exec
