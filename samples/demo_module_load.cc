// Loads the bundle demo_module_export wrote, without any of the module's code (this program
// links kiln::exec only), and continues from the saved state (x was 56 at save).
//
//   demo_module_load DIR
//
// Runs the serving_default signature with a = 5 (61; the graph's print op prints 61 too), then
// calls the restored method `addprint` by name (66): both share the restored variable.
#include <chrono>
#include <iostream>
#include <map>

#include "kiln/exec/saved_model.h"

using kiln::Tensor;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " DIR\n";
    return 2;
  }
  const auto start = std::chrono::steady_clock::now();
  auto model = kiln::exec::SavedModel::Load(argv[1]);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!model.ok()) {
    std::cerr << model.status().ToString() << "\n";
    return 1;
  }
  std::cout << "loaded " << argv[1] << " in " << ms << " ms\n";
  for (const auto& v : (*model)->variables()) {
    auto value = v.resource->Read();
    std::cout << "variable " << v.path << " = " << (value.ok() ? value->SummarizeValue() : "?")
              << "\n";
  }

  auto signature = (*model)->GetSignature("serving_default");
  if (!signature.ok()) {
    std::cerr << signature.status().ToString() << "\n";
    return 1;
  }
  std::cout << "serving_default(a=5) prints: " << std::flush;
  auto outputs = (*signature)->Run({{"a", Tensor::Scalar(5.0f)}});
  if (!outputs.ok()) {
    std::cerr << outputs.status().ToString() << "\n";
    return 1;
  }
  std::cout << "serving_default output_0 = " << outputs->at("output_0").SummarizeValue() << "\n";

  auto addprint = (*model)->GetFunction("addprint");
  if (!addprint.ok()) {
    std::cerr << addprint.status().ToString() << "\n";
    return 1;
  }
  for (int i = 0; i < 2; ++i) {
    std::cout << "addprint(5) prints: " << std::flush;
    const Tensor a = Tensor::Scalar(5.0f);
    auto result = (*addprint)->Call({&a, 1});
    if (!result.ok()) {
      std::cerr << result.status().ToString() << "\n";
      return 1;
    }
    std::cout << "addprint(5) returned " << result->at(0).SummarizeValue() << "\n";
  }
  return 0;
}
