// The seed notes' host ("Python") arguments: a host value is part of the cache key by value, so
// f(1); f(1); f(2) traces twice, while tensors trace once for every value. Shows the retrace log
// and the one-time retrace warning, then saves the tensor version and runs it from the bundle.
//
//   host_values [bundle_dir]
#include <iostream>

#include "kiln/exec/saved_model.h"
#include "kiln/trace/trace.h"
#include "sample_util.h"

using kiln::DType;
using kiln::Result;
using kiln::Tensor;
using namespace kiln::trace;  // NOLINT
using kiln::samples::Check;

namespace {

void PrintLog(const Function& f) {
  std::cout << f.name() << ": " << f.trace_count() << " trace(s)\n";
  for (const TraceRecord& r : f.trace_log()) std::cout << "  " << r.ToString() << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  const auto root = kiln::samples::BundleRoot(argc, argv, "host_values");

  // @tf.function def f(x): print("Traced with", x); tf.print("Executed with", x)
  auto f_body = [](const Args& args) -> Result<Values> {
    std::cout << "Traced with " << args[0].ToString() << std::endl;
    KILN_RETURN_IF_ERROR(kiln::samples::PrintLine("Executed with {}", {args[0]}));
    return Values{};
  };
  Function f("f", FunctionOptions{.arg_names = {"x"}}, f_body);
  std::cout << "# f(1); f(1); f(2)\n";
  Check(f(1).status(), "f(1)");
  Check(f(1).status(), "f(1)");
  Check(f(2).status(), "f(2)");
  PrintLog(f);

  // train(num_steps): host values retrace, tensors do not.
  auto train_body = [](const Args& args) -> Result<Values> {
    std::cout << "Tracing with num_steps = " << args[0].ToString() << std::endl;
    KILN_RETURN_IF_ERROR(ForRange(Scalar(0), args[0].value(), Scalar(1),
                                  [](const Value&, const Values& vars) -> Result<Values> {
                                    return vars;  // train_one_step()
                                  })
                             .status());
    return Values{};
  };
  Function train("train", FunctionOptions{.arg_names = {"num_steps"}}, train_body);
  std::cout << "\n# train(num_steps=10); train(num_steps=20)\n";
  Check(train(10).status(), "train(10)");
  Check(train(20).status(), "train(20)");
  std::cout << "# train(num_steps=tf.constant(10)); train(num_steps=tf.constant(20))\n";
  Check(train(Tensor::Scalar(10)).status(), "train(tensor 10)");
  Check(train(Tensor::Scalar(20)).status(), "train(tensor 20)");
  PrintLog(train);

  // Many host values: one warning, with the reasons and the fix.
  std::cout << "\n# train(n) for n = 1..8 (host values)\n";
  Function train2("train2", FunctionOptions{.arg_names = {"num_steps"}}, train_body);
  SetWarningSink([](std::string_view m) { std::cout << "WARNING: " << m << "\n"; });
  for (int n = 1; n <= 8; ++n) Check(train2(n).status(), "train2");
  SetWarningSink(nullptr);

  // The tensor version is exportable: save it, reload it, run it.
  Module module("host_values");
  Function f_tensor("f", {{"x", DType::kInt32}}, [&](const Values& v) -> Result<Values> {
    KILN_RETURN_IF_ERROR(kiln::samples::PrintLine("Executed with {}", {v[0]}));
    return Values{Identity(v[0])};
  });
  Check(Save(module, root / "f", {{"serving_default", &f_tensor}}), "save");
  auto loaded = kiln::exec::SavedModel::Load(root / "f");
  Check(loaded.status(), "load");
  std::cout << "\n# from the bundle " << (root / "f").string() << "\n";
  for (int x : {1, 1, 2}) {
    auto r = (*(*loaded)->GetSignature("serving_default"))->Run({{"x", Tensor::Scalar(x)}});
    Check(r.status(), "run");
  }
  return 0;
}
