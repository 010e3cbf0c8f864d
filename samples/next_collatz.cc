// The seed notes' next_collatz: a function with a fixed input signature (int32, shape [None]) has
// one graph; a call that does not fit is an error naming the argument, the expected and the given
// spec. Saved and reloaded, the bundle computes the same and refuses the same input.
//
//   next_collatz [bundle_dir]
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

int main(int argc, char** argv) {
  const auto root = kiln::samples::BundleRoot(argc, argv, "next_collatz");
  Module module("collatz");
  Function next_collatz(
      "next_collatz",
      FunctionOptions{.input_signature = InputSignature{{"x", DType::kInt32, PartialShape{-1}}}},
      [](const Args& args) -> Result<Values> {
        std::cout << "Tracing with " << args[0].ToString() << std::endl;
        const Value& x = args[0];
        // tf.where(x % 2 == 0, x // 2, 3 * x + 1)
        return Values{
            Where(Equal(x % 2.0, Scalar(0)), FloorDiv(x, Scalar(2)), Scalar(3) * x + Scalar(1))};
      });
  const Tensor v = *Tensor::FromVector<int32_t>({1, 2}, Shape{2});
  auto r = next_collatz(v);
  Check(r.status(), "next_collatz");
  std::cout << TfRepr((*r)[0]) << "\n";
  const Tensor m = *Tensor::FromVector<int32_t>({1, 2, 3, 4}, Shape{2, 2});
  auto bad = next_collatz(m);
  std::cout << "Caught expected error:\n  " << bad.status().ToString() << "\n";
  std::cout << "traces: " << next_collatz.trace_count() << "\n";

  Check(Save(module, root / "collatz", {{"serving_default", &next_collatz}}), "save");
  auto loaded = kiln::exec::SavedModel::Load(root / "collatz");
  Check(loaded.status(), "load");
  const auto* sig = *(*loaded)->GetSignature("serving_default");
  std::cout << "# from the bundle " << (root / "collatz").string() << "\n";
  auto lr = sig->Run({{"x", v}});
  Check(lr.status(), "run");
  std::cout << TfRepr(lr->at("output_0")) << "\n";
  auto lbad = sig->Run({{"x", m}});
  std::cout << "Caught expected error:\n  " << lbad.status().ToString() << "\n";
  return 0;
}
