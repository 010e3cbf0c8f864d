// The seed notes' scaled_elu (seed 002, "一个函数"): z >= 0 ? scale * z : scale * alpha * elu(z),
// written with tf.where, and its tf.function scaled_elu_tf ("速度变快", faster). The function
// runs op by op and as a graph on the same z; scale and alpha are host values (Python floats in
// the seed), so each (scale, alpha) pair is its own trace: (1.0, 1.0) is ELU, SELU's constants
// give SELU. Then the call counts of eager vs graph execution are timed (printed, never
// checked).
//
//   scaled_elu [runs]
#include <chrono>
#include <cstdlib>
#include <iomanip>
#include <iostream>

#include "kiln/modules/activations.h"
#include "kiln/trace/trace.h"
#include "sample_util.h"

using kiln::DType;
using kiln::Result;
using kiln::Shape;
using kiln::Tensor;
using namespace kiln::trace;  // NOLINT: a sample reads like the seed
using kiln::samples::Check;
using kiln::samples::TfRepr;

namespace {

// SELU's constants (tf.nn.selu): with them scaled_elu is SELU.
constexpr double kSeluScale = 1.0507009873554805;
constexpr double kSeluAlpha = 1.6732632423543772;

// def scaled_elu(z, scale=1.0, alpha=1.0):
//   is_positive = tf.greater_equal(z, 0.0)
//   return scale * tf.where(is_positive, z, alpha * tf.nn.elu(z))
Result<Values> ScaledElu(const Args& args) {
  const Value z = args[0].value();
  const Value is_positive = GreaterEqual(z, Scalar(0.0f));
  const Value elu = kiln::modules::ApplyActivation(kiln::modules::Activation::kElu, z);
  return Values{args[1].value() * Where(is_positive, z, args[2].value() * elu)};
}

Tensor Z() {
  Tensor z(DType::kFloat, Shape{7});
  const float values[] = {-3.0f, -1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 3.0f};
  for (int i = 0; i < 7; ++i) z.flat<float>()[i] = values[i];
  return z;
}

Tensor First(const Result<std::vector<Tensor>>& r, const std::string& what) {
  Check(r.status(), what);
  return (*r)[0];
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 1000;
  const FunctionOptions options{.arg_names = {"z", "scale", "alpha"}};
  Function scaled_elu_tf("scaled_elu", options, ScaledElu);
  const Tensor z = Z();
  std::cout << "z: " << TfRepr(z, -1) << "\n";

  SetRunFunctionsEagerly(true);  // scaled_elu itself: op by op
  std::cout << "scaled_elu(z): " << TfRepr(First(scaled_elu_tf(z, 1.0, 1.0), "scaled_elu"), -1)
            << "\n";
  SetRunFunctionsEagerly(false);
  std::cout << "scaled_elu_tf(z): "
            << TfRepr(First(scaled_elu_tf(z, 1.0, 1.0), "scaled_elu_tf"), -1) << "\n";
  std::cout << std::setprecision(17) << "scaled_elu_tf(z, scale=" << kSeluScale
            << ", alpha=" << kSeluAlpha << "): "
            << TfRepr(First(scaled_elu_tf(z, kSeluScale, kSeluAlpha), "scaled_elu_tf selu"), -1)
            << "\n";
  std::cout << std::setprecision(6) << "traces: " << scaled_elu_tf.trace_count() << "\n";
  std::cout << scaled_elu_tf.PrettyPrintedConcreteSignatures() << "\n";

  // "速度变快": the same calls op by op and through the cached graph.
  using Clock = std::chrono::steady_clock;
  SetRunFunctionsEagerly(true);
  auto t0 = Clock::now();
  for (int i = 0; i < runs; ++i) Check(scaled_elu_tf(z, 1.0, 1.0).status(), "eager scaled_elu");
  const double eager_s = std::chrono::duration<double>(Clock::now() - t0).count();
  SetRunFunctionsEagerly(false);
  t0 = Clock::now();
  for (int i = 0; i < runs; ++i) Check(scaled_elu_tf(z, 1.0, 1.0).status(), "scaled_elu_tf");
  const double graph_s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::cout << "Eager execution: " << eager_s << "\n";
  std::cout << "Graph execution: " << graph_s << " (" << runs << " runs each)\n";
  return 0;
}
