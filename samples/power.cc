// The seed notes' speed claim: power(x, 100), 100 int32 10x10 matmuls, run 1000 times op by op
// (eagerly) and as one traced graph, with the ratio. y is a host value, so the graph is the
// unrolled loop of 100 MatMul nodes. The graph is saved, reloaded and checked against the
// eager result.
//
//   power [bundle_dir] [runs]
#include <chrono>
#include <iostream>
#include <random>

#include "kiln/exec/saved_model.h"
#include "kiln/trace/trace.h"
#include "sample_util.h"

using kiln::DType;
using kiln::Result;
using kiln::Shape;
using kiln::Tensor;
using namespace kiln::trace;  // NOLINT
using kiln::samples::Check;

namespace {

// def power(x, y): result = tf.eye(10, dtype=tf.int32); for _ in range(y): result = x @ result
Result<Values> Power(const Args& args) {
  Tensor eye(DType::kInt32, Shape{10, 10});
  for (int i = 0; i < 100; ++i) eye.flat<int32_t>()[i] = (i / 10 == i % 10) ? 1 : 0;
  Value result = Constant(eye);
  for (int64_t k = 0; k < args[1].int_value(); ++k) result = MatMul(args[0], result);
  return Values{result};
}

bool Same(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return false;
  for (int64_t i = 0; i < a.NumElements(); ++i) {
    if (a.flat<int32_t>()[i] != b.flat<int32_t>()[i]) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const auto root = kiln::samples::BundleRoot(argc, argv, "power");
  const int runs = argc > 2 ? std::atoi(argv[2]) : 1000;
  // x = tf.random.uniform([10, 10], minval=-1, maxval=2, dtype=tf.int32)
  std::mt19937 engine(1);
  std::uniform_int_distribution<int32_t> dist(-1, 1);
  Tensor x(DType::kInt32, Shape{10, 10});
  for (int32_t& v : x.flat<int32_t>()) v = dist(engine);

  Function power("power", FunctionOptions{.arg_names = {"x", "y"}}, Power);
  using Clock = std::chrono::steady_clock;

  SetRunFunctionsEagerly(true);
  Tensor eager_result = (*power(x, 100))[0];  // warm up
  auto t0 = Clock::now();
  for (int i = 0; i < runs; ++i) Check(power(x, 100).status(), "eager power");
  const double eager_s = std::chrono::duration<double>(Clock::now() - t0).count();
  SetRunFunctionsEagerly(false);

  Tensor graph_result = (*power(x, 100))[0];  // traces once
  t0 = Clock::now();
  for (int i = 0; i < runs; ++i) Check(power(x, 100).status(), "graph power");
  const double graph_s = std::chrono::duration<double>(Clock::now() - t0).count();

  std::cout << "Eager execution: " << eager_s << "\n";
  std::cout << "Graph execution: " << graph_s << "\n";
  std::cout << "eager / graph = " << eager_s / graph_s << " (" << runs
            << " runs; TensorFlow in the seed notes: 4.374 s / 0.736 s = 5.9)\n";
  std::cout << "same result: " << (Same(eager_result, graph_result) ? "yes" : "NO") << "\n";
  const auto* cf = power.concrete_functions()[0];
  std::cout << "graph nodes: " << cf->num_nodes() << ", traces: " << power.trace_count() << "\n";

  // Export the y = 100 graph with x as a tensor input and check the bundle.
  Module module("power");
  Function power100("power", {{"x", DType::kInt32, kiln::PartialShape{10, 10}}},
                    [](const Values& v) {
                      return Power(Args{Arg(v[0]), Arg(100)});
                    });
  Check(Save(module, root / "power", {{"serving_default", &power100}}), "save");
  auto loaded = kiln::exec::SavedModel::Load(root / "power");
  Check(loaded.status(), "load");
  auto r = (*(*loaded)->GetSignature("serving_default"))->Run({{"x", x}});
  Check(r.status(), "run");
  std::cout << "bundle result same: " << (Same(r->at("output_0"), eager_result) ? "yes" : "NO")
            << "\n";
  return 0;
}
