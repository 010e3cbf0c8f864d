// Helpers shared by the seed samples: where bundles go, and printing tensors the way the
// seeds' Python prints them.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <string>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/trace/op_builder.h"
#include "kiln/trace/ops.h"

namespace kiln::samples {

// argv[1] when given (created if missing), else a fresh directory under the temp dir.
inline std::filesystem::path BundleRoot(int argc, char** argv, const std::string& sample) {
  std::filesystem::path root = argc > 1 ? std::filesystem::path(argv[1])
                                        : std::filesystem::temp_directory_path() /
                                              ("kiln_" + sample + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(root);
  return root;
}

// Python's repr of a tensor value: b'aa' for a string scalar, else tf.print's form (at most
// `summarize` values per dimension at each end; -1: all).
inline std::string ValueRepr(const Tensor& t, int summarize = 3) {
  if (t.dtype() == DType::kString && t.NumElements() == 1 && t.rank() == 0) {
    return "b'" + t.scalar<std::string>() + "'";
  }
  return t.SummarizeValue(summarize);
}

// "tf.Tensor(4, shape=(), dtype=int32)"
inline std::string TfRepr(const Tensor& t, int summarize = 3) {
  return "tf.Tensor(" + ValueRepr(t, summarize) +
         ", shape=" + PartialShape(t.shape()).ToPythonString() +
         ", dtype=" + DTypeShortName(t.dtype()) + ")";
}

// Exits with the error when `s` is not OK (samples stop at the first unexpected failure).
inline void Check(const Status& s, const std::string& what) {
  if (!s.ok()) {
    std::cerr << what << ": " << s.ToString() << "\n";
    std::exit(1);
  }
}

// tf.print("Executed with", x) to stdout: a host string becomes part of the template, as
// tf.print does, so it prints without quotes.
[[nodiscard]] inline Status PrintLine(std::string_view format,
                                      std::initializer_list<trace::Value> values) {
  return trace::OpBuilder("PrintV2")
      .Input(trace::StringFormat(values, format))
      .Attr("output_stream", "stdout")
      .BuildNoOutput();
}

}  // namespace kiln::samples
