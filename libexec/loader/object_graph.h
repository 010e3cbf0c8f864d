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

// The checkpoint's node for each object graph node (-1 where it has none): matched by child
// names from the roots, as TensorFlow matches a SavedModel's objects to its checkpoint.
std::vector<int> MatchCheckpointNodes(const tensorflow::SavedObjectGraph& graph,
                                      const tensorflow::TrackableObjectGraph& checkpoint);

// The name of the checkpoint entry that holds the object graph.
inline constexpr char kObjectGraphKey[] = "_CHECKPOINTABLE_OBJECT_GRAPH";

// Child of `node` named `name`, or -1.
int FindChild(const tensorflow::SavedObject& node, const std::string& name);

// Flattens a canonicalized input signature ((args...), {kwargs...}) into tensor specs and
// their names, in TF's flattening order (positional first, then kwargs by sorted key).
// Fails on leaves that are not TensorSpecs.
Status FlattenInputSignature(const tensorflow::StructuredValue& sig, std::vector<TensorSpec>* specs,
                             std::vector<std::string>* names);

// Keys of a dict output signature in sorted order (the order of the function's outputs);
// for a non-dict signature: "output_0", "output_1", ... by flattening order. A RaggedTensor or
// SparseTensor output gives one key per component ("<key>.flat_values", "<key>.row_splits";
// "<key>.indices", "<key>.values", "<key>.dense_shape"); other composites are refused.
Status FlattenOutputSignature(const tensorflow::StructuredValue& sig,
                              std::vector<std::string>* keys, std::vector<TensorSpec>* specs);

}  // namespace kiln::exec
