// Traced functions (tf.function's counterpart).
//
// A Function wraps a C++ body. The first call with a given input signature runs the body once
// on symbolic values, recording the ops into a graph (a tensorflow::FunctionDef); that
// ConcreteFunction is cached under the call's key and executed with
// kiln::exec::PreparedFunction. Later calls whose arguments fit run the cached graph and do not
// run the body: plain C++ in the body (printing with std::cout, pushing to a vector, drawing
// from a host random engine) happens only while tracing; graph ops (Print, variable
// assignments, random ops) happen on every call.
//
// The cache key is, per argument, the dtype and shape of a tensor argument or the
// value of a host argument (an integer, a floating-point number, a bool, a string or an enum):
// f(1); f(2); f(1) traces twice, f(Tensor::Scalar(1)); f(Tensor::Scalar(2)) once.
//
// A Function given an input signature has exactly one concrete function; a call that does not
// fit it is an InvalidArgument error naming the argument, the expected and the given spec, and
// does not trace. Every trace records why it happened (trace_log()); a function traced
// more than FunctionOptions::warn_after_traces times warns once, with the reasons and the fix.
// SetRunFunctionsEagerly(true) runs every body op by op instead.
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <variant>
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
class GraphDef;
}  // namespace tensorflow

namespace kiln::trace {

// One argument of an input signature.
struct ArgSpec {
  ArgSpec(std::string name, DType dtype, PartialShape shape = PartialShape::Scalar())
      : name(std::move(name)), dtype(dtype), shape(shape) {}
  std::string name;
  DType dtype;
  PartialShape shape;  // note: PartialShape{} is unknown rank; the default here is a scalar

  TensorSpec spec() const { return TensorSpec{dtype, shape}; }
  // "TensorSpec(shape=(None, 784), dtype=float32, name='x')"
  std::string ToString() const;
};
using InputSignature = std::vector<ArgSpec>;

// ---- host arguments -------------------------------------------------------------------------

// An enum argument: its type (for the key) and its underlying value.
struct EnumValue {
  std::string type;  // a readable type name
  int64_t value = 0;
  bool operator==(const EnumValue&) const = default;
};

// A host (non-tensor) argument. Part of the cache key by value.
using HostValue = std::variant<int64_t, double, bool, std::string, EnumValue>;

// Python-like: "1", "0.5", "True", "'relu'", "Mode(2)".
std::string HostValueString(const HostValue& value);

namespace internal {
std::string DemangledName(const char* mangled);
}  // namespace internal

// One call argument: a tensor (eager or symbolic), a spec (only to ask for a concrete
// function), or a host value. Converts implicitly from each, so `f(x, 10, true, "relu")` works.
class Arg {
 public:
  Arg(Value value) : kind_(Kind::kTensor), value_(std::move(value)) {}  // NOLINT
  Arg(Tensor tensor) : Arg(Value(std::move(tensor))) {}                 // NOLINT
  template <typename T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>) Arg(T v)  // NOLINT
      : Arg(HostValue(static_cast<int64_t>(v))) {}
  template <typename T>
  requires std::is_floating_point_v<T> Arg(T v)  // NOLINT
      : Arg(HostValue(static_cast<double>(v))) {}
  Arg(bool v) : Arg(HostValue(v)) {}                           // NOLINT
  Arg(const char* s) : Arg(HostValue(std::string(s))) {}       // NOLINT
  Arg(std::string s) : Arg(HostValue(std::move(s))) {}         // NOLINT
  Arg(std::string_view s) : Arg(HostValue(std::string(s))) {}  // NOLINT
  template <typename E>
  requires std::is_enum_v<E> Arg(E e)  // NOLINT
      : Arg(HostValue(
            EnumValue{internal::DemangledName(typeid(E).name()), static_cast<int64_t>(e)})) {}
  explicit Arg(HostValue host);
  // A tensor argument given by its spec: for GetConcreteFunction only.
  static Arg Spec(TensorSpec spec);

  bool is_host() const { return kind_ == Kind::kHost; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  bool is_spec() const { return kind_ == Kind::kSpec; }

  // A tensor argument's value. A host argument as a scalar constant (int: int32 as TensorFlow
  // converts Python ints, double: float32, bool, string, enum: int32); used in an op while
  // tracing it is frozen into the graph.
  const Value& value() const { return value_; }
  operator const Value&() const { return value_; }  // NOLINT: args[0] + args[1]
  // A tensor or spec argument's spec.
  TensorSpec spec() const;
  const HostValue& host() const { return host_; }

  // The host value converted (0 / 0.0 / false / "" when the argument is a tensor or a string
  // asked as a number); enums give their underlying value.
  int64_t int_value() const;
  double double_value() const;
  bool bool_value() const;
  const std::string& string_value() const;

  // "1", "'relu'", "TensorSpec(shape=(2,), dtype=int32)"; a traced function's symbolic
  // argument as TensorFlow prints one: Tensor("x:0", shape=(), dtype=int32).
  std::string ToString() const;

 private:
  friend class Function;
  enum class Kind { kTensor, kSpec, kHost };
  Arg() = default;
  std::string name_;  // a traced function's argument name (symbolic arguments)
  Kind kind_ = Kind::kTensor;
  Value value_;
  TensorSpec spec_;  // kSpec
  HostValue host_;
};
using Args = std::vector<Arg>;

// One argument of a concrete function: a tensor it takes (spec) or a host value it was traced
// for (baked into its graph).
struct BoundArg {
  std::string name;
  std::optional<HostValue> host;  // set for a host argument
  TensorSpec spec;                // a tensor argument's spec
  // "x: float32 Tensor, shape=(2,)" / "n=10"
  std::string ToString() const;
};

// ---- ConcreteFunction -----------------------------------------------------------------------

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
  std::shared_ptr<const exec::PreparedFunction> prepared_;
};

// ---- Function -------------------------------------------------------------------------------

struct FunctionOptions {
  // Argument names, used in messages, in trace reasons and as graph argument names. Missing
  // names are arg_0, arg_1, ... (an input signature's names win).
  std::vector<std::string> arg_names;
  // When set, exactly one concrete function; every argument must be a tensor that fits.
  std::optional<InputSignature> input_signature;
  // When the trace count first exceeds this, one warning (0: never warn).
  int warn_after_traces = 5;
};

// Why one trace happened.
struct TraceRecord {
  int index = 0;                     // 0 for the first trace
  std::string concrete_name;         // "__inference_f_1"
  std::vector<std::string> reasons;  // "argument `x`: dtype int32 -> float32", ...
  std::string ToString() const;      // "trace 1 of 'f': argument `x`: dtype int32 -> float32"
};

class Function {
 public:
  using Body = std::function<Result<Values>(const Values& args)>;
  // A body that also sees host arguments (Arg::int_value(), ...).
  using ArgBody = std::function<Result<Values>(const Args& args)>;

  // One concrete function, for exactly these argument specs.
  Function(std::string name, InputSignature signature, Body body);
  // Traces once per distinct key; arguments are named arg_0, ...
  Function(std::string name, Body body);
  Function(std::string name, FunctionOptions options, Body body);
  Function(std::string name, FunctionOptions options, ArgBody body);
  ~Function();
  Function(const Function&) = delete;
  Function& operator=(const Function&) = delete;

  const std::string& name() const { return name_; }
  const std::optional<InputSignature>& input_signature() const { return signature_; }

  // Traces if needed, then runs the graph (or, with the eager switch on, runs the body).
  Result<std::vector<Tensor>> Call(std::span<const Tensor> args,
                                   const exec::RunOptions& options = {});
  Result<std::vector<Tensor>> Call(std::span<const Arg> args, const exec::RunOptions& options = {});
  template <typename... Ts>
  requires(std::convertible_to<const Ts&, Arg>&&...) Result<std::vector<Tensor>>
  operator()(const Ts&... args) {
    const Args list{Arg(args)...};
    return Call(std::span<const Arg>(list));
  }

  // The concrete function for the input signature (traced on first request).
  Result<const ConcreteFunction*> GetConcreteFunction();
  // The concrete function that takes these specs: an existing one they fit, or a new trace.
  Result<const ConcreteFunction*> GetConcreteFunction(std::span<const TensorSpec> specs);
  // The same for arguments as a call gives them (tensors, Arg::Spec, host values).
  Result<const ConcreteFunction*> GetConcreteFunction(std::span<const Arg> args);
  std::vector<const ConcreteFunction*> concrete_functions() const;
  // Each concrete function's PrettySignature(), separated by blank lines, in trace order.
  std::string PrettyPrintedConcreteSignatures() const;

  // How many times the body has run for tracing.
  int trace_count() const;
  // Why each trace happened, in order.
  std::vector<TraceRecord> trace_log() const;
  // The retrace warning once given (empty before).
  std::string retrace_warning() const;

 private:
  struct Key;
  Status CheckSignature(std::span<const TensorSpec> specs) const;
  Result<const ConcreteFunction*> Lookup(const std::vector<BoundArg>& key);
  Result<const ConcreteFunction*> Trace(std::vector<BoundArg> key);
  Result<std::vector<BoundArg>> KeyOf(std::span<const Arg> args) const;
  Result<std::vector<Tensor>> CallEagerly(std::span<const Arg> args);
  std::vector<std::string> ReasonsFor(const std::vector<BoundArg>& key) const;
  void MaybeWarn();
  std::string ArgName(size_t i) const;

  std::string name_;
  std::optional<InputSignature> signature_;
  std::vector<std::string> arg_names_;
  int warn_after_traces_ = 5;
  ArgBody body_;
  mutable std::recursive_mutex mu_;
  std::vector<std::unique_ptr<ConcreteFunction>> concretes_;
  std::vector<TraceRecord> log_;
  std::string warning_;
  int trace_count_ = 0;
  bool tracing_ = false;
};

// ---- global switches ------------------------------------------------------------------------

// tf.config.run_functions_eagerly: while on, calling any Function runs its body op by op on
// concrete values (no trace, no cache); host side effects then happen on every call.
void SetRunFunctionsEagerly(bool eagerly);
bool FunctionsRunEagerly();

// Where warnings (the retrace warning) go; the default writes "kiln: WARNING: ..." to stderr.
// nullptr restores the default.
using WarningSink = std::function<void(std::string_view message)>;
void SetWarningSink(WarningSink sink);

}  // namespace kiln::trace
