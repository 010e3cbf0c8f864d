// Loads the MLP bundle mlp_export wrote (linking kiln::exec only), runs serving_default on the
// inputs saved beside it and compares with the eager outputs of the authoring program.
//
//   mlp_load BUNDLE_DIR DATA_DIR
//
// Exits 1 if any output differs from the eager one by more than 1e-5.
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "kiln/core/npy.h"
#include "kiln/exec/saved_model.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " BUNDLE_DIR DATA_DIR\n";
    return 2;
  }
  constexpr float kTolerance = 1e-5f;
  const auto start = std::chrono::steady_clock::now();
  auto model = kiln::exec::SavedModel::Load(argv[1]);
  const double load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!model.ok()) {
    std::cerr << model.status().ToString() << "\n";
    return 1;
  }
  std::cout << "loaded " << argv[1] << " in " << load_ms << " ms\n";
  auto signature = (*model)->GetSignature("serving_default");
  if (!signature.ok()) {
    std::cerr << signature.status().ToString() << "\n";
    return 1;
  }
  const std::filesystem::path data = argv[2];
  bool ok = true;
  for (int batch : {1, 7, 256}) {
    auto x = kiln::ReadNpy(data / ("x_" + std::to_string(batch) + ".npy"));
    auto want = kiln::ReadNpy(data / ("y_" + std::to_string(batch) + ".npy"));
    if (!x.ok() || !want.ok()) {
      std::cerr << (x.ok() ? want.status() : x.status()).ToString() << "\n";
      return 1;
    }
    const auto t0 = std::chrono::steady_clock::now();
    auto out = (*signature)->Run({{"x", *x}});
    const double run_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!out.ok()) {
      std::cerr << out.status().ToString() << "\n";
      return 1;
    }
    const kiln::Tensor& got = out->at("output_0");
    if (got.shape() != want->shape()) {
      std::cerr << "batch " << batch << ": output shape " << got.shape().ToString() << ", expected "
                << want->shape().ToString() << "\n";
      return 1;
    }
    float err = 0;
    for (int64_t i = 0; i < got.NumElements(); ++i) {
      err = std::max(err, std::abs(got.flat<float>()[i] - want->flat<float>()[i]));
    }
    std::cout << "batch " << batch << ": output " << got.shape().ToString() << " in " << run_ms
              << " ms, max abs error vs eager " << err << (err <= kTolerance ? "" : "  (TOO LARGE)")
              << "\n";
    ok = ok && err <= kTolerance;
  }
  return ok ? 0 : 1;
}
