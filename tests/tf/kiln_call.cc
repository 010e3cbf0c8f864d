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
//   kiln_call DIR train NAME N PREFIX [FILE]...         calls method NAME N times, then saves
//                                                       the variables to PREFIX (SavedModel::Save)
//
// FILE is a .npy file (strings too: NumPy 'S' or 'U' arrays), or a .str file holding the bytes
// of one string scalar. Outputs are written the same way (.npy, string arrays as 'S'; .str for
// string scalars). Exit 1 with the error on stderr.
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

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() < 2 || (args[1] != "list" && args.size() < (args[1] == "variables" ? 3 : 4))) {
    std::cerr << "usage: kiln_call DIR (signature KEY | function NAME) OUTDIR [INPUT]... | "
                 "kiln_call DIR list | kiln_call DIR variables OUTDIR\n";
    return 2;
  }
  auto model = kiln::exec::SavedModel::Load(args[0]);
  if (!model.ok()) return Fail(model.status());
  const auto& m = **model;

  if (args[1] == "list") {
    for (const auto& s : m.SignatureNames()) std::cout << "signature " << s << "\n";
    for (const auto& f : m.FunctionNames()) std::cout << "function " << f << "\n";
    return 0;
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
  std::error_code ec;
  fs::create_directories(outdir, ec);
  if (args[1] == "variables") {
    for (size_t i = 0; i < m.variables().size(); ++i) {
      const auto& v = m.variables()[i];
      auto value = v.resource->Read();
      if (!value.ok()) return Fail(value.status());
      const std::string file = "var_" + std::to_string(i) + ".npy";
      if (Status s = kiln::WriteNpy(outdir / file, *value); !s.ok()) return Fail(s);
      std::cout << v.path << "\t" << file << "\n";
    }
    return 0;
  }
  if (args[1] == "signature") {
    auto sig = m.GetSignature(args[2]);
    if (!sig.ok()) return Fail(sig.status());
    std::map<std::string, Tensor> inputs;
    for (size_t i = 4; i < args.size(); ++i) {
      const size_t eq = args[i].find('=');
      if (eq == std::string::npos)
        return Fail(kiln::InvalidArgument("expected NAME=FILE: ", args[i]));
      auto t = ReadInput(args[i].substr(eq + 1));
      if (!t.ok()) return Fail(t.status());
      inputs[args[i].substr(0, eq)] = *t;
    }
    auto out = (*sig)->Run(inputs);
    if (!out.ok()) return Fail(out.status());
    for (const auto& [key, t] : *out) {
      if (Status s = WriteOutput(outdir / key, t); !s.ok()) return Fail(s);
    }
    return 0;
  }
  if (args[1] != "function") return Fail(kiln::InvalidArgument("unknown command ", args[1]));
  auto fn = m.GetFunction(args[2]);
  if (!fn.ok()) return Fail(fn.status());
  std::vector<Tensor> inputs;
  for (size_t i = 4; i < args.size(); ++i) {
    auto t = ReadInput(args[i]);
    if (!t.ok()) return Fail(t.status());
    inputs.push_back(*t);
  }
  auto out = (*fn)->Call(inputs);
  if (!out.ok()) return Fail(out.status());
  for (size_t i = 0; i < out->size(); ++i) {
    if (Status s = WriteOutput(outdir / ("output_" + std::to_string(i)), (*out)[i]); !s.ok())
      return Fail(s);
  }
  return 0;
}
