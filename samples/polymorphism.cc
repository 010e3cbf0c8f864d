// The seed notes' polymorphism: double(a) traces once per dtype; the concrete functions are
// listed as pretty_printed_concrete_signatures does; the concrete function for string specs
// runs "a" -> "aa" and rejects an int32 tensor instead of retracing. Then it prints that
// concrete function's graph as a GraphDef (the seed notes' as_graph_def()), saves the string
// version and runs it from the bundle.
//
//   polymorphism [bundle_dir]
#include <iostream>

#include "kiln/exec/saved_model.h"
#include "kiln/trace/trace.h"
#include "sample_util.h"

using kiln::DType;
using kiln::PartialShape;
using kiln::Result;
using kiln::Tensor;
using namespace kiln::trace;  // NOLINT
using kiln::samples::Check;
using kiln::samples::TfRepr;

int main(int argc, char** argv) {
  const auto root = kiln::samples::BundleRoot(argc, argv, "polymorphism");
  Function dbl("double", FunctionOptions{.arg_names = {"a"}}, [](const Args& args) {
    std::cout << "Tracing with " << args[0].ToString() << std::endl;
    return Result<Values>(Values{args[0] + args[0]});
  });
  for (const Tensor& t :
       {Tensor::Scalar(1), Tensor::Scalar(2), Tensor::Scalar(1.1f), Tensor::StringScalar("a")}) {
    auto r = dbl(t);
    Check(r.status(), "double");
    std::cout << TfRepr((*r)[0]) << "\n\n";
  }
  std::cout << dbl.PrettyPrintedConcreteSignatures() << "\n";
  for (const TraceRecord& r : dbl.trace_log()) std::cout << r.ToString() << "\n";

  std::cout << "\nObtaining concrete trace\n";
  const Args spec = {Arg::Spec({DType::kString, PartialShape::UnknownRank()})};
  auto cf = dbl.GetConcreteFunction(std::span<const Arg>(spec));
  Check(cf.status(), "get_concrete_function");
  const ConcreteFunction& double_strings = **cf;
  std::cout << "Executing traced function:\n"
            << TfRepr((*double_strings(Tensor::StringScalar("a")))[0]) << "\n";
  std::cout << "Executing traced function again:\n"
            << TfRepr((*double_strings(Tensor::StringScalar("b")))[0]) << "\n";
  std::cout << "Using a concrete trace with incompatible types will throw an error\n";
  auto bad = double_strings(Tensor::Scalar(1));
  std::cout << "Caught expected error: " << bad.status().ToString() << "\n";
  std::cout << "traces: " << dbl.trace_count() << "\n\n";

  // The string concrete function's graph as tf.Graph.as_graph_def() prints it (the seed's
  // simple_relu graph, with its StatelessIf, is samples/simple_relu).
  std::cout << double_strings.GraphDefText();
  std::cout << "double(a: string) contains " << double_strings.graph_num_nodes()
            << " nodes in its graph\n\n";

  Module module("polymorphism");
  Function double_string("double", {{"a", DType::kString, PartialShape::UnknownRank()}},
                         [](const Values& v) { return Result<Values>(Values{v[0] + v[0]}); });
  Check(Save(module, root / "double", {{"serving_default", &double_string}}), "save");
  auto loaded = kiln::exec::SavedModel::Load(root / "double");
  Check(loaded.status(), "load");
  auto r = (*(*loaded)->GetSignature("serving_default"))->Run({{"a", Tensor::StringScalar("a")}});
  Check(r.status(), "run");
  std::cout << "from the bundle " << (root / "double").string() << ": " << TfRepr(r->at("output_0"))
            << "\n";
  return 0;
}
