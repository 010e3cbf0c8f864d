// The concrete-function cache: host values in the key, listing concrete functions and asking
// for one, fixed signatures with unknown dimensions, the retrace log and warning, the eager
// switch.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "kiln/trace/trace.h"
#include "trace/trace_test_util.h"

namespace kiln::trace {
namespace {

// Restores the global switches at scope exit.
struct EagerGuard {
  explicit EagerGuard(bool on) { SetRunFunctionsEagerly(on); }
  ~EagerGuard() { SetRunFunctionsEagerly(false); }
};

struct CaptureWarnings {
  CaptureWarnings() {
    SetWarningSink([this](std::string_view m) { messages.emplace_back(m); });
  }
  ~CaptureWarnings() { SetWarningSink(nullptr); }
  std::vector<std::string> messages;
};

Value Max(const Value& x, const Value& y) {
  return OpBuilder("Maximum").Input(x).Input(y).Attr("T", y.dtype()).BuildOne();
}

Tensor Vec(std::vector<int32_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return *Tensor::FromVector<int32_t>(v, Shape{n});
}

TEST_CASE("host values are part of the key by value, tensors by spec") {
  int traces = 0;
  std::vector<std::string> printed;
  Function f("f", FunctionOptions{.arg_names = {"x"}}, [&](const Args& args) -> Result<Values> {
    ++traces;
    printed.push_back(args[0].ToString());
    return Values{Identity(args[0])};
  });
  // f(1); f(2); f(1): two traces, the third call reuses the first graph.
  auto one = f(1);
  REQUIRE(one.ok());
  CHECK((*one)[0].dtype() == DType::kInt32);  // a host int converts as TensorFlow's does
  CHECK((*one)[0].scalar<int32_t>() == 1);
  REQUIRE(f(2).ok());
  auto again = f(1);
  REQUIRE(again.ok());
  CHECK((*again)[0].scalar<int32_t>() == 1);
  CHECK(traces == 2);
  CHECK(printed == std::vector<std::string>{"1", "2"});
  // Doubles, bools and strings are keyed the same way; 1 and 1.0 and true are different keys.
  REQUIRE(f(0.1).ok());
  REQUIRE(f(0.1).ok());
  REQUIRE(f(true).ok());
  REQUIRE(f("relu").ok());
  REQUIRE(f(std::string("relu")).ok());
  CHECK(traces == 5);
  CHECK(printed.back() == "'relu'");
  // The same numbers as tensors: one trace for every value.
  REQUIRE(f(Tensor::Scalar(int32_t{10})).ok());
  auto t = f(Tensor::Scalar(int32_t{20}));
  REQUIRE(t.ok());
  CHECK((*t)[0].scalar<int32_t>() == 20);
  CHECK(traces == 6);
  CHECK(f.trace_count() == 6);
  CHECK(f.concrete_functions().size() == 6);
}

enum class Activation { kRelu = 1, kTanh = 2 };

TEST_CASE("enum host arguments are keyed by type and value, and the body reads them") {
  int traces = 0;
  Function g("g", FunctionOptions{.arg_names = {"x", "act"}},
             [&](const Args& args) -> Result<Values> {
               ++traces;
               const auto act = static_cast<Activation>(args[1].int_value());
               return Values{act == Activation::kRelu ? Relu(args[0]) : Tanh(args[0])};
             });
  auto r = g(Tensor::Scalar(-1.0f), Activation::kRelu);
  REQUIRE(r.ok());
  CHECK((*r)[0].scalar<float>() == 0.0f);
  auto t = g(Tensor::Scalar(-1.0f), Activation::kTanh);
  REQUIRE(t.ok());
  CHECK((*t)[0].scalar<float>() == doctest::Approx(-0.7615942f));
  REQUIRE(g(Tensor::Scalar(2.0f), Activation::kRelu).ok());
  CHECK(traces == 2);
  const auto log = g.trace_log();
  REQUIRE(log.size() == 2);
  REQUIRE(log[1].reasons.size() == 1);
  CHECK(log[1].reasons[0].find("host argument `act`: ") == 0);
  CHECK(log[1].reasons[0].find("Activation(1) -> ") != std::string::npos);
}

TEST_CASE("concrete functions are listed with argument and return specs") {
  Function my_relu("my_relu", FunctionOptions{.arg_names = {"x"}}, [](const Args& args) {
    return Result<Values>(Values{Max(Scalar(0.0f), args[0])});
  });
  REQUIRE(my_relu(Tensor::Scalar(5.5f)).ok());
  REQUIRE(my_relu(*Tensor::FromVector<float>({3, -3}, Shape{2})).ok());
  REQUIRE(my_relu(Tensor::Scalar(-2.5f)).ok());  // fits the first
  CHECK(my_relu.trace_count() == 2);
  CHECK(my_relu.PrettyPrintedConcreteSignatures() ==
        "my_relu(x)\n"
        "  Args:\n"
        "    x: float32 Tensor, shape=()\n"
        "  Returns:\n"
        "    float32 Tensor, shape=()\n"
        "\n"
        "my_relu(x)\n"
        "  Args:\n"
        "    x: float32 Tensor, shape=(2,)\n"
        "  Returns:\n"
        "    float32 Tensor, shape=(2,)\n");

  Function add_n("scale", FunctionOptions{.arg_names = {"x", "n"}}, [](const Args& args) {
    return Result<Values>(Values{args[0] * static_cast<double>(args[1].int_value())});
  });
  REQUIRE(add_n(Tensor::Scalar(2.0f), 3).ok());
  CHECK(add_n.concrete_functions()[0]->PrettySignature() ==
        "scale(x, n=3)\n  Args:\n    x: float32 Tensor, shape=()\n  Returns:\n"
        "    float32 Tensor, shape=()\n");
  CHECK(add_n.concrete_functions()[0]->SignatureString() ==
        "scale(x: TensorSpec(shape=(), dtype=float32, name='x'), n=3) -> "
        "TensorSpec(shape=(), dtype=float32)");
}

TEST_CASE(
    "a concrete function for given specs is bound to one graph; a wrong dtype is an "
    "error, never a retrace") {
  int traces = 0;
  Function dbl("double", FunctionOptions{.arg_names = {"a"}}, [&](const Args& args) {
    ++traces;
    return Result<Values>(Values{args[0] + args[0]});
  });
  const std::vector<Arg> spec = {Arg::Spec({DType::kString, PartialShape::UnknownRank()})};
  auto strings = dbl.GetConcreteFunction(std::span<const Arg>(spec));
  REQUIRE(strings.ok());
  CHECK(traces == 1);
  const ConcreteFunction& double_strings = **strings;
  auto aa = double_strings(Tensor::StringScalar("a"));
  REQUIRE(aa.ok());
  CHECK((*aa)[0].scalar<std::string>() == "aa");
  auto bb = double_strings(Tensor::StringScalar("b"));
  REQUIRE(bb.ok());
  CHECK((*bb)[0].scalar<std::string>() == "bb");
  // Any shape fits an unknown-rank spec.
  Tensor pair(DType::kString, Shape{2});
  pair.flat<std::string>()[0] = "x";
  pair.flat<std::string>()[1] = "yz";
  auto p = double_strings(pair);
  REQUIRE(p.ok());
  CHECK((*p)[0].flat<std::string>()[1] == "yzyz");

  auto bad = double_strings(Tensor::Scalar(int32_t{1}));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::kInvalidArgument);
  const std::string& msg = bad.status().message();
  CHECK(msg.find("argument 'a'") != std::string::npos);
  CHECK(msg.find("input #0") != std::string::npos);
  CHECK(msg.find("dtype=string") != std::string::npos);
  CHECK(msg.find("dtype=int32") != std::string::npos);
  CHECK(traces == 1);

  // The same specs give the same concrete function; a host value it was not traced for is an
  // error too.
  auto same = dbl.GetConcreteFunction(std::span<const Arg>(spec));
  REQUIRE(same.ok());
  CHECK(*same == *strings);
  Function scale("scale", FunctionOptions{.arg_names = {"x", "n"}}, [](const Args& args) {
    return Result<Values>(Values{args[0] * static_cast<double>(args[1].int_value())});
  });
  const std::vector<Arg> key = {Arg::Spec({DType::kFloat, PartialShape::Scalar()}), Arg(3)};
  auto by3 = scale.GetConcreteFunction(std::span<const Arg>(key));
  REQUIRE(by3.ok());
  auto nine = (**by3)(Tensor::Scalar(3.0f), 3);
  REQUIRE(nine.ok());
  CHECK((*nine)[0].scalar<float>() == 9.0f);
  auto by4 = (**by3)(Tensor::Scalar(3.0f), 4);
  REQUIRE_FALSE(by4.ok());
  CHECK(by4.status().message().find("host argument 'n' was traced as 3, got 4") !=
        std::string::npos);
  CHECK(scale.trace_count() == 1);
}

TEST_CASE(
    "a fixed signature with unknown dimensions has one graph; a misfit names the "
    "argument and both specs") {
  int traces = 0;
  Function next_collatz(
      "next_collatz",
      FunctionOptions{.input_signature = InputSignature{{"x", DType::kInt32, PartialShape{-1}}}},
      [&](const Args& args) -> Result<Values> {
        ++traces;
        const Value& x = args[0];
        return Values{Where(Equal(FloorMod(x, Scalar(2)), Scalar(0)), FloorDiv(x, Scalar(2)),
                            Scalar(3) * x + Scalar(1))};
      });
  auto r = next_collatz(Vec({1, 2}));
  REQUIRE(r.ok());
  CHECK((*r)[0].flat<int32_t>()[0] == 4);
  CHECK((*r)[0].flat<int32_t>()[1] == 1);
  REQUIRE(next_collatz(Vec({5, 6, 7})).ok());  // another length: same graph
  CHECK(traces == 1);

  auto two_d = next_collatz(*Tensor::FromVector<int32_t>({1, 2, 3, 4}, Shape{2, 2}));
  REQUIRE_FALSE(two_d.ok());
  CHECK(two_d.status().code() == StatusCode::kInvalidArgument);
  CHECK(two_d.status().message() ==
        "'next_collatz': argument 'x' does not fit the input signature: expected "
        "TensorSpec(shape=(None,), dtype=int32, name='x'), got TensorSpec(shape=(2, 2), "
        "dtype=int32)");
  auto host = next_collatz(3);
  REQUIRE_FALSE(host.ok());
  CHECK(host.status().message().find("host value 3") != std::string::npos);
  CHECK(traces == 1);
  CHECK(next_collatz.trace_count() == 1);
  REQUIRE(next_collatz.concrete_functions().size() == 1);
  CHECK(next_collatz.concrete_functions()[0]->inputs()[0].shape.ToPythonString() == "(None,)");
}

TEST_CASE("every trace records why it happened") {
  Function f("f", FunctionOptions{.arg_names = {"x", "num_steps"}},
             [](const Args& args) { return Result<Values>(Values{Identity(args[0])}); });
  REQUIRE(f(Tensor::Scalar(int32_t{1}), 10).ok());
  REQUIRE(f(Tensor::Scalar(1.0f), 10).ok());
  REQUIRE(f(Tensor::Scalar(1.0f), 20).ok());
  REQUIRE(f(*Tensor::FromVector<float>({1, 2}, Shape{2}), 20).ok());
  REQUIRE(f(*Tensor::FromVector<float>({1, 2, 3}, Shape{3}), 20).ok());
  REQUIRE(f(*Tensor::FromVector<float>({4, 5, 6}, Shape{3}), 20).ok());  // no trace
  const auto log = f.trace_log();
  REQUIRE(log.size() == 5);
  CHECK(f.trace_count() == 5);
  CHECK(log[0].reasons == std::vector<std::string>{"first call"});
  CHECK(log[1].reasons == std::vector<std::string>{"argument `x`: dtype int32 -> float32"});
  CHECK(log[2].reasons == std::vector<std::string>{"host argument `num_steps`: 10 -> 20"});
  CHECK(log[3].reasons == std::vector<std::string>{"argument `x`: new shape () -> (2,)"});
  CHECK(log[4].reasons == std::vector<std::string>{"argument `x`: new shape (2,) -> (3,)"});
  CHECK(log[4].concrete_name == "__inference_f_4");
  CHECK(log[2].ToString() == "trace 2 (__inference_f_2): host argument `num_steps`: 10 -> 20");
}

TEST_CASE("frequent retracing warns once, with the reasons and the fix") {
  CaptureWarnings warnings;
  Function train("train", FunctionOptions{.arg_names = {"num_steps"}}, [](const Args& args) {
    return Result<Values>(Values{Scalar(static_cast<int32_t>(args[0].int_value()))});
  });
  for (int n = 1; n <= 5; ++n) REQUIRE(train(n).ok());
  CHECK(warnings.messages.empty());  // 5 traces: not yet
  REQUIRE(train(6).ok());
  REQUIRE(warnings.messages.size() == 1);
  for (int n = 7; n <= 12; ++n) REQUIRE(train(n).ok());
  CHECK(warnings.messages.size() == 1);  // once, not on every later trace
  CHECK(train.trace_count() == 12);
  const std::string& w = warnings.messages[0];
  CHECK(w == train.retrace_warning());
  CHECK(w.find("'train' has been traced 6 times (more than 5)") != std::string::npos);
  CHECK(w.find("host argument `num_steps`: 1 -> 2") != std::string::npos);
  CHECK(w.find("host argument `num_steps`: 5 -> 6") != std::string::npos);
  CHECK(w.find("as tensors (Tensor::Scalar(n)) instead of host values") != std::string::npos);
  CHECK(w.find("input signature") != std::string::npos);

  // Passing tensors instead traces once: no warning.
  CaptureWarnings quiet;
  Function train2("train2", FunctionOptions{.arg_names = {"num_steps"}},
                  [](const Args& args) { return Result<Values>(Values{Identity(args[0])}); });
  for (int n = 1; n <= 12; ++n) REQUIRE(train2(Tensor::Scalar(n)).ok());
  CHECK(train2.trace_count() == 1);
  CHECK(quiet.messages.empty());

  // warn_after_traces = 0 never warns.
  Function silent("silent", FunctionOptions{.warn_after_traces = 0},
                  [](const Args& args) { return Result<Values>(Values{Identity(args[0])}); });
  for (int n = 1; n <= 8; ++n) REQUIRE(silent(n).ok());
  CHECK(quiet.messages.empty());
}

TEST_CASE("the eager switch runs bodies op by op with the same results") {
  testing::CapturePrints prints;
  int body_runs = 0;
  Variable v = Variable::Create("v", Tensor::Scalar(0.0f));
  Function f("f", FunctionOptions{.arg_names = {"x"}}, [&](const Args& args) -> Result<Values> {
    ++body_runs;  // a host side effect
    v.AssignAdd(args[0]);
    KILN_RETURN_IF_ERROR(Print({v.Read()}));
    return Values{v.Read() * 2.0};
  });
  std::vector<float> graph_results;
  for (float x : {1.0f, 2.0f, 3.0f})
    graph_results.push_back((*f(Tensor::Scalar(x)))[0].scalar<float>());
  CHECK(body_runs == 1);
  CHECK(prints.text() == "1\n3\n6\n");
  REQUIRE(v.SetValue(Tensor::Scalar(0.0f)).ok());
  {
    EagerGuard eager(true);
    CHECK(FunctionsRunEagerly());
    std::vector<float> eager_results;
    for (float x : {1.0f, 2.0f, 3.0f}) {
      auto r = f(Tensor::Scalar(x));
      REQUIRE(r.ok());
      eager_results.push_back((*r)[0].scalar<float>());
    }
    CHECK(eager_results == graph_results);
    CHECK(body_runs == 4);        // the body ran on every call
    CHECK(f.trace_count() == 1);  // and nothing was traced
    CHECK(prints.text() == "1\n3\n6\n1\n3\n6\n");
  }
  CHECK_FALSE(FunctionsRunEagerly());
  REQUIRE(f(Tensor::Scalar(1.0f)).ok());
  CHECK(body_runs == 4);  // back to the cached graph
}

TEST_CASE("the eager switch still checks an input signature") {
  EagerGuard eager(true);
  Function f("f", InputSignature{{"a", DType::kFloat}},
             [](const Values& args) { return Result<Values>(Values{args[0] + args[0]}); });
  auto ok = f(Tensor::Scalar(2.0f));
  REQUIRE(ok.ok());
  CHECK((*ok)[0].scalar<float>() == 4.0f);
  auto bad = f(Tensor::Scalar(int32_t{2}));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("argument 'a'") != std::string::npos);
}

}  // namespace
}  // namespace kiln::trace
