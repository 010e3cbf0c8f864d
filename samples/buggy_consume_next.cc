// The seed notes' buggy_consume_next: a host iterator read in the body is read once, while
// tracing; its first value is frozen into the graph, so every call adds 0 and prints
// "Value of external_var: 0". Saved and reloaded, the bundle does the same.
//
//   buggy_consume_next [bundle_dir]
#include <iostream>
#include <vector>

#include "kiln/exec/saved_model.h"
#include "kiln/trace/trace.h"
#include "sample_util.h"

using kiln::Result;
using kiln::Tensor;
using namespace kiln::trace;  // NOLINT
using kiln::samples::Check;

int main(int argc, char** argv) {
  const auto root = kiln::samples::BundleRoot(argc, argv, "buggy_consume_next");
  Module module("consume");
  Variable external_var = module.AddVariable("external_var", Tensor::Scalar(0));
  const std::vector<int> data = {0, 1, 2, 3};
  auto iterator = data.begin();  // iter([0, 1, 2, 3])
  Function& buggy_consume_next = module.AddMethod(
      "buggy_consume_next", InputSignature{}, [&](const Values&) -> Result<Values> {
        external_var.AssignAdd(Scalar(*iterator++));  // next(iterator): host code
        KILN_RETURN_IF_ERROR(
            kiln::samples::PrintLine("Value of external_var: {}", {external_var.Read()}));
        return Values{external_var.Read()};
      });
  for (int i = 0; i < 3; ++i) Check(buggy_consume_next().status(), "buggy_consume_next");
  std::cout << "the iterator advanced " << (iterator - data.begin()) << " time(s)\n";

  Check(Save(module, root / "consume", {{"serving_default", &buggy_consume_next}}), "save");
  auto loaded = kiln::exec::SavedModel::Load(root / "consume");
  Check(loaded.status(), "load");
  std::cout << "# from the bundle " << (root / "consume").string() << "\n";
  for (int i = 0; i < 2; ++i) {
    Check((*(*loaded)->GetSignature("serving_default"))->Run({}).status(), "run");
  }
  return 0;
}
