// The graph a trace records into, and private access to Value and Variable internals.
//
// A Graph is made current on the tracing thread while a body runs (Graph::Activation). Nodes
// keep their inputs as references (node, output) and are turned into a FunctionDef only at the
// end, when the names of captured-variable arguments are known.
//
// A graph may have a parent: the graph of a control-flow branch or loop body is traced while
// its parent's trace is in progress. A symbolic value of an ancestor used in it becomes a
// capture: an extra argument of the child, fed by the ancestor's value (captured in the
// parent first when it comes from further up). The functions a graph's nodes call (branches,
// bodies, nested traced functions) are kept in its library.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/exec/op_table.h"
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
  bool is_capture = false;  // a value captured from the parent graph (children only)
};

// A traced branch / loop function kept after its FunctionDef is made: the gradient of an If or
// While replays its nodes (gradients/control_flow_grad.cc). `arg_order` lists the FunctionDef's
// input args as indices into graph->args(), in the order the node passes its inputs.
struct FunctionBody {
  std::shared_ptr<Graph> graph;
  Values outputs;
  std::vector<int> arg_order;
};

// A value of the parent graph that a child graph takes as argument `arg`.
struct CapturedValue {
  Value outer;  // symbolic, in the parent graph
  int arg = -1;
};

class Graph : public std::enable_shared_from_this<Graph> {
 public:
  Graph(std::string function_name, bool allow_variable_creation, Graph* parent = nullptr);

  const std::string& function_name() const { return function_name_; }
  bool allow_variable_creation() const { return allow_variable_creation_; }
  Graph* parent() const { return parent_; }
  bool IsAncestor(const Graph* g) const;

  // A user argument; its FunctionDef name is `user_name` made valid (lower case, [a-z0-9_]).
  Value AddArg(const std::string& user_name, const TensorSpec& spec);
  // The resource argument standing for `var` (added on first use). In a child graph the
  // parent captures it too, and the child takes the parent's handle as a captured value.
  Value CaptureVariable(const std::shared_ptr<VariableState>& var);
  // The argument of this graph standing for `outer`, a symbolic value of an ancestor graph
  // (added on first use). Values of this graph and eager values are returned as they are.
  Result<Value> CaptureValue(const Value& outer);
  const std::vector<CapturedValue>& captured_values() const { return captured_values_; }
  // A node calling a library function (PartitionedCall, StatefulPartitionedCall): not in the
  // op table, so the caller gives the output specs.
  Values AddCallNode(std::string_view op, std::string_view base_name, std::span<const Value> inputs,
                     AttrMap attrs, std::vector<TensorSpec> output_specs, bool stateful);

  // The value of `v` when it is known before running: an eager value's tensor or the value of
  // a Const node; nullptr otherwise.
  static const Tensor* ConstantOf(const Value& v);

  // Functions this graph's nodes call; kept unique by name.
  void AddFunction(const tensorflow::FunctionDef& fdef);
  const tensorflow::FunctionDefLibrary& library() const { return library_; }
  // The bodies of the control-flow functions this graph's nodes call (by function name).
  void AddFunctionBody(const std::string& name, std::shared_ptr<const FunctionBody> body);
  std::shared_ptr<const FunctionBody> FindFunctionBody(const std::string& name) const;
  // Drops the bodies, here and in the bodies' graphs. A body's graph refers back to this one
  // through its captured values, so the graphs keep each other alive until this runs: the
  // trace that made them calls it when it ends.
  void ReleaseFunctionBodies();
  const std::map<std::string, std::shared_ptr<const FunctionBody>>& function_bodies() const {
    return bodies_;
  }
  // True when the graph holds a stateful node (If vs StatelessIf).
  bool has_stateful_node() const { return last_stateful_ >= 0; }
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
  // `arg_order`, when given, is the order of the FunctionDef's input args as indices into
  // args() (control-flow functions list their captures in their node's order).
  Result<tensorflow::FunctionDef> Finish(const Values& outputs,
                                         std::vector<TensorSpec>* output_specs,
                                         const std::vector<int>* arg_order = nullptr);

  std::vector<std::shared_ptr<VariableState>> captures() const;
  const std::vector<GraphArg>& args() const { return args_; }
  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  const std::string& node_name(int node) const { return nodes_[node].name; }
  const GraphNode& node(int index) const { return nodes_[index]; }

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
  Graph* parent_ = nullptr;
  std::vector<GraphArg> args_;
  std::vector<CapturedValue> captured_values_;
  std::map<std::tuple<const Graph*, int, int>, int> capture_value_index_;  // outer ref -> arg
  tensorflow::FunctionDefLibrary library_;
  std::map<std::string, std::shared_ptr<const FunctionBody>> bodies_;
  std::vector<GraphNode> nodes_;
  std::map<std::string, int> name_counts_;  // names in use -> next suffix to try
  std::vector<std::string> scopes_;
  std::map<const VariableState*, int> capture_index_;
  int last_stateful_ = -1;
  Status status_;
};

// A fresh Value id (Value::id()).
uint64_t NextValueId();

// A number unique in the process, for names of library functions ("cond_true_12").
int64_t NextFunctionUid();

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
