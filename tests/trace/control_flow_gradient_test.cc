// Gradients through Cond, WhileLoop and ForRange, eagerly (the tape records the branch taken
// and every iteration) and traced (the If / While gradients of gradients/control_flow_grad.cc,
// run by the kiln executor), against central differences of the loss.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "kiln/trace/trace.h"
#include "tensorflow/framework.pb.h"
#include "trace/trace_test_util.h"

namespace kiln::trace {
namespace {

Tensor Floats(std::vector<int64_t> dims, std::vector<float> v) {
  Tensor t(DType::kFloat, *Shape::FromDims(dims));
  for (size_t i = 0; i < v.size(); ++i) t.flat<float>()[i] = v[i];
  return t;
}

// A scalar float loss of float inputs and of variables read inside the control flow.
struct GradCheck {
  std::string name;
  std::vector<Tensor> inputs;  // every input is a source
  std::vector<Variable> variables;
  std::function<Result<Value>(const Values& in)> loss;
};

double LossAt(const GradCheck& c, const std::vector<Tensor>& inputs) {
  Values in(inputs.begin(), inputs.end());
  Result<Value> loss = c.loss(in);
  REQUIRE_MESSAGE(loss.ok(), loss.status().ToString());
  Result<Tensor> t = loss->tensor();
  REQUIRE_MESSAGE(t.ok(), t.status().ToString());
  return t->scalar<float>();
}

// d loss / d (inputs..., variables...) by central differences.
std::vector<Tensor> Numeric(const GradCheck& c) {
  constexpr float kEps = 1e-2F;
  std::vector<Tensor> out;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    Tensor g(DType::kFloat, c.inputs[i].shape());
    for (int64_t e = 0; e < c.inputs[i].NumElements(); ++e) {
      std::vector<Tensor> plus = c.inputs, minus = c.inputs;
      plus[i] = c.inputs[i].DeepCopy();
      minus[i] = c.inputs[i].DeepCopy();
      plus[i].flat<float>()[e] += kEps;
      minus[i].flat<float>()[e] -= kEps;
      g.flat<float>()[e] = static_cast<float>((LossAt(c, plus) - LossAt(c, minus)) / (2.0 * kEps));
    }
    out.push_back(g);
  }
  for (const Variable& v : c.variables) {
    Result<Tensor> value = v.Read().tensor();
    REQUIRE(value.ok());
    const Tensor saved = value->DeepCopy();
    Tensor g(DType::kFloat, saved.shape());
    for (int64_t e = 0; e < saved.NumElements(); ++e) {
      double at[2];
      for (int s = 0; s < 2; ++s) {
        Tensor moved = saved.DeepCopy();
        moved.flat<float>()[e] += s == 0 ? kEps : -kEps;
        REQUIRE(v.Assign(Value(moved)).ok());
        at[s] = LossAt(c, c.inputs);
      }
      g.flat<float>()[e] = static_cast<float>((at[0] - at[1]) / (2.0 * kEps));
    }
    REQUIRE(v.Assign(Value(saved)).ok());
    out.push_back(g);
  }
  return out;
}

void CheckClose(const Tensor& got, const Tensor& want) {
  REQUIRE(got.shape() == want.shape());
  for (int64_t e = 0; e < want.NumElements(); ++e) {
    CAPTURE(e);
    const double w = want.flat<float>()[e];
    const double g = got.flat<float>()[e];
    CHECK(std::abs(g - w) <= 2e-3 + 1e-2 * std::abs(w));
  }
}

// Eagerly and traced, the tape's gradients match the numerical ones.
void Check(const GradCheck& c) {
  CAPTURE(c.name);
  const std::vector<Tensor> numeric = Numeric(c);
  SUBCASE("eager") {
    Values in(c.inputs.begin(), c.inputs.end());
    GradientTape tape({.persistent = true});
    for (const Value& x : in) tape.Watch(x);
    Result<Value> loss = c.loss(in);
    REQUIRE_MESSAGE(loss.ok(), loss.status().ToString());
    Result<Values> g_in = tape.Gradient(*loss, in);
    REQUIRE_MESSAGE(g_in.ok(), g_in.status().ToString());
    Result<Values> g_var = tape.Gradient(*loss, c.variables);
    REQUIRE_MESSAGE(g_var.ok(), g_var.status().ToString());
    Values all = *g_in;
    all.insert(all.end(), g_var->begin(), g_var->end());
    for (size_t k = 0; k < numeric.size(); ++k) {
      CAPTURE(k);
      REQUIRE_FALSE(all[k].empty());
      Result<Tensor> t = all[k].tensor();
      REQUIRE(t.ok());
      CheckClose(*t, numeric[k]);
    }
  }
  SUBCASE("traced") {
    Function f(c.name, [&c](const Values& in) -> Result<Values> {
      GradientTape tape({.persistent = true});
      for (const Value& x : in) tape.Watch(x);
      KILN_ASSIGN_OR_RETURN(Value loss, c.loss(in));
      KILN_ASSIGN_OR_RETURN(Values g_in, tape.Gradient(loss, in));
      KILN_ASSIGN_OR_RETURN(Values g_var, tape.Gradient(loss, c.variables));
      Values out = {loss};
      out.insert(out.end(), g_in.begin(), g_in.end());
      out.insert(out.end(), g_var.begin(), g_var.end());
      for (const Value& g : out) {
        if (g.empty()) return Internal("a gradient is missing");
      }
      return out;
    });
    Result<std::vector<Tensor>> r = f.Call(std::span<const Tensor>(c.inputs));
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    REQUIRE(r->size() == numeric.size() + 1);
    CHECK(std::abs((*r)[0].scalar<float>() - LossAt(c, c.inputs)) < 1e-4);
    for (size_t k = 0; k < numeric.size(); ++k) {
      CAPTURE(k);
      CheckClose((*r)[k + 1], numeric[k]);
    }
  }
}

// then: x * c * w, else: tanh(x) * c + w; the predicate is computed from x at run time.
GradCheck CondCase(std::vector<float> x) {
  Variable w = Variable::Create("w", Floats({3}, {0.5F, -1.5F, 2.0F}));
  GradCheck c;
  c.name = "cond_grad";
  c.inputs = {Floats({3}, x), Floats({}, {1.3F})};
  c.variables = {w};
  c.loss = [w](const Values& in) -> Result<Value> {
    const Value& xv = in[0];
    const Value scale = in[1] * 2.0;  // computed outside, captured by both branches
    KILN_ASSIGN_OR_RETURN(
        Values out,
        Cond(
            Sum(xv) > 0.0, [&]() -> Result<Values> { return Values{xv * scale * w.Read()}; },
            [&]() -> Result<Values> { return Values{Tanh(xv) * scale + w.Read()}; }));
    return Sum(out[0] * out[0]);
  };
  return c;
}

TEST_CASE("Cond gradient: the true branch, w.r.t. inputs, a captured tensor and a variable") {
  Check(CondCase({0.4F, -0.2F, 0.7F}));
}

TEST_CASE("Cond gradient: the false branch, w.r.t. inputs, a captured tensor and a variable") {
  Check(CondCase({-0.4F, 0.2F, -0.7F}));
}

// x^n by repeated multiplication in a WhileLoop: d/dx = n x^(n-1).
GradCheck PowerCase() {
  GradCheck c;
  c.name = "while_power";
  c.inputs = {Floats({2}, {1.1F, -0.8F})};
  c.loss = [](const Values& in) -> Result<Value> {
    const Value x = in[0];
    KILN_ASSIGN_OR_RETURN(Values out,
                          WhileLoop([](const Values& v) { return Less(v[0], Scalar<int32_t>(5)); },
                                    [&x](const Values& v) -> Result<Values> {
                                      return Values{v[0] + Scalar<int32_t>(1), v[1] * x};
                                    },
                                    {Scalar<int32_t>(0), x * 0.0 + 1.0}));
    return Sum(out[1]);
  };
  return c;
}

TEST_CASE("WhileLoop gradient: x^n by repeated multiply has gradient n x^(n-1)") {
  GradCheck c = PowerCase();
  Check(c);
  // Against the closed form too.
  Function f("power_grad", [&c](const Values& in) -> Result<Values> {
    GradientTape tape;
    tape.Watch(in[0]);
    KILN_ASSIGN_OR_RETURN(Value loss, c.loss(in));
    return tape.Gradient(loss, in);
  });
  Result<std::vector<Tensor>> g = f.Call(std::span<const Tensor>(c.inputs));
  REQUIRE_MESSAGE(g.ok(), g.status().ToString());
  for (int e = 0; e < 2; ++e) {
    const float x = c.inputs[0].flat<float>()[e];
    CHECK((*g)[0].flat<float>()[e] == doctest::Approx(5.0 * std::pow(x, 4)).epsilon(1e-5));
  }
  // The gradient emits TensorFlow's accumulators: pushes in a forward While, pops in another.
  const std::vector<const ConcreteFunction*> cfs = f.concrete_functions();
  REQUIRE(cfs.size() == 1);
  const ConcreteFunction* cf = cfs[0];
  std::multiset<std::string> ops, body_ops;
  for (const auto& n : cf->function_def().node_def()) ops.insert(n.op());
  for (const auto& fn : cf->library().function()) {
    for (const auto& n : fn.node_def()) body_ops.insert(n.op());
  }
  CHECK(ops.count("StatelessWhile") == 3);  // the loop, its recomputation, the backward loop
  CHECK(body_ops.count("TensorListPushBack") >= 1);
  CHECK(body_ops.count("TensorListPopBack") >= 1);
}

// sum over i of tanh(w * x_i), with a variable w, by ForRange.
GradCheck TanhSumCase() {
  Variable w = Variable::Create("w", Floats({}, {0.7F}));
  GradCheck c;
  c.name = "for_range_tanh_sum";
  c.inputs = {Floats({4}, {0.3F, -1.2F, 0.8F, 2.0F})};
  c.variables = {w};
  c.loss = [w](const Values& in) -> Result<Value> {
    const Value x = in[0];
    KILN_ASSIGN_OR_RETURN(Values out,
                          ForRange(Scalar<int32_t>(0), Scalar<int32_t>(4), Scalar<int32_t>(1),
                                   [&](const Value& i, const Values& v) -> Result<Values> {
                                     return Values{v[0] + Tanh(w.Read() * Gather(x, i))};
                                   },
                                   {Scalar(0.0F)}));
    return out[0];
  };
  return c;
}

TEST_CASE("ForRange gradient: a sum of tanh(w x_i), w.r.t. x and the variable w") {
  Check(TanhSumCase());
}

// A Cond inside a ForRange body, with a variable in one branch and a capture in the other.
GradCheck NestedCase() {
  Variable w = Variable::Create("w", Floats({2}, {0.9F, -0.6F}));
  GradCheck c;
  c.name = "cond_in_while";
  c.inputs = {Floats({2}, {0.5F, -0.3F}), Floats({}, {0.8F})};
  c.variables = {w};
  c.loss = [w](const Values& in) -> Result<Value> {
    const Value x = in[0];
    const Value s = in[1];
    KILN_ASSIGN_OR_RETURN(
        Values out,
        ForRange(Scalar<int32_t>(0), Scalar<int32_t>(3), Scalar<int32_t>(1),
                 [&](const Value& i, const Values& v) -> Result<Values> {
                   const Value acc = v[0];
                   KILN_ASSIGN_OR_RETURN(
                       Values next,
                       Cond(
                           Equal(i % 2, 0.0),
                           [&]() -> Result<Values> { return Values{Tanh(acc * w.Read() + x)}; },
                           [&]() -> Result<Values> { return Values{acc * s + Sigmoid(x)}; }));
                   return Values{next[0]};
                 },
                 {x}));
    return Sum(out[0] * out[0]);
  };
  return c;
}

TEST_CASE("a Cond nested in a ForRange: gradients w.r.t. the loop input, a capture, a variable") {
  Check(NestedCase());
}

// A WhileLoop in a ForRange body, and a loop whose condition reads a float loop variable.
GradCheck NestedLoopCase() {
  GradCheck c;
  c.name = "while_in_for_range";
  c.inputs = {Floats({2}, {0.7F, -0.4F}), Floats({}, {1.2F})};
  c.loss = [](const Values& in) -> Result<Value> {
    const Value x = in[0];
    const Value s = in[1];
    KILN_ASSIGN_OR_RETURN(
        Values out,
        ForRange(Scalar<int32_t>(0), Scalar<int32_t>(2), Scalar<int32_t>(1),
                 [&](const Value&, const Values& v) -> Result<Values> {
                   // Grows t until it passes 3: the count depends on the values, not the gradient.
                   KILN_ASSIGN_OR_RETURN(
                       Values inner,
                       WhileLoop([](const Values& w) { return Less(w[0], Scalar(3.0F)); },
                                 [&](const Values& w) -> Result<Values> {
                                   return Values{w[0] * s + 0.5, Tanh(w[1] * s) + x};
                                 },
                                 {Scalar(0.2F), v[0]}));
                   return Values{inner[1]};
                 },
                 {x}));
    return Sum(out[0] * out[0]);
  };
  return c;
}

TEST_CASE("a WhileLoop nested in a ForRange, its condition on a float loop variable") {
  Check(NestedLoopCase());
}

TEST_CASE("a print in a loop body runs once per iteration, not again for the gradient") {
  testing::CapturePrints prints;
  Function f("printing_power", [](const Values& in) -> Result<Values> {
    GradientTape tape;
    tape.Watch(in[0]);
    const Value x = in[0];
    KILN_ASSIGN_OR_RETURN(Values out,
                          WhileLoop([](const Values& v) { return Less(v[0], Scalar<int32_t>(3)); },
                                    [&x](const Values& v) -> Result<Values> {
                                      KILN_RETURN_IF_ERROR(Print({v[0]}));
                                      return Values{v[0] + Scalar<int32_t>(1), v[1] * x};
                                    },
                                    {Scalar<int32_t>(0), x}));
    return tape.Gradient(out[1], in);
  });
  Result<std::vector<Tensor>> r = f(Tensor::Scalar(1.5F));
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  CHECK((*r)[0].scalar<float>() == doctest::Approx(4.0 * 1.5 * 1.5 * 1.5));
  CHECK(prints.text() == "0\n1\n2\n");
}

TEST_CASE("a loop gradient that would recompute a side effect is Unimplemented") {
  Variable counter = Variable::Create("count", Floats({}, {0.0F}));
  Function f("stateful_loop", [&](const Values& in) -> Result<Values> {
    GradientTape tape;
    tape.Watch(in[0]);
    const Value x = in[0];
    KILN_ASSIGN_OR_RETURN(Values out,
                          WhileLoop([](const Values& v) { return Less(v[0], Scalar<int32_t>(2)); },
                                    [&](const Values& v) -> Result<Values> {
                                      Value y = v[1] * x;
                                      counter.AssignAdd(Sum(y));
                                      return Values{v[0] + Scalar<int32_t>(1), y};
                                    },
                                    {Scalar<int32_t>(0), x}));
    return tape.Gradient(Sum(out[1]), in);
  });
  Result<std::vector<Tensor>> r = f(Floats({1}, {2.0F}));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kUnimplemented);
  CHECK(r.status().message().find("AssignAddVariableOp") != std::string::npos);
}

TEST_CASE("a Cond gradient after its variable was assigned is Unimplemented, not stale") {
  Variable v = Variable::Create("v", Floats({}, {2.0F}));
  for (bool in_cond : {false, true}) {
    CAPTURE(in_cond);
    Function f("assigned_between", [&](const Values& in) -> Result<Values> {
      GradientTape tape;
      KILN_ASSIGN_OR_RETURN(Values out,
                            Cond(
                                in[0] > 0.0, [&]() -> Result<Values> { return Values{v.Read()}; },
                                [&]() -> Result<Values> { return Values{v.Read() * 2.0}; }));
      if (in_cond) {
        // The assignment hides in a later Cond's branch.
        KILN_RETURN_IF_ERROR(
            Cond(
                in[0] > 1.0, [&]() -> Result<Values> { return Values{v.AssignAdd(Scalar(1.0F))}; },
                [&]() -> Result<Values> { return Values{Scalar(0.0F)}; })
                .status());
      } else {
        v.AssignAdd(Scalar(1.0F));
      }
      return tape.Gradient(out[0] * out[0], std::vector<Variable>{v});
    });
    Result<std::vector<Tensor>> r = f(Floats({}, {1.0F}));
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kUnimplemented);
    CHECK(r.status().message().find("'v'") != std::string::npos);
  }
}

TEST_CASE("a loop gradient over a TensorArray loop variable is Unimplemented") {
  Function f("array_loop", [](const Values& in) -> Result<Values> {
    GradientTape tape;
    tape.Watch(in[0]);
    TensorArray arr(DType::kFloat, 2);
    KILN_ASSIGN_OR_RETURN(Values out,
                          ForRange(Scalar<int32_t>(0), Scalar<int32_t>(2), Scalar<int32_t>(1),
                                   [&](const Value& i, const Values& v) -> Result<Values> {
                                     Value next = v[0] * in[0];
                                     return Values{next, arr.WithHandle(v[1]).Write(i, next)};
                                   },
                                   {in[0], arr}));
    return tape.Gradient(out[0], in);
  });
  Result<std::vector<Tensor>> r = f(Floats({}, {1.5F}));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kUnimplemented);
  CHECK(r.status().message().find("TensorArray") != std::string::npos);
}

}  // namespace
}  // namespace kiln::trace
