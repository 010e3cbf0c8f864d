// Saving a module as a TensorFlow 2 SavedModel directory (tf.saved_model.save's counterpart).
//
// The directory holds saved_model.pb (one MetaGraphDef tagged "serve": the graph with one
// VarHandleOp per variable, signature placeholders and calls, save/restore functions, the
// function library, SignatureDefs, SaverDef and the object graph of modules, variables and
// methods) and variables/ (a tensor bundle keyed "<path>/.ATTRIBUTES/VARIABLE_VALUE" plus the
// checkpoint object graph). TensorFlow and kiln::exec::SavedModel both load it.
//
// Saving is deterministic (the same module state gives byte-identical files: functions are
// numbered by a per-save counter in a fixed order, maps are serialized sorted) and atomic (the
// directory is written beside the target and renamed into place; a failure leaves any
// previous bundle at `dir` as it was).
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/trace/function.h"
#include "kiln/trace/module.h"

namespace tensorflow {
class SavedModel;
}  // namespace tensorflow

namespace kiln::trace {

// Signature key ("serving_default") -> the function it exports. The function must have an
// input signature, or exactly one concrete function.
using SignatureMap = std::map<std::string, Function*>;

struct ExportedModel {
  std::unique_ptr<tensorflow::SavedModel> saved_model;
  std::map<std::string, Tensor>
      checkpoint;  // bundle key -> value, "_CHECKPOINTABLE_OBJECT_GRAPH" included
};

// Builds everything in memory. Traces methods that have an input signature but no concrete
// function yet. Fails (naming the thing) for a declaration error in the tree, an
// uninitialized variable, a signature function that captures a variable the tree does not
// reach, or a signature without a single concrete function.
Result<ExportedModel> BuildSavedModel(Module& root, const SignatureMap& signatures = {});

// BuildSavedModel, then writes `dir` atomically (WriteDirectoryAtomically), making missing
// parents. Over an existing directory it replaces the bundle's files and keeps the others
// (kSavedModelOwnedPaths).
Status Save(Module& root, const std::filesystem::path& dir, const SignatureMap& signatures = {});

// The checkpoint key of a variable at `path` ("child/z" -> "child/z/.ATTRIBUTES/VARIABLE_VALUE"),
// each path element escaped as TensorFlow does ('.' -> "..", '/' -> ".S").
std::string CheckpointKey(const std::vector<std::string>& path);

}  // namespace kiln::trace
