// Dropout (active only when training, a host value that retraces), Flatten, Reshape, Embedding
// and the activations, against plain loops.
#include "kiln/modules/core_layers.h"

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
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

TEST_CASE("Dropout is the identity unless training, when it zeroes about `rate` and scales") {
  Dropout dropout(DropoutOptions{.rate = 0.25f, .seed = 7});
  const Tensor x = RandomTensor(Shape{100, 100}, 3, 0.5f, 1.5f);  // no zeros of its own
  Value same = dropout(x);
  REQUIRE(same.ok());
  CHECK(MaxRelDiff(*same.tensor(), x) == 0.0f);

  Value y = dropout(x, /*training=*/true);
  REQUIRE(y.ok());
  int64_t zeros = 0;
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    const float v = y.tensor()->flat<float>()[i];
    if (v == 0.0f) {
      ++zeros;
    } else {
      CHECK(v == doctest::Approx(x.flat<float>()[i] / 0.75f).epsilon(1e-6));
    }
  }
  const double fraction = static_cast<double>(zeros) / static_cast<double>(x.NumElements());
  CHECK(fraction > 0.22);
  CHECK(fraction < 0.28);
}

TEST_CASE("Dropout's training flag is a host argument: two traces, the mask in one only") {
  Dropout dropout(0.5f);
  trace::FunctionOptions options;
  trace::Function call("call", options, [&dropout](const Args& a) -> Result<Values> {
    return Values{dropout(a[0].value(), a[1].bool_value())};
  });
  const Tensor x = RandomTensor(Shape{8, 16}, 4, 1, 2);
  auto inference = call(x, false);
  auto training = call(x, true);
  auto inference2 = call(x, false);
  REQUIRE(inference.ok());
  REQUIRE(training.ok());
  REQUIRE(inference2.ok());
  CHECK(call.trace_count() == 2);
  CHECK(MaxRelDiff((*inference)[0], x) == 0.0f);
  CHECK(MaxRelDiff((*training)[0], x) > 0.5f);  // zeros and doubled values
  auto cf_train = call.GetConcreteFunction(Args{Arg(x), Arg(true)});
  auto cf_infer = call.GetConcreteFunction(Args{Arg(x), Arg(false)});
  REQUIRE(cf_train.ok());
  REQUIRE(cf_infer.ok());
  CHECK(testing::Contains(OpsOf(**cf_train), "RandomUniform"));
  CHECK_FALSE(testing::Contains(OpsOf(**cf_infer), "RandomUniform"));
  // Each call of the training graph draws a new mask.
  auto training2 = call(x, true);
  REQUIRE(training2.ok());
  CHECK(MaxRelDiff((*training)[0], (*training2)[0]) > 0.5f);
}

TEST_CASE("Flatten and Reshape keep the batch dynamic and the values in order") {
  const Tensor x = RandomTensor(Shape{2, 3, 4, 5}, 1);
  Flatten flatten;
  Value f = flatten(x);
  REQUIRE(f.ok());
  CHECK(f.shape() == PartialShape{2, 60});
  CHECK(MaxRelDiff(*f.tensor(), x.Reshaped(Shape{2, 60})) == 0.0f);
  CHECK(*flatten.OutputShape(PartialShape{-1, 7, 7, 64}) == PartialShape{-1, 3136});

  Reshape reshape({-1, 10});
  Value r = reshape(x);
  REQUIRE(r.ok());
  CHECK(r.shape() == PartialShape{2, 6, 10});
  CHECK(*reshape.OutputShape(PartialShape{-1, 3, 4, 5}) == PartialShape{-1, 6, 10});
  CHECK(*reshape.OutputShape(PartialShape{-1, -1, 4, 5}) == PartialShape{-1, -1, 10});

  trace::Function g("g", {{"x", DType::kFloat, PartialShape{-1, -1, 4, 5}}},
                    [&reshape](const Values& a) { return Values{reshape(a[0])}; });
  auto traced = g(x);
  REQUIRE(traced.ok());
  CHECK((*traced)[0].shape() == Shape{2, 6, 10});
  CHECK(MaxRelDiff((*traced)[0], x.Reshaped(Shape{2, 6, 10})) == 0.0f);

  Value bad = Reshape({7})(x);
  REQUIRE_FALSE(bad.ok());
  CHECK(Mentions(bad.status(),
                 "Reshape 'reshape': cannot reshape (2, 3, 4, 5) (60 values per "
                 "example) to target_shape (7,)"));
  CHECK(Mentions(Reshape({-1, -1}).status(), "may hold one -1"));
  Value partial = Flatten()(Value(Tensor(DType::kFloat, Shape{2})));
  CHECK(partial.ok());  // (2,) flattens to (2, 1)
}

TEST_CASE("Embedding gathers rows of its table, casting float indices as Keras does") {
  Embedding emb(EmbeddingOptions{.input_dim = 10, .output_dim = 3, .seed = 2});
  REQUIRE(emb.built());
  CHECK(emb.CountParams() == 30);
  CHECK(emb.named_variables()[0].first == "embeddings");
  const Tensor table = *emb.embeddings().value();
  for (float v : table.flat<float>()) CHECK(std::abs(v) <= 0.05f);
  const Tensor ids = *Tensor::FromVector<int32_t>({4, 0, 9, 4, 2, 7}, Shape{2, 3});
  Value y = emb(ids);
  REQUIRE(y.ok());
  CHECK(y.shape() == PartialShape{2, 3, 3});
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 3; ++j)
      CHECK(y.tensor()->flat<float>()[i * 3 + j] ==
            table.flat<float>()[ids.flat<int32_t>()[i] * 3 + j]);
  const Tensor fids = *Tensor::FromVector<float>({4, 0, 9, 4, 2, 7}, Shape{2, 3});
  Value yf = emb(fids);
  REQUIRE(yf.ok());
  CHECK(MaxRelDiff(*yf.tensor(), *y.tensor()) == 0.0f);
  CHECK(Mentions(Embedding(0, 3).status(), "input_dim and output_dim must be positive"));
}

TEST_CASE("activations by name, and their values") {
  for (std::string_view name :
       {"linear", "relu", "softmax", "sigmoid", "tanh", "gelu", "elu", "selu", "swish"}) {
    auto a = ActivationFromName(name);
    REQUIRE(a.ok());
    CHECK(ActivationName(*a) == name);
  }
  CHECK(*ActivationFromName("silu") == Activation::kSwish);
  auto bad = ActivationFromName("relu6");
  REQUIRE_FALSE(bad.ok());
  CHECK(Mentions(bad.status(), "unknown activation 'relu6'"));

  const Tensor x = RandomTensor(Shape{2, 4}, 9, -3, 3);
  struct Case {
    Activation a;
    std::function<double(double)> f;
  };
  const double kSeluAlpha = 1.6732632423543772, kSeluScale = 1.0507009873554805;
  const Case cases[] = {
      {Activation::kNone, [](double v) { return v; }},
      {Activation::kRelu, [](double v) { return std::max(v, 0.0); }},
      {Activation::kSigmoid, [](double v) { return 1 / (1 + std::exp(-v)); }},
      {Activation::kTanh, [](double v) { return std::tanh(v); }},
      {Activation::kGelu, [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }},
      {Activation::kElu, [](double v) { return v > 0 ? v : std::expm1(v); }},
      {Activation::kSelu,
       [=](double v) { return kSeluScale * (v > 0 ? v : kSeluAlpha * std::expm1(v)); }},
      {Activation::kSwish, [](double v) { return v / (1 + std::exp(-v)); }},
  };
  for (const Case& c : cases) {
    ActivationLayer layer(c.a);
    CAPTURE(ActivationName(c.a));
    Value y = layer(x);
    REQUIRE(y.ok());
    Tensor expected(DType::kFloat, x.shape());
    for (int64_t i = 0; i < x.NumElements(); ++i) {
      expected.flat<float>()[i] = static_cast<float>(c.f(x.flat<float>()[i]));
    }
    CHECK(MaxRelDiff(*y.tensor(), expected) < 1e-5f);
  }
  // softmax: rows sum to 1, ordered as the inputs.
  Value s = ActivationLayer(Activation::kSoftmax)(x);
  REQUIRE(s.ok());
  for (int64_t r = 0; r < 2; ++r) {
    double sum = 0, denom = 0;
    for (int64_t j = 0; j < 4; ++j) denom += std::exp(x.flat<float>()[r * 4 + j]);
    for (int64_t j = 0; j < 4; ++j) {
      const float v = s.tensor()->flat<float>()[r * 4 + j];
      sum += v;
      CHECK(v == doctest::Approx(std::exp(x.flat<float>()[r * 4 + j]) / denom).epsilon(1e-5));
    }
    CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
  }
}

}  // namespace
}  // namespace kiln::modules
