// Test-only helper for tests/tf (the TensorFlow oracle tests): loads a SavedModel with
// kiln::exec and runs one signature or calls one restored method by name, then writes every
// output to OUTDIR. It exists because `savedmodel-cli run` only runs signatures and its .npy
// reader takes no strings.
//
//   kiln_call DIR signature KEY OUTDIR [NAME=FILE]...   outputs OUTDIR/<output key>.<ext>
//   kiln_call DIR function NAME OUTDIR [FILE]...        outputs OUTDIR/output_<i>.<ext>
//   kiln_call DIR list                                  prints "signature K", "function F" lines
//   kiln_call DIR variables OUTDIR                      writes OUTDIR/var_<i>.npy, prints
//                                                       "<object-graph path>\tvar_<i>.npy" lines
//   kiln_call DIR calls (signature KEY | function NAME) N OUTDIR [INPUT]...
//       N calls on one load (state carries over, as in a serving process); the inputs are split
//       evenly between the calls, in order. After call k: OUTDIR/<k>/ holds its outputs as
//       above, its variables as `variables` writes them, and variables.txt their listing.
//   kiln_call DIR train NAME N PREFIX [FILE]...         calls method NAME N times, then saves
//                                                       the variables to PREFIX (SavedModel::Save)
//
// FILE is a .npy file (strings too: NumPy 'S' or 'U' arrays), or a .str file holding the bytes
// of one string scalar. Outputs are written the same way (.npy, string arrays as 'S'; .str for
// string scalars). Exit 1 with the error on stderr.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/core/npy.h"
#include "kiln/exec/saved_model.h"

namespace fs = std::filesystem;
using kiln::DType;
using kiln::Result;
using kiln::Status;
using kiln::Tensor;

namespace {

Result<Tensor> ReadInput(const fs::path& path) {
  if (path.extension() != ".str") return kiln::ReadNpy(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) return kiln::NotFound("cannot open ", path.string());
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return Tensor::StringScalar(bytes.str());
}

Status WriteOutput(const fs::path& stem, const Tensor& t) {
  if (t.dtype() != DType::kString || t.rank() != 0)
    return kiln::WriteNpy(stem.string() + ".npy", t);
  std::ofstream out(stem.string() + ".str", std::ios::binary);
  out << t.scalar<std::string>();
  return out ? kiln::OkStatus() : kiln::Internal("cannot write ", stem.string(), ".str");
}

int Fail(const Status& s) {
  std::cerr << "kiln_call: " << s.ToString() << "\n";
  return 1;
}

Status WriteVariables(const kiln::exec::SavedModel& m, const fs::path& outdir,
                      std::ostream& listing) {
  for (size_t i = 0; i < m.variables().size(); ++i) {
    const auto& v = m.variables()[i];
    KILN_ASSIGN_OR_RETURN(Tensor value, v.resource->Read());
    const std::string file = "var_" + std::to_string(i) + ".npy";
    KILN_RETURN_IF_ERROR(kiln::WriteNpy(outdir / file, value));
    listing << v.path << "\t" << file << "\n";
  }
  return kiln::OkStatus();
}

// One call of a signature (NAME=FILE inputs) or a restored method (FILE inputs, positional).
Status CallOnce(const kiln::exec::SavedModel& m, const std::string& kind, const std::string& name,
                const std::vector<std::string>& args, const fs::path& outdir) {
  std::error_code ec;
  fs::create_directories(outdir, ec);
  if (kind == "signature") {
    KILN_ASSIGN_OR_RETURN(const kiln::exec::Signature* sig, m.GetSignature(name));
    std::map<std::string, Tensor> inputs;
    for (const auto& a : args) {
      const size_t eq = a.find('=');
      if (eq == std::string::npos) return kiln::InvalidArgument("expected NAME=FILE: ", a);
      KILN_ASSIGN_OR_RETURN(inputs[a.substr(0, eq)], ReadInput(a.substr(eq + 1)));
    }
    KILN_ASSIGN_OR_RETURN(auto out, sig->Run(inputs));
    for (const auto& [key, t] : out) KILN_RETURN_IF_ERROR(WriteOutput(outdir / key, t));
    return kiln::OkStatus();
  }
  if (kind != "function") return kiln::InvalidArgument("unknown command ", kind);
  KILN_ASSIGN_OR_RETURN(const kiln::exec::RestoredFunction* fn, m.GetFunction(name));
  std::vector<Tensor> inputs;
  for (const auto& a : args) {
    KILN_ASSIGN_OR_RETURN(Tensor t, ReadInput(a));
    inputs.push_back(std::move(t));
  }
  KILN_ASSIGN_OR_RETURN(auto out, fn->Call(inputs));
  for (size_t i = 0; i < out.size(); ++i)
    KILN_RETURN_IF_ERROR(WriteOutput(outdir / ("output_" + std::to_string(i)), out[i]));
  return kiln::OkStatus();
}

// kiln_call DIR calls KIND NAME N OUTDIR [INPUT]...
Status Calls(const kiln::exec::SavedModel& m, const std::vector<std::string>& args) {
  if (args.size() < 6) return kiln::InvalidArgument("calls: expected KIND NAME N OUTDIR");
  const int n = std::atoi(args[4].c_str());
  const std::vector<std::string> inputs(args.begin() + 6, args.end());
  if (n <= 0 || inputs.size() % static_cast<size_t>(n) != 0)
    return kiln::InvalidArgument("calls: N must be positive and divide the ", inputs.size(),
                                 " inputs, got '", args[4], "'");
  const size_t per_call = inputs.size() / static_cast<size_t>(n);
  for (int k = 0; k < n; ++k) {
    const fs::path dir = fs::path(args[5]) / std::to_string(k);
    const std::vector<std::string> call_inputs(inputs.begin() + k * per_call,
                                               inputs.begin() + (k + 1) * per_call);
    KILN_RETURN_IF_ERROR_CTX(CallOnce(m, args[2], args[3], call_inputs, dir), "call ", k);
    std::ofstream listing(dir / "variables.txt");
    KILN_RETURN_IF_ERROR_CTX(WriteVariables(m, dir, listing), "call ", k);
  }
  return kiln::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() < 2 || (args[1] != "list" && args.size() < (args[1] == "variables" ? 3 : 4))) {
    std::cerr << "usage: kiln_call DIR (signature KEY | function NAME) OUTDIR [INPUT]... | "
                 "kiln_call DIR list | kiln_call DIR variables OUTDIR | "
                 "kiln_call DIR calls (signature KEY | function NAME) N OUTDIR [INPUT]...\n";
    return 2;
  }
  // KILN_CALL_PLAN=require|ignore: how the load treats the bundle's serving plan (default:
  // auto), for tests/tf/test_serving_plan.py.
  kiln::exec::LoadOptions options;
  if (const char* plan = std::getenv("KILN_CALL_PLAN")) {
    const std::string_view p(plan);
    options.plan = p == "require"  ? kiln::exec::PlanUse::kRequire
                   : p == "ignore" ? kiln::exec::PlanUse::kIgnore
                                   : kiln::exec::PlanUse::kAuto;
  }
  auto model = kiln::exec::SavedModel::Load(args[0], options);
  if (!model.ok()) return Fail(model.status());
  const auto& m = **model;

  if (args[1] == "list") {
    for (const auto& s : m.SignatureNames()) std::cout << "signature " << s << "\n";
    for (const auto& f : m.FunctionNames()) std::cout << "function " << f << "\n";
    return 0;
  }
  if (args[1] == "calls") {
    Status s = Calls(m, args);
    return s.ok() ? 0 : Fail(s);
  }
  if (args[1] == "train") {
    if (args.size() < 5) return Fail(kiln::InvalidArgument("usage: train NAME N PREFIX [FILE]..."));
    auto fn = m.GetFunction(args[2]);
    if (!fn.ok()) return Fail(fn.status());
    std::vector<Tensor> inputs;
    for (size_t i = 5; i < args.size(); ++i) {
      auto t = ReadInput(args[i]);
      if (!t.ok()) return Fail(t.status());
      inputs.push_back(*t);
    }
    for (int step = 0; step < std::stoi(args[3]); ++step) {
      auto out = (*fn)->Call(inputs);
      if (!out.ok()) return Fail(out.status());
    }
    if (Status s = m.Save(args[4]); !s.ok()) return Fail(s);
    return 0;
  }
  const fs::path outdir = args[args[1] == "variables" ? 2 : 3];
  if (args[1] == "variables") {
    std::error_code ec;
    fs::create_directories(outdir, ec);
    Status s = WriteVariables(m, outdir, std::cout);
    return s.ok() ? 0 : Fail(s);
  }
  Status s =
      CallOnce(m, args[1], args[2], std::vector<std::string>(args.begin() + 4, args.end()), outdir);
  return s.ok() ? 0 : Fail(s);
}
