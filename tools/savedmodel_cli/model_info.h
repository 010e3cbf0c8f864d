// The facts `show` prints, gathered once from a SavedModel proto the way TensorFlow's
// saved_model_cli gathers them; the text and JSON printers only format these.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/core/status.h"
#include "structured_value.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::cli {

struct TensorInfoFacts {
  std::string key;
  const tensorflow::TensorInfo* proto = nullptr;
};

struct SignatureFacts {
  std::string key;
  std::vector<TensorInfoFacts> inputs;   // sorted by key
  std::vector<TensorInfoFacts> outputs;  // sorted by key
  std::string method_name;
};

struct MetaGraphFacts {
  std::vector<std::string> tags;  // as stored
  const tensorflow::MetaGraphDef* proto = nullptr;
};

struct ConcreteFunctionFacts {
  std::string name;  // FunctionDef name
  // The decoded canonicalized_input_signature when it is an (args, kwargs) pair.
  std::optional<PyValue> args;
  std::optional<PyValue> kwargs;
  // A bare concrete function's argument_keywords (shown when there is no signature).
  std::vector<std::string> arg_keywords;
};

struct FunctionFacts {
  std::string name;                                       // the root's child name
  std::string kind;                                       // "function" or "bare_concrete_function"
  std::vector<ConcreteFunctionFacts> concrete_functions;  // sorted by name
};

// Tag lists of all meta graphs, sorted as saved_model_cli sorts them (list order, then the
// order of the meta graphs); each tag list keeps its stored order.
std::vector<MetaGraphFacts> SortedMetaGraphs(const tensorflow::SavedModel& model);

// The first meta graph whose tag set equals `tag_set` (comma-separated, order ignored), or
// NotFound naming the tag set and listing the ones that exist.
Result<const tensorflow::MetaGraphDef*> FindMetaGraph(const tensorflow::SavedModel& model,
                                                      const std::string& tag_set);

std::vector<std::string> SortedSignatureKeys(const tensorflow::MetaGraphDef& mg);
// NotFound naming the signature and listing the available keys.
Result<SignatureFacts> GetSignature(const tensorflow::MetaGraphDef& mg, const std::string& key);

// tensorflow.python.framework.meta_graph.ops_used_by_graph_def, sorted.
std::vector<std::string> OpsUsedByGraphDef(const tensorflow::GraphDef& graph);

// The meta graph whose object graph `show` lists functions from (the first one that has an
// object graph), or nullptr for TF1-style bundles.
const tensorflow::MetaGraphDef* ObjectGraphMetaGraph(const tensorflow::SavedModel& model);
// The root object's children that are functions, sorted by child name.
std::vector<FunctionFacts> RootFunctions(const tensorflow::SavedObjectGraph& graph);

}  // namespace kiln::cli
