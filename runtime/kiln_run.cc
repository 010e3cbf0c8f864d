// kiln-run: runs a signature of a compiled bundle with the protobuf-free runtime. It loads the
// bundle's serving plan only (savedmodel-cli compile writes it), never saved_model.pb, and
// prints each output as `savedmodel-cli run` does.
//
//   kiln-run --dir D [--signature_def K] [--tag_set serve] [--inputs 'x=a.npy;y=b.npy']
//            [--input_exprs 'x=[1, 2]'] [--input_examples 'inputs=[{"x": [1.0]}]']
//            [--outdir O] [--threads N] [--skip_checksums] [--timings]
#include <CLI/CLI.hpp>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "feed_convert.h"
#include "input_exprs.h"
#include "kiln/core/npy.h"
#include "kiln/exec/plan_model.h"
#include "kiln/exec/thread_pool.h"
#include "numpy_format.h"
#include "output_files.h"

namespace {

using kiln::Result;
using kiln::Status;
using kiln::Tensor;

std::vector<std::string> SplitOn(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::stringstream ss(text);
  for (std::string p; std::getline(ss, p, sep);)
    if (!p.empty()) parts.push_back(p);
  return parts;
}

// "x=a.npy;y=b.npy": each input from a .npy file.
Result<std::map<std::string, Tensor>> ReadInputs(const std::string& arg) {
  std::map<std::string, Tensor> inputs;
  for (const std::string& pair : SplitOn(arg, ';')) {
    const size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0)
      return kiln::InvalidArgument("--inputs: expected <key>=<file.npy>, got '", pair, "'");
    KILN_ASSIGN_OR_RETURN_CTX(Tensor t, kiln::ReadNpy(pair.substr(eq + 1)), "input '",
                              pair.substr(0, eq), "'");
    inputs[pair.substr(0, eq)] = std::move(t);
  }
  return inputs;
}

struct Args {
  std::string dir;
  std::string signature = "serving_default";
  std::string tags = "serve";
  std::string inputs;
  std::string input_exprs;
  std::string input_examples;
  std::string outdir;
  int threads = 0;
  bool skip_checksums = false;
  bool timings = false;
};

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

Status Run(const Args& a) {
  kiln::exec::LoadOptions options;
  options.tags = SplitOn(a.tags, ',');
  options.num_threads = a.threads;
  options.verify_checksums = !a.skip_checksums;
  options.signatures = {a.signature};
  const auto t_load = std::chrono::steady_clock::now();
  KILN_ASSIGN_OR_RETURN(auto model, kiln::exec::PlanModel::Load(a.dir, options));
  const double load_ms = MsSince(t_load);
  KILN_ASSIGN_OR_RETURN(const kiln::exec::Signature* sig, model->GetSignature(a.signature));
  KILN_ASSIGN_OR_RETURN(auto inputs, ReadInputs(a.inputs));
  // As savedmodel-cli run does (and TF's session): a float64 array feeds a float32 input.
  for (const auto& arg : sig->inputs()) {
    auto it = inputs.find(arg.key);
    if (it != inputs.end()) {
      KILN_ASSIGN_OR_RETURN(it->second,
                            kiln::cli::CastToInputDType(it->second, arg.spec.dtype, arg.key));
    }
  }
  // Literals, as savedmodel-cli run takes them: typed by the signature's input (a later
  // --input_exprs value replaces an --inputs file of the same key, as there).
  KILN_ASSIGN_OR_RETURN(auto exprs, kiln::cli::ParseInputExprs(a.input_exprs));
  for (const auto& [key, literal] : exprs) {
    kiln::DType dtype = kiln::cli::NaturalDType(literal);
    for (const auto& arg : sig->inputs())
      if (arg.key == key) dtype = arg.spec.dtype;
    KILN_ASSIGN_OR_RETURN(inputs[key], kiln::cli::LiteralToTensor(literal, dtype, key));
  }
  // Serialized tf.Examples, one per dict, as savedmodel-cli run builds them; they win over the
  // other two flags with the same warning as there (TF's saved_model_cli).
  KILN_ASSIGN_OR_RETURN(auto examples, kiln::cli::ParseInputExamples(a.input_examples));
  for (auto& [key, serialized] : examples) {
    if (inputs.count(key))
      std::cerr << "WARNING: input_key " << key
                << " has been specified in multiple options. Value in --input_examples will be "
                   "used.\n";
    for (const auto& arg : sig->inputs())
      if (arg.key == key) KILN_RETURN_IF_ERROR(kiln::cli::CheckExamplesInput(key, arg.spec.dtype));
    inputs[key] = std::move(serialized);
  }
  if (!a.outdir.empty()) {  // made as savedmodel-cli run makes it, before the call
    for (const auto& arg : sig->outputs())
      KILN_RETURN_IF_ERROR(kiln::cli::OutputNpyPath(a.outdir, arg.key, a.signature).status());
    std::error_code ec;
    std::filesystem::create_directories(a.outdir, ec);
    if (ec)
      return kiln::PermissionDenied("cannot create output directory ", a.outdir, ": ",
                                    ec.message());
  }
  const auto t_call = std::chrono::steady_clock::now();
  KILN_ASSIGN_OR_RETURN(auto outputs, sig->Run(inputs));
  const double call_ms = MsSince(t_call);
  if (a.timings) std::cerr << "load_ms " << load_ms << "\nfirst_call_ms " << call_ms << "\n";
  for (const auto& [key, tensor] : outputs) {
    if (!a.outdir.empty()) {
      KILN_ASSIGN_OR_RETURN(const std::filesystem::path path,
                            kiln::cli::OutputNpyPath(a.outdir, key, a.signature));
      std::error_code ec;
      if (key.find('/') != std::string::npos)
        std::filesystem::create_directories(path.parent_path(), ec);
      KILN_RETURN_IF_ERROR_CTX(kiln::WriteNpy(path, tensor), "output '", key, "'");
      std::cout << "Output " << key << " is saved to " << path.string() << "\n";
    } else {
      std::cout << "Result for output key " << key << ":\n" << kiln::cli::NumpyStr(tensor) << "\n";
    }
  }
  return kiln::OkStatus();
}

// Everything but the exit code: CLI11 reports bad arguments by exception, and an allocation
// may fail; neither may escape main.
int RunMain(int argc, char** argv) {
  CLI::App app{"kiln-run: run a compiled bundle's signature (protobuf-free runtime)"};
  Args a;
  app.add_option("--dir", a.dir, "Bundle directory with assets.extra/kiln.plan")->required();
  app.add_option("--signature_def", a.signature, "Signature key")->capture_default_str();
  app.add_option("--tag_set", a.tags, "Comma-separated tags the plan was compiled for")
      ->capture_default_str();
  app.add_option("--inputs", a.inputs, "'<key>=<file.npy>;...'");
  app.add_option("--input_exprs", a.input_exprs,
                 "'<key>=<literal>;...': numbers, true/false, quoted strings, nested [lists]");
  app.add_option("--input_examples", a.input_examples,
                 "'<key>=[{\"feature\": [values], ...}, ...];...': one serialized tf.Example "
                 "per dict");
  app.add_option("--outdir", a.outdir, "Write <outdir>/<output_key>.npy instead of printing");
  // --threads as savedmodel-cli's bench and run say it; --num_threads kept for old scripts.
  app.add_option("--threads,--num_threads", a.threads, "Intra-op threads (0: all cores)");
  app.add_flag("--skip_checksums", a.skip_checksums,
               "Do not verify the variables' CRC32C (only for trusted, verified bundles)");
  app.add_flag("--timings", a.timings,
               "Print the load's and the first call's milliseconds to stderr");
  app.set_version_flag("--version", std::string("kiln-run (kiln) ") + KILN_VERSION);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message (or the help); a bad command line exits 2 as savedmodel-cli's
    // does (docs/cli.md, "Exit status"), not with CLI11's own codes (109 for an unknown flag).
    return app.exit(e) == 0 ? 0 : 2;
  }
  const Status s = Run(a);
  if (!s.ok()) {
    std::cerr << "kiln-run: " << s.ToString() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  kiln::exec::BoundOpenMpSpinning(argv);
  try {
    return RunMain(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "kiln-run: " << e.what() << "\n";
    return 1;
  }
}
