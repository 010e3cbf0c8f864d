// Function: one concrete function per call key (tensor specs + host values), cached; trace
// reasons and the retrace warning; the eager switch.
#include "kiln/trace/function.h"

#include <cxxabi.h>

#include <atomic>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

#include "graph.h"
#include "trace_extras.h"

namespace kiln::trace {
namespace {

TensorSpec ResourceSpec() { return TensorSpec{DType::kResource, PartialShape::Scalar()}; }

// Function names go into FunctionDef names: keep [A-Za-z0-9_].
std::string SanitizeFunctionName(std::string_view name) {
  std::string out;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    out += ok ? c : '_';
  }
  return out.empty() ? "function" : out;
}

std::string SpecString(const TensorSpec& spec) { return spec.ToString(); }

std::string GivenString(const TensorSpec& spec) {
  return "TensorSpec(shape=" + spec.shape.ToPythonString() +
         ", dtype=" + DTypeShortName(spec.dtype) + ")";
}

// "float32 Tensor, shape=(2,)", as pretty_printed_concrete_signatures writes a spec.
std::string PrettySpec(const TensorSpec& spec) {
  return DTypeShortName(spec.dtype) + " Tensor, shape=" + spec.shape.ToPythonString();
}

Status ValidateSignature(const std::string& fn, const InputSignature& sig) {
  std::set<std::string> names;
  for (size_t i = 0; i < sig.size(); ++i) {
    const ArgSpec& a = sig[i];
    if (a.name.empty()) return InvalidArgument("function '", fn, "': argument ", i, " has no name");
    for (char c : a.name) {
      const bool ok =
          (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
      if (!ok) {
        return InvalidArgument("function '", fn, "': argument name '", a.name,
                               "' may hold only letters, digits and '_'");
      }
    }
    if (!names.insert(a.name).second) {
      return InvalidArgument("function '", fn, "': two arguments are named '", a.name, "'");
    }
    if (a.dtype == DType::kInvalid || a.dtype == DType::kResource || a.dtype == DType::kVariant) {
      return InvalidArgument("function '", fn, "': argument '", a.name, "' has dtype ",
                             DTypeShortName(a.dtype), "; signatures take plain tensors");
    }
  }
  return OkStatus();
}

// True when every shape `specific` allows is allowed by `general` (a concrete function traced
// for `general` can take it).
bool Covers(const PartialShape& general, const PartialShape& specific) {
  if (general.unknown_rank()) return true;
  if (specific.unknown_rank() || specific.rank() != general.rank()) return false;
  for (int i = 0; i < general.rank(); ++i) {
    if (general.dim(i) >= 0 && general.dim(i) != specific.dim(i)) return false;
  }
  return true;
}

bool SameHost(const HostValue& a, const HostValue& b) { return a == b; }

// Whether concrete argument `have` takes call argument `want`.
bool Fits(const BoundArg& have, const BoundArg& want) {
  if (have.host.has_value() != want.host.has_value()) return false;
  if (have.host) return SameHost(*have.host, *want.host);
  return have.spec.dtype == want.spec.dtype && Covers(have.spec.shape, want.spec.shape);
}

// Why `want` did not fit `have`, or empty when it did.
std::string Difference(const std::string& name, const BoundArg& have, const BoundArg& want) {
  if (Fits(have, want)) return {};
  if (have.host && want.host) {
    return "host argument `" + name + "`: " + HostValueString(*have.host) + " -> " +
           HostValueString(*want.host);
  }
  if (have.host) {
    return "argument `" + name + "`: host value " + HostValueString(*have.host) + " -> " +
           PrettySpec(want.spec);
  }
  if (want.host) {
    return "argument `" + name + "`: " + PrettySpec(have.spec) + " -> host value " +
           HostValueString(*want.host);
  }
  if (have.spec.dtype != want.spec.dtype) {
    return "argument `" + name + "`: dtype " + DTypeShortName(have.spec.dtype) + " -> " +
           DTypeShortName(want.spec.dtype);
  }
  return "argument `" + name + "`: new shape " + have.spec.shape.ToPythonString() + " -> " +
         want.spec.shape.ToPythonString();
}

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

thread_local internal::TraceExtras* g_extras = nullptr;
thread_local internal::EagerErrorScope* g_eager_errors = nullptr;

}  // namespace

// ---- host values and arguments ----------------------------------------------------------------

namespace internal {

std::string DemangledName(const char* mangled) {
  int status = 0;
  char* out = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string name = (status == 0 && out != nullptr) ? out : mangled;
  std::free(out);
  return name;
}

TraceExtras* CurrentTraceExtras() { return g_extras; }

EagerErrorScope::EagerErrorScope() : previous_(g_eager_errors) { g_eager_errors = this; }
EagerErrorScope::~EagerErrorScope() { g_eager_errors = previous_; }

void RecordEagerError(const Status& status) {
  if (g_eager_errors != nullptr && g_eager_errors->status_.ok()) g_eager_errors->status_ = status;
}

TraceExtrasScope::TraceExtrasScope(TraceExtras* extras) : previous_(g_extras) { g_extras = extras; }

TraceExtrasScope::~TraceExtrasScope() {
  // A nested trace's callbacks also mark the trace that calls it.
  if (previous_ != nullptr && g_extras != nullptr && g_extras != previous_) {
    for (const auto& n : g_extras->host_callbacks) previous_->host_callbacks.push_back(n);
    for (const auto& k : g_extras->keep_alive) previous_->keep_alive.push_back(k);
  }
  g_extras = previous_;
}

}  // namespace internal

std::string HostValueString(const HostValue& value) {
  struct Visitor {
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const {
      char buf[64];
      auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);  // shortest round trip
      std::string t = ec == std::errc() ? std::string(buf, end) : std::to_string(v);
      // Python writes a float with a decimal point: 1.0, not 1.
      if (t.find_first_of(".eni") == std::string::npos) t += ".0";
      return t;
    }
    std::string operator()(bool v) const { return v ? "True" : "False"; }
    std::string operator()(const std::string& v) const { return "'" + v + "'"; }
    std::string operator()(const EnumValue& v) const {
      return v.type + "(" + std::to_string(v.value) + ")";
    }
  };
  return std::visit(Visitor{}, value);
}

namespace {

// A host value as the tensor TensorFlow would convert it to.
Tensor HostTensor(const HostValue& value) {
  struct Visitor {
    Tensor operator()(int64_t v) const { return Tensor::Scalar<int32_t>(static_cast<int32_t>(v)); }
    Tensor operator()(double v) const { return Tensor::Scalar<float>(static_cast<float>(v)); }
    Tensor operator()(bool v) const { return Tensor::Scalar<bool>(v); }
    Tensor operator()(const std::string& v) const { return Tensor::Scalar<std::string>(v); }
    Tensor operator()(const EnumValue& v) const {
      return Tensor::Scalar<int32_t>(static_cast<int32_t>(v.value));
    }
  };
  return std::visit(Visitor{}, value);
}

}  // namespace

Arg::Arg(HostValue host) : kind_(Kind::kHost), value_(HostTensor(host)), host_(std::move(host)) {}

Arg Arg::Spec(TensorSpec spec) {
  Arg a;
  a.kind_ = Kind::kSpec;
  a.spec_ = spec;
  a.value_ = Value::Error(InvalidArgument("an Arg::Spec has no value; it only names a spec"));
  return a;
}

TensorSpec Arg::spec() const {
  if (kind_ == Kind::kSpec) return spec_;
  return value_.spec();
}

int64_t Arg::int_value() const {
  if (kind_ != Kind::kHost) return 0;
  if (const auto* i = std::get_if<int64_t>(&host_)) return *i;
  if (const auto* d = std::get_if<double>(&host_)) return static_cast<int64_t>(*d);
  if (const auto* b = std::get_if<bool>(&host_)) return *b ? 1 : 0;
  if (const auto* e = std::get_if<EnumValue>(&host_)) return e->value;
  return 0;
}

double Arg::double_value() const {
  if (kind_ != Kind::kHost) return 0.0;
  if (const auto* d = std::get_if<double>(&host_)) return *d;
  return static_cast<double>(int_value());
}

bool Arg::bool_value() const { return int_value() != 0 || double_value() != 0.0; }

const std::string& Arg::string_value() const {
  static const std::string* const empty = new std::string();
  if (kind_ != Kind::kHost) return *empty;
  const auto* s = std::get_if<std::string>(&host_);
  return s != nullptr ? *s : *empty;
}

std::string Arg::ToString() const {
  switch (kind_) {
    case Kind::kHost:
      return HostValueString(host_);
    case Kind::kSpec:
      return GivenString(spec_);
    case Kind::kTensor:
      break;
  }
  if (value_.is_symbolic() && !name_.empty()) {
    return "Tensor(\"" + name_ + ":0\", shape=" + value_.shape().ToPythonString() +
           ", dtype=" + DTypeShortName(value_.dtype()) + ")";
  }
  return value_.ok() ? GivenString(value_.spec()) : value_.DebugString();
}

std::string BoundArg::ToString() const {
  if (host) return name + "=" + HostValueString(*host);
  return name + ": " + PrettySpec(spec);
}

std::string TraceRecord::ToString() const {
  std::string s = "trace " + std::to_string(index) + " (" + concrete_name + "): ";
  for (size_t i = 0; i < reasons.size(); ++i) s += (i ? "; " : "") + reasons[i];
  return s;
}

std::string ArgSpec::ToString() const {
  return "TensorSpec(shape=" + shape.ToPythonString() + ", dtype=" + DTypeShortName(dtype) +
         ", name='" + name + "')";
}

// ---- global switches --------------------------------------------------------------------------

void SetRunFunctionsEagerly(bool eagerly) { g_run_eagerly.store(eagerly); }
bool FunctionsRunEagerly() { return g_run_eagerly.load(); }

void SetWarningSink(WarningSink sink) {
  std::lock_guard lock(WarningMutex());
  WarningSinkRef() = std::move(sink);
}

// ---- ConcreteFunction ---------------------------------------------------------------------

ConcreteFunction::ConcreteFunction() = default;
ConcreteFunction::~ConcreteFunction() = default;

const tensorflow::FunctionDef& ConcreteFunction::function_def() const {
  return library_->function(0);
}

int ConcreteFunction::num_nodes() const { return function_def().node_def_size(); }

bool ConcreteFunction::is_stateful() const { return function_def().signature().is_stateful(); }

Status ConcreteFunction::CheckExportable() const {
  if (host_callbacks_.empty()) return OkStatus();
  return FailedPrecondition(
      "function '", function_name_, "' (", name_, ") calls the host callback '",
      host_callbacks_.front(),
      "': it runs C++ code of this process, which a saved bundle cannot hold. Export a "
      "function without HostCallback ops (use graph ops such as Print or variable updates for "
      "side effects)");
}

Result<std::vector<Tensor>> ConcreteFunction::Call(std::span<const Tensor> args,
                                                   const exec::RunOptions& options) const {
  if (args.size() != inputs_.size()) {
    return InvalidArgument("'", function_name_, "' (", name_, ") takes ", inputs_.size(),
                           " tensor argument(s), got ", args.size());
  }
  std::vector<Tensor> full;
  full.reserve(args.size() + captures_.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const ArgSpec& want = inputs_[i];
    const Tensor& t = args[i];
    if (!t.IsInitialized()) {
      return InvalidArgument("'", function_name_, "': argument '", want.name,
                             "' is an empty tensor");
    }
    if (t.dtype() != want.dtype || !want.shape.IsCompatibleWith(t.shape())) {
      return InvalidArgument("'", function_name_, "' (", name_, "): argument '", want.name,
                             "' (input #", i, "): expected ", want.ToString(), ", got ",
                             GivenString({t.dtype(), PartialShape(t.shape())}),
                             "; a concrete function does not retrace: call the Function, or "
                             "get the concrete function for these specs");
    }
    full.push_back(t);
  }
  for (const Variable& v : captures_) {
    KILN_RETURN_IF_ERROR(v.status());
    Tensor handle(DType::kResource, Shape());
    handle.scalar<std::shared_ptr<ResourceBase>>() = v.resource();
    full.push_back(std::move(handle));
  }
  std::vector<Tensor> outputs;
  KILN_RETURN_IF_ERROR(prepared_->Run(full, &outputs, options));
  return outputs;
}

Result<std::vector<Tensor>> ConcreteFunction::Call(std::span<const Arg> args,
                                                   const exec::RunOptions& options) const {
  if (args.size() != arguments_.size()) {
    return InvalidArgument("'", function_name_, "' (", name_, ") takes ", arguments_.size(),
                           " argument(s), got ", args.size());
  }
  std::vector<Tensor> tensors;
  for (size_t i = 0; i < args.size(); ++i) {
    const BoundArg& b = arguments_[i];
    const Arg& a = args[i];
    if (b.host) {
      if (!a.is_host() || !SameHost(*b.host, a.host())) {
        return InvalidArgument("'", function_name_, "' (", name_, "): host argument '", b.name,
                               "' was traced as ", HostValueString(*b.host), ", got ", a.ToString(),
                               "; a concrete function does not retrace");
      }
      continue;
    }
    if (!a.is_tensor()) {
      return InvalidArgument("'", function_name_, "' (", name_, "): argument '", b.name,
                             "' must be a tensor (", PrettySpec(b.spec), "), got ", a.ToString());
    }
    KILN_ASSIGN_OR_RETURN_CTX(Tensor t, a.value().tensor(), "argument '", b.name, "'");
    tensors.push_back(std::move(t));
  }
  return Call(std::span<const Tensor>(tensors), options);
}

std::string ConcreteFunction::SignatureString() const {
  std::string s = function_name_ + "(";
  bool first = true;
  size_t tensor_index = 0;
  for (const BoundArg& b : arguments_) {
    s += first ? "" : ", ";
    first = false;
    if (b.host) {
      s += b.name + "=" + HostValueString(*b.host);
    } else {
      const ArgSpec& a = inputs_[tensor_index++];
      s += a.name + ": " + a.ToString();
    }
  }
  s += ") -> ";
  if (outputs_.empty()) return s + "None";
  if (outputs_.size() == 1) return s + SpecString(outputs_[0]);
  s += "(";
  for (size_t i = 0; i < outputs_.size(); ++i) s += (i ? ", " : "") + SpecString(outputs_[i]);
  return s + ")";
}

std::string ConcreteFunction::PrettySignature() const {
  std::string s = function_name_ + "(";
  std::string args_section;
  for (size_t i = 0; i < arguments_.size(); ++i) {
    const BoundArg& b = arguments_[i];
    s += (i ? ", " : "");
    if (b.host) {
      s += b.name + "=" + HostValueString(*b.host);
    } else {
      s += b.name;
      args_section += "    " + b.name + ": " + PrettySpec(b.spec) + "\n";
    }
  }
  s += ")\n";
  if (!args_section.empty()) s += "  Args:\n" + args_section;
  s += "  Returns:\n";
  if (outputs_.empty()) return s + "    None\n";
  if (outputs_.size() == 1) return s + "    " + PrettySpec(outputs_[0]) + "\n";
  s += "    (";
  for (size_t i = 0; i < outputs_.size(); ++i)
    s += (i ? ", " : "") + ("<" + std::to_string(i + 1) + ">");
  s += ")\n";
  for (size_t i = 0; i < outputs_.size(); ++i) {
    s += "      <" + std::to_string(i + 1) + ">: " + PrettySpec(outputs_[i]) + "\n";
  }
  return s;
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
                             ", got ", GivenString(specs[i]));
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
      if (b.spec.dtype == DType::kInvalid || b.spec.dtype == DType::kResource ||
          b.spec.dtype == DType::kVariant) {
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
    } catch (const std::exception& e) {
      result.emplace(Internal("the body threw: ", e.what()));
    } catch (...) {
      result.emplace(Internal("the body threw a non-standard exception"));
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
      "__inference_" + SanitizeFunctionName(name_) + "_" + std::to_string(trace_index);
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
  std::optional<Result<Values>> result;
  const std::string context = "tracing '" + name_ + "'";
  for (int pass = 0; pass < 2; ++pass) {
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
      } catch (const std::exception& e) {
        result.emplace(Internal("the body threw: ", e.what()));
      } catch (...) {
        result.emplace(Internal("the body threw a non-standard exception"));
      }
      tracing_ = false;
    }
    KILN_RETURN_IF_ERROR_CTX(graph->status(), context);
    KILN_RETURN_IF_ERROR_CTX(result->status(), context);
    if (extras.variables_created == 0) break;
  }

  std::vector<TensorSpec> output_specs;
  KILN_ASSIGN_OR_RETURN_CTX(tensorflow::FunctionDef fdef,
                            graph->Finish(result->value(), &output_specs), context);

  auto concrete = std::unique_ptr<ConcreteFunction>(new ConcreteFunction());
  concrete->name_ = fname;
  concrete->function_name_ = name_;
  concrete->inputs_ = std::move(inputs);
  concrete->outputs_ = std::move(output_specs);
  concrete->arguments_ = std::move(key);
  concrete->host_callbacks_ = std::move(extras.host_callbacks);
  concrete->keep_alive_ = std::move(extras.keep_alive);
  for (const auto& state : graph->captures()) {
    concrete->captures_.push_back(internal::VariableAccess::Make(state));
  }
  concrete->library_ = std::make_unique<tensorflow::FunctionDefLibrary>();
  *concrete->library_->add_function() = std::move(fdef);
  // Branches, loop bodies and nested functions the graph calls.
  for (const auto& f : graph->library().function()) *concrete->library_->add_function() = f;

  std::vector<TensorSpec> arg_specs;
  for (const ArgSpec& a : concrete->inputs_) arg_specs.push_back(a.spec());
  for (size_t i = 0; i < concrete->captures_.size(); ++i) arg_specs.push_back(ResourceSpec());
  concrete->exec_library_ = std::make_unique<exec::FunctionLibrary>(*concrete->library_);
  KILN_ASSIGN_OR_RETURN_CTX(concrete->prepared_,
                            exec::PreparedFunction::Prepare(concrete->function_def(),
                                                            *concrete->exec_library_, arg_specs),
                            context, ": preparing the traced graph");
  concretes_.push_back(std::move(concrete));
  log_.push_back(TraceRecord{trace_index, fname, std::move(reasons)});
  MaybeWarn();
  return concretes_.back().get();
}

}  // namespace kiln::trace
