// The seed notes' np_random: a number drawn by plain C++ while tracing (numpy's np.random there,
// std::mt19937 here) is frozen into the graph as a constant, so every call prints the same matrix;
// the toolkit's random op draws fresh numbers on every call. The random function is then saved,
// reloaded and run: the bundle draws fresh numbers too.
//
//   np_random [bundle_dir]
#include <iostream>
#include <random>

#include "kiln/exec/saved_model.h"
#include "kiln/trace/trace.h"
#include "sample_util.h"

using kiln::Result;
using kiln::Shape;
using kiln::Tensor;
using namespace kiln::trace;  // NOLINT
using kiln::samples::Check;

int main(int argc, char** argv) {
  const auto root = kiln::samples::BundleRoot(argc, argv, "np_random");
  const PrintOptions out{.output_stream = "stdout"};
  std::mt19937 engine(std::random_device{}());

  Function np_random("np_random", [&](const Values&) -> Result<Values> {
    std::normal_distribution<float> normal;
    std::vector<float> a(9);
    for (float& x : a) x = normal(engine);  // host code: runs while tracing only
    KILN_RETURN_IF_ERROR(Print({Constant(*Tensor::FromVector<float>(a, Shape{3, 3}))}, out));
    return Values{};
  });
  Function tf_random("tf_random", [&](const Values&) -> Result<Values> {
    Value b = RandomNormal(Shape{3, 3});  // a graph op: draws on every call
    KILN_RETURN_IF_ERROR(Print({b}, out));
    return Values{b};
  });

  std::cout << "# np_random() twice: the same numbers\n";
  Check(np_random().status(), "np_random");
  Check(np_random().status(), "np_random");
  std::cout << "# tf_random() twice: new numbers each time\n";
  Check(tf_random().status(), "tf_random");
  Check(tf_random().status(), "tf_random");

  Module module("random_module");
  Check(Save(module, root / "tf_random", {{"serving_default", &tf_random}}), "save");
  auto loaded = kiln::exec::SavedModel::Load(root / "tf_random");
  Check(loaded.status(), "load");
  std::cout << "# from the bundle " << (root / "tf_random").string() << ", twice:\n";
  for (int i = 0; i < 2; ++i) {
    Check((*(*loaded)->GetSignature("serving_default"))->Run({}).status(), "run");
  }
  return 0;
}
