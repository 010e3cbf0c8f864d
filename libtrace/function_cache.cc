// Function: one concrete function per call key (tensor specs + host values), cached; trace
// reasons and the retrace warning; the eager switch.
#include "kiln/trace/function_cache.h"

#include <atomic>
#include <exception>
#include <iostream>
#include <optional>

#include "function_key_util.h"
#include "graph.h"
#include "tensorflow/framework.pb.h"
#include "trace_extras.h"

namespace kiln::trace {
namespace {

using internal::Covers;
using internal::Difference;
using internal::Fits;
using internal::GivenSpecText;
using internal::ValidateSignature;

TensorSpec ResourceSpec() { return TensorSpec{DType::kResource, PartialShape::Scalar()}; }

std::atomic<bool> g_run_eagerly{false};

std::mutex& WarningMutex() {
  static std::mutex* const mu = new std::mutex();
  return *mu;
}
WarningSink& WarningSinkRef() {
  static WarningSink* const sink = new WarningSink();
  return *sink;
}

void EmitWarning(const std::string& message) {
  WarningSink sink;
  {
    std::lock_guard lock(WarningMutex());
    sink = WarningSinkRef();
  }
  if (sink) {
    sink(message);
  } else {
    std::cerr << "kiln: WARNING: " << message << std::endl;
  }
}

}  // namespace

std::string TraceRecord::ToString() const {
  std::string s = "trace " + std::to_string(index) + " (" + concrete_name + "): ";
  for (size_t i = 0; i < reasons.size(); ++i) s += (i ? "; " : "") + reasons[i];
  return s;
}

// ---- global switches --------------------------------------------------------------------------

void SetRunFunctionsEagerly(bool eagerly) { g_run_eagerly.store(eagerly); }
bool FunctionsRunEagerly() { return g_run_eagerly.load(); }

void SetWarningSink(WarningSink sink) {
  std::lock_guard lock(WarningMutex());
  WarningSinkRef() = std::move(sink);
}

// ---- Function -----------------------------------------------------------------------------

namespace {

Function::ArgBody AdaptBody(Function::Body body) {
  return [body = std::move(body)](const Args& args) -> Result<Values> {
    Values values;
    values.reserve(args.size());
    for (const Arg& a : args) values.push_back(a.value());
    return body(values);
  };
}

}  // namespace

Function::Function(std::string name, InputSignature signature, Body body)
    : name_(std::move(name)), signature_(std::move(signature)), body_(AdaptBody(std::move(body))) {}

Function::Function(std::string name, Body body)
    : name_(std::move(name)), body_(AdaptBody(std::move(body))) {}

Function::Function(std::string name, ArgBody body)
    : Function(std::move(name), FunctionOptions{}, std::move(body)) {}

Function::Function(std::string name, FunctionOptions options, Body body)
    : Function(std::move(name), std::move(options), AdaptBody(std::move(body))) {}

Function::Function(std::string name, FunctionOptions options, ArgBody body)
    : name_(std::move(name)),
      signature_(std::move(options.input_signature)),
      arg_names_(std::move(options.arg_names)),
      warn_after_traces_(options.warn_after_traces),
      body_(std::move(body)) {}

Function::~Function() = default;

std::string Function::ArgName(size_t i) const {
  if (signature_ && i < signature_->size()) return (*signature_)[i].name;
  if (i < arg_names_.size() && !arg_names_[i].empty()) return arg_names_[i];
  return "arg_" + std::to_string(i);
}

int Function::trace_count() const {
  std::lock_guard lock(mu_);
  return trace_count_;
}

std::vector<TraceRecord> Function::trace_log() const {
  std::lock_guard lock(mu_);
  return log_;
}

std::string Function::retrace_warning() const {
  std::lock_guard lock(mu_);
  return warning_;
}

std::vector<const ConcreteFunction*> Function::concrete_functions() const {
  std::lock_guard lock(mu_);
  std::vector<const ConcreteFunction*> out;
  for (const auto& c : concretes_) out.push_back(c.get());
  return out;
}

std::string Function::PrettyPrintedConcreteSignatures() const {
  std::string s;
  for (const ConcreteFunction* c : concrete_functions()) {
    if (!s.empty()) s += "\n";
    s += c->PrettySignature();
  }
  return s;
}

Status Function::CheckSignature(std::span<const TensorSpec> specs) const {
  const InputSignature& sig = *signature_;
  if (specs.size() != sig.size()) {
    std::string names;
    for (const ArgSpec& a : sig) names += (names.empty() ? "" : ", ") + a.name;
    return InvalidArgument("'", name_, "' takes ", sig.size(), " argument(s) (", names, "), got ",
                           specs.size());
  }
  for (size_t i = 0; i < sig.size(); ++i) {
    if (specs[i].dtype != sig[i].dtype || !Covers(sig[i].shape, specs[i].shape)) {
      return InvalidArgument("'", name_, "': argument '", sig[i].name,
                             "' does not fit the input signature: expected ", sig[i].ToString(),
                             ", got ", GivenSpecText(specs[i]));
    }
  }
  return OkStatus();
}

Result<std::vector<BoundArg>> Function::KeyOf(std::span<const Arg> args) const {
  std::vector<BoundArg> key;
  key.reserve(args.size());
  if (signature_) {
    std::vector<TensorSpec> specs;
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].is_host()) {
        const std::string name = i < signature_->size() ? (*signature_)[i].name : ArgName(i);
        return InvalidArgument("'", name_, "': argument '", name, "' is the host value ",
                               args[i].ToString(),
                               "; a function with an input signature takes only tensors");
      }
      if (args[i].is_tensor()) KILN_RETURN_IF_ERROR_CTX(args[i].value().status(), "argument ", i);
      specs.push_back(args[i].spec());
    }
    KILN_RETURN_IF_ERROR(ValidateSignature(name_, *signature_));
    KILN_RETURN_IF_ERROR(CheckSignature(specs));
    for (const ArgSpec& a : *signature_) key.push_back(BoundArg{a.name, std::nullopt, a.spec()});
    return key;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    BoundArg b;
    b.name = ArgName(i);
    if (args[i].is_host()) {
      b.host = args[i].host();
    } else {
      if (args[i].is_tensor()) {
        KILN_RETURN_IF_ERROR_CTX(args[i].value().status(), "'", name_, "': argument '", b.name,
                                 "'");
      }
      b.spec = args[i].spec();
      if (!HoldsData(b.spec.dtype)) {
        return InvalidArgument("'", name_, "': argument '", b.name, "' has dtype ",
                               DTypeShortName(b.spec.dtype), "; functions take plain tensors");
      }
    }
    key.push_back(std::move(b));
  }
  return key;
}

Result<const ConcreteFunction*> Function::GetConcreteFunction() {
  if (!signature_) {
    return FailedPrecondition("'", name_,
                              "' has no input signature: ask for the concrete function of "
                              "given argument specs");
  }
  std::vector<TensorSpec> specs;
  for (const ArgSpec& a : *signature_) specs.push_back(a.spec());
  return GetConcreteFunction(specs);
}

Result<const ConcreteFunction*> Function::GetConcreteFunction(std::span<const TensorSpec> specs) {
  Args args;
  for (const TensorSpec& s : specs) args.push_back(Arg::Spec(s));
  return GetConcreteFunction(std::span<const Arg>(args));
}

Result<const ConcreteFunction*> Function::GetConcreteFunction(std::span<const Arg> args) {
  KILN_ASSIGN_OR_RETURN(std::vector<BoundArg> key, KeyOf(args));
  return Lookup(key);
}

Result<const ConcreteFunction*> Function::Lookup(const std::vector<BoundArg>& key) {
  std::lock_guard lock(mu_);
  if (signature_) {
    if (!concretes_.empty()) return concretes_.front().get();
    return Trace(key);
  }
  for (const auto& c : concretes_) {
    if (c->arguments_.size() != key.size()) continue;
    bool fits = true;
    for (size_t i = 0; i < key.size() && fits; ++i) fits = Fits(c->arguments_[i], key[i]);
    if (fits) return c.get();
  }
  return Trace(key);
}

Result<std::vector<Tensor>> Function::Call(std::span<const Tensor> args,
                                           const exec::RunOptions& options) {
  Args list;
  list.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].IsInitialized()) {
      return InvalidArgument("'", name_, "': argument ", i, " is an empty tensor");
    }
    list.emplace_back(args[i]);
  }
  return Call(std::span<const Arg>(list), options);
}

Result<std::vector<Tensor>> Function::Call(std::span<const Arg> args,
                                           const exec::RunOptions& options) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].is_spec()) {
      return InvalidArgument("'", name_, "': argument '", ArgName(i),
                             "' is a spec; specs are for GetConcreteFunction, calls take "
                             "tensors");
    }
    if (args[i].is_tensor() && args[i].value().is_symbolic()) {
      return Unimplemented("'", name_, "': argument '", ArgName(i),
                           "' is a symbolic value of another trace; calling a traced function "
                           "from inside a trace is not supported by Function::Call");
    }
  }
  if (FunctionsRunEagerly()) return CallEagerly(args);
  KILN_ASSIGN_OR_RETURN(std::vector<BoundArg> key, KeyOf(args));
  KILN_ASSIGN_OR_RETURN(const ConcreteFunction* concrete, Lookup(key));
  std::vector<Tensor> tensors;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].is_tensor()) continue;
    KILN_ASSIGN_OR_RETURN_CTX(Tensor t, args[i].value().tensor(), "argument '", ArgName(i), "'");
    tensors.push_back(std::move(t));
  }
  return concrete->Call(std::span<const Tensor>(tensors), options);
}

Result<std::vector<Tensor>> Function::CallEagerly(std::span<const Arg> args) {
  // An input signature still checks the arguments.
  if (signature_) KILN_RETURN_IF_ERROR(KeyOf(args).status());
  Args eager(args.begin(), args.end());
  std::optional<Result<Values>> result;
  internal::EagerErrorScope errors;  // an op that fails fails the call, as in eager TensorFlow
  {
    internal::Graph::Activation no_graph(nullptr);  // ops run at once, even inside a trace
    try {
      result.emplace(body_(eager));
    } catch (...) {
      result.emplace(internal::StatusOfCurrentException());
    }
  }
  const std::string context = "running '" + name_ + "' eagerly";
  KILN_RETURN_IF_ERROR_CTX(result->status(), context);
  KILN_RETURN_IF_ERROR_CTX(errors.status(), context);
  std::vector<Tensor> out;
  for (size_t i = 0; i < result->value().size(); ++i) {
    KILN_ASSIGN_OR_RETURN_CTX(Tensor t, result->value()[i].tensor(), context, ": output ", i);
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<std::string> Function::ReasonsFor(const std::vector<BoundArg>& key) const {
  if (concretes_.empty()) return {"first call"};
  // Compare with the closest earlier trace (fewest differing arguments; the latest on a tie).
  const ConcreteFunction* best = nullptr;
  size_t best_diffs = 0;
  for (const auto& c : concretes_) {
    if (c->arguments_.size() != key.size()) continue;
    size_t diffs = 0;
    for (size_t i = 0; i < key.size(); ++i) diffs += Fits(c->arguments_[i], key[i]) ? 0 : 1;
    if (best == nullptr || diffs <= best_diffs) {
      best = c.get();
      best_diffs = diffs;
    }
  }
  if (best == nullptr) {
    return {"argument count " + std::to_string(concretes_.back()->arguments_.size()) + " -> " +
            std::to_string(key.size())};
  }
  std::vector<std::string> reasons;
  for (size_t i = 0; i < key.size(); ++i) {
    std::string d = Difference(key[i].name, best->arguments_[i], key[i]);
    if (!d.empty()) reasons.push_back(std::move(d));
  }
  if (reasons.empty()) reasons.push_back("no earlier trace fits");
  return reasons;
}

void Function::MaybeWarn() {
  if (warn_after_traces_ <= 0 || trace_count_ <= warn_after_traces_ || !warning_.empty()) return;
  bool host = false, tensor = false;
  std::string why;
  for (const TraceRecord& r : log_) {
    if (r.index == 0) continue;
    why += "\n  " + r.ToString();
    for (const std::string& reason : r.reasons) {
      (reason.rfind("host argument", 0) == 0 || reason.find("host value") != std::string::npos
           ? host
           : tensor) = true;
    }
  }
  std::string fix = "\nTo trace less:";
  if (host || !tensor) {
    fix +=
        "\n  - pass values that change from call to call as tensors (Tensor::Scalar(n)) "
        "instead of host values: a host value is part of the cache key, a tensor's value is "
        "not;";
  }
  fix +=
      "\n  - give the function an input signature (FunctionOptions::input_signature), with "
      "unknown dimensions (-1) where shapes vary: it then has exactly one graph.";
  warning_ = "'" + name_ + "' has been traced " + std::to_string(trace_count_) +
             " times (more than " + std::to_string(warn_after_traces_) +
             "). Tracing is expensive; frequent retracing usually means the calls change "
             "host values or tensor shapes. Why it retraced:" +
             why + fix;
  EmitWarning(warning_);
}

Result<const ConcreteFunction*> Function::Trace(std::vector<BoundArg> key) {
  if (tracing_) {
    return FailedPrecondition("'", name_,
                              "' was called while it is being traced; recursion is not "
                              "supported");
  }
  std::vector<std::string> reasons = ReasonsFor(key);
  const int trace_index = trace_count_++;
  const std::string fname =
      "__inference_" + internal::SanitizeFunctionName(name_) + "_" + std::to_string(trace_index);
  std::vector<ArgSpec> inputs;
  for (const BoundArg& b : key) {
    if (!b.host) inputs.emplace_back(b.name, b.spec.dtype, b.spec.shape);
  }
  if (!signature_) KILN_RETURN_IF_ERROR(ValidateSignature(name_, inputs));

  // A first trace that creates variables runs again with creation disallowed, as
  // tf.function does: the second run must find the variables it needs already made (the
  // guarded `if (!v.valid()) v = Variable::Create(...)` pattern); an unguarded creation fails.
  internal::TraceExtras extras;
  std::shared_ptr<internal::Graph> graph;
  // Control-flow bodies kept for gradients refer back to their parent graph: released when the
  // trace ends (every return), or the graphs would keep each other alive.
  struct BodiesRelease {
    std::shared_ptr<internal::Graph>* graph;
    ~BodiesRelease() {
      if (*graph != nullptr) (*graph)->ReleaseFunctionBodies();
    }
  } release_bodies{&graph};
  std::optional<Result<Values>> result;
  const std::string context = "tracing '" + name_ + "'";
  // A concrete function of a finished trace's graph.
  auto make_concrete =
      [&](internal::Graph& g, const Values& outputs,
          const internal::TraceExtras& trace_extras) -> Result<std::unique_ptr<ConcreteFunction>> {
    std::vector<TensorSpec> output_specs;
    KILN_ASSIGN_OR_RETURN_CTX(tensorflow::FunctionDef fdef, g.Finish(outputs, &output_specs),
                              context);
    auto concrete = std::unique_ptr<ConcreteFunction>(new ConcreteFunction());
    concrete->name_ = fname;
    concrete->function_name_ = name_;
    concrete->inputs_ = inputs;
    concrete->outputs_ = std::move(output_specs);
    concrete->arguments_ = key;
    concrete->host_callbacks_ = trace_extras.host_callbacks;
    concrete->keep_alive_ = trace_extras.keep_alive;
    for (const auto& state : g.captures()) {
      concrete->captures_.push_back(internal::VariableAccess::Make(state));
    }
    concrete->library_ = std::make_unique<tensorflow::FunctionDefLibrary>();
    *concrete->library_->add_function() = std::move(fdef);
    // Branches, loop bodies and nested functions the graph calls.
    for (const auto& f : g.library().function()) *concrete->library_->add_function() = f;

    std::vector<TensorSpec> arg_specs;
    for (const ArgSpec& a : concrete->inputs_) arg_specs.push_back(a.spec());
    for (size_t i = 0; i < concrete->captures_.size(); ++i) arg_specs.push_back(ResourceSpec());
    concrete->exec_library_ = std::make_unique<exec::FunctionLibrary>(*concrete->library_);
    KILN_ASSIGN_OR_RETURN_CTX(concrete->prepared_,
                              exec::PreparedFunction::Prepare(concrete->function_def(),
                                                              *concrete->exec_library_, arg_specs),
                              context, ": preparing the traced graph");
    return concrete;
  };
  // The first pass's graph when it gives variables their values (Variable::Create from a
  // symbolic value): it runs on the first call, the second pass's graph on later ones.
  std::unique_ptr<ConcreteFunction> initializer;
  for (int pass = 0; pass < 2; ++pass) {
    if (graph != nullptr) graph->ReleaseFunctionBodies();
    extras = internal::TraceExtras();
    graph = std::make_shared<internal::Graph>(
        fname, /*allow_variable_creation=*/trace_index == 0 && pass == 0);
    result.reset();
    {
      internal::TraceExtrasScope extras_scope(&extras);
      internal::Graph::Activation active(graph.get());
      tracing_ = true;
      Args args;
      for (const BoundArg& b : key) {
        if (b.host) {
          args.emplace_back(*b.host);
        } else {
          args.emplace_back(graph->AddArg(b.name, b.spec));
          args.back().name_ = b.name;
        }
      }
      try {
        result.emplace(body_(args));
      } catch (...) {
        result.emplace(internal::StatusOfCurrentException());
      }
      tracing_ = false;
    }
    KILN_RETURN_IF_ERROR_CTX(graph->status(), context);
    KILN_RETURN_IF_ERROR_CTX(result->status(), context);
    if (extras.variables_created == 0) break;
    if (pass == 0 && extras.variables_initialized_by_graph > 0) {
      KILN_ASSIGN_OR_RETURN(initializer, make_concrete(*graph, result->value(), extras));
    }
  }

  KILN_ASSIGN_OR_RETURN(std::unique_ptr<ConcreteFunction> concrete,
                        make_concrete(*graph, result->value(), extras));
  if (initializer != nullptr) {
    concrete->initializer_ = std::move(initializer);
    concrete->has_initializer_.store(true, std::memory_order_release);
  }
  concretes_.push_back(std::move(concrete));
  log_.push_back(TraceRecord{trace_index, fname, std::move(reasons)});
  MaybeWarn();
  return concretes_.back().get();
}

}  // namespace kiln::trace
