// Per-call overhead of running a tiny signature: VarsAndArithmeticObjectGraph's
// serving_default ((a + x) * (b + y) / z + c on scalars, 4 kernels after inlining) through
// Signature::RunFlat, against the same arithmetic written by hand in C++ (the floor).
// Usage: bench_signature_overhead [bundle_dir] [iterations]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kiln/exec/saved_model.h"

namespace {

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir =
      argc > 1 ? argv[1] : std::string(KILN_FIXTURES_DIR) + "/VarsAndArithmeticObjectGraph";
  const int iters = argc > 2 ? std::atoi(argv[2]) : 200000;
  auto model = kiln::exec::SavedModel::Load(dir);
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
    return 1;
  }
  auto sig = (*model)->GetSignature("serving_default");
  if (!sig.ok()) {
    std::fprintf(stderr, "%s\n", sig.status().ToString().c_str());
    return 1;
  }
  std::vector<kiln::Tensor> inputs = {kiln::Tensor::Scalar(1.5f), kiln::Tensor::Scalar(2.5f)};
  std::vector<kiln::Tensor> outputs;
  for (int i = 0; i < 1000; ++i) (void)(*sig)->RunFlat(inputs, &outputs);  // warm up

  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) {
    kiln::Status s = (*sig)->RunFlat(inputs, &outputs);
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
  }
  const double ours = SecondsSince(t0) / iters;

  volatile float a = 1.5f, b = 2.5f, x = 1, y = 2, z = 3, c = 5;
  float sink = 0;
  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) sink += (a + x) * (b + y) / z + c;
  const double floor = SecondsSince(t0) / iters;

  std::printf("signature_overhead: %s serving_default, %d calls\n", dir.c_str(), iters);
  std::printf("  kiln Signature::RunFlat : %8.3f us/call\n", ours * 1e6);
  std::printf("  hand-written C++ (floor): %8.3f us/call\n", floor * 1e6);
  std::printf("  ratio kiln / floor      : %8.1fx   (result %g, check %g)\n", ours / floor,
              outputs[0].scalar<float>(), sink / iters);
  return 0;
}
