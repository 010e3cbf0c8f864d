// Function: a traced function's cache of concrete functions, one per call key
// (kiln/trace/function.h has the whole picture), with the trace log, the retrace warning and
// the global eager switch.
#pragma once

#include <concepts>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/exec/executor.h"
#include "kiln/trace/concrete_function.h"
#include "kiln/trace/function_key.h"
#include "kiln/trace/value.h"

namespace kiln::trace {

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
  Function(std::string name, ArgBody body);
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
