// Traced functions (tf.function's counterpart).
//
// A Function wraps a C++ body. The first call with a given input signature runs the body once
// on symbolic values, recording the ops into a graph (a tensorflow::FunctionDef); that
// ConcreteFunction is cached under the argument specs and executed with
// kiln::exec::PreparedFunction. Later calls whose arguments fit run the cached graph and do not
// run the body: plain C++ in the body (printing with std::cout, pushing to a vector, drawing
// from a host random engine) happens only while tracing; graph ops (Print, variable
// assignments) happen on every call.
//
// A Function given an input signature has exactly one concrete function; a call that does not
// fit it is an InvalidArgument error naming the argument, and does not trace.
#pragma once

#include <concepts>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kiln/core/shape.h"
#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/exec/executor.h"
#include "kiln/trace/value.h"
#include "kiln/trace/variable.h"

namespace tensorflow {
class FunctionDef;
class FunctionDefLibrary;
}  // namespace tensorflow

namespace kiln::trace {

// One argument of an input signature.
struct ArgSpec {
  ArgSpec(std::string name, DType dtype, PartialShape shape = PartialShape::Scalar())
      : name(std::move(name)), dtype(dtype), shape(std::move(shape)) {}
  std::string name;
  DType dtype;
  PartialShape shape;  // note: PartialShape{} is unknown rank; the default here is a scalar

  TensorSpec spec() const { return TensorSpec{dtype, shape}; }
  // "TensorSpec(shape=(None, 784), dtype=float32, name='x')"
  std::string ToString() const;
};
using InputSignature = std::vector<ArgSpec>;

// One traced graph of a Function, bound to the specs it was traced for.
class ConcreteFunction {
 public:
  ~ConcreteFunction();
  ConcreteFunction(const ConcreteFunction&) = delete;
  ConcreteFunction& operator=(const ConcreteFunction&) = delete;

  // The FunctionDef name, "__inference_<function>_<trace number>".
  const std::string& name() const { return name_; }
  // The name of the Function it belongs to ("addprint").
  const std::string& function_name() const { return function_name_; }
  // The user arguments (names and the specs the graph accepts) and the outputs.
  std::span<const ArgSpec> inputs() const { return inputs_; }
  std::span<const TensorSpec> outputs() const { return outputs_; }
  // Variables the graph reads or assigns, in capture order (= order of first use); they are
  // the trailing DT_RESOURCE arguments of the FunctionDef.
  const std::vector<Variable>& captured_variables() const { return captures_; }
  const tensorflow::FunctionDef& function_def() const;
  // This function and everything it calls (for a FunctionLibrary).
  const tensorflow::FunctionDefLibrary& library() const { return *library_; }
  int num_nodes() const;
  bool is_stateful() const;

  // Runs the graph. Argument dtypes and shapes must fit inputs(): a wrong dtype is an
  // InvalidArgument error, never a retrace.
  Result<std::vector<Tensor>> Call(std::span<const Tensor> args,
                                   const exec::RunOptions& options = {}) const;

  // "addprint(a: TensorSpec(shape=(), dtype=float32, name='a')) -> TensorSpec(shape=(),
  // dtype=float32)"
  std::string SignatureString() const;

 private:
  friend class Function;
  ConcreteFunction();

  std::string name_;
  std::string function_name_;
  std::vector<ArgSpec> inputs_;
  std::vector<TensorSpec> outputs_;
  std::vector<Variable> captures_;
  std::unique_ptr<tensorflow::FunctionDefLibrary> library_;  // [0] is this function
  std::shared_ptr<const exec::PreparedFunction> prepared_;
};

class Function {
 public:
  using Body = std::function<Result<Values>(const Values& args)>;

  // One concrete function, for exactly these argument specs.
  Function(std::string name, InputSignature signature, Body body);
  // Traces once per distinct argument spec (dtype and shape); arguments are named arg_0, ...
  Function(std::string name, Body body);
  ~Function();
  Function(const Function&) = delete;
  Function& operator=(const Function&) = delete;

  const std::string& name() const { return name_; }
  const std::optional<InputSignature>& input_signature() const { return signature_; }

  // Traces if needed, then runs the graph.
  Result<std::vector<Tensor>> Call(std::span<const Tensor> args,
                                   const exec::RunOptions& options = {});
  template <typename... Ts>
  requires(std::convertible_to<const Ts&, Tensor>&&...) Result<std::vector<Tensor>>
  operator()(const Ts&... args) {
    const std::vector<Tensor> list{Tensor(args)...};
    return Call(list);
  }

  // The concrete function for the input signature (traced on first request).
  Result<const ConcreteFunction*> GetConcreteFunction();
  // The concrete function that takes these specs: an existing one they fit, or a new trace.
  Result<const ConcreteFunction*> GetConcreteFunction(std::span<const TensorSpec> specs);
  std::vector<const ConcreteFunction*> concrete_functions() const;
  // How many times the body has run for tracing.
  int trace_count() const;

 private:
  Status CheckSignature(std::span<const TensorSpec> specs) const;
  Result<const ConcreteFunction*> Trace(std::vector<ArgSpec> inputs);

  std::string name_;
  std::optional<InputSignature> signature_;
  Body body_;
  mutable std::recursive_mutex mu_;
  std::vector<std::unique_ptr<ConcreteFunction>> concretes_;
  int trace_count_ = 0;
  bool tracing_ = false;
};

}  // namespace kiln::trace
