// `savedmodel-cli show --signature_def K --graph dot|svg`: draws the function graph a signature
// runs, for a person to look at. DOT is written by kiln; SVG is made by Graphviz's `dot`
// when it is on PATH (a clear error when it is not).
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>

#include "kiln/core/status.h"

namespace tensorflow {
class MetaGraphDef;
}

namespace kiln::cli {

struct GraphDrawOptions {
  std::filesystem::path dir;
  std::string tag_set = "serve";
  std::string signature_def;
  std::string format = "dot";                   // "dot" or "svg"
  std::optional<std::filesystem::path> output;  // default: `out`
};

// Reads the bundle, draws the signature's function, writes it to options.output or `out`.
Status DrawGraph(const GraphDrawOptions& options, std::ostream& out);

// The DOT text for signature `key` of `mg`: the function its call node runs, followed through
// wrappers that only forward to one other function (the signature wrapper -> the method).
// Arguments are ellipses, ops boxes ("name" and "Op"), outputs filled ellipses, data edges
// labelled with the dtype when known, control edges dashed.
Result<std::string> SignatureGraphDot(const tensorflow::MetaGraphDef& mg, const std::string& key);

}  // namespace kiln::cli
