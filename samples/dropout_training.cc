// The seed notes' MyModel (seed 002, tf.function's help text "Usage with tf.keras"): two Dense
// layers and tf.nn.dropout in a traced call whose `training` is a Python bool:
//
//   @tf.function
//   def call(self, inputs, training=True):
//     y = self.dense2(self.dense1(inputs))
//     if training: return tf.nn.dropout(y, self.keep_probability)
//     else: return y
//   model(x, training=True)   # executes a graph, with dropout
//   model(x, training=False)  # executes a graph, without dropout
//
// `training` is a host value here as there: it picks which ops are traced, so there are two
// graphs, and only the training one holds the random mask. Training drops values and scales the
// kept ones by 1 / (1 - rate); inference is the identity after the Dense layers. The seed
// passes keep_probability = 0.2 as tf.nn.dropout's second argument, which TensorFlow 2 reads as
// the *rate* (the fraction dropped), so 0.2 is the rate here too. The dropout op has a seed
// (the seed's has none) so that a run prints the same mask every time. Then both graphs are
// saved as signatures (serving_default: training=False; train: training=True) and run again
// from the bundle.
//
//   dropout_training [bundle_dir]
#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>
#include <string>

#include "kiln/exec/saved_model.h"
#include "kiln/modules/core_layers.h"
#include "kiln/modules/dense.h"
#include "kiln/trace/trace.h"
#include "sample_util.h"

using kiln::DType;
using kiln::PartialShape;
using kiln::Result;
using kiln::Shape;
using kiln::Tensor;
using kiln::modules::Dense;
using kiln::modules::DenseOptions;
using kiln::modules::Dropout;
using kiln::modules::DropoutOptions;
using namespace kiln::trace;  // NOLINT: a sample reads like the seed
using kiln::samples::Check;
using kiln::samples::TfRepr;

namespace {

constexpr int64_t kDropoutSeed = 7;  // the RandomUniform's op seed

class MyModel : public Module {
 public:
  explicit MyModel(float keep_probability = 0.2f)
      : Module("my_model"),
        dense1(EmplaceModule<Dense>("dense1", DenseOptions{.units = 4, .input_dim = 3, .seed = 1})),
        dense2(EmplaceModule<Dense>("dense2", DenseOptions{.units = 5, .input_dim = 4, .seed = 2})),
        dropout(EmplaceModule<Dropout>(
            "dropout", DropoutOptions{.rate = keep_probability, .seed = kDropoutSeed})),
        call("call", FunctionOptions{.arg_names = {"inputs", "training"}},
             [this](const Args& a) -> Result<Values> {
               return Values{Call(a[0].value(), a[1].bool_value())};
             }),
        // What the bundle exports: one graph per value of the flag, as fixed signatures.
        serve(AddMethod(
            "serve", {{"inputs", DType::kFloat, PartialShape{-1, 3}}},
            [this](const Values& a) -> Result<Values> { return Values{Call(a[0], false)}; })),
        train(AddMethod(
            "train", {{"inputs", DType::kFloat, PartialShape{-1, 3}}},
            [this](const Values& a) -> Result<Values> { return Values{Call(a[0], true)}; })) {}

  Dense& dense1;
  Dense& dense2;
  Dropout& dropout;
  Function call;  // host `training`: not a module method (a bundle needs fixed signatures)
  Function& serve;
  Function& train;

 private:
  // The Dropout layer is tf.nn.dropout when training and emits nothing otherwise.
  Value Call(const Value& inputs, bool training) {
    const Value y = dense2(dense1(inputs));
    return dropout(y, training);
  }
};

Tensor First(const Result<std::vector<Tensor>>& r, const std::string& what) {
  Check(r.status(), what);
  return (*r)[0];
}

// The op types of a concrete function's graph in node order, read from its GraphDef text
// (top-level nodes are indented by two spaces), Placeholders left out.
std::string Ops(const ConcreteFunction& cf) {
  std::istringstream text(cf.GraphDefText());
  const std::string prefix = "  op: \"";
  std::string out;
  for (std::string line; std::getline(text, line);) {
    if (line.rfind(prefix, 0) != 0) continue;
    const std::string op = line.substr(prefix.size(), line.size() - prefix.size() - 1);
    if (op != "Placeholder") out += (out.empty() ? "" : " ") + op;
  }
  return out;
}

// Training output against inference output: each value dropped (0) or scaled by 1 / (1 - rate).
std::string CheckDropout(const Tensor& trained, const Tensor& inferred, float rate) {
  int64_t dropped = 0;
  for (int64_t i = 0; i < trained.NumElements(); ++i) {
    const float t = trained.flat<float>()[i];
    const float expected = inferred.flat<float>()[i] / (1.0f - rate);
    if (t == 0.0f) {
      ++dropped;
    } else if (std::abs(t - expected) > 1e-5f * std::max(1.0f, std::abs(expected))) {
      return "NO: value " + std::to_string(i) + " is " + std::to_string(t) + ", expected 0 or " +
             std::to_string(expected);
    }
  }
  return "yes (" + std::to_string(dropped) + " of " + std::to_string(trained.NumElements()) +
         " dropped, the rest scaled by 1/(1 - " + std::to_string(rate).substr(0, 3) + "))";
}

}  // namespace

int main(int argc, char** argv) {
  const auto root = kiln::samples::BundleRoot(argc, argv, "dropout_training");
  MyModel model;
  Check(model.status(), "MyModel");
  // The seed's x is not shown; any (batch, 3) input does.
  Tensor x(DType::kFloat, Shape{2, 3});
  for (int64_t i = 0; i < 6; ++i) x.flat<float>()[i] = 0.5f * static_cast<float>(i) - 1.0f;
  std::cout << "x: " << TfRepr(x) << "\n";

  const Tensor trained = First(model.call(x, true), "model(x, training=True)");
  std::cout << "model(x, training=True)  # executes a graph, with dropout\n"
            << TfRepr(trained) << "\n";
  const Tensor trained_again = First(model.call(x, true), "model(x, training=True) again");
  std::cout << "model(x, training=True)  # the same graph, a new mask\n"
            << TfRepr(trained_again) << "\n";
  const Tensor inferred = First(model.call(x, false), "model(x, training=False)");
  std::cout << "model(x, training=False)  # executes a graph, without dropout\n"
            << TfRepr(inferred) << "\n";

  const Tensor eager = *model.dense2(model.dense1(x)).tensor();
  std::cout << "training=False is dense2(dense1(x)): "
            << (kiln::TensorsEqual(eager, inferred) ? "yes" : "NO") << "\n";
  std::cout << "training=True drops and scales: "
            << CheckDropout(trained, inferred, model.dropout.rate()) << "\n";
  std::cout << "traces: " << model.call.trace_count() << "\n";
  std::cout << model.call.PrettyPrintedConcreteSignatures() << "\n";
  for (const ConcreteFunction* cf : model.call.concrete_functions()) {
    std::cout << cf->arguments()[1].ToString() << " graph: " << Ops(*cf) << "\n";
  }

  Check(
      Save(model, root / "my_model", {{"serving_default", &model.serve}, {"train", &model.train}}),
      "save");
  auto loaded = kiln::exec::SavedModel::Load(root / "my_model");
  Check(loaded.status(), "load");
  for (const char* key : {"serving_default", "train"}) {
    auto sig = (*loaded)->GetSignature(key);
    Check(sig.status(), key);
    auto r = (*sig)->Run({{"inputs", x}});
    Check(r.status(), key);
    std::cout << "from the bundle, " << key << ": " << TfRepr(r->at("output_0")) << "\n";
  }
  return 0;
}
