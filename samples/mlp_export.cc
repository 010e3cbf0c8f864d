// A Keras-style MLP (784 -> 512 relu -> 512 relu -> 10 softmax) built from kiln::modules,
// run eagerly on deterministic inputs, then saved with a serving_default signature taking
// float32 [None, 784].
//
//   mlp_export BUNDLE_DIR DATA_DIR
//
// DATA_DIR receives x_<B>.npy and y_<B>.npy for batches 1, 7 and 256: the inputs and the
// eager outputs, which mlp_load compares the loaded bundle against.
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <random>

#include "kiln/core/npy.h"
#include "kiln/modules/dense.h"
#include "kiln/modules/initializers.h"
#include "kiln/modules/sequential.h"
#include "kiln/trace/trace.h"

using kiln::DType;
using kiln::Tensor;
using kiln::modules::Activation;
using kiln::modules::Dense;
using kiln::modules::Sequential;
using kiln::trace::Values;

namespace {

// The same inputs on every run and platform.
Tensor Input(int64_t batch) {
  std::mt19937 engine(1234 + static_cast<uint32_t>(batch));
  Tensor x(DType::kFloat, kiln::Shape{batch, 784});
  for (float& v : x.flat<float>()) v = kiln::modules::UniformFloat(engine);
  return x;
}

int Fail(const kiln::Status& s) {
  std::cerr << s.ToString() << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " BUNDLE_DIR DATA_DIR\n";
    return 2;
  }
  kiln::modules::ManualSeed(42);
  Sequential model("mlp");
  model.Add<Dense>(512, Activation::kRelu, 784);
  model.Add<Dense>(512, Activation::kRelu);
  model.Add<Dense>(10, Activation::kSoftmax);
  auto& predict = model.AddMethod("predict", {{"x", DType::kFloat, {-1, 784}}},
                                  [&model](const Values& args) { return Values{model(args[0])}; });
  auto summary = model.Summary();
  if (!summary.ok()) return Fail(summary.status());
  std::cout << *summary;

  std::error_code ec;
  std::filesystem::create_directories(argv[2], ec);
  for (int64_t batch : {1, 7, 256}) {
    const Tensor x = Input(batch);
    auto eager = model(x).tensor();
    if (!eager.ok()) return Fail(eager.status());
    auto graph = predict(x);
    if (!graph.ok()) return Fail(graph.status());
    float diff = 0;
    for (int64_t i = 0; i < eager->NumElements(); ++i) {
      diff = std::max(diff, std::abs(eager->flat<float>()[i] - (*graph)[0].flat<float>()[i]));
    }
    std::cout << "batch " << batch << ": eager vs traced max abs diff " << diff << "\n";
    const std::filesystem::path dir = argv[2];
    for (auto [name, t] : {std::pair{"x_", x}, std::pair{"y_", *eager}}) {
      kiln::Status s = kiln::WriteNpy(dir / (name + std::to_string(batch) + ".npy"), t);
      if (!s.ok()) return Fail(s);
    }
  }
  std::cout << "traced predict " << predict.trace_count() << " time(s)\n";

  const auto start = std::chrono::steady_clock::now();
  kiln::Status saved = kiln::trace::Save(model, argv[1], {{"serving_default", &predict}});
  if (!saved.ok()) return Fail(saved);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::cout << "saved to " << argv[1] << " in " << ms << " ms; data in " << argv[2] << "\n";
  return 0;
}
