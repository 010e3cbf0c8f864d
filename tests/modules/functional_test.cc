// Functional models (functional.h): graphs of layer calls with branches, merges, a shared
// layer and a model inside a model, against the same layers applied by hand; names, summary,
// errors, export and a few training steps.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "kiln/modules/layers.h"
#include "kiln/modules/losses.h"
#include "kiln/modules/optimizers.h"
#include "layer_test_util.h"

namespace kiln::modules {
namespace {

using testing::MaxRelDiff;
using testing::Mentions;
using testing::OpsOf;
using testing::RandomTensor;
using trace::Value;
using trace::Values;

std::vector<std::string> Paths(const trace::Module& m) {
  std::vector<std::string> paths;
  for (const auto& [path, v] : m.named_variables()) paths.push_back(path);
  return paths;
}

std::vector<std::string> Names(const Model& m) {
  std::vector<std::string> names;
  for (const Layer* l : m.layers()) names.push_back(l->name());
  return names;
}

TEST_CASE("a functional CNN runs its layers in order, eagerly and traced") {
  ManualSeed(11);
  SymbolicTensor x = Input({8, 8, 1});
  CHECK(x.shape() == PartialShape{-1, 8, 8, 1});
  auto conv = MakeLayer<Conv2D>(ConvOptions{.filters = 4, .kernel_size = {3}});
  auto flatten = MakeLayer<Flatten>();
  auto dense = MakeLayer<Dense>(5);
  SymbolicTensor h = conv(x);
  CHECK(conv->built());  // built by the symbolic call, as Keras
  SymbolicTensor y = dense(flatten(h));
  CHECK(y.shape() == PartialShape{-1, 5});
  Model model({x}, {y}, "cnn");
  REQUIRE(model.status().ok());
  CHECK(Names(model) == std::vector<std::string>{"input_layer", "conv2d", "flatten", "dense"});
  CHECK(Paths(model) ==
        std::vector<std::string>{"conv2d/kernel", "conv2d/bias", "dense/kernel", "dense/bias"});
  CHECK(model.CountParams() == 4 * 9 + 4 + 6 * 6 * 4 * 5 + 5);

  const Tensor input = RandomTensor(Shape{3, 8, 8, 1}, 1);
  auto ours = model(input).tensor();
  REQUIRE(ours.ok());
  auto by_hand = (*dense)((*flatten)((*conv)(input))).tensor();
  REQUIRE(by_hand.ok());
  CHECK(MaxRelDiff(*ours, *by_hand) == 0.0f);

  trace::Function predict("predict", {{"x", DType::kFloat, PartialShape{-1, 8, 8, 1}}},
                          [&model](const Values& a) { return Values{model(a[0])}; });
  auto traced = predict(input);
  REQUIRE(traced.ok());
  CHECK(MaxRelDiff((*traced)[0], *ours) < 1e-5f);
  auto cf = predict.GetConcreteFunction();
  REQUIRE(cf.ok());
  CHECK((*cf)->captured_variables().size() == 4);
  CHECK(testing::Contains(OpsOf(**cf), "Conv2D"));
}

TEST_CASE("branches, merges and a layer called twice share one set of weights") {
  ManualSeed(12);
  SymbolicTensor x = Input({6}, DType::kFloat, "x");
  auto shared = MakeLayer<Dense>(6, Activation::kTanh);
  auto head = MakeLayer<Dense>(2);
  SymbolicTensor h1 = shared(x);
  SymbolicTensor h2 = shared(h1);  // the second call of the same layer
  SymbolicTensor s = MakeLayer<Add>()({h1, h2});
  SymbolicTensor c = MakeLayer<Concatenate>()({s, x});
  CHECK(c.shape() == PartialShape{-1, 12});
  SymbolicTensor y = head(c);
  Model model({x}, {y});
  REQUIRE(model.status().ok());
  CHECK(model.name() == "functional");
  CHECK(Names(model) == std::vector<std::string>{"x", "dense", "add", "concatenate", "dense_1"});
  CHECK(Paths(model) ==
        std::vector<std::string>{"dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias"});

  const Tensor input = RandomTensor(Shape{4, 6}, 2);
  const Value a = (*shared)(input);
  const Value b = (*shared)(a);
  Values merged{a + b, Value(input)};
  const Value expected = (*head)(MakeLayer<Concatenate>()->CallMulti(merged)[0]);
  auto ours = model(input).tensor();
  REQUIRE(ours.ok());
  CHECK(MaxRelDiff(*ours, *expected.tensor()) < 1e-6f);

  // Both calls of the shared layer feed its kernel's gradient.
  trace::GradientTape tape;
  const Value loss = trace::Sum(model(input));
  auto grads = tape.Gradient(loss, model.trainable_variables());
  REQUIRE(grads.ok());
  REQUIRE(grads->size() == 4);
  for (const Value& g : *grads) CHECK(g.ok());

  const std::string summary = *model.Summary();
  CHECK(summary.find("Connected to") != std::string::npos);
  CHECK(summary.find("│ x[0][0], dense[0][0]       │") != std::string::npos);  // dense's 2 calls
  CHECK(summary.find("dense[0][0],") != std::string::npos);
  CHECK(summary.find("dense[1][0]") != std::string::npos);
}

TEST_CASE("a model is a layer: called inside another model, its variables nest") {
  ManualSeed(13);
  SymbolicTensor xi = Input({4});
  auto encoder = MakeModel({xi}, {MakeLayer<Dense>(3, Activation::kRelu)(xi)}, "encoder");
  REQUIRE(encoder->status().ok());
  SymbolicTensor x = Input({4});
  auto head = MakeLayer<Dense>(2);
  SymbolicTensor y = head(encoder(x));
  CHECK(y.shape() == PartialShape{-1, 2});
  Model model({x}, {y}, "outer");
  REQUIRE(model.status().ok());
  CHECK(Paths(model) == std::vector<std::string>{"encoder/dense/kernel", "encoder/dense/bias",
                                                 "dense/kernel", "dense/bias"});
  const Tensor input = RandomTensor(Shape{2, 4}, 3);
  auto ours = model(input).tensor();
  REQUIRE(ours.ok());
  auto by_hand = (*head)((*encoder)(input)).tensor();
  REQUIRE(by_hand.ok());
  CHECK(MaxRelDiff(*ours, *by_hand) == 0.0f);
  const std::string summary = *model.Summary();
  CHECK(summary.find("│ encoder (Functional)                 │ (None, 3)") != std::string::npos);
  CHECK(summary.find(" Total params: 23 (92.00 B)\n") != std::string::npos);
}

TEST_CASE("several inputs and outputs run through CallMulti") {
  ManualSeed(14);
  SymbolicTensor a = Input({3}, DType::kFloat, "a");
  SymbolicTensor b = Input({2}, DType::kFloat, "b");
  SymbolicTensor c = MakeLayer<Concatenate>()({a, b});
  SymbolicTensor y1 = MakeLayer<Dense>(1)(c);
  SymbolicTensor y2 = MakeLayer<Dense>(4)(c);
  Model model({a, b}, {y1, y2});
  REQUIRE(model.status().ok());
  CHECK(model.num_outputs() == 2);
  Values out = model.CallMulti({RandomTensor(Shape{5, 3}, 4), RandomTensor(Shape{5, 2}, 5)});
  REQUIRE(out.size() == 2);
  CHECK(out[0].shape() == PartialShape{5, 1});
  CHECK(out[1].shape() == PartialShape{5, 4});
  // One value for a model of two outputs is an error naming it.
  Value one = model(RandomTensor(Shape{5, 3}, 4));
  CHECK_FALSE(one.ok());
}

TEST_CASE("a functional model passes the training flag on, and a two-output model nests") {
  ManualSeed(16);
  SymbolicTensor x = Input({5});
  SymbolicTensor d = MakeLayer<Dropout>(DropoutOptions{.rate = 0.5f, .seed = 3})(x);
  SymbolicTensor y = MakeLayer<Dense>(4)(d);
  auto inner = MakeModel({x}, {y, d}, "inner");
  REQUIRE(inner->status().ok());
  SymbolicTensor xo = Input({5});
  std::vector<SymbolicTensor> both = inner.CallAll({xo});
  REQUIRE(both.size() == 2);
  CHECK(both[1].shape() == PartialShape{-1, 5});
  SymbolicTensor out = MakeLayer<Concatenate>()({both[0], both[1]});
  Model model({xo}, {out});
  REQUIRE(model.status().ok());
  CHECK(model.Summary()->find("inner[0][0], inner[0][1]") != std::string::npos);

  trace::FunctionOptions options;
  trace::Function call("call", options, [&model](const trace::Args& a) -> Result<Values> {
    return Values{model(a[0].value(), a[1].bool_value())};
  });
  const Tensor input = RandomTensor(Shape{6, 5}, 8);
  auto infer = call(input, false);
  auto train = call(input, true);
  REQUIRE(infer.ok());
  REQUIRE(train.ok());
  CHECK(MaxRelDiff((*infer)[0], (*train)[0]) > 1e-3f);
  auto infer_graph = call.GetConcreteFunction(trace::Args{trace::Arg(input), trace::Arg(false)});
  auto train_graph = call.GetConcreteFunction(trace::Args{trace::Arg(input), trace::Arg(true)});
  REQUIRE(infer_graph.ok());
  REQUIRE(train_graph.ok());
  CHECK_FALSE(testing::Contains(OpsOf(**infer_graph), "RandomUniform"));
  CHECK(testing::Contains(OpsOf(**train_graph), "RandomUniform"));
}

TEST_CASE("functional graph errors name the layer and reach the model") {
  SymbolicTensor x = Input({4});
  SymbolicTensor bad = MakeLayer<Concatenate>()({x, Input({2, 2})});
  CHECK_FALSE(bad.ok());
  CHECK(Mentions(bad.status(), "Concatenate 'concatenate'"));
  // The error travels down the graph into the model's status.
  Model broken({x}, {MakeLayer<Dense>(2)(bad)});
  CHECK_FALSE(broken.status().ok());

  SymbolicTensor other = Input({4});
  SymbolicTensor sum = MakeLayer<Add>()({x, other});
  Model disconnected({x}, {sum});
  CHECK(Mentions(disconnected.status(), "disconnected"));
  CHECK(Mentions(disconnected.Summary().status(), "disconnected"));

  CHECK(Mentions(MakeLayer<Dense>(2)(SymbolicTensor()).status(), "empty SymbolicTensor"));

  // A layer has one parent: a second model over the same layers is refused (call the first
  // model inside the second instead).
  SymbolicTensor in = Input({3});
  SymbolicTensor out = MakeLayer<Dense>(2)(in);
  Model first({in}, {out});
  REQUIRE(first.status().ok());
  Model second({in}, {out});
  CHECK(Mentions(second.status(), "already has a parent"));
  CHECK_FALSE(MakeLayer<Add>()(x).ok());  // a merge layer needs a list
}

TEST_CASE("a functional model exports and trains like Sequential") {
  ManualSeed(15);
  SymbolicTensor x = Input({3});
  SymbolicTensor h = MakeLayer<Dense>(8, Activation::kRelu)(x);
  SymbolicTensor y = MakeLayer<Dense>(1)(MakeLayer<Concatenate>()({h, x}));
  Model model({x}, {y}, "regressor");
  REQUIRE(model.status().ok());

  const Tensor input = RandomTensor(Shape{16, 3}, 6);
  const Tensor target = RandomTensor(Shape{16, 1}, 7);
  Sgd sgd(SgdOptions{.base = {.learning_rate = 0.05F}});
  auto loss_of = [&]() { return *MeanSquaredError(target, model(input)).tensor(); };
  const float before = loss_of().flat<float>()[0];
  for (int i = 0; i < 20; ++i) {
    trace::GradientTape tape;
    const Value loss = MeanSquaredError(target, model(input));
    auto grads = tape.Gradient(loss, model.trainable_variables());
    REQUIRE(grads.ok());
    REQUIRE(sgd.ApplyGradients(*grads, model.trainable_variables()).ok());
  }
  CHECK(loss_of().flat<float>()[0] < before);

  trace::Function& serve =
      model.AddMethod("serve", {{"x", DType::kFloat, PartialShape{-1, 3}}},
                      [&model](const Values& a) { return Values{model(a[0])}; });
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "kiln_functional_export_test";
  std::filesystem::remove_all(dir);
  REQUIRE(trace::Save(model, dir, {{"serving_default", &serve}}).ok());
  CHECK(std::filesystem::exists(dir / "saved_model.pb"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kiln::modules
