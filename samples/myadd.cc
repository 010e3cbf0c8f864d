// The seed notes' myadd: "tracing" is printed once per input signature (plain C++ runs only while
// tracing); the loop's print op prints 0 1 2 on every call. Strings first, then ints, then
// host strings (a new trace for every new value). Then the string signature is saved, reloaded
// with kiln::exec::SavedModel and run.
//
//   myadd [bundle_dir]
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

namespace {

Result<Values> MyAddBody(const Args& args) {
  // for i in tf.range(3): tf.print(i)
  KILN_RETURN_IF_ERROR(ForRange(Scalar(0), Scalar(3), Scalar(1),
                                [](const Value& i, const Values& vars) -> Result<Values> {
                                  KILN_RETURN_IF_ERROR(
                                      Print({i}, PrintOptions{.output_stream = "stdout"}));
                                  return vars;
                                })
                           .status());
  Value c = args[0] + args[1];
  std::cout << "tracing" << std::endl;
  return Values{c};
}

}  // namespace

int main(int argc, char** argv) {
  const auto root = kiln::samples::BundleRoot(argc, argv, "myadd");
  Function myadd("myadd", FunctionOptions{.arg_names = {"a", "b"}}, MyAddBody);

  auto call = [&](const std::string& label, const Arg& a, const Arg& b) {
    std::cout << label << std::endl;
    auto r = myadd(a, b);
    Check(r.status(), "myadd");
    std::cout << "=> " << TfRepr((*r)[0]) << "\n\n";
  };
  call("myadd(tf.constant('hello'), tf.constant('world'))", Tensor::StringScalar("hello"),
       Tensor::StringScalar("world"));
  call("myadd(tf.constant('good'), tf.constant('morning'))", Tensor::StringScalar("good"),
       Tensor::StringScalar("morning"));
  call("myadd(tf.constant(1), tf.constant(2))", Tensor::Scalar(1), Tensor::Scalar(2));
  // Host values: traced for each new value.
  call("myadd('hello', 'world')", "hello", "world");
  call("myadd('good', 'morning')", "good", "morning");
  std::cout << "traces: " << myadd.trace_count() << "\n";
  for (const TraceRecord& r : myadd.trace_log()) std::cout << "  " << r.ToString() << "\n";
  std::cout << "\n" << myadd.PrettyPrintedConcreteSignatures() << "\n";

  // Export the string version and run it from the bundle.
  Module module("myadd_module");
  Function myadd_strings("myadd", {{"a", DType::kString}, {"b", DType::kString}},
                         [](const Values& v) { return MyAddBody(Args(v.begin(), v.end())); });
  std::cout << "# saving (traces the string signature):\n";
  Check(Save(module, root / "myadd", {{"serving_default", &myadd_strings}}), "save");
  auto loaded = kiln::exec::SavedModel::Load(root / "myadd");
  Check(loaded.status(), "load");
  auto sig = (*loaded)->GetSignature("serving_default");
  Check(sig.status(), "signature");
  std::cout << "bundle " << (root / "myadd").string() << ", serving_default(hello, world):\n";
  auto out =
      (*sig)->Run({{"a", Tensor::StringScalar("hello")}, {"b", Tensor::StringScalar("world")}});
  Check(out.status(), "run");
  std::cout << "=> " << TfRepr(out->at("output_0")) << "\n";
  return 0;
}
