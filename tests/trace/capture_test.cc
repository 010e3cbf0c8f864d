// What a trace captures: host values frozen, toolkit random ops fresh on every call;
// variables created once; host callbacks on every call but not exportable; string tensors;
// non-strict graphs; export + reload of string and random functions.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "kiln/exec/saved_model.h"
#include "kiln/trace/trace.h"
#include "tensorflow/framework.pb.h"
#include "trace/trace_test_util.h"

namespace kiln::trace {
namespace {

std::vector<float> Floats(const Tensor& t) {
  auto f = t.flat<float>();
  return {f.begin(), f.end()};
}

TEST_CASE("a host random draw is frozen, a toolkit random op is fresh on every call") {
  std::mt19937 engine(42);
  Function np_random("np_random", [&engine](const Values&) -> Result<Values> {
    std::normal_distribution<float> normal;
    std::vector<float> host(9);
    for (float& x : host) x = normal(engine);
    return Values{Constant(*Tensor::FromVector<float>(host, Shape{3, 3}))};
  });
  Function tf_random("tf_random", [](const Values&) -> Result<Values> {
    return Values{RandomNormal(Shape{3, 3})};
  });
  const auto a1 = Floats((*np_random())[0]);
  const auto a2 = Floats((*np_random())[0]);
  CHECK(a1 == a2);
  const auto b1 = Floats((*tf_random())[0]);
  const auto b2 = Floats((*tf_random())[0]);
  CHECK(b1 != b2);
  CHECK(tf_random.trace_count() == 1);
  CHECK((*tf_random.concrete_functions()[0]).is_stateful());
}

TEST_CASE("a seeded random op repeats its sequence in a new trace, stateless ops are pure") {
  auto make = [](const std::string& name) {
    return std::make_unique<Function>(name, [](const Values&) -> Result<Values> {
      return Values{RandomUniform(Shape{4}, RandomOptions{.seed = 7}, -1.0, 1.0)};
    });
  };
  auto f1 = make("u1");
  auto f2 = make("u2");
  const auto first = Floats((*(*f1)())[0]);
  const auto second = Floats((*(*f1)())[0]);
  CHECK(first != second);
  CHECK(Floats((*(*f2)())[0]) == first);  // same seed, same first draw
  for (float x : first) CHECK((x >= -1.0f && x < 1.0f));
  const auto& fdef = f1->concrete_functions()[0]->function_def();
  bool seeded = false;
  for (const auto& n : fdef.node_def()) {
    if (n.op() == "RandomUniform") {
      seeded = n.attr().at("seed").i() == 87654321 && n.attr().at("seed2").i() == 7;
    }
  }
  CHECK(seeded);

  Function stateless("stateless", {{"seed", DType::kInt64, PartialShape{2}}},
                     [](const Values& args) -> Result<Values> {
                       return Values{StatelessRandomNormal(Shape{5}, args[0])};
                     });
  const Tensor s1 = *Tensor::FromVector<int64_t>({1, 2}, Shape{2});
  const Tensor s2 = *Tensor::FromVector<int64_t>({1, 3}, Shape{2});
  const auto x1 = Floats((*stateless(s1))[0]);
  CHECK(Floats((*stateless(s1))[0]) == x1);
  CHECK(Floats((*stateless(s2))[0]) != x1);
  CHECK_FALSE(stateless.concrete_functions()[0]->is_stateful());
}

TEST_CASE("a variable created unguarded in a body is an error that says how to fix it") {
  Function inside("inside", [](const Values&) -> Result<Values> {
    Variable a = Variable::Create("a", Tensor::Scalar(1.0f));
    return Values{a.AssignAdd(Scalar(1.0f))};
  });
  auto r = inside();
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kFailedPrecondition);
  const std::string& msg = r.status().message();
  CHECK(msg.find("variable 'a' was created while tracing '__inference_inside_0' again") !=
        std::string::npos);
  CHECK(msg.find("only on its first trace") != std::string::npos);
  CHECK(msg.find("Create it outside the function") != std::string::npos);
  CHECK(msg.find("only when it does not exist yet") != std::string::npos);
}

TEST_CASE("a variable created on the first trace only, guarded by a host check, works") {
  Variable v;  // obj.v = None
  int runs = 0;
  Function g("g", {{"x", DType::kFloat}}, [&](const Values& args) -> Result<Values> {
    ++runs;
    if (!v.valid()) v = Variable::Create("v", Tensor::Scalar(1.0f));
    return Values{v.AssignAdd(args[0])};
  });
  CHECK((*g(Tensor::Scalar(1.0f)))[0].scalar<float>() == 2.0f);
  CHECK((*g(Tensor::Scalar(2.0f)))[0].scalar<float>() == 4.0f);
  CHECK(runs == 2);  // the first trace ran again to check that it creates nothing more
  CHECK(g.trace_count() == 1);
  CHECK(v.value()->scalar<float>() == 4.0f);
}

TEST_CASE("a host container changes only while tracing, a host callback runs on every call") {
  std::vector<Value> lyst;
  std::vector<float> seen;
  Function f("f", {{"x", DType::kFloat}}, [&](const Values& args) -> Result<Values> {
    lyst.push_back(args[0]);  // tracing only
    KILN_RETURN_IF_ERROR(HostCallback("side_effect",
                                      [&seen](std::span<const Tensor> in, std::vector<Tensor>*) {
                                        seen.push_back(in[0].scalar<float>());
                                        return OkStatus();
                                      },
                                      {args[0]})
                             .status());
    return Values{args[0] * 2.0};
  });
  for (float x : {4.3f, 2.3f, 1.0f}) REQUIRE(f(Tensor::Scalar(x)).ok());
  CHECK(lyst.size() == 1);
  CHECK(lyst[0].is_symbolic());
  CHECK(seen == std::vector<float>{4.3f, 2.3f, 1.0f});
  const ConcreteFunction& cf = *f.concrete_functions()[0];
  CHECK(cf.host_callbacks() == std::vector<std::string>{"side_effect"});
  CHECK_FALSE(cf.CheckExportable().ok());

  // Eagerly, the callback is called at once.
  auto out = HostCallback("plus_one",
                          [](std::span<const Tensor> in, std::vector<Tensor>* o) {
                            o->push_back(Tensor::Scalar(in[0].scalar<float>() + 1.0f));
                            return OkStatus();
                          },
                          {Value(Tensor::Scalar(1.0f))}, {DType::kFloat});
  REQUIRE(out.ok());
  CHECK((*out)[0].tensor()->scalar<float>() == 2.0f);
}

TEST_CASE("saving a function that calls a host callback is refused, naming it") {
  Module root("root");
  Function f("logged", {{"x", DType::kFloat}}, [](const Values& args) -> Result<Values> {
    KILN_RETURN_IF_ERROR(
        HostCallback("log_it",
                     [](std::span<const Tensor>, std::vector<Tensor>*) { return OkStatus(); },
                     {args[0]})
            .status());
    return Values{Identity(args[0])};
  });
  testing::TempDir tmp;
  Status s = Save(root, tmp.path() / "m", {{"serving_default", &f}});
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("signature 'serving_default' (function 'logged')") != std::string::npos);
  CHECK(s.message().find("calls the host callback 'log_it'") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(tmp.path() / "m"));
}

TEST_CASE("string tensors: myadd concatenates, double gives 'aa'") {
  int traces = 0;
  Function myadd("myadd", FunctionOptions{.arg_names = {"a", "b"}}, [&](const Args& args) {
    ++traces;
    return Result<Values>(Values{args[0] + args[1]});
  });
  auto hw = myadd(Tensor::StringScalar("hello"), Tensor::StringScalar("world"));
  REQUIRE(hw.ok());
  CHECK((*hw)[0].scalar<std::string>() == "helloworld");
  REQUIRE(myadd(Tensor::StringScalar("good"), Tensor::StringScalar("morning")).ok());
  CHECK(traces == 1);
  auto ints = myadd(Tensor::Scalar(int32_t{1}), Tensor::Scalar(int32_t{2}));
  REQUIRE(ints.ok());
  CHECK((*ints)[0].scalar<int32_t>() == 3);
  CHECK(traces == 2);
  // Host strings: one trace per value.
  auto host = myadd("hello", "world");
  REQUIRE(host.ok());
  CHECK((*host)[0].scalar<std::string>() == "helloworld");
  REQUIRE(myadd("good", "morning").ok());
  CHECK(traces == 4);

  auto joined =
      StringJoin({Value(Tensor::StringScalar("a")), Value(Tensor::StringScalar("b"))}, "-")
          .tensor();
  REQUIRE(joined.ok());
  CHECK(joined->scalar<std::string>() == "a-b");
}

TEST_CASE("graph execution runs only what outputs and side effects need") {
  auto unused_gather = [](const Values& args) -> Result<Values> {
    (void)OpBuilder("GatherV2")
        .Input(args[0])
        .Input(Constant(*Tensor::FromVector<int32_t>({1}, Shape{1})))
        .Input(Scalar(int32_t{0}))
        .Attr("Tparams", DType::kFloat)
        .Attr("Tindices", DType::kInt32)
        .Attr("Taxis", DType::kInt32)
        .BuildOne();
    return Values{Identity(args[0])};
  };
  const Tensor x = *Tensor::FromVector<float>({0.0f}, Shape{1});
  Result<Values> eager = unused_gather({Value(x)});
  REQUIRE(eager.ok());  // the body itself returns; the failure is in the dropped value
  Function graph("unused_return_graph", {{"x", DType::kFloat, PartialShape{-1}}}, unused_gather);
  auto r = graph(x);
  REQUIRE(r.ok());
  CHECK((*r)[0].flat<float>()[0] == 0.0f);

  // Eagerly the gather runs and fails.
  Value failed = OpBuilder("GatherV2")
                     .Input(Value(x))
                     .Input(Constant(*Tensor::FromVector<int32_t>({1}, Shape{1})))
                     .Input(Scalar(int32_t{0}))
                     .Attr("Tparams", DType::kFloat)
                     .Attr("Tindices", DType::kInt32)
                     .Attr("Taxis", DType::kInt32)
                     .BuildOne();
  CHECK_FALSE(failed.ok());
}

TEST_CASE("string and random functions export, reload and give the same results") {
  testing::TempDir tmp;
  Module root("root");
  Function myadd("myadd", {{"a", DType::kString}, {"b", DType::kString}},
                 [](const Values& args) { return Result<Values>(Values{args[0] + args[1]}); });
  auto random_fn = std::make_unique<Function>(
      "noise", InputSignature{{"x", DType::kFloat, PartialShape{3}}},
      [](const Values& args) -> Result<Values> {
        return Values{args[0] + RandomNormal(Shape{3}, RandomOptions{.seed = 3})};
      });
  Function stateless("stateless", {{"seed", DType::kInt64, PartialShape{2}}},
                     [](const Values& args) -> Result<Values> {
                       return Values{StatelessRandomUniform(Shape{4}, args[0])};
                     });
  // Trace everything first; the random function's first call is what a fresh load repeats.
  REQUIRE(myadd.GetConcreteFunction().ok());
  REQUIRE(random_fn->GetConcreteFunction().ok());
  const Tensor zeros = *Tensor::FromVector<float>({0, 0, 0}, Shape{3});
  const Tensor seed = *Tensor::FromVector<int64_t>({5, 6}, Shape{2});
  const auto want_stateless = Floats((*stateless(seed))[0]);
  REQUIRE(Save(root, tmp.path() / "m",
               {{"myadd", &myadd}, {"noise", random_fn.get()}, {"stateless", &stateless}})
              .ok());
  const auto want_noise = Floats((*(*random_fn)(zeros))[0]);
  const auto want_noise2 = Floats((*(*random_fn)(zeros))[0]);

  auto model = exec::SavedModel::Load(tmp.path() / "m");
  REQUIRE(model.ok());
  auto add = (*model)->GetSignature("myadd");
  REQUIRE(add.ok());
  auto hw =
      (*add)->Run({{"a", Tensor::StringScalar("hello")}, {"b", Tensor::StringScalar("world")}});
  REQUIRE(hw.ok());
  CHECK(hw->at("output_0").scalar<std::string>() == "helloworld");

  auto noise = (*model)->GetSignature("noise");
  REQUIRE(noise.ok());
  auto n1 = (*noise)->Run({{"x", zeros}});
  REQUIRE(n1.ok());
  CHECK(Floats(n1->at("output_0")) == want_noise);
  auto n2 = (*noise)->Run({{"x", zeros}});
  REQUIRE(n2.ok());
  CHECK(Floats(n2->at("output_0")) == want_noise2);  // the same sequence, call after call
  CHECK(want_noise != want_noise2);

  auto sl = (*model)->GetSignature("stateless");
  REQUIRE(sl.ok());
  auto s1 = (*sl)->Run({{"seed", seed}});
  REQUIRE(s1.ok());
  CHECK(Floats(s1->at("output_0")) == want_stateless);
}

TEST_CASE("a concrete function prints as a GraphDef") {
  Function relu("simple_relu", {{"x", DType::kInt32}}, [](const Values& args) {
    // if x > 0: return x else: return 0  (C++ leaves argument order open: name the steps)
    const Value zero = Scalar(0);
    const Value positive = Greater(args[0], zero);
    return Result<Values>(Values{Where(positive, args[0], zero)});
  });
  auto cf = relu.GetConcreteFunction();
  REQUIRE(cf.ok());
  const std::string text = (*cf)->GraphDefText();
  CHECK(text.rfind("node {\n  name: \"x\"\n  op: \"Placeholder\"\n", 0) == 0);
  CHECK(text.find("    key: \"_user_specified_name\"\n    value {\n      s: \"x\"\n") !=
        std::string::npos);
  CHECK(text.find("  op: \"Greater\"\n  input: \"x\"\n  input: \"Const\"\n") != std::string::npos);
  CHECK(
      text.find("  op: \"SelectV2\"\n  input: \"Greater\"\n  input: \"x\"\n  input: \"Const\"\n") !=
      std::string::npos);
  CHECK(text.find("  name: \"Identity\"\n  op: \"Identity\"\n  input: \"SelectV2\"\n") !=
        std::string::npos);
  CHECK(text.find(":output:") == std::string::npos);  // GraphDef form, not FunctionDef form
  CHECK(text.find("versions {\n  producer: 1205\n  min_consumer: 12\n}") != std::string::npos);
  const tensorflow::GraphDef g = (*cf)->graph_def();
  CHECK(g.node_size() == (*cf)->num_nodes() + 1);  // + the Placeholder of x
}

}  // namespace
}  // namespace kiln::trace
