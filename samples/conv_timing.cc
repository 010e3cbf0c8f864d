// The seed notes' conv timing (seed 003, In [41]): a Conv2D(100, 3) on a zero image of
// (1, 200, 200, 100), timed 10 times op by op ("Eager conv") and as a traced function
// ("Function conv"). The seed's point: graphs help many small ops (samples/power), not one
// expensive op such as a convolution, so the two times are close. "Eager" runs conv_fn's body at
// once under SetRunFunctionsEagerly(true), which is the seed's conv_layer(image). The times are
// printed, never checked; then a random image checks that both modes give the same values.
//
//   conv_timing [runs] [image_size]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <random>

#include "kiln/modules/conv.h"
#include "kiln/trace/trace.h"
#include "sample_util.h"

using kiln::DType;
using kiln::PartialShape;
using kiln::Result;
using kiln::Shape;
using kiln::Tensor;
using kiln::modules::Conv2D;
using kiln::modules::ConvOptions;
using namespace kiln::trace;  // NOLINT: a sample reads like the seed
using kiln::samples::Check;

namespace {

// timeit.timeit(fn, number=runs)
template <typename Fn>
double TimeIt(int runs, const Fn& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Tensor First(const Result<std::vector<Tensor>>& r, const std::string& what) {
  Check(r.status(), what);
  return (*r)[0];
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 10;
  const int64_t size = argc > 2 ? std::atoll(argv[2]) : 200;
  if (runs < 1 || size < 3) {
    std::cerr << "conv_timing [runs >= 1] [image_size >= 3], got runs " << runs << ", image_size "
              << size << "\n";
    return 2;
  }
  // conv_layer = tf.keras.layers.Conv2D(100, 3)
  Conv2D conv_layer(ConvOptions{.filters = 100, .kernel_size = {3}, .seed = 1});
  // @tf.function def conv_fn(image): return conv_layer(image)
  Function conv_fn(
      "conv_fn", FunctionOptions{.arg_names = {"image"}},
      [&conv_layer](const Values& a) -> Result<Values> { return Values{conv_layer(a[0])}; });
  // image = tf.zeros([1, 200, 200, 100])
  const Tensor image(DType::kFloat, Shape{1, size, size, 100});  // zero-filled

  // warm up (and build the layer, eagerly, before the trace)
  SetRunFunctionsEagerly(true);
  Check(conv_fn(image).status(), "eager conv_fn");
  SetRunFunctionsEagerly(false);
  const Tensor out = First(conv_fn(image), "conv_fn");

  SetRunFunctionsEagerly(true);
  const double eager_s = TimeIt(runs, [&] { Check(conv_fn(image).status(), "eager conv"); });
  SetRunFunctionsEagerly(false);
  const double function_s = TimeIt(runs, [&] { Check(conv_fn(image).status(), "function conv"); });
  std::cout << "Eager conv: " << eager_s << "\n";
  std::cout << "Function conv: " << function_s << "\n";
  std::cout << "(" << runs << " runs; TensorFlow in the seed notes: 0.539 s / 0.507 s)\n";
  std::cout << "output shape: " << PartialShape(out.shape()).ToPythonString()
            << ", traces: " << conv_fn.trace_count() << "\n";

  // Both modes on a random image: the same convolution, the same values up to rounding.
  Tensor noise(DType::kFloat, Shape{1, size, size, 100});
  std::mt19937 engine(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : noise.flat<float>()) v = dist(engine);
  SetRunFunctionsEagerly(true);
  const Tensor eager = First(conv_fn(noise), "eager conv (random image)");
  SetRunFunctionsEagerly(false);
  const Tensor graph = First(conv_fn(noise), "function conv (random image)");
  float max_diff = 0.0f;
  for (int64_t i = 0; i < eager.NumElements(); ++i) {
    max_diff = std::max(max_diff, std::abs(eager.flat<float>()[i] - graph.flat<float>()[i]));
  }
  std::cout << "random image: max |eager - function| = " << max_diff << "\n";
  return 0;
}
