// Helpers over the SavedObjectGraph: object paths and StructuredValue signatures.
#pragma once

#include <string>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/exec/op_table.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::exec {

// Path of every node from the root ("" for the root, "child/z"), breadth first, first path
// wins (object graphs may have cycles and shared children).
std::vector<std::string> ObjectPaths(const tensorflow::SavedObjectGraph& graph);

// Child of `node` named `name`, or -1.
int FindChild(const tensorflow::SavedObject& node, const std::string& name);

// Flattens a canonicalized input signature ((args...), {kwargs...}) into tensor specs and
// their names, in TF's flattening order (positional first, then kwargs by sorted key).
// Fails on leaves that are not TensorSpecs.
Status FlattenInputSignature(const tensorflow::StructuredValue& sig, std::vector<TensorSpec>* specs,
                             std::vector<std::string>* names);

// Keys of a dict output signature in sorted order (the order of the function's outputs);
// for a non-dict signature: "output_0", "output_1", ... by flattening order.
Status FlattenOutputSignature(const tensorflow::StructuredValue& sig,
                              std::vector<std::string>* keys, std::vector<TensorSpec>* specs);

}  // namespace kiln::exec
