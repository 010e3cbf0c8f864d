// BatchNormalization (moving statistics in inference, batch statistics and moving-average
// updates only when training, the training flag as a traced host argument) and
// LayerNormalization, against plain loops.
#include "kiln/modules/normalization.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "layer_test_util.h"

namespace kiln::modules {
namespace {

using testing::MaxRelDiff;
using testing::Mentions;
using testing::OpsOf;
using testing::RandomTensor;
using trace::Arg;
using trace::Args;
using trace::Value;
using trace::Values;

constexpr int64_t kRows = 6;  // batch * positions
constexpr int64_t kChannels = 3;

// Per-channel mean and biased variance of a [rows, channels] view.
void Moments(const Tensor& x, std::vector<double>* mean, std::vector<double>* var) {
  const int64_t c = x.shape()[x.rank() - 1];
  const int64_t rows = x.NumElements() / c;
  mean->assign(c, 0.0);
  var->assign(c, 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < c; ++j) (*mean)[j] += x.flat<float>()[r * c + j] / double(rows);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < c; ++j) {
      const double d = x.flat<float>()[r * c + j] - (*mean)[j];
      (*var)[j] += d * d / double(rows);
    }
}

// (x - mean) / sqrt(var + eps) * gamma + beta, per channel.
Tensor Normalized(const Tensor& x, const std::vector<double>& mean, const std::vector<double>& var,
                  const Tensor& gamma, const Tensor& beta, double eps) {
  const int64_t c = x.shape()[x.rank() - 1];
  Tensor y(DType::kFloat, x.shape());
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    const int64_t j = i % c;
    y.flat<float>()[i] = static_cast<float>((x.flat<float>()[i] - mean[j]) /
                                                std::sqrt(var[j] + eps) * gamma.flat<float>()[j] +
                                            beta.flat<float>()[j]);
  }
  return y;
}

std::vector<double> Values64(const trace::Variable& v) {
  const Tensor t = *v.value();
  return {t.flat<float>().begin(), t.flat<float>().end()};
}

struct BatchNormFixture {
  BatchNormalization bn;
  Tensor gamma = RandomTensor(Shape{kChannels}, 1, 0.5f, 1.5f);
  Tensor beta = RandomTensor(Shape{kChannels}, 2);
  Tensor moving_mean = RandomTensor(Shape{kChannels}, 3);
  Tensor moving_var = RandomTensor(Shape{kChannels}, 4, 0.5f, 2.0f);
  Tensor x = RandomTensor(Shape{2, kRows / 2, kChannels}, 5, -2, 3);

  BatchNormFixture() {
    REQUIRE(bn.Build(PartialShape{-1, kRows / 2, kChannels}).ok());
    REQUIRE(bn.gamma().SetValue(gamma).ok());
    REQUIRE(bn.beta().SetValue(beta).ok());
    REQUIRE(bn.moving_mean().SetValue(moving_mean).ok());
    REQUIRE(bn.moving_variance().SetValue(moving_var).ok());
  }
  std::vector<double> Mm() const { return Values64(bn.moving_mean()); }
  std::vector<double> Mv() const { return Values64(bn.moving_variance()); }
};

TEST_CASE("BatchNormalization: Keras's variables, trainable and not") {
  BatchNormFixture f;
  std::vector<std::string> names;
  for (const auto& [path, v] : f.bn.named_variables()) names.push_back(path);
  CHECK(names == std::vector<std::string>{"gamma", "beta", "moving_mean", "moving_variance"});
  CHECK(f.bn.trainable_variables().size() == 2);
  CHECK(f.bn.non_trainable_variables().size() == 2);
  CHECK(f.bn.CountParams() == 4 * kChannels);
  CHECK(f.bn.CountTrainableParams() == 2 * kChannels);
  CHECK(f.bn.options().momentum == 0.99f);
  CHECK(f.bn.options().epsilon == 1e-3f);
}

TEST_CASE("BatchNormalization in inference uses the moving statistics and changes nothing") {
  BatchNormFixture f;
  const std::vector<double> mm = f.Mm(), mv = f.Mv();
  Value y = f.bn(f.x);
  REQUIRE(y.ok());
  CHECK(MaxRelDiff(*y.tensor(), Normalized(f.x, mm, mv, f.gamma, f.beta, 1e-3)) < 1e-5f);
  CHECK(f.Mm() == mm);
  CHECK(f.Mv() == mv);
}

TEST_CASE("BatchNormalization in training uses the batch statistics and moves the averages") {
  BatchNormFixture f;
  const std::vector<double> mm = f.Mm(), mv = f.Mv();
  std::vector<double> mean, var;
  Moments(f.x, &mean, &var);
  Value y = f.bn(f.x, /*training=*/true);
  REQUIRE(y.ok());
  CHECK(MaxRelDiff(*y.tensor(), Normalized(f.x, mean, var, f.gamma, f.beta, 1e-3)) < 1e-5f);
  for (int64_t j = 0; j < kChannels; ++j) {
    CHECK(f.Mm()[j] == doctest::Approx(0.99 * mm[j] + 0.01 * mean[j]).epsilon(1e-5));
    CHECK(f.Mv()[j] == doctest::Approx(0.99 * mv[j] + 0.01 * var[j]).epsilon(1e-5));
  }
  // A frozen layer runs in inference mode even when training, as in Keras.
  f.bn.set_trainable(false);
  const std::vector<double> before = f.Mm();
  Value frozen = f.bn(f.x, true);
  REQUIRE(frozen.ok());
  CHECK(f.Mm() == before);
}

TEST_CASE("BatchNormalization's training flag is a host argument: one trace per value") {
  BatchNormFixture f;
  trace::FunctionOptions options;
  trace::Function call("call", options, [&f](const Args& a) -> Result<Values> {
    return Values{f.bn(a[0].value(), a[1].bool_value())};
  });
  const std::vector<double> mm = f.Mm();
  std::vector<double> mean, var;
  Moments(f.x, &mean, &var);

  auto inference = call(f.x, false);
  REQUIRE(inference.ok());
  CHECK(f.Mm() == mm);
  auto train1 = call(f.x, true);
  auto train2 = call(f.x, true);
  REQUIRE(train1.ok());
  REQUIRE(train2.ok());
  CHECK(call.trace_count() == 2);
  // Two training calls moved the mean twice: m -> m + (mean - m) * 0.01, twice.
  for (int64_t j = 0; j < kChannels; ++j) {
    const double once = mm[j] + (mean[j] - mm[j]) * 0.01;
    CHECK(f.Mm()[j] == doctest::Approx(once + (mean[j] - once) * 0.01).epsilon(1e-5));
  }
  CHECK(MaxRelDiff((*train1)[0], (*train2)[0]) < 1e-6f);  // batch statistics: the same output
  auto inference2 = call(f.x, false);
  REQUIRE(inference2.ok());
  CHECK(call.trace_count() == 2);
  CHECK(MaxRelDiff((*inference2)[0], (*inference)[0]) > 1e-4f);  // the averages moved

  // Only the training graph has the updates.
  auto cf_train = call.GetConcreteFunction(Args{Arg(f.x), Arg(true)});
  auto cf_infer = call.GetConcreteFunction(Args{Arg(f.x), Arg(false)});
  REQUIRE(cf_train.ok());
  REQUIRE(cf_infer.ok());
  CHECK(testing::Contains(OpsOf(**cf_train), "AssignAddVariableOp"));
  CHECK(testing::Contains(OpsOf(**cf_train), "Mean"));
  CHECK_FALSE(testing::Contains(OpsOf(**cf_infer), "AssignAddVariableOp"));
  CHECK_FALSE(testing::Contains(OpsOf(**cf_infer), "Mean"));
}

TEST_CASE("LayerNormalization normalizes each example over its last axis") {
  LayerNormalization ln;
  const Tensor x = RandomTensor(Shape{4, 5}, 7, -3, 2);
  REQUIRE(ln(x).ok());
  const Tensor gamma = RandomTensor(Shape{5}, 8, 0.5f, 1.5f);
  const Tensor beta = RandomTensor(Shape{5}, 9);
  REQUIRE(ln.gamma().SetValue(gamma).ok());
  REQUIRE(ln.beta().SetValue(beta).ok());
  Value y = ln(x);
  REQUIRE(y.ok());
  Tensor expected(DType::kFloat, x.shape());
  for (int64_t r = 0; r < 4; ++r) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < 5; ++j) mean += x.flat<float>()[r * 5 + j] / 5.0;
    for (int64_t j = 0; j < 5; ++j) {
      const double d = x.flat<float>()[r * 5 + j] - mean;
      var += d * d / 5.0;
    }
    for (int64_t j = 0; j < 5; ++j) {
      expected.flat<float>()[r * 5 + j] = static_cast<float>(
          (x.flat<float>()[r * 5 + j] - mean) / std::sqrt(var + 1e-3) * gamma.flat<float>()[j] +
          beta.flat<float>()[j]);
    }
  }
  CHECK(MaxRelDiff(*y.tensor(), expected) < 1e-5f);
  CHECK(ln.CountParams() == 10);
  CHECK(ln.CountTrainableParams() == 10);
}

TEST_CASE("normalization errors name the layer and what it expected") {
  BatchNormalization bn;
  REQUIRE(bn(RandomTensor(Shape{2, 3}, 1)).ok());
  Value wrong = bn(RandomTensor(Shape{2, 4}, 1));
  REQUIRE_FALSE(wrong.ok());
  CHECK(Mentions(wrong.status(), "BatchNormalization 'batch_normalization': built for 3 features"));
  LayerNormalization ln;
  Value scalar = ln(Tensor::Scalar(1.0f));
  REQUIRE_FALSE(scalar.ok());
  CHECK(Mentions(scalar.status(),
                 "LayerNormalization 'layer_normalization': expected an input of rank 2"));
}

}  // namespace
}  // namespace kiln::modules
