// The seed notes' simple_relu (seed 004, "将 Python 函数转换为计算图"): `if tf.greater(x, 0):
// return x else: return 0`, which AutoGraph turns into tf.cond. C++ has no AutoGraph, so the
// body writes the Cond itself; the graph is then TensorFlow's: one StatelessIf whose branches
// are the library functions cond_true_N / cond_false_N, not a Select of both branches. Both
// branches run from the one trace; the graph is printed as the seed prints
// get_concrete_function(tf.constant(1)).graph.as_graph_def(). Then the function is saved,
// reloaded and both branches run again from the bundle.
//
//   simple_relu [bundle_dir]
#include <iostream>

#include "kiln/exec/saved_model.h"
#include "kiln/trace/trace.h"
#include "sample_util.h"

using kiln::Result;
using kiln::Tensor;
using namespace kiln::trace;  // NOLINT: a sample reads like the seed
using kiln::samples::Check;
using kiln::samples::ValueRepr;

namespace {

// def simple_relu(x): if tf.greater(x, 0): return x else: return 0
Result<Values> SimpleRelu(const Values& args) {
  const Value& x = args[0];
  return Cond(
      Greater(x, Scalar<int32_t>(0)), [&]() -> Result<Values> { return Values{x}; },
      []() -> Result<Values> { return Values{Scalar<int32_t>(0)}; });
}

// .numpy() of a scalar result: "1".
std::string Numpy(const Result<std::vector<Tensor>>& r, const std::string& what) {
  Check(r.status(), what);
  return ValueRepr((*r)[0]);
}

}  // namespace

int main(int argc, char** argv) {
  const auto root = kiln::samples::BundleRoot(argc, argv, "simple_relu");
  // tf.function(simple_relu): traced per input spec, here once (int32 scalars).
  Function tf_simple_relu("simple_relu", FunctionOptions{.arg_names = {"x"}}, SimpleRelu);

  std::cout << "First branch, with graph: "
            << Numpy(tf_simple_relu(Tensor::Scalar<int32_t>(1)), "simple_relu(1)") << "\n";
  std::cout << "Second branch, with graph: "
            << Numpy(tf_simple_relu(Tensor::Scalar<int32_t>(-1)), "simple_relu(-1)") << "\n";
  // The same body op by op: Cond evaluates the predicate and runs one branch.
  SetRunFunctionsEagerly(true);
  std::cout << "First branch, eagerly: "
            << Numpy(tf_simple_relu(Tensor::Scalar<int32_t>(1)), "eager simple_relu(1)") << "\n";
  std::cout << "Second branch, eagerly: "
            << Numpy(tf_simple_relu(Tensor::Scalar<int32_t>(-1)), "eager simple_relu(-1)") << "\n";
  SetRunFunctionsEagerly(false);
  std::cout << "traces: " << tf_simple_relu.trace_count() << "\n";

  // print(tf_simple_relu.get_concrete_function(tf.constant(1)).graph.as_graph_def())
  const Args one = {Arg(Tensor::Scalar<int32_t>(1))};
  auto cf = tf_simple_relu.GetConcreteFunction(std::span<const Arg>(one));
  Check(cf.status(), "get_concrete_function");
  std::cout << (*cf)->GraphDefText();

  // The bundle holds the If and both branch functions; a loader runs either branch.
  Module module("simple_relu");
  Check(Save(module, root / "simple_relu", {{"serving_default", &tf_simple_relu}}), "save");
  auto loaded = kiln::exec::SavedModel::Load(root / "simple_relu");
  Check(loaded.status(), "load");
  auto sig = (*loaded)->GetSignature("serving_default");
  Check(sig.status(), "serving_default");
  for (int32_t x : {1, -1}) {
    auto r = (*sig)->Run({{"x", Tensor::Scalar<int32_t>(x)}});
    Check(r.status(), "bundle serving_default");
    std::cout << "from the bundle, simple_relu(" << x << "): " << ValueRepr(r->at("output_0"))
              << "\n";
  }
  return 0;
}
