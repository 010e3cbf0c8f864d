// Loads a SavedModel and runs one float signature: `run_bundle DIR SIGNATURE INPUT v1 v2 ...`
// feeds [n, 1] floats to INPUT and prints every output's values, one per line.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "kiln/exec/saved_model.h"

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: run_bundle DIR SIGNATURE INPUT VALUE...\n");
    return 2;
  }
  auto model = kiln::exec::SavedModel::Load(argv[1]);
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
    return 1;
  }
  auto signature = (*model)->GetSignature(argv[2]);
  if (!signature.ok()) {
    std::fprintf(stderr, "%s\n", signature.status().ToString().c_str());
    return 1;
  }
  std::vector<float> values;
  for (int i = 4; i < argc; ++i) values.push_back(std::strtof(argv[i], nullptr));
  auto x = kiln::Tensor::FromVector(values, kiln::Shape{static_cast<int64_t>(values.size()), 1});
  if (!x.ok()) return 1;
  auto outputs = (*signature)->Run({{argv[3], *x}});
  if (!outputs.ok()) {
    std::fprintf(stderr, "%s\n", outputs.status().ToString().c_str());
    return 1;
  }
  for (const auto& [key, tensor] : *outputs)
    for (float v : tensor.flat<float>()) std::printf("%s %g\n", key.c_str(), v);
  return 0;
}
