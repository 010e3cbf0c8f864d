// Dense and Sequential — scoped names, Keras-style summary with parameter counts, lazy
// building, and the same numbers eagerly and as a traced graph.
#include "kiln/modules/sequential.h"

#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kiln/modules/dense.h"
#include "kiln/modules/initializers.h"
#include "kiln/trace/trace.h"
#include "tensorflow/framework.pb.h"

namespace kiln::modules {
namespace {

using trace::Value;
using trace::Values;

// The seed notes' model: Dense(4, input_shape=(10,)), Dense(2), Dense(1).
void AddSeedLayers(Sequential& model) {
  model.Add<Dense>(4, Activation::kNone, 10);
  model.Add<Dense>(2);
  model.Add<Dense>(1);
}

Tensor RandomInput(int64_t batch, int64_t features, uint32_t seed) {
  std::mt19937 engine(seed);
  Tensor x(DType::kFloat, Shape{batch, features});
  for (float& v : x.flat<float>()) v = UniformFloat(engine) * 2 - 1;
  return x;
}

float MaxAbsDiff(const Tensor& a, const Tensor& b) {
  float d = 0;
  for (int64_t i = 0; i < a.NumElements(); ++i) {
    d = std::max(d, std::abs(a.flat<float>()[i] - b.flat<float>()[i]));
  }
  return d;
}

TEST_CASE("Sequential names its layers by type and reports a Keras summary (seed: 57)") {
  Sequential model;
  AddSeedLayers(model);
  REQUIRE(model.status().ok());
  CHECK(model.built());
  std::vector<std::string> paths;
  for (const auto& [path, v] : model.named_variables()) paths.push_back(path);
  CHECK(paths == std::vector<std::string>{"dense/kernel", "dense/bias", "dense_1/kernel",
                                          "dense_1/bias", "dense_2/kernel", "dense_2/bias"});
  CHECK(model.layers().size() == 3);
  CHECK(model.layers()[1]->name() == "dense_1");
  CHECK(model.CountParams() == 57);

  auto summary = model.Summary();
  REQUIRE(summary.ok());
  const std::string expected =
      "Model: \"sequential\"\n"
      "┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━┓\n"
      "┃ Layer (type)                         ┃ Output Shape                ┃         Param # ┃\n"
      "┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━┩\n"
      "│ dense (Dense)                        │ (None, 4)                   │              44 │\n"
      "├──────────────────────────────────────┼─────────────────────────────┼─────────────────┤\n"
      "│ dense_1 (Dense)                      │ (None, 2)                   │              10 │\n"
      "├──────────────────────────────────────┼─────────────────────────────┼─────────────────┤\n"
      "│ dense_2 (Dense)                      │ (None, 1)                   │               3 │\n"
      "└──────────────────────────────────────┴─────────────────────────────┴─────────────────┘\n"
      " Total params: 57 (228.00 B)\n"
      " Trainable params: 57 (228.00 B)\n"
      " Non-trainable params: 0 (0.00 B)\n";
  CHECK(*summary == expected);
}

TEST_CASE("freezing a layer moves its parameters to non-trainable") {
  Sequential model;
  AddSeedLayers(model);
  model.layers()[0]->set_trainable(false);
  CHECK(model.trainable_variables().size() == 4);
  CHECK(model.trainable_variables()[0].name() == "kernel");
  auto summary = model.Summary();
  REQUIRE(summary.ok());
  CHECK(summary->find(" Total params: 57 (228.00 B)\n Trainable params: 13 (52.00 B)\n"
                      " Non-trainable params: 44 (176.00 B)\n") != std::string::npos);
}

TEST_CASE("Dense weights: Glorot-uniform within the limit, zero bias, reproducible by seed") {
  Dense a(DenseOptions{.units = 4, .input_dim = 10, .seed = 7});
  Dense b(DenseOptions{.units = 4, .input_dim = 10, .seed = 7});
  REQUIRE(a.built());
  const Tensor ka = *a.kernel().value();
  CHECK(ka.shape() == Shape{10, 4});
  CHECK(TensorsEqual(ka, *b.kernel().value()));
  const float limit = std::sqrt(6.0f / 14.0f);
  float max_abs = 0;
  for (float v : ka.flat<float>()) max_abs = std::max(max_abs, std::abs(v));
  CHECK(max_abs <= limit);
  CHECK(max_abs > limit / 2);  // really spread over the range
  for (float v : a.bias().value()->flat<float>()) CHECK(v == 0.0f);
  Dense c(DenseOptions{.units = 4, .input_dim = 10, .seed = 8});
  CHECK_FALSE(TensorsEqual(ka, *c.kernel().value()));
}

TEST_CASE("a Sequential without an input size builds its layers on the first call") {
  Sequential model;
  model.Add<Dense>(3, Activation::kRelu);
  model.Add<Dense>(2);
  CHECK_FALSE(model.built());
  CHECK(model.variables().empty());
  // Keras 3 prints unbuilt layers with "?" and "0 (unbuilt)".
  auto not_yet = model.Summary();
  REQUIRE(not_yet.ok());
  CHECK(not_yet->find("│ dense (Dense)                        │ ?                           │ "
                      "    0 (unbuilt) │") != std::string::npos);

  Value y = model(RandomInput(5, 6, 1));
  REQUIRE(y.ok());
  CHECK(y.shape() == PartialShape{5, 2});
  CHECK(model.built());
  CHECK(model.CountParams() == 6 * 3 + 3 + 3 * 2 + 2);
  REQUIRE(model.Summary().ok());
  CHECK(model.Summary()->find("(None, 3)") != std::string::npos);
}

TEST_CASE("Dense emits MatMul, BiasAdd and the activation under the layer's name scope") {
  Sequential model;
  model.Add<Dense>(3, Activation::kRelu, 4);
  model.Add<Dense>(2, Activation::kSoftmax);
  trace::Function f("call", {{"x", DType::kFloat, PartialShape{-1, 4}}},
                    [&model](const Values& args) { return Values{model(args[0])}; });
  auto cf = f.GetConcreteFunction();
  REQUIRE(cf.ok());
  std::vector<std::string> ops;
  std::vector<std::string> names;
  for (const auto& n : (*cf)->function_def().node_def()) {
    ops.push_back(n.op());
    names.push_back(n.name());
  }
  CHECK(ops == std::vector<std::string>{"ReadVariableOp", "MatMul", "ReadVariableOp", "BiasAdd",
                                        "Relu", "ReadVariableOp", "MatMul", "ReadVariableOp",
                                        "BiasAdd", "Softmax", "Identity"});
  CHECK(names[1] == "sequential/dense/MatMul");
  CHECK(names[9] == "sequential/dense_1/Softmax");
  CHECK((*cf)->captured_variables().size() == 4);
  CHECK((*cf)->outputs()[0].shape == PartialShape{-1, 2});
}

TEST_CASE("an MLP gives the same outputs eagerly and as a traced graph") {
  ManualSeed(42);
  Sequential model("mlp");
  model.Add<Dense>(512, Activation::kRelu, 784);
  model.Add<Dense>(512, Activation::kRelu);
  model.Add<Dense>(10, Activation::kSoftmax);
  CHECK(model.CountParams() == 784 * 512 + 512 + 512 * 512 + 512 + 512 * 10 + 10);
  REQUIRE(model.Summary().ok());
  CHECK(model.Summary()->find(" Total params: 669,706 (2.55 MB)\n") != std::string::npos);
  trace::Function predict("predict", {{"x", DType::kFloat, PartialShape{-1, 784}}},
                          [&model](const Values& args) { return Values{model(args[0])}; });
  for (int64_t batch : {1, 7, 64}) {
    const Tensor x = RandomInput(batch, 784, static_cast<uint32_t>(batch));
    auto eager = model(x).tensor();
    REQUIRE(eager.ok());
    auto graph = predict(x);
    REQUIRE(graph.ok());
    CHECK((*graph)[0].shape() == Shape{batch, 10});
    CHECK(MaxAbsDiff(*eager, (*graph)[0]) <= 1e-5f);
    float row_sum = 0;
    for (int i = 0; i < 10; ++i) row_sum += eager->flat<float>()[i];
    CHECK(row_sum == doctest::Approx(1.0f).epsilon(1e-5));
  }
  CHECK(predict.trace_count() == 1);
}

}  // namespace
}  // namespace kiln::modules
