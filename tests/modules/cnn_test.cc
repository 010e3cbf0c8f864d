// The seed's CNN (seed 003) as a Sequential of the new layers: Keras's summary table, variable
// paths, the same numbers eagerly and traced, and the training flag passed to every layer.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "kiln/modules/layers.h"
#include "layer_test_util.h"

namespace kiln::modules {
namespace {

using testing::MaxRelDiff;
using testing::OpsOf;
using testing::RandomTensor;
using trace::Arg;
using trace::Args;
using trace::Value;
using trace::Values;

// Conv2D 32x5x5 relu -> MaxPool 2 -> Conv2D 64x5x5 relu -> MaxPool 2 -> Reshape -> Dense 1024
// relu -> Dense 10, "same" padding as in the seed.
void AddSeedCnn(Sequential& model) {
  model.Add<Conv2D>(ConvOptions{.filters = 32,
                                .kernel_size = {5},
                                .padding = Padding::kSame,
                                .activation = Activation::kRelu,
                                .input_shape = {28, 28, 1}});
  model.Add<MaxPool2D>(PoolOptions{.pool_size = {2, 2}, .strides = {2}});
  model.Add<Conv2D>(ConvOptions{.filters = 64,
                                .kernel_size = {5},
                                .padding = Padding::kSame,
                                .activation = Activation::kRelu});
  model.Add<MaxPool2D>(PoolOptions{.pool_size = {2, 2}, .strides = {2}});
  model.Add<Reshape>(std::vector<int64_t>{7 * 7 * 64});
  model.Add<Dense>(1024, Activation::kRelu);
  model.Add<Dense>(10);
}

TEST_CASE("the seed's CNN: Keras 3's summary, names and parameter counts") {
  ManualSeed(1);
  Sequential model("cnn");
  AddSeedCnn(model);
  REQUIRE(model.status().ok());
  CHECK(model.built());
  std::vector<std::string> paths;
  for (const auto& [path, v] : model.named_variables()) paths.push_back(path);
  CHECK(paths == std::vector<std::string>{"conv2d/kernel", "conv2d/bias", "conv2d_1/kernel",
                                          "conv2d_1/bias", "dense/kernel", "dense/bias",
                                          "dense_1/kernel", "dense_1/bias"});
  auto summary = model.Summary();
  REQUIRE(summary.ok());
  // What Keras 3.15 prints for the same model (tests/tf/test_summary.py compares live).
  const std::string expected =
      "Model: \"cnn\"\n"
      "┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━┓\n"
      "┃ Layer (type)                         ┃ Output Shape                ┃         Param # ┃\n"
      "┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━┩\n"
      "│ conv2d (Conv2D)                      │ (None, 28, 28, 32)          │             832 │\n"
      "├──────────────────────────────────────┼─────────────────────────────┼─────────────────┤\n"
      "│ max_pooling2d (MaxPooling2D)         │ (None, 14, 14, 32)          │               0 │\n"
      "├──────────────────────────────────────┼─────────────────────────────┼─────────────────┤\n"
      "│ conv2d_1 (Conv2D)                    │ (None, 14, 14, 64)          │          51,264 │\n"
      "├──────────────────────────────────────┼─────────────────────────────┼─────────────────┤\n"
      "│ max_pooling2d_1 (MaxPooling2D)       │ (None, 7, 7, 64)            │               0 │\n"
      "├──────────────────────────────────────┼─────────────────────────────┼─────────────────┤\n"
      "│ reshape (Reshape)                    │ (None, 3136)                │               0 │\n"
      "├──────────────────────────────────────┼─────────────────────────────┼─────────────────┤\n"
      "│ dense (Dense)                        │ (None, 1024)                │       3,212,288 │\n"
      "├──────────────────────────────────────┼─────────────────────────────┼─────────────────┤\n"
      "│ dense_1 (Dense)                      │ (None, 10)                  │          10,250 │\n"
      "└──────────────────────────────────────┴─────────────────────────────┴─────────────────┘\n"
      " Total params: 3,274,634 (12.49 MB)\n"
      " Trainable params: 3,274,634 (12.49 MB)\n"
      " Non-trainable params: 0 (0.00 B)\n";
  CHECK(*summary == expected);
}

TEST_CASE("the seed's CNN gives the same outputs eagerly and traced") {
  ManualSeed(2);
  Sequential model("cnn");
  AddSeedCnn(model);
  trace::Function predict("predict", {{"x", DType::kFloat, PartialShape{-1, 28, 28, 1}}},
                          [&model](const Values& a) { return Values{model(a[0])}; });
  const Tensor x = RandomTensor(Shape{3, 28, 28, 1}, 5, 0, 1);
  auto eager = model(x).tensor();
  REQUIRE(eager.ok());
  CHECK(eager->shape() == Shape{3, 10});
  auto graph = predict(x);
  REQUIRE(graph.ok());
  CHECK(MaxRelDiff(*eager, (*graph)[0]) < 1e-5f);
  auto cf = predict.GetConcreteFunction();
  REQUIRE(cf.ok());
  const std::vector<std::string> ops = OpsOf(**cf);
  CHECK(std::count(ops.begin(), ops.end(), "Conv2D") == 2);
  CHECK(std::count(ops.begin(), ops.end(), "MaxPool") == 2);
  CHECK(std::count(ops.begin(), ops.end(), "Reshape") == 1);
  CHECK((*cf)->captured_variables().size() == 8);
}

TEST_CASE("Sequential passes the training flag to its layers (seed 002's MyModel)") {
  ManualSeed(3);
  Sequential model("my_model");
  model.Add<Dense>(4, Activation::kNone, 3);
  model.Add<Dense>(5);
  model.Add<Dropout>(DropoutOptions{.rate = 0.2f, .seed = 1});
  model.Add<BatchNormalization>();
  CHECK(model.CountParams() == 16 + 25 + 4 * 5);
  CHECK(model.CountTrainableParams() == 16 + 25 + 2 * 5);
  trace::FunctionOptions options;
  trace::Function call("call", options, [&model](const Args& a) -> Result<Values> {
    return Values{model(a[0].value(), a[1].bool_value())};
  });
  const Tensor x = RandomTensor(Shape{64, 3}, 9);
  auto infer = call(x, false);
  REQUIRE(infer.ok());
  auto eager_infer = model(x).tensor();
  REQUIRE(eager_infer.ok());
  CHECK(MaxRelDiff((*infer)[0], *eager_infer) < 1e-6f);
  const Tensor mm = *model.layers()[3]->variables()[2].value();
  auto train = call(x, true);
  REQUIRE(train.ok());
  CHECK(call.trace_count() == 2);
  CHECK(MaxRelDiff((*train)[0], (*infer)[0]) > 1e-3f);
  CHECK(MaxRelDiff(*model.layers()[3]->variables()[2].value(), mm) > 0.0f);  // moving_mean
  auto cf = call.GetConcreteFunction(Args{Arg(x), Arg(true)});
  REQUIRE(cf.ok());
  CHECK(testing::Contains(OpsOf(**cf), "RandomUniform"));
  CHECK(testing::Contains(OpsOf(**cf), "AssignAddVariableOp"));
}

}  // namespace
}  // namespace kiln::modules
