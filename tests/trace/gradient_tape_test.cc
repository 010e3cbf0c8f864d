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

// GatherV2 with the gradient of sum(y * (1, 2, 3, ...)) flowing back; axis and batch_dims as
// tf.gather's.
Value WeightedGather(const Value& x, const Value& indices, int32_t axis, int64_t batch_dims) {
  Value y = OpBuilder("GatherV2")
                .Input(x)
                .Input(indices)
                .Input(Scalar<int32_t>(axis))
                .Attr("Tparams", DType::kFloat)
                .Attr("Tindices", DType::kInt32)
                .Attr("Taxis", DType::kInt32)
                .Attr("batch_dims", batch_dims)
                .BuildOne();
  Value n = OpBuilder("Size").Input(y).Attr("T", DType::kFloat).BuildOne();
  Value w = Cast(Range(Scalar<int32_t>(0), n, Scalar<int32_t>(1)), DType::kFloat) + 1.0;
  w = OpBuilder("Reshape")
          .Input(w)
          .Input(ShapeOf(y))
          .Attr("T", DType::kFloat)
          .Attr("Tshape", DType::kInt32)
          .BuildOne();
  return Sum(y * w);
}

Tensor IntTensor(std::vector<int64_t> dims, std::vector<int32_t> v) {
  Tensor t(DType::kInt32, *Shape::FromDims(dims));
  for (size_t i = 0; i < v.size(); ++i) t.flat<int32_t>()[i] = v[i];
  return t;
}

TEST_CASE("the gradient of GatherV2 along any axis and with batch dims equals TensorFlow's") {
  // Expected values: tf.GradientTape on tf.gather(x, indices, axis, batch_dims), TF 2.21.
  struct Case {
    int32_t axis;
    int64_t batch_dims;
    Tensor indices;
    std::vector<float> expected;
  };
  const std::vector<Case> cases = {
      {1, 0, IntTensor({4}, {2, 0, 2, 1}), {5,  6,  7,  8,  13, 14, 15, 16, 10, 12, 14, 16,
                                            21, 22, 23, 24, 29, 30, 31, 32, 42, 44, 46, 48}},
      {2, 0, IntTensor({3}, {3, 0, 3}), {2,  0, 0, 4,  5,  0, 0, 10, 8,  0, 0, 16,
                                         11, 0, 0, 22, 14, 0, 0, 28, 17, 0, 0, 34}},
      {-1, 0, IntTensor({3}, {3, 0, 3}), {2,  0, 0, 4,  5,  0, 0, 10, 8,  0, 0, 16,
                                          11, 0, 0, 22, 14, 0, 0, 28, 17, 0, 0, 34}},
      {1, 1, IntTensor({2, 2}, {2, 0, 1, 1}), {5, 6, 7, 8, 0,  0,  0,  0,  1, 2, 3, 4,
                                               0, 0, 0, 0, 22, 24, 26, 28, 0, 0, 0, 0}},
      {2, 1, IntTensor({2, 3}, {3, 0, 3, 1, 1, 2}), {2, 0,  0,  4, 5, 0,  0,  10, 8, 0,  0,  16,
                                                     0, 21, 12, 0, 0, 27, 15, 0,  0, 33, 18, 0}},
      {2, 2, IntTensor({2, 3, 1}, {1, 0, 3, 2, 2, 0}), {0, 1, 0, 0, 2, 0, 0, 0, 0, 0, 0, 3,
                                                        0, 0, 4, 0, 0, 0, 5, 0, 6, 0, 0, 0}},
  };
  Tensor x(DType::kFloat, Shape{2, 3, 4});
  for (int64_t i = 0; i < 24; ++i) x.flat<float>()[i] = static_cast<float>(i) / 10;
  for (const Case& c : cases) {
    CAPTURE(c.axis);
    CAPTURE(c.batch_dims);
    auto body = [&c](const Values& a) -> Result<Values> {
      GradientTape tape;
      tape.Watch(a[0]);
      return tape.Gradient(WeightedGather(a[0], a[1], c.axis, c.batch_dims), Values{a[0]});
    };
    auto eager = body(Values{Value(x), Value(c.indices)});
    REQUIRE_MESSAGE(eager.ok(), eager.status().ToString());
    CHECK(Floats((*eager)[0]) == c.expected);
    // Traced with every dim unknown: the gradient reads the shapes with Shape ops.
    const std::vector<int64_t> unknown_dims(c.indices.rank(), -1);
    const PartialShape unknown_indices = *PartialShape::FromDims(unknown_dims);
    Function f("gather_grad",
               {{"x", DType::kFloat, PartialShape({-1, -1, -1})},
                {"indices", DType::kInt32, unknown_indices}},
               body);
    auto traced = f(x, c.indices);
    REQUIRE_MESSAGE(traced.ok(), traced.status().ToString());
    CHECK(traced->at(0).shape() == x.shape());
    std::vector<float> got(traced->at(0).flat<float>().begin(), traced->at(0).flat<float>().end());
    CHECK(got == c.expected);
  }
}

TEST_CASE("the gradient of a gather from a batch of unknown size works while tracing") {
  // The report's case: x: (None, 3), sum(gather(x, [2, 0])) -> rows 0 and 2 get ones.
  Function f(
      "gather_rows", {{"x", DType::kFloat, PartialShape({-1, 3})}},
      [](const Values& a) -> Result<Values> {
        GradientTape tape;
        tape.Watch(a[0]);
        return tape.Gradient(Sum(Gather(a[0], Constant(IntTensor({2}, {2, 0})))), Values{a[0]});
      });
  Tensor x(DType::kFloat, Shape{3, 3});
  for (int64_t i = 0; i < 9; ++i) x.flat<float>()[i] = static_cast<float>(i);
  auto g = f(x);
  REQUIRE_MESSAGE(g.ok(), g.status().ToString());
  std::vector<float> got(g->at(0).flat<float>().begin(), g->at(0).flat<float>().end());
  CHECK(got == std::vector<float>{1, 1, 1, 0, 0, 0, 1, 1, 1});
  CHECK(g->at(0).shape() == x.shape());
}

TEST_CASE("second-order gradients: a tape records the gradient another computed") {
  // y = sum(x^3 + exp(x)); g = dy/dx = 3x^2 + exp(x); h = d sum(g)/dx = 6x + exp(x).
  // Expected values: nested tf.GradientTape, eager and in a tf.function, TF 2.21.
  auto body = [](const Values& a) -> Result<Values> {
    GradientTape outer;
    outer.Watch(a[0]);
    GradientTape inner;
    inner.Watch(a[0]);
    Value y = Sum(a[0] * a[0] * a[0] + Exp(a[0]));
    KILN_ASSIGN_OR_RETURN(Values g, inner.Gradient(y, Values{a[0]}));
    KILN_ASSIGN_OR_RETURN(Values h, outer.Gradient(Sum(g[0]), Values{a[0]}));
    return Values{g[0], h[0]};
  };
  const std::vector<float> want_g = {3.3678794F, 2.3987212F, 19.389057F};
  const std::vector<float> want_h = {-5.6321206F, 4.6487212F, 19.389057F};
  auto check = [&](const std::vector<float>& g, const std::vector<float>& h) {
    REQUIRE(g.size() == 3);
    REQUIRE(h.size() == 3);
    for (size_t i = 0; i < 3; ++i) {
      CAPTURE(i);
      CHECK(g[i] == doctest::Approx(want_g[i]).epsilon(1e-6));
      CHECK(h[i] == doctest::Approx(want_h[i]).epsilon(1e-6));
    }
  };
  const Tensor x = Vec({-1.0F, 0.5F, 2.0F});
  auto eager = body(Values{Value(x)});
  REQUIRE_MESSAGE(eager.ok(), eager.status().ToString());
  check(Floats((*eager)[0]), Floats((*eager)[1]));
  // Traced with a static shape: with an unknown one, the first gradient reduces broadcasts with
  // Sum over BroadcastGradientArgs' axes, whose own gradient needs constant axes (not yet).
  Function f("second_order", {{"x", DType::kFloat, PartialShape({3})}}, body);
  auto traced = f(x);
  REQUIRE_MESSAGE(traced.ok(), traced.status().ToString());
  check(std::vector<float>(traced->at(0).flat<float>().begin(), traced->at(0).flat<float>().end()),
        std::vector<float>(traced->at(1).flat<float>().begin(), traced->at(1).flat<float>().end()));

  // Not yet: the gradient of TanhGrad (and the other *Grad ops); an error names the op.
  GradientTape outer;
  Value v = x;
  outer.Watch(v);
  GradientTape inner;
  inner.Watch(v);
  Result<Values> g = inner.Gradient(Sum(Tanh(v)), Values{v});
  REQUIRE(g.ok());
  Result<Values> h = outer.Gradient(Sum((*g)[0]), Values{v});
  REQUIRE_FALSE(h.ok());
  CHECK(h.status().message().find("'TanhGrad'") != std::string::npos);
}

}  // namespace
}  // namespace kiln::trace
