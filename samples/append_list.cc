// The seed notes' append_list: appending to a host vector inside the body happens once, while
// tracing, and what is appended is the symbolic argument; the print op prints the list on every
// call with that call's value. Saved and reloaded, the bundle prints the same way.
//
//   append_list [bundle_dir]
#include <iostream>
#include <vector>

#include "kiln/exec/saved_model.h"
#include "kiln/trace/trace.h"
#include "sample_util.h"

using kiln::DType;
using kiln::Result;
using kiln::Tensor;
using namespace kiln::trace;  // NOLINT
using kiln::samples::Check;

int main(int argc, char** argv) {
  const auto root = kiln::samples::BundleRoot(argc, argv, "append_list");
  std::vector<Value> lyst;
  Function append_list("append_list", {{"x", DType::kFloat}},
                       [&](const Values& args) -> Result<Values> {
                         lyst.push_back(args[0]);  // host container: tracing only
                         // tf.print(lyst): the list holds the symbolic x of this trace.
                         KILN_RETURN_IF_ERROR(kiln::samples::PrintLine("[{}]", {lyst.back()}));
                         return Values{Identity(args[0])};
                       });
  Check(append_list(Tensor::Scalar(4.3f)).status(), "append_list(4.3)");
  Check(append_list(Tensor::Scalar(2.3f)).status(), "append_list(2.3)");
  std::cout << "lyst = [";
  for (size_t i = 0; i < lyst.size(); ++i) std::cout << (i ? ", " : "") << lyst[i].DebugString();
  std::cout << "]\n";

  Module module("append_list");
  Check(Save(module, root / "append_list", {{"serving_default", &append_list}}), "save");
  auto loaded = kiln::exec::SavedModel::Load(root / "append_list");
  Check(loaded.status(), "load");
  std::cout << "# from the bundle " << (root / "append_list").string() << "\n";
  for (float x : {4.3f, 2.3f}) {
    Check((*(*loaded)->GetSignature("serving_default"))->Run({{"x", Tensor::Scalar(x)}}).status(),
          "run");
  }
  return 0;
}
