// The seed notes' unused_return (non-strict execution): an unused gather out of range fails when
// the body runs op by op (eagerly), but the graph runs only what the outputs and side effects need,
// so the traced function succeeds. Saved and reloaded, the bundle succeeds too.
//
//   unused_return [bundle_dir]
#include <iostream>

#include "kiln/exec/saved_model.h"
#include "kiln/trace/trace.h"
#include "sample_util.h"

using kiln::DType;
using kiln::PartialShape;
using kiln::Result;
using kiln::Shape;
using kiln::Tensor;
using namespace kiln::trace;  // NOLINT
using kiln::samples::Check;
using kiln::samples::TfRepr;

namespace {

// def unused_return(x): tf.gather(x, [1]); return x   (index 1 fails when len(x) == 1)
Result<Values> UnusedReturn(const Values& args) {
  // Eagerly the gather runs at once and its failure fails the call; in a graph it is pruned.
  (void)Gather(args[0], Constant(*Tensor::FromVector<int32_t>({1}, Shape{1})));
  return Values{Identity(args[0])};
}

}  // namespace

int main(int argc, char** argv) {
  const auto root = kiln::samples::BundleRoot(argc, argv, "unused_return");
  const Tensor x = *Tensor::FromVector<float>({0.0f}, Shape{1});

  Function unused_return_eager("unused_return_eager", UnusedReturn);
  SetRunFunctionsEagerly(true);
  auto eager = unused_return_eager(x);
  SetRunFunctionsEagerly(false);
  if (eager.ok()) {
    std::cout << TfRepr((*eager)[0]) << "\n";
  } else {
    std::cout << "InvalidArgumentError: " << eager.status().message() << "\n";
  }

  Module module("unused_return");
  Function& unused_return_graph = module.AddMethod(
      "unused_return_graph", {{"x", DType::kFloat, PartialShape{-1}}}, UnusedReturn);
  auto graph = unused_return_graph(x);
  Check(graph.status(), "unused_return_graph");
  std::cout << TfRepr((*graph)[0]) << "\n";

  Check(Save(module, root / "unused_return", {{"serving_default", &unused_return_graph}}), "save");
  auto loaded = kiln::exec::SavedModel::Load(root / "unused_return");
  Check(loaded.status(), "load");
  auto r = (*(*loaded)->GetSignature("serving_default"))->Run({{"x", x}});
  Check(r.status(), "run");
  std::cout << "from the bundle: " << TfRepr(r->at("output_0")) << "\n";
  return 0;
}
