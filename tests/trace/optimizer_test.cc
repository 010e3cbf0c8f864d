// Optimizers and losses: updates against the formulas written out, slots as module variables,
// a traced train step that learns, and the errors.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "kiln/modules/losses.h"
#include "kiln/modules/optimizers.h"
#include "kiln/trace/trace.h"
#include "tensorflow/framework.pb.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::modules {
namespace {

using trace::Value;
using trace::Values;
using trace::Variable;

Tensor Vec(std::vector<float> v) {
  Tensor t(DType::kFloat, Shape{static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.flat<float>()[i] = v[i];
  return t;
}

std::vector<double> ValuesOf(const Variable& v) {
  Result<Tensor> t = v.value();
  REQUIRE(t.ok());
  std::vector<double> out;
  for (float f : t->flat<float>()) out.push_back(f);
  return out;
}

double ScalarOf(const Value& v) {
  Result<Tensor> t = v.tensor();
  REQUIRE_MESSAGE(t.ok(), t.status().ToString());
  return t->flat<float>()[0];
}

void CheckNear(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-5));
}

// Two steps on w with the fixed gradients g1 then g2.
template <typename Opt>
void TwoSteps(Opt& opt, const Variable& w, const std::vector<float>& g1,
              const std::vector<float>& g2) {
  REQUIRE(opt.ApplyGradients(Values{Value(Vec(g1))}, {w}).ok());
  REQUIRE(opt.ApplyGradients(Values{Value(Vec(g2))}, {w}).ok());
}

TEST_CASE("SGD, SGD with momentum and Nesterov follow Keras's formulas") {
  const std::vector<float> w0 = {1.0F, -2.0F};
  const std::vector<float> g1 = {0.5F, 1.0F};
  const std::vector<float> g2 = {-1.0F, 2.0F};
  {
    Sgd sgd({.base = {.learning_rate = 0.1F}});
    Variable w = Variable::Create("w", Vec(w0));
    TwoSteps(sgd, w, g1, g2);
    CheckNear(ValuesOf(w), {1.0 - 0.1 * (0.5 - 1.0), -2.0 - 0.1 * (1.0 + 2.0)});
    CHECK(sgd.iterations().value()->flat<int64_t>()[0] == 2);
  }
  for (bool nesterov : {false, true}) {
    CAPTURE(nesterov);
    Sgd sgd({.base = {.learning_rate = 0.1F}, .momentum = 0.9F, .nesterov = nesterov});
    Variable w = Variable::Create("w", Vec(w0));
    TwoSteps(sgd, w, g1, g2);
    std::vector<double> want;
    for (int i = 0; i < 2; ++i) {
      double x = w0[i];
      double m = 0;
      for (double g : {static_cast<double>(g1[i]), static_cast<double>(g2[i])}) {
        m = 0.9 * m - 0.1 * g;
        x += nesterov ? 0.9 * m - 0.1 * g : m;
      }
      want.push_back(x);
    }
    CheckNear(ValuesOf(w), want);
    // The slot is a variable of the optimizer module, saved with it.
    auto named = sgd.named_variables();
    std::set<std::string> names;
    for (const auto& [n, v] : named) names.insert(n);
    CHECK(names == std::set<std::string>{"iteration", "learning_rate", "w_momentum"});
  }
}

TEST_CASE("Adam and AdamW follow Keras's formulas, with beta powers from the step count") {
  const std::vector<float> w0 = {1.0F, -2.0F};
  const std::vector<float> g1 = {0.5F, 1.0F};
  const std::vector<float> g2 = {-1.0F, 2.0F};
  for (float wd : {0.0F, 0.01F}) {
    CAPTURE(wd);
    AdamOptions o;
    o.base.learning_rate = 0.1F;
    o.weight_decay = wd;
    Adam adam(o);
    CHECK(adam.type_name() == (wd > 0 ? "AdamW" : "Adam"));
    Variable w = Variable::Create("w", Vec(w0));
    TwoSteps(adam, w, g1, g2);
    std::vector<double> want;
    for (int i = 0; i < 2; ++i) {
      double x = w0[i];
      double m = 0;
      double v = 0;
      int t = 0;
      for (double g : {static_cast<double>(g1[i]), static_cast<double>(g2[i])}) {
        ++t;
        x -= x * wd * 0.1;
        m += (g - m) * (1 - 0.9);
        v += (g * g - v) * (1 - 0.999);
        const double alpha = 0.1 * std::sqrt(1 - std::pow(0.999, t)) / (1 - std::pow(0.9, t));
        x -= m * alpha / (std::sqrt(v) + 1e-7);
      }
      want.push_back(x);
    }
    CheckNear(ValuesOf(w), want);
  }
}

TEST_CASE("RMSprop follows ResourceApplyRMSProp") {
  RmsProp rms({.base = {.learning_rate = 0.01F}, .rho = 0.9F, .momentum = 0.5F});
  Variable w = Variable::Create("w", Vec({1.0F}));
  TwoSteps(rms, w, {2.0F}, {-1.0F});
  double x = 1;
  double ms = 0;
  double mom = 0;
  for (double g : {2.0, -1.0}) {
    ms = 0.9 * ms + 0.1 * g * g;
    mom = 0.5 * mom + 0.01 * g / std::sqrt(ms + 1e-7);
    x -= mom;
  }
  CheckNear(ValuesOf(w), {x});
}

TEST_CASE("gradient clipping by norm and by global norm") {
  Value g = Vec({3.0F, 4.0F});  // norm 5
  Result<Tensor> c = ClipByNorm(g, 1.0F).tensor();
  REQUIRE(c.ok());
  CHECK(c->flat<float>()[0] == doctest::Approx(0.6));
  CHECK(c->flat<float>()[1] == doctest::Approx(0.8));
  Values both = ClipByGlobalNorm(Values{Vec({3.0F}), Value(), Vec({4.0F})}, 2.5F);
  CHECK(ScalarOf(both[0]) == doctest::Approx(1.5));
  CHECK(both[1].empty());
  CHECK(ScalarOf(both[2]) == doctest::Approx(2.0));
  Values small = ClipByGlobalNorm(Values{Vec({0.3F})}, 2.5F);
  CHECK(ScalarOf(small[0]) == doctest::Approx(0.3));
}

TEST_CASE("optimizer errors name the variable and what was expected") {
  Adam adam;
  Variable w = Variable::Create("kernel", Vec({1.0F, 2.0F}));
  Status count = adam.ApplyGradients(Values{}, {w});
  CHECK(count.message().find("0 gradients for 1 variables") != std::string::npos);
  Status shape = adam.ApplyGradients(Values{Value(Vec({1.0F, 2.0F, 3.0F}))}, {w});
  CHECK(shape.code() == StatusCode::kInvalidArgument);
  CHECK(shape.message().find("'kernel'") != std::string::npos);
  CHECK(shape.message().find("(3,)") != std::string::npos);
  CHECK(shape.message().find("(2,)") != std::string::npos);
}

TEST_CASE("losses equal their formulas") {
  Tensor logits(DType::kFloat, Shape{2, 3});
  const float l[] = {1.0F, 2.0F, 0.5F, -1.0F, 0.0F, 3.0F};
  for (int i = 0; i < 6; ++i) logits.flat<float>()[i] = l[i];
  Tensor labels(DType::kInt32, Shape{2});
  labels.flat<int32_t>()[0] = 1;
  labels.flat<int32_t>()[1] = 2;
  auto lse = [&](int r) {
    double s = 0;
    for (int c = 0; c < 3; ++c) s += std::exp(l[r * 3 + c]);
    return std::log(s);
  };
  const double want = ((lse(0) - 2.0) + (lse(1) - 3.0)) / 2;
  CHECK(ScalarOf(SparseCategoricalCrossentropy(labels, logits, true)) == doctest::Approx(want));
  Tensor onehot(DType::kFloat, Shape{2, 3});
  onehot.flat<float>()[1] = 1;
  onehot.flat<float>()[5] = 1;
  CHECK(ScalarOf(CategoricalCrossentropy(onehot, logits, true)) == doctest::Approx(want));
  // Probabilities: the same loss through the softmax.
  Value probs = trace::Softmax(logits);
  CHECK(ScalarOf(SparseCategoricalCrossentropy(labels, probs)) ==
        doctest::Approx(want).epsilon(1e-4));
  CHECK(ScalarOf(CategoricalCrossentropy(onehot, probs)) == doctest::Approx(want).epsilon(1e-4));

  Value x = Vec({2.0F, -1.0F});
  Value z = Vec({1.0F, 0.0F});
  auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
  const double bce = -(std::log(sig(2.0)) + std::log(1 - sig(-1.0))) / 2;
  CHECK(ScalarOf(BinaryCrossentropy(z, x, true)) == doctest::Approx(bce));
  CHECK(ScalarOf(BinaryCrossentropy(z, trace::Sigmoid(x))) == doctest::Approx(bce).epsilon(1e-4));
  CHECK(ScalarOf(MeanSquaredError(z, x)) == doctest::Approx((1.0 + 1.0) / 2));
}

TEST_CASE("loss errors name the mismatch") {
  Tensor logits(DType::kFloat, Shape{2, 3});
  Value wrong_dtype = SparseCategoricalCrossentropy(Vec({1.0F, 2.0F}), logits, true);
  REQUIRE_FALSE(wrong_dtype.ok());
  CHECK(wrong_dtype.status().message().find("int32 or int64") != std::string::npos);
  Tensor three(DType::kInt32, Shape{3});
  Value wrong_rows = SparseCategoricalCrossentropy(three, logits, true);
  REQUIRE_FALSE(wrong_rows.ok());
  CHECK(wrong_rows.status().message().find("(3,)") != std::string::npos);
  Value mse = MeanSquaredError(Vec({1.0F}), logits);
  REQUIRE_FALSE(mse.ok());
  CHECK(mse.status().message().find("MeanSquaredError") != std::string::npos);
}

TEST_CASE("a traced train step with Adam learns and emits ResourceApplyAdam") {
  // y = 3x - 1 from 8 points.
  Variable w = Variable::Create("w", Tensor::Scalar(0.0F));
  Variable b = Variable::Create("b", Tensor::Scalar(0.0F));
  Adam adam({.base = {.learning_rate = 0.1F}});
  trace::Function step(
      "train_step",
      {{"x", DType::kFloat, PartialShape({8})}, {"y", DType::kFloat, PartialShape({8})}},
      [&](const Values& a) -> Result<Values> {
        trace::GradientTape tape;
        Value loss = MeanSquaredError(a[1], a[0] * w.Read() + b.Read());
        std::vector<Variable> vars = {w, b};
        KILN_ASSIGN_OR_RETURN(Values g, tape.Gradient(loss, vars));
        KILN_RETURN_IF_ERROR(adam.ApplyGradients(g, vars));
        return Values{loss};
      });
  Tensor x(DType::kFloat, Shape{8});
  Tensor y(DType::kFloat, Shape{8});
  for (int i = 0; i < 8; ++i) {
    x.flat<float>()[i] = static_cast<float>(i) / 4 - 1;
    y.flat<float>()[i] = 3 * x.flat<float>()[i] - 1;
  }
  float first = 0;
  float last = 0;
  for (int i = 0; i < 300; ++i) {
    auto r = step(x, y);
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    if (i == 0) first = r->at(0).flat<float>()[0];
    last = r->at(0).flat<float>()[0];
  }
  CHECK(step.trace_count() == 1);
  CHECK(last < first * 1e-3F);
  CHECK(w.value()->flat<float>()[0] == doctest::Approx(3.0).epsilon(0.02));
  CHECK(b.value()->flat<float>()[0] == doctest::Approx(-1.0).epsilon(0.02));
  CHECK(adam.iterations().value()->flat<int64_t>()[0] == 300);
  auto cf = step.GetConcreteFunction();
  REQUIRE(cf.ok());
  int applies = 0;
  for (const auto& n : (*cf)->function_def().node_def()) applies += n.op() == "ResourceApplyAdam";
  CHECK(applies == 2);
}

}  // namespace
}  // namespace kiln::modules

namespace kiln::modules {
namespace {

TEST_CASE("saving traces a train step first, so the optimizer's slots are in the bundle") {
  class Trainer : public trace::Module {
   public:
    Trainer()
        : Module("trainer"),
          w(AddVariable("w", Vec({1.0F, 2.0F}))),
          adam(EmplaceModule<Adam>("optimizer")) {
      AddMethod("train", {{"x", DType::kFloat, PartialShape({2})}},
                [this](const Values& a) -> Result<Values> {
                  trace::GradientTape tape;
                  Value loss = trace::Sum(a[0] * w.Read());
                  KILN_ASSIGN_OR_RETURN(Values g, tape.Gradient(loss, std::vector<Variable>{w}));
                  KILN_RETURN_IF_ERROR(adam.ApplyGradients(g, {w}));
                  return Values{loss};
                });
    }
    Variable w;
    Adam& adam;
  } trainer;
  auto exported = trace::BuildSavedModel(trainer);
  REQUIRE_MESSAGE(exported.ok(), exported.status().ToString());
  std::set<std::string> keys;
  for (const auto& [k, v] : exported->checkpoint) keys.insert(k);
  CHECK(keys.count("optimizer/w_momentum/.ATTRIBUTES/VARIABLE_VALUE") == 1);
  CHECK(keys.count("optimizer/w_velocity/.ATTRIBUTES/VARIABLE_VALUE") == 1);
  CHECK(keys.count("optimizer/iteration/.ATTRIBUTES/VARIABLE_VALUE") == 1);
}

}  // namespace
}  // namespace kiln::modules
