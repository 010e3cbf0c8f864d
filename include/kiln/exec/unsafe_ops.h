// Ops that reach outside the model: files, the host's stdout/stderr-as-file, host callbacks.
// `savedmodel-cli scan` lists them (as TensorFlow's `saved_model_cli scan` does with its
// denylist) and the server refuses a bundle that uses one unless its config allows that op.
#pragma once

#include <string>
#include <vector>

namespace tensorflow {
class MetaGraphDef;
}

namespace kiln::exec {

struct UnsafeOp {
  std::string op;        // "ReadFile"
  std::string node;      // node name
  std::string function;  // FunctionDef name, or "" for the main graph
  std::string why;       // "reads files"
};

// The ops checked: ReadFile, WriteFile, MatchingFiles, ImmutableConst (files); PrintV2 whose
// output_stream is a file ("file://..."); the summary writers (CreateSummaryFileWriter,
// WriteSummary, ...); PyFunc, PyFuncStateless, EagerPyFunc (host callbacks); and the
// checkpoint ops (SaveV2, Save, SaveSlices, MergeV2Checkpoints, RestoreV2, Restore,
// RestoreSlice) where something other than the bundle's saver reaches them (unsafe_ops.cc).
// The main graph and every library function are scanned, sorted by place.
std::vector<UnsafeOp> ScanUnsafeOps(const tensorflow::MetaGraphDef& meta_graph);

}  // namespace kiln::exec
