// `savedmodel-cli run`: loads a SavedModel with kiln::exec, feeds a signature from .npy/.npz
// files and literal expressions, and prints (and optionally saves) every output the way
// TensorFlow's `saved_model_cli run` does.
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"

namespace kiln::cli {

struct RunCommandOptions {
  std::filesystem::path dir;
  std::string tag_set = "serve";  // comma-separated
  std::string signature_def = "serving_default";
  std::string inputs;       // "a=x.npy;b=y.npz[key]"
  std::string input_exprs;  // "a=5.0;b=[[1,2],[3,4]]"
  std::optional<std::filesystem::path> outdir;
  bool overwrite = false;
};

struct InputFileSpec {
  std::string key;
  std::string filename;
  std::optional<std::string> variable;  // the [name] of an .npz entry
};

// Parses --inputs as TensorFlow does: ';'-separated "<key>=<file>" or "<key>=<file>[<name>]".
Result<std::vector<InputFileSpec>> ParseInputsArg(std::string_view arg);

// Results go to `out`, warnings (ignored [name] on an .npy, a key given twice) to `err`.
Status RunCommand(const RunCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace kiln::cli
