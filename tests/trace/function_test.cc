// Tracing: trace once per signature, graph ops on every call, signature checks, the recorded
// FunctionDef, eager ops and error values.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "kiln/trace/trace.h"
#include "tensorflow/framework.pb.h"
#include "trace/trace_test_util.h"

namespace kiln::trace {
namespace {

const tensorflow::NodeDef* FindNode(const tensorflow::FunctionDef& f, const std::string& name) {
  for (const auto& n : f.node_def()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

TEST_CASE("the body runs once per input signature, the print op runs on every call") {
  testing::DemoModule demo(1.0f);
  testing::CapturePrints prints;
  for (float a : {5.0f, 50.0f, 1.0f}) REQUIRE(demo.addprint(Tensor::Scalar(a)).ok());
  CHECK(demo.traces == 1);  // C++ side effect: tracing only
  CHECK(demo.addprint.trace_count() == 1);
  CHECK(demo.addprint.concrete_functions().size() == 1);
  CHECK(prints.text() == "6\n56\n57\n");  // graph side effect: every call
}

TEST_CASE("a call that does not fit the input signature is an error and does not trace") {
  testing::DemoModule demo;
  auto wrong_dtype = demo.addprint(Tensor::Scalar(int32_t{3}));
  REQUIRE_FALSE(wrong_dtype.ok());
  CHECK(wrong_dtype.status().code() == StatusCode::kInvalidArgument);
  const std::string& msg = wrong_dtype.status().message();
  CHECK(msg.find("argument 'a'") != std::string::npos);
  CHECK(msg.find("dtype=float32") != std::string::npos);
  CHECK(msg.find("dtype=int32") != std::string::npos);
  CHECK(demo.traces == 0);

  Tensor vec(DType::kFloat, Shape{2});
  auto wrong_shape = demo.addprint(vec);
  REQUIRE_FALSE(wrong_shape.ok());
  CHECK(wrong_shape.status().message().find("shape=(2,)") != std::string::npos);
  auto too_many = demo.addprint(Tensor::Scalar(1.0f), Tensor::Scalar(2.0f));
  REQUIRE_FALSE(too_many.ok());
  CHECK(too_many.status().message().find("takes 1 argument") != std::string::npos);
  CHECK(demo.traces == 0);
  CHECK(demo.x.value()->scalar<float>() == 1.0f);
}

TEST_CASE("a concrete function rejects a wrong dtype instead of retracing") {
  testing::DemoModule demo;
  auto cf = demo.addprint.GetConcreteFunction();
  REQUIRE(cf.ok());
  CHECK(demo.traces == 1);
  const Tensor bad = Tensor::Scalar(1.0);
  auto r = (*cf)->Call({&bad, 1});
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("float64") != std::string::npos);
  CHECK(demo.traces == 1);
  CHECK((*cf)->SignatureString() ==
        "addprint(a: TensorSpec(shape=(), dtype=float32, name='a')) -> "
        "TensorSpec(shape=(), dtype=float32)");
}

TEST_CASE("without an input signature, each new dtype or shape traces once") {
  int traces = 0;
  Function twice("twice", [&traces](const Values& args) {
    ++traces;
    return Values{args[0] + args[0]};
  });
  auto r = twice(Tensor::Scalar(2.0f));
  REQUIRE(r.ok());
  CHECK((*r)[0].scalar<float>() == 4.0f);
  REQUIRE(twice(Tensor::Scalar(3.0f)).ok());
  CHECK(traces == 1);
  auto v = twice(*Tensor::FromVector<float>({1, 2}, Shape{2}));
  REQUIRE(v.ok());
  CHECK((*v)[0].flat<float>()[1] == 4.0f);
  REQUIRE(twice(Tensor::Scalar(int32_t{5})).ok());
  CHECK(traces == 3);
  CHECK(twice.concrete_functions().size() == 3);
}

TEST_CASE("the trace is a FunctionDef in TensorFlow's form") {
  testing::DemoModule demo;
  auto cf = demo.addprint.GetConcreteFunction();
  REQUIRE(cf.ok());
  const tensorflow::FunctionDef& f = (*cf)->function_def();
  CHECK(f.signature().name() == "__inference_addprint_0");
  REQUIRE(f.signature().input_arg_size() == 2);
  CHECK(f.signature().input_arg(0).name() == "a");
  CHECK(f.signature().input_arg(0).type() == tensorflow::DT_FLOAT);
  // The captured variable is a trailing resource argument named after its first consumer.
  CHECK(f.signature().input_arg(1).name() == "assignaddvariableop_resource");
  CHECK(f.signature().input_arg(1).type() == tensorflow::DT_RESOURCE);
  CHECK(f.signature().is_stateful());
  REQUIRE((*cf)->captured_variables().size() == 1);
  CHECK((*cf)->captured_variables()[0] == demo.x);

  const auto* assign = FindNode(f, "AssignAddVariableOp");
  REQUIRE(assign != nullptr);
  CHECK(assign->input(0) == "assignaddvariableop_resource");
  CHECK(assign->input(1) == "a");
  const auto* format = FindNode(f, "StringFormat");
  REQUIRE(format != nullptr);
  CHECK(format->input(0) == "ReadVariableOp_1:value:0");  // node:outarg:index
  const auto* print = FindNode(f, "PrintV2");
  REQUIRE(print != nullptr);
  CHECK(print->input(0) == "StringFormat:output:0");
  CHECK(print->attr().count("output_stream") == 0);  // default attrs are left out
  // Side effects are chained in program order.
  CHECK(print->input(1) == "^ReadVariableOp_1");
  CHECK(FindNode(f, "ReadVariableOp")->input(1) == "^AssignAddVariableOp");

  std::set<std::string> control;
  for (const auto& [k, v] : f.control_ret()) control.insert(k);
  CHECK(control == std::set<std::string>{"AssignAddVariableOp", "PrintV2", "ReadVariableOp",
                                         "ReadVariableOp_1", "ReadVariableOp_2"});
  CHECK(f.ret().at("identity") == "Identity:output:0");
  const auto* identity = FindNode(f, "Identity");
  REQUIRE(identity != nullptr);
  CHECK(identity->input(0) == "ReadVariableOp_2:value:0");
  REQUIRE(f.attr().count("_input_shapes") == 1);
  CHECK(f.attr().at("_input_shapes").list().shape_size() == 2);
  CHECK(f.attr().at("_input_shapes").list().shape(1).unknown_rank());
  CHECK(f.arg_attr().at(0).attr().at("_user_specified_name").s() == "a");
  CHECK((*cf)->outputs()[0].shape == PartialShape::Scalar());  // the variable's shape
}

TEST_CASE("ops run eagerly outside a trace") {
  Value a = *Tensor::FromVector<float>({1, 2, 3, 4}, Shape{2, 2});
  Value b = *Tensor::FromVector<float>({1, 0, 0, 1}, Shape{2, 2});
  Value y = Relu(MatMul(a, b) - 2.5);
  REQUIRE(y.ok());
  CHECK_FALSE(y.is_symbolic());
  auto t = y.tensor();
  REQUIRE(t.ok());
  CHECK(t->flat<float>()[0] == 0.0f);
  CHECK(t->flat<float>()[3] == 1.5f);
  auto s = Softmax(Value(*Tensor::FromVector<float>({0, 0}, Shape{1, 2}))).tensor();
  REQUIRE(s.ok());
  CHECK(s->flat<float>()[0] == doctest::Approx(0.5));

  Variable v = Variable::Create("v", Tensor::Scalar(1.0f));
  Value after = v.AssignAdd(Tensor::Scalar(2.0f));
  REQUIRE(after.ok());
  CHECK(after.tensor()->scalar<float>() == 3.0f);
  CHECK(v.value()->scalar<float>() == 3.0f);
}

TEST_CASE("a failing op gives an error value that later ops pass on") {
  Value a = *Tensor::FromVector<float>({1, 2, 3}, Shape{1, 3});
  Value y = Relu(MatMul(a, a));  // inner dimensions 3 vs 1
  REQUIRE_FALSE(y.ok());
  CHECK(y.status().message().find("MatMul") != std::string::npos);
  CHECK_FALSE(y.tensor().ok());
}

TEST_CASE("an op that fails while tracing fails the trace, even if its value is dropped") {
  Function f("broken", {{"x", DType::kFloat, PartialShape{2, 3}}}, [](const Values& args) {
    (void)MatMul(args[0], args[0]);  // error dropped on purpose
    return Values{Identity(args[0])};
  });
  auto r = f(Tensor(DType::kFloat, Shape{2, 3}));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("tracing 'broken'") != std::string::npos);
  CHECK(r.status().message().find("MatMul") != std::string::npos);
}

TEST_CASE("host values used in a body are frozen into the graph") {
  float host = 10.0f;
  Function f("plus_host", {{"x", DType::kFloat}},
             [&host](const Values& args) { return Values{args[0] + Value(Tensor::Scalar(host))}; });
  CHECK((*f(Tensor::Scalar(1.0f)))[0].scalar<float>() == 11.0f);
  host = 100.0f;  // the trace already holds 10 as a Const
  CHECK((*f(Tensor::Scalar(1.0f)))[0].scalar<float>() == 11.0f);
}

TEST_CASE("variables assigned in a function change for everyone") {
  Variable counter = Variable::Create("counter", Tensor::Scalar(1.0f));
  Function bump("bump", Function::Body([counter](const Values&) {
                  return Values{counter.AssignAdd(Tensor::Scalar(1.0f))};
                }));
  CHECK((*bump())[0].scalar<float>() == 2.0f);
  CHECK((*bump())[0].scalar<float>() == 3.0f);
  CHECK(counter.value()->scalar<float>() == 3.0f);
}

TEST_CASE("creating a variable in a trace other than the first is an error") {
  std::vector<Variable> made;
  Function f("make", [&made](const Values& args) {
    made.push_back(Variable::Create("v", Tensor::Scalar(1.0f)));
    return Values{args[0] + made.back().Read()};
  });
  // The first trace creates a variable, so it runs again (as tf.function does) to check that
  // a later trace would not create one: the unguarded creation fails there.
  auto first = f(Tensor::Scalar(1.0f));
  REQUIRE_FALSE(first.ok());
  CHECK(first.status().message().find("only on its first trace") != std::string::npos);
  CHECK(made.size() == 2);
}

TEST_CASE("a symbolic value kept after its trace cannot be used eagerly") {
  Values kept;
  Function f("keep", {{"x", DType::kFloat}}, [&kept](const Values& args) {
    kept.push_back(args[0] * 2.0);
    return Values{kept.back()};
  });
  REQUIRE(f(Tensor::Scalar(1.0f)).ok());
  REQUIRE(kept.size() == 1);
  CHECK(kept[0].is_symbolic());
  Value later = kept[0] + 1.0;
  REQUIRE_FALSE(later.ok());
  CHECK(later.status().message().find("symbolic") != std::string::npos);
}

// The seed notes' `state` list (seeds/003): variables created on the first call from the
// function's argument, fn(1.0) == 12.0 and fn(3.0) == 36.0, as tf.function gives.
TEST_CASE("variables created from traced values get them on the first call") {
  std::vector<Variable> state;
  Function fn("fn", [&state](const Values& a) -> Result<Values> {
    if (state.empty()) {
      state.push_back(Variable::Create("v0", a[0] * 2.0));
      state.push_back(Variable::Create("v1", state[0].Read() * 3.0));
    }
    return Values{state[0].Read() * a[0] * state[1].Read()};
  });
  auto first = fn(Tensor::Scalar(1.0f));
  REQUIRE(first.ok());
  CHECK((*first)[0].scalar<float>() == 12.0f);
  auto second = fn(Tensor::Scalar(3.0f));
  REQUIRE(second.ok());
  CHECK((*second)[0].scalar<float>() == 36.0f);
  REQUIRE(state.size() == 2);
  CHECK(state[0].value()->scalar<float>() == 2.0f);
  CHECK(state[1].value()->scalar<float>() == 6.0f);
  CHECK(fn.trace_count() == 1);
}

TEST_CASE("a body over Args needs no options") {
  Function twice("twice", [](const Args& a) -> Result<Values> {
    return Values{Value(a[0]) * static_cast<double>(a[1].int_value())};
  });
  auto r = twice(Tensor::Scalar(1.5f), 2);
  REQUIRE(r.ok());
  CHECK((*r)[0].scalar<float>() == 3.0f);
}

TEST_CASE("Print inlines host text and quotes string tensors, as tf.print") {
  testing::CapturePrints prints;
  Function f("f", {{"x", DType::kFloat}}, [](const Values& a) -> Result<Values> {
    KILN_RETURN_IF_ERROR(Print({"loss:", a[0]}));
    KILN_RETURN_IF_ERROR(Print({Constant(Tensor::Scalar(std::string("loss:"))), a[0]}));
    KILN_RETURN_IF_ERROR(Print({"{} stays", std::string("text"), a[0]}));
    return Values{a[0]};
  });
  REQUIRE(f(Tensor::Scalar(1.5f)).ok());
  CHECK(prints.text() == "loss: 1.5\n\"loss:\" 1.5\n{} stays text 1.5\n");
}

TEST_CASE("the value of a failed Result throws its error, and a trace keeps it") {
  Result<int> failed = InvalidArgument("input 'x': expected float32");
  try {
    (void)failed.value();
    FAIL("value() of an error returned");
  } catch (const BadResultAccess& e) {
    CHECK(e.status().code() == StatusCode::kInvalidArgument);
    CHECK(std::string(e.what()) ==
          "Result::value() on an error: INVALID_ARGUMENT: input 'x': expected float32");
  }
  Function f("f", {{"x", DType::kFloat}}, [](const Values& a) -> Result<Values> {
    Result<Tensor> t = Value(a[0]).tensor();  // a symbolic value has no tensor
    return Values{Constant(*t)};
  });
  auto r = f(Tensor::Scalar(1.0f));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kFailedPrecondition);
  CHECK(r.status().message().find("the body used the value of a failed Result") !=
        std::string::npos);
  CHECK(r.status().message().find("symbolic") != std::string::npos);
}

}  // namespace
}  // namespace kiln::trace
