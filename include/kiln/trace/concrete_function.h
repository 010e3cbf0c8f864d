// ConcreteFunction: one traced graph of a Function, bound to the argument specs (and host
// values) it was traced for. Calling it never retraces: arguments that do not fit are an error.
#pragma once

#include <atomic>
#include <concepts>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/exec/executor.h"
#include "kiln/trace/function_key.h"
#include "kiln/trace/variable.h"

namespace tensorflow {
class FunctionDef;
class FunctionDefLibrary;
class GraphDef;
}  // namespace tensorflow

namespace kiln::trace {

class Function;

// One traced graph of a Function, bound to the specs (and host values) it was traced for.
class ConcreteFunction {
 public:
  ~ConcreteFunction();
  ConcreteFunction(const ConcreteFunction&) = delete;
  ConcreteFunction& operator=(const ConcreteFunction&) = delete;

  // The FunctionDef name, "__inference_<function>_<trace number>".
  const std::string& name() const { return name_; }
  // The name of the Function it belongs to ("addprint").
  const std::string& function_name() const { return function_name_; }
  // The tensor arguments (names and the specs the graph accepts) and the outputs.
  std::span<const ArgSpec> inputs() const { return inputs_; }
  std::span<const TensorSpec> outputs() const { return outputs_; }
  // Every argument of the call, host values included, in call order.
  std::span<const BoundArg> arguments() const { return arguments_; }
  // Variables the graph reads or assigns, in capture order (= order of first use); they are
  // the trailing DT_RESOURCE arguments of the FunctionDef.
  const std::vector<Variable>& captured_variables() const { return captures_; }
  const tensorflow::FunctionDef& function_def() const;
  // This function and everything it calls (for a FunctionLibrary).
  const tensorflow::FunctionDefLibrary& library() const { return *library_; }
  // Nodes of the function body (as len(graph.as_graph_def().node) counts them, minus the
  // Placeholder per argument that a GraphDef adds; see graph_def()).
  int num_nodes() const;
  bool is_stateful() const;

  // Host callbacks (HostCallback ops) the graph calls. A graph with any cannot be exported.
  const std::vector<std::string>& host_callbacks() const { return host_callbacks_; }
  // OK, or FailedPrecondition naming the function and its first host callback.
  Status CheckExportable() const;

  // Runs the graph on the tensor arguments. Argument dtypes and shapes must fit inputs(): a
  // wrong dtype is an InvalidArgument error, never a retrace.
  Result<std::vector<Tensor>> Call(std::span<const Tensor> args,
                                   const exec::RunOptions& options = {}) const;
  // The same with every argument: host arguments must equal the values it was traced for.
  Result<std::vector<Tensor>> Call(std::span<const Arg> args,
                                   const exec::RunOptions& options = {}) const;
  template <typename... Ts>
  requires(std::convertible_to<const Ts&, Arg>&&...) Result<std::vector<Tensor>>
  operator()(const Ts&... args) const {
    const Args list{Arg(args)...};
    return Call(std::span<const Arg>(list));
  }

  // "addprint(a: TensorSpec(shape=(), dtype=float32, name='a')) -> TensorSpec(shape=(),
  // dtype=float32)"
  std::string SignatureString() const;
  // As tf.function's pretty_printed_concrete_signatures prints one:
  //   double(a)
  //     Args:
  //       a: int32 Tensor, shape=()
  //     Returns:
  //       int32 Tensor, shape=()
  std::string PrettySignature() const;

  // The graph as tf.Graph.as_graph_def() shows it: one Placeholder per argument (captured
  // variables included), the body's nodes with GraphDef-style inputs ("node:1"), the library of
  // functions it calls, versions. Defined in graph_def.cc.
  tensorflow::GraphDef graph_def() const;
  // graph_def() in protobuf text format (what the seed notes print).
  std::string GraphDefText() const;
  // graph_def().node_size(): what the seeds' measure_graph_size prints.
  int graph_num_nodes() const;

 private:
  friend class Function;
  ConcreteFunction();

  std::string name_;
  std::string function_name_;
  std::vector<ArgSpec> inputs_;
  std::vector<TensorSpec> outputs_;
  std::vector<BoundArg> arguments_;
  std::vector<Variable> captures_;
  std::vector<std::string> host_callbacks_;
  std::vector<std::shared_ptr<const void>> keep_alive_;      // host callbacks the graph refers to
  std::unique_ptr<tensorflow::FunctionDefLibrary> library_;  // [0] is this function
  // The index the prepared function looks its callees up in; lives as long as prepared_.
  std::unique_ptr<exec::FunctionLibrary> exec_library_;
  std::shared_ptr<const exec::PreparedFunction> prepared_;
  // The first trace of a function that creates variables from symbolic values assigns them:
  // it runs, in place of this graph, on the first call that succeeds (then it is dropped).
  mutable std::mutex initializer_mu_;
  mutable std::unique_ptr<ConcreteFunction> initializer_;
  mutable std::atomic<bool> has_initializer_{false};
};

}  // namespace kiln::trace
