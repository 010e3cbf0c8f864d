// The TF1 side of the loader: a MetaGraphDef without an object graph runs the way a TF1 Session
// runs it. This file turns the main graph into functions the executor prepares:
//   - reference variables: VariableV2 (and the Assign ops that pass its ref on) yield resource
//     handles here, so wherever a TF1 graph reads a ref as a value a ReadVariableOp is put in
//     (taking the reader's control inputs, so the read happens when the reader runs);
//     IsVariableInitialized becomes VarIsInitializedOp;
//   - a Session-style call (feeds, fetches, target nodes) becomes one FunctionDef over the
//     rewritten graph: fed tensors are its arguments, fetches its outputs, targets its
//     control outputs;
//   - the loader's steps: the saver's restore op, the init op and the asset feeds.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "kiln/core/status.h"
#include "tensorflow/framework.pb.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::exec {

// The main graph as the loader and the save op read it: `graph` itself when it has nothing
// RewriteRefVariables changes (no TF1 reference variables or IsVariableInitialized: every TF2
// bundle; copying a Keras model's took 5-6 ms of its load), else RewriteRefVariables(graph),
// kept in `*storage`.
const tensorflow::GraphDef& MainGraph(const tensorflow::GraphDef& graph,
                                      tensorflow::GraphDef* storage);
// The main graph with refs made explicit (see above): its nodes and versions. The function
// library stays in `graph` (the model's FunctionLibrary reads it there): copying a Keras
// model's took 6-11 ms of every load.
tensorflow::GraphDef RewriteRefVariables(const tensorflow::GraphDef& graph);

struct Tf1Feed {
  std::string tensor;  // "x:0", any output of a node (see Tf1Function)
  tensorflow::DataType dtype = tensorflow::DT_INVALID;
};

// A function named `name` over `graph` (already rewritten): feeds become arguments in order,
// fetches ("y:0") outputs in order, targets (node names) control outputs. TF1 loops and
// conditionals among the nodes it needs become While and If nodes (tf1_control_flow.h) over
// functions appended to `helpers`, which the caller adds to the library; null: refused.
Result<std::unique_ptr<tensorflow::FunctionDef>> Tf1Function(
    const tensorflow::GraphDef& graph, const std::string& name, const std::vector<Tf1Feed>& feeds,
    const std::vector<std::pair<std::string, tensorflow::DataType>>& fetches,
    const std::vector<std::string>& targets,
    std::vector<std::unique_ptr<tensorflow::FunctionDef>>* helpers = nullptr);

// TF's asset feeds for restore and init: each AssetFileDef's tensor (from the MetaGraphDef,
// or the legacy "saved_model_assets" collection) with the path of its file under dir/assets/.
// A filename that is absolute or escapes assets/ is an error (AssetPath).
Result<std::vector<std::pair<std::string, std::string>>> Tf1AssetFeeds(
    const tensorflow::MetaGraphDef& mg, const std::filesystem::path& dir);

// The node the loader runs after restoring: the "__saved_model_init_op" signature's output,
// else the "saved_model_main_op" or "legacy_init_op" collection's node; "" when none.
Result<std::string> Tf1InitOpName(const tensorflow::MetaGraphDef& mg);

// "node:0" -> "node"; "^node" -> "node".
std::string NodeOfTensor(const std::string& tensor);

}  // namespace kiln::exec
