// The seed notes' DemoModule in C++: a module with one variable and a traced method, called twice,
// then saved as a SavedModel with a serving_default signature.
//
//   demo_module_export OUT_DIR
//
// Prints 6 and 56 (the graph's print op, as tf.print), the module's variables and submodules,
// and how long saving took. Load the result with demo_module_load OUT_DIR.
#include <chrono>
#include <iostream>

#include "kiln/trace/trace.h"

using kiln::DType;
using kiln::Result;
using kiln::Tensor;
using kiln::trace::Function;
using kiln::trace::Values;
using kiln::trace::Variable;

class DemoModule : public kiln::trace::Module {
 public:
  explicit DemoModule(float init_value)
      : Module("demo_module"),
        x(AddVariable("x", Tensor::Scalar(init_value))),
        addprint(AddMethod(
            "addprint", {{"a", DType::kFloat}}, [this](const Values& args) -> Result<Values> {
              x.AssignAdd(args[0]);
              KILN_RETURN_IF_ERROR(kiln::trace::Print({x.Read()}, {.output_stream = "stdout"}));
              return Values{x.Read()};
            })) {}

  Variable x;  // declared before addprint: members are initialised in this order
  Function& addprint;
};

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " OUT_DIR\n";
    return 2;
  }
  DemoModule demo(1.0f);
  for (float a : {5.0f, 50.0f}) {
    std::cout << "demo.addprint(" << a << ") prints: " << std::flush;
    auto result = demo.addprint(Tensor::Scalar(a));
    if (!result.ok()) {
      std::cerr << result.status().ToString() << "\n";
      return 1;
    }
  }
  std::cout << "traced " << demo.addprint.trace_count() << " time(s); concrete function: "
            << (*demo.addprint.GetConcreteFunction())->SignatureString() << "\n";

  std::cout << "demo.variables:";
  for (const auto& [path, v] : demo.named_variables())
    std::cout << " " << path << "=" << v.DebugString();
  std::cout << "\ndemo.trainable_variables: " << demo.trainable_variables().size()
            << "\ndemo.submodules: " << demo.submodules().size() << "\n";

  const auto start = std::chrono::steady_clock::now();
  kiln::Status saved = kiln::trace::Save(demo, argv[1], {{"serving_default", &demo.addprint}});
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!saved.ok()) {
    std::cerr << saved.ToString() << "\n";
    return 1;
  }
  std::cout << "saved to " << argv[1] << " in " << ms << " ms (signatures: serving_default -> "
            << "addprint)\n";
  return 0;
}
