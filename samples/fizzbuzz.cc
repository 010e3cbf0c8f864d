// The seed notes' fizzbuzz: a for loop over tf.range with an if/elif chain of tf.print branches.
//
//   fizzbuzz [OUT_DIR]
//
// The C++ prints ("Tracing ... branch") run once, while the one trace records every branch;
// the graph's print ops run on every call. Then the function is exported to OUT_DIR (default:
// a temporary directory), loaded with kiln::exec::SavedModel and run again from the bundle.
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "kiln/exec/saved_model.h"
#include "kiln/trace/trace.h"

using kiln::DType;
using kiln::Result;
using kiln::Tensor;
using namespace kiln::trace;  // NOLINT: a sample reads like the seed

class FizzBuzzModule : public Module {
 public:
  FizzBuzzModule()
      : Module("fizzbuzz_module"),
        fizzbuzz(AddMethod("fizzbuzz", {{"n", DType::kInt32}},
                           [this](const Values& a) { return Body(a[0]); })) {}
  Function& fizzbuzz;

 private:
  static Result<Values> Say(const char* branch, const char* word) {
    std::cout << "Tracing " << branch << " branch\n";  // ignored when called again
    // tf.print('fizz'): the text is the format (a string tensor would print quoted).
    KILN_RETURN_IF_ERROR(OpBuilder("PrintV2")
                             .Input(StringFormat({}, word))
                             .Attr("output_stream", "stdout")
                             .BuildNoOutput());
    return Values{};
  }

  Result<Values> Body(const Value& n) {
    KILN_ASSIGN_OR_RETURN(
        Values unused, ForRange(Scalar<int32_t>(1), n + 1, Scalar<int32_t>(1),
                                [](const Value& i, const Values&) -> Result<Values> {
                                  std::cout << "Tracing for loop\n";
                                  return Cond(
                                      Equal(i % 15, 0), [] { return Say("fizzbuzz", "fizzbuzz"); },
                                      [&] {
                                        return Cond(
                                            Equal(i % 3, 0), [] { return Say("fizz", "fizz"); },
                                            [&] {
                                              return Cond(
                                                  Equal(i % 5, 0),
                                                  [] { return Say("buzz", "buzz"); },
                                                  [&]() -> Result<Values> {
                                                    std::cout << "Tracing default branch\n";
                                                    KILN_RETURN_IF_ERROR(Print({i}, kStdout));
                                                    return Values{};
                                                  });
                                            });
                                      });
                                }));
    // A signature must return a tensor: n, as a receipt.
    return Values{Identity(n)};
  }

  static inline const PrintOptions kStdout{.output_stream = "stdout"};
};

int main(int argc, char** argv) {
  const std::filesystem::path dir = argc > 1 ? std::filesystem::path(argv[1])
                                             : std::filesystem::temp_directory_path() /
                                                   ("kiln_fizzbuzz_" + std::to_string(::getpid()));
  FizzBuzzModule m;
  std::cout << "第一次调用：\n" << std::flush;
  auto first = m.fizzbuzz(Tensor::Scalar<int32_t>(5));
  std::cout << std::flush;
  std::cout << "第二次调用：\n" << std::flush;
  auto second = m.fizzbuzz(Tensor::Scalar<int32_t>(20));
  if (!first.ok() || !second.ok()) {
    std::cerr << (first.ok() ? second.status() : first.status()).ToString() << "\n";
    return 1;
  }
  const ConcreteFunction* cf = *m.fizzbuzz.GetConcreteFunction();
  std::cout << "traced " << m.fizzbuzz.trace_count() << " time(s); " << cf->num_nodes()
            << " nodes in its graph\n";

  std::filesystem::remove_all(dir);
  if (kiln::Status s = Save(m, dir, {{"serving_default", &m.fizzbuzz}}); !s.ok()) {
    std::cerr << s.ToString() << "\n";
    return 1;
  }
  auto model = kiln::exec::SavedModel::Load(dir);
  if (!model.ok()) {
    std::cerr << model.status().ToString() << "\n";
    return 1;
  }
  std::cout << "saved to " << dir.string() << "; loaded serving_default(n=5) prints:\n"
            << std::flush;
  auto sig = (*model)->GetSignature("serving_default");
  auto out = sig.ok() ? (*sig)->Run({{"n", Tensor::Scalar<int32_t>(5)}})
                      : Result<std::map<std::string, Tensor>>(sig.status());
  if (!out.ok()) {
    std::cerr << out.status().ToString() << "\n";
    return 1;
  }
  return 0;
}
