// `savedmodel-cli run`: loads a SavedModel with kiln::exec, feeds a signature from .npy/.npz
// files, literal expressions and tf.Example dicts, and prints (and optionally saves) every output
// the way TensorFlow's `saved_model_cli run` does.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "input_exprs.h"
#include "kiln/core/status.h"
#include "kiln/core/tensor.h"

namespace kiln::exec {
class Signature;
}

namespace kiln::cli {

struct RunCommandOptions {
  std::filesystem::path dir;
  std::string tag_set = "serve";  // comma-separated
  std::string signature_def = "serving_default";
  std::string inputs;          // "a=x.npy;b=y.npz[key]"
  std::string input_exprs;     // "a=5.0;b=[[1,2],[3,4]]"
  std::string input_examples;  // "x=[{'f': [1.5], 'g': ['a']}]"
  std::optional<std::filesystem::path> outdir;
  bool overwrite = false;
  bool skip_checksums = false;     // LoadOptions::verify_checksums = false (trusted bundles)
  std::string plan = "auto";       // LoadOptions::plan: auto, ignore or require
  std::string device;              // LoadOptions::devices, comma-separated; "" = the host
  std::string precision = "fp32";  // LoadOptions::precision
  int threads = 0;                 // LoadOptions::num_threads (0: all cores)
};

struct InputFileSpec {
  std::string key;
  std::string filename;
  std::optional<std::string> variable;  // the [name] of an .npz entry
};

// Parses --inputs as TensorFlow does: ';'-separated "<key>=<file>" or "<key>=<file>[<name>]".
Result<std::vector<InputFileSpec>> ParseInputsArg(std::string_view arg);

// --inputs, --input_exprs and --input_examples, parsed before any model is loaded (a typo should
// not cost a load).
struct FeedArgs {
  std::vector<InputFileSpec> files;
  std::vector<std::pair<std::string, Literal>> exprs;
  std::vector<std::pair<std::string, Tensor>> examples;  // 1-D serialized tf.Examples
};
Result<FeedArgs> ParseFeedArgs(std::string_view inputs, std::string_view input_exprs,
                               std::string_view input_examples = "");

// The tensors they give, by input key: files read and converted to the signature input's dtype,
// literals built with it, examples as they are (string inputs only). A key given twice takes, as
// TensorFlow's CLI does, --input_examples over --input_exprs over --inputs, with a warning to
// `err`. Keys the signature lacks are kept for the signature to refuse by name.
Result<std::map<std::string, Tensor>> MakeFeeds(const FeedArgs& args, const exec::Signature& sig,
                                                std::ostream& err);

// A comma-separated flag value: "serve,gpu" (tags), "gpu,cpu" (devices) -> its items; empty
// items are dropped.
std::vector<std::string> SplitCommaList(std::string_view list);

// Results go to `out`, warnings (ignored [name] on an .npy, a key given twice) to `err`.
Status RunCommand(const RunCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace kiln::cli
