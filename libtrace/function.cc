// Function: trace once per input signature, cache the concrete function, run it as a graph.
#include "kiln/trace/function.h"

#include <exception>
#include <optional>
#include <set>

#include "graph.h"

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

}  // namespace

std::string ArgSpec::ToString() const {
  return "TensorSpec(shape=" + shape.ToPythonString() + ", dtype=" + DTypeShortName(dtype) +
         ", name='" + name + "')";
}

// ---- ConcreteFunction ---------------------------------------------------------------------

ConcreteFunction::ConcreteFunction() = default;
ConcreteFunction::~ConcreteFunction() = default;

const tensorflow::FunctionDef& ConcreteFunction::function_def() const {
  return library_->function(0);
}

int ConcreteFunction::num_nodes() const { return function_def().node_def_size(); }

bool ConcreteFunction::is_stateful() const { return function_def().signature().is_stateful(); }

Result<std::vector<Tensor>> ConcreteFunction::Call(std::span<const Tensor> args,
                                                   const exec::RunOptions& options) const {
  if (args.size() != inputs_.size()) {
    return InvalidArgument("'", function_name_, "' (", name_, ") takes ", inputs_.size(),
                           " argument(s), got ", args.size());
  }
  std::vector<Tensor> full;
  full.reserve(args.size() + captures_.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const ArgSpec& want = inputs_[i];
    const Tensor& t = args[i];
    if (t.dtype() != want.dtype || !want.shape.IsCompatibleWith(t.shape())) {
      return InvalidArgument("'", function_name_, "': argument '", want.name, "': expected ",
                             want.ToString(), ", got ",
                             GivenString({t.dtype(), PartialShape(t.shape())}));
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

std::string ConcreteFunction::SignatureString() const {
  std::string s = function_name_ + "(";
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (i > 0) s += ", ";
    s += inputs_[i].name + ": " + inputs_[i].ToString();
  }
  s += ") -> ";
  if (outputs_.empty()) return s + "None";
  if (outputs_.size() == 1) return s + SpecString(outputs_[0]);
  s += "(";
  for (size_t i = 0; i < outputs_.size(); ++i) s += (i ? ", " : "") + SpecString(outputs_[i]);
  return s + ")";
}

// ---- Function -----------------------------------------------------------------------------

Function::Function(std::string name, InputSignature signature, Body body)
    : name_(std::move(name)), signature_(std::move(signature)), body_(std::move(body)) {}

Function::Function(std::string name, Body body) : name_(std::move(name)), body_(std::move(body)) {}

Function::~Function() = default;

int Function::trace_count() const {
  std::lock_guard lock(mu_);
  return trace_count_;
}

std::vector<const ConcreteFunction*> Function::concrete_functions() const {
  std::lock_guard lock(mu_);
  std::vector<const ConcreteFunction*> out;
  for (const auto& c : concretes_) out.push_back(c.get());
  return out;
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
    if (specs[i].dtype != sig[i].dtype || !sig[i].shape.IsCompatibleWith(specs[i].shape)) {
      return InvalidArgument("'", name_, "': argument '", sig[i].name, "': expected ",
                             sig[i].ToString(), ", got ", GivenString(specs[i]));
    }
  }
  return OkStatus();
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
  std::lock_guard lock(mu_);
  if (signature_) {
    KILN_RETURN_IF_ERROR(ValidateSignature(name_, *signature_));
    KILN_RETURN_IF_ERROR(CheckSignature(specs));
    if (!concretes_.empty()) return concretes_.front().get();
    return Trace(*signature_);
  }
  for (const auto& c : concretes_) {
    if (c->inputs_.size() != specs.size()) continue;
    bool fits = true;
    for (size_t i = 0; i < specs.size() && fits; ++i) {
      fits = c->inputs_[i].dtype == specs[i].dtype &&
             c->inputs_[i].shape.IsCompatibleWith(specs[i].shape);
    }
    if (fits) return c.get();
  }
  InputSignature inputs;
  for (size_t i = 0; i < specs.size(); ++i) {
    inputs.emplace_back("arg_" + std::to_string(i), specs[i].dtype, specs[i].shape);
  }
  KILN_RETURN_IF_ERROR(ValidateSignature(name_, inputs));
  return Trace(std::move(inputs));
}

Result<std::vector<Tensor>> Function::Call(std::span<const Tensor> args,
                                           const exec::RunOptions& options) {
  std::vector<TensorSpec> specs;
  specs.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].IsInitialized()) {
      return InvalidArgument("'", name_, "': argument ", i, " is an empty tensor");
    }
    specs.push_back(TensorSpec{args[i].dtype(), PartialShape(args[i].shape())});
  }
  KILN_ASSIGN_OR_RETURN(const ConcreteFunction* concrete, GetConcreteFunction(specs));
  return concrete->Call(args, options);
}

Result<const ConcreteFunction*> Function::Trace(std::vector<ArgSpec> inputs) {
  if (tracing_) {
    return FailedPrecondition("'", name_,
                              "' was called while it is being traced; recursion is not "
                              "supported");
  }
  const int trace_index = trace_count_++;
  const std::string fname =
      "__inference_" + SanitizeFunctionName(name_) + "_" + std::to_string(trace_index);
  auto graph =
      std::make_shared<internal::Graph>(fname, /*allow_variable_creation=*/trace_index == 0);

  std::optional<Result<Values>> result;
  {
    internal::Graph::Activation active(graph.get());
    tracing_ = true;
    Values args;
    for (const ArgSpec& a : inputs) args.push_back(graph->AddArg(a.name, a.spec()));
    try {
      result.emplace(body_(args));
    } catch (const std::exception& e) {
      result.emplace(Internal("the body threw: ", e.what()));
    } catch (...) {
      result.emplace(Internal("the body threw a non-standard exception"));
    }
    tracing_ = false;
  }
  const std::string context = "tracing '" + name_ + "'";
  KILN_RETURN_IF_ERROR_CTX(graph->status(), context);
  KILN_RETURN_IF_ERROR_CTX(result->status(), context);

  std::vector<TensorSpec> output_specs;
  KILN_ASSIGN_OR_RETURN_CTX(tensorflow::FunctionDef fdef,
                            graph->Finish(result->value(), &output_specs), context);

  auto concrete = std::unique_ptr<ConcreteFunction>(new ConcreteFunction());
  concrete->name_ = fname;
  concrete->function_name_ = name_;
  concrete->inputs_ = std::move(inputs);
  concrete->outputs_ = std::move(output_specs);
  for (const auto& state : graph->captures()) {
    concrete->captures_.push_back(internal::VariableAccess::Make(state));
  }
  concrete->library_ = std::make_unique<tensorflow::FunctionDefLibrary>();
  *concrete->library_->add_function() = std::move(fdef);

  std::vector<TensorSpec> arg_specs;
  for (const ArgSpec& a : concrete->inputs_) arg_specs.push_back(a.spec());
  for (size_t i = 0; i < concrete->captures_.size(); ++i) arg_specs.push_back(ResourceSpec());
  exec::FunctionLibrary library(*concrete->library_);
  KILN_ASSIGN_OR_RETURN_CTX(
      concrete->prepared_,
      exec::PreparedFunction::Prepare(concrete->function_def(), library, arg_specs), context,
      ": preparing the traced graph");
  concretes_.push_back(std::move(concrete));
  return concretes_.back().get();
}

}  // namespace kiln::trace
