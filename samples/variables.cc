// The seed notes' variables: a variable created outside the function and assigned inside it
// changes for everyone (out() prints 2 then 3); creating one inside the body is an error that
// says how to fix it (inside()); creating it once, guarded by a host check, works. The module
// holding x is saved and reloaded: the bundle continues from x = 3.
//
//   variables [bundle_dir]
#include <iostream>

#include "kiln/exec/saved_model.h"
#include "kiln/trace/trace.h"
#include "sample_util.h"

using kiln::DType;
using kiln::Result;
using kiln::Tensor;
using namespace kiln::trace;  // NOLINT
using kiln::samples::Check;
using kiln::samples::TfRepr;

int main(int argc, char** argv) {
  const auto root = kiln::samples::BundleRoot(argc, argv, "variables");
  const PrintOptions out{.output_stream = "stdout"};

  Module module("variables");
  Variable x = module.AddVariable("x", Tensor::Scalar(1.0f));
  Function& out_fn =
      module.AddMethod("out", InputSignature{}, [&](const Values&) -> Result<Values> {
        x.AssignAdd(Scalar(1.0f));
        KILN_RETURN_IF_ERROR(Print({x.Read()}, out));
        return Values{x.Read()};
      });
  std::cout << "# out(); out()\n";
  Check(out_fn().status(), "out");
  Check(out_fn().status(), "out");

  std::cout << "# inside()\n";
  Function inside("inside", [&](const Values&) -> Result<Values> {
    Variable a = Variable::Create("a", Tensor::Scalar(1.0f));
    a.AssignAdd(Scalar(1.0f));
    KILN_RETURN_IF_ERROR(Print({a.Read()}, out));
    return Values{};
  });
  auto r = inside();
  std::cout << (r.ok() ? std::string("no error?!") : r.status().ToString()) << "\n";

  std::cout << "# g(1.0); g(2.0) with `if (!v.valid()) v = Variable::Create(...)`\n";
  Variable v;
  Function g("g", {{"x", DType::kFloat}}, [&](const Values& args) -> Result<Values> {
    if (!v.valid()) v = Variable::Create("v", Tensor::Scalar(1.0f));
    return Values{v.AssignAdd(args[0])};
  });
  std::cout << TfRepr((*g(Tensor::Scalar(1.0f)))[0]) << "\n";
  std::cout << TfRepr((*g(Tensor::Scalar(2.0f)))[0]) << "\n";

  Check(Save(module, root / "variables", {{"serving_default", &out_fn}}), "save");
  auto loaded = kiln::exec::SavedModel::Load(root / "variables");
  Check(loaded.status(), "load");
  std::cout << "# from the bundle " << (root / "variables").string() << ": out(); out()\n";
  for (int i = 0; i < 2; ++i) {
    Check((*(*loaded)->GetSignature("serving_default"))->Run({}).status(), "run");
  }
  return 0;
}
