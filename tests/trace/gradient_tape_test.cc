// GradientTape: what it records, what Gradient returns, and its errors; eager and traced.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "kiln/trace/trace.h"
#include "tensorflow/framework.pb.h"

namespace kiln::trace {
namespace {

Tensor Vec(std::vector<float> v) {
  Tensor t(DType::kFloat, Shape{static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.flat<float>()[i] = v[i];
  return t;
}

std::vector<float> Floats(const Value& v) {
  Result<Tensor> t = v.tensor();
  REQUIRE_MESSAGE(t.ok(), t.status().ToString());
  std::vector<float> out;
  for (float f : t->flat<float>()) out.push_back(f);
  return out;
}

TEST_CASE("d(sum(x*x))/dx is 2x, eagerly") {
  Value x = Vec({1, -2, 3});
  GradientTape tape;
  tape.Watch(x);
  Value loss = Sum(x * x);
  auto g = tape.Gradient(loss, Values{x});
  REQUIRE(g.ok());
  CHECK(Floats((*g)[0]) == std::vector<float>{2, -4, 6});
}

TEST_CASE("trainable variables read under the tape are watched, others are not") {
  Variable w = Variable::Create("w", Vec({1, 2}));
  Variable frozen = Variable::Create("frozen", Vec({3, 4}), {.trainable = false});
  GradientTape tape;
  Value loss = Sum(w.Read() * frozen.Read());
  CHECK(tape.watched_variables().size() == 1);
  auto g = tape.Gradient(loss, std::vector<Variable>{w});
  REQUIRE(g.ok());
  CHECK(Floats((*g)[0]) == std::vector<float>{3, 4});

  GradientTape tape2;
  Value loss2 = Sum(w.Read() * frozen.Read());
  auto bad = tape2.Gradient(loss2, std::vector<Variable>{frozen});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("frozen") != std::string::npos);
  CHECK(bad.status().message().find("not on the tape") != std::string::npos);
}

TEST_CASE("a value used twice gets the sum of both gradients, broadcasting reduces back") {
  Value x = Vec({1, 2, 3});
  Value b = Tensor::Scalar(2.0F);
  GradientTape tape;
  tape.Watch(x);
  tape.Watch(b);
  Value loss = Sum(x * b + x);  // d/dx = b + 1, d/db = sum(x)
  auto g = tape.Gradient(loss, Values{x, b});
  REQUIRE(g.ok());
  CHECK(Floats((*g)[0]) == std::vector<float>{3, 3, 3});
  CHECK(Floats((*g)[1]) == std::vector<float>{6});
  CHECK((*g)[1].shape().rank() == 0);
}

TEST_CASE("unconnected sources: none by default, zeros on request, StopGradient blocks") {
  Value x = Vec({1, 2});
  Value y = Vec({5, 6});
  GradientTape tape({.persistent = true});
  tape.Watch(x);
  tape.Watch(y);
  Value loss = Sum(x * StopGradient(y));
  auto none = tape.Gradient(loss, Values{x, y});
  REQUIRE(none.ok());
  CHECK(Floats((*none)[0]) == std::vector<float>{5, 6});
  CHECK((*none)[1].empty());
  auto zeros = tape.Gradient(loss, Values{y}, {.unconnected = UnconnectedGradients::kZero});
  REQUIRE(zeros.ok());
  CHECK(Floats((*zeros)[0]) == std::vector<float>{0, 0});
}

TEST_CASE("tape errors name what is wrong") {
  Value x = Vec({1, 2});
  SUBCASE("a target that is not a scalar") {
    GradientTape tape;
    tape.Watch(x);
    auto g = tape.Gradient(x * x, Values{x});
    REQUIRE_FALSE(g.ok());
    CHECK(g.status().message().find("must be a scalar") != std::string::npos);
    CHECK(g.status().message().find("(2,)") != std::string::npos);
  }
  SUBCASE("a source that was never watched") {
    GradientTape tape;
    Value loss = Sum(x * x);
    auto g = tape.Gradient(loss, Values{x});
    REQUIRE_FALSE(g.ok());
    CHECK(g.status().message().find("not on the tape") != std::string::npos);
  }
  SUBCASE("an op with no gradient function") {
    GradientTape tape;
    tape.Watch(x);
    Value c = OpBuilder("Cumsum")
                  .Input(x)
                  .Input(Tensor::Scalar(int32_t{0}))
                  .Attr("T", DType::kFloat)
                  .Attr("Tidx", DType::kInt32)
                  .BuildOne();
    auto g = tape.Gradient(Sum(c), Values{x});
    REQUIRE_FALSE(g.ok());
    CHECK(g.status().code() == StatusCode::kUnimplemented);
    CHECK(g.status().message().find("'Cumsum'") != std::string::npos);
  }
  SUBCASE("a second Gradient call on a tape that is not persistent") {
    GradientTape tape;
    tape.Watch(x);
    Value loss = Sum(x * x);
    REQUIRE(tape.Gradient(loss, Values{x}).ok());
    auto again = tape.Gradient(loss, Values{x});
    REQUIRE_FALSE(again.ok());
    CHECK(again.status().message().find("persistent") != std::string::npos);
  }
  SUBCASE("an integer target") {
    GradientTape tape;
    Value i = Tensor::Scalar(int32_t{3});
    tape.Watch(x);
    auto g = tape.Gradient(i, Values{x});
    REQUIRE_FALSE(g.ok());
    CHECK(g.status().message().find("floating-point") != std::string::npos);
  }
}

TEST_CASE("a traced gradient emits TensorFlow's gradient ops and equals the eager one") {
  Variable w = Variable::Create("w", Vec({0.5F, -1.0F, 2.0F}));
  Variable b = Variable::Create("b", Vec({0.1F, 0.2F, -0.3F}));
  auto body = [&](const Values& args) -> Result<Values> {
    GradientTape tape;
    Value h = Relu(BiasAdd(args[0] * w.Read(), b.Read()));
    Value loss = Sum(h * h);
    KILN_ASSIGN_OR_RETURN(Values g, tape.Gradient(loss, std::vector<Variable>{w, b}));
    return Values{loss, g[0], g[1]};
  };
  Function f("grad_step", {{"x", DType::kFloat, PartialShape({-1, 3})}}, body);
  Tensor x(DType::kFloat, Shape{2, 3});
  const float xs[] = {1, 2, 3, -1, 0.5F, 1};
  for (int i = 0; i < 6; ++i) x.flat<float>()[i] = xs[i];
  auto traced = f(x);
  REQUIRE_MESSAGE(traced.ok(), traced.status().ToString());
  auto eager = body(Values{Value(x)});
  REQUIRE(eager.ok());
  for (int k = 0; k < 3; ++k) {
    CAPTURE(k);
    std::vector<float> t(traced->at(k).flat<float>().begin(), traced->at(k).flat<float>().end());
    CHECK(t == Floats((*eager)[k]));
  }
  auto cf = f.GetConcreteFunction();
  REQUIRE(cf.ok());
  std::set<std::string> ops;
  for (const auto& n : (*cf)->function_def().node_def()) ops.insert(n.op());
  CHECK(ops.count("ReluGrad") == 1);
  CHECK(ops.count("BiasAddGrad") == 1);
  // The batch dimension is unknown while tracing: the broadcast is reduced with TensorFlow's
  // BroadcastGradientArgs.
  CHECK(ops.count("BroadcastGradientArgs") == 1);
}

}  // namespace
}  // namespace kiln::trace
