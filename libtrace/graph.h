// The graph a trace records into, and private access to Value and Variable internals.
//
// A Graph is made current on the tracing thread while a body runs (Graph::Activation). Nodes
// keep their inputs as references (node, output) and are turned into a FunctionDef only at the
// end, when the names of captured-variable arguments are known.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/exec/op_registry.h"
#include "kiln/exec/resources.h"
#include "kiln/trace/value.h"
#include "kiln/trace/variable.h"
#include "tensorflow/framework.pb.h"

namespace kiln::trace::internal {

using AttrMap = google::protobuf::Map<std::string, tensorflow::AttrValue>;

struct VariableState {
  std::string name;
  std::shared_ptr<exec::VariableResource> resource;
  bool trainable = true;
  Status status;  // not OK for an invalid variable
};

struct VariableAccess {
  static const std::shared_ptr<VariableState>& State(const Variable& v) { return v.state_; }
  static Variable Make(std::shared_ptr<VariableState> s) { return Variable(std::move(s)); }
};

struct ValueAccess {
  static Value Symbolic(std::shared_ptr<Graph> graph, int node, int index, TensorSpec spec);
  static Graph* graph(const Value& v) { return v.graph_.get(); }
  static int node(const Value& v) { return v.node_; }
  static int index(const Value& v) { return v.index_; }
  static const Tensor& tensor(const Value& v) { return v.tensor_; }
  // Narrows the static shape (e.g. a variable read, whose shape the op cannot know).
  static void RefineShape(Value* v, const PartialShape& shape);
};

// A reference to a value inside the graph: output `index` of node `node`, or argument `index`
// when node is -1.
struct Ref {
  int node = -1;
  int index = 0;
};

struct GraphNode {
  std::string name;
  std::string op;
  const exec::OpDefinition* def = nullptr;
  AttrMap attrs;
  std::vector<Ref> inputs;
  std::vector<int> control_inputs;
  std::vector<TensorSpec> outputs;
  bool stateful = false;
  std::optional<Tensor> constant;  // a Const node's value, for Prepare's constant_inputs
};

struct GraphArg {
  std::string user_name;  // the signature's name; empty for a capture
  std::string name;       // FunctionDef input arg name (captures: named at the end)
  TensorSpec spec;
  std::shared_ptr<VariableState> variable;  // set for a captured variable
  int first_consumer = -1;
};

class Graph : public std::enable_shared_from_this<Graph> {
 public:
  Graph(std::string function_name, bool allow_variable_creation);

  const std::string& function_name() const { return function_name_; }
  bool allow_variable_creation() const { return allow_variable_creation_; }

  // A user argument; its FunctionDef name is `user_name` made valid (lower case, [a-z0-9_]).
  Value AddArg(const std::string& user_name, const TensorSpec& spec);
  // The resource argument standing for `var` (added on first use).
  Value CaptureVariable(const std::shared_ptr<VariableState>& var);
  // Adds a node: runs the op's Prepare on the input specs; an error value on failure (also
  // recorded). Eager inputs become Const nodes.
  Values AddNode(std::string_view op, std::string_view base_name, std::span<const Value> inputs,
                 AttrMap attrs);

  void PushScope(std::string_view name);
  void PopScope();

  // The first error of the trace wins.
  void RecordError(const Status& status);
  const Status& status() const { return status_; }

  // Makes the FunctionDef: outputs through Identity nodes, stateful nodes chained in program
  // order and listed as control outputs, captured variables as trailing resource arguments.
  Result<tensorflow::FunctionDef> Finish(const Values& outputs,
                                         std::vector<TensorSpec>* output_specs);

  std::vector<std::shared_ptr<VariableState>> captures() const;
  const std::vector<GraphArg>& args() const { return args_; }
  int num_nodes() const { return static_cast<int>(nodes_.size()); }

  // The graph of the innermost trace on this thread, or nullptr.
  static Graph* Current();
  class Activation {
   public:
    explicit Activation(Graph* graph);
    ~Activation();
    Activation(const Activation&) = delete;
    Activation& operator=(const Activation&) = delete;

   private:
    Graph* previous_;
  };

 private:
  std::string UniqueName(std::string_view base);
  std::string ScopePrefix() const;
  Result<Ref> Resolve(const Value& v);
  std::string InputString(const Ref& ref) const;

  std::string function_name_;
  bool allow_variable_creation_;
  std::vector<GraphArg> args_;
  std::vector<GraphNode> nodes_;
  std::map<std::string, int> name_counts_;  // names in use -> next suffix to try
  std::vector<std::string> scopes_;
  std::map<const VariableState*, int> capture_index_;
  int last_stateful_ = -1;
  Status status_;
};

// "Add/ReadVariableOp" -> "add_readvariableop": what TensorFlow makes of a name for an arg.
std::string ArgNameFrom(std::string_view name);

// Runs one op now: Prepare on the inputs' exact specs, then its CPU kernel.
Result<std::vector<Tensor>> RunEagerOp(std::string_view op, std::string_view node_name,
                                       const AttrMap& attrs, std::span<const Tensor> inputs);

// AttrValue helpers.
tensorflow::AttrValue TypeAttr(DType t);
tensorflow::AttrValue TypeListAttr(std::span<const DType> types);
tensorflow::AttrValue ShapeAttr(const PartialShape& shape);
tensorflow::AttrValue ShapeListAttr(std::span<const PartialShape> shapes);
tensorflow::AttrValue StringAttr(std::string_view s);
tensorflow::AttrValue IntAttr(int64_t i);
tensorflow::AttrValue FuncAttr(std::string_view name);

}  // namespace kiln::trace::internal
