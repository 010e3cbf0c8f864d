// ConcreteFunction: one traced graph bound to its argument specs; calling it, printing its
// signature.
#include "kiln/trace/concrete_function.h"

#include "function_key_util.h"
#include "tensorflow/framework.pb.h"

namespace kiln::trace {

using internal::GivenSpecText;
using internal::PrettySpecText;

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
  if (has_initializer_.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(initializer_mu_);
    if (initializer_ != nullptr) {
      Result<std::vector<Tensor>> outputs = initializer_->Call(args, options);
      if (outputs.ok()) {
        initializer_.reset();
        has_initializer_.store(false, std::memory_order_release);
      }
      return outputs;
    }
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
                             GivenSpecText({t.dtype(), PartialShape(t.shape())}),
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
      if (!a.is_host() || !internal::SameHost(*b.host, a.host())) {
        return InvalidArgument("'", function_name_, "' (", name_, "): host argument '", b.name,
                               "' was traced as ", HostValueString(*b.host), ", got ", a.ToString(),
                               "; a concrete function does not retrace");
      }
      continue;
    }
    if (!a.is_tensor()) {
      return InvalidArgument("'", function_name_, "' (", name_, "): argument '", b.name,
                             "' must be a tensor (", PrettySpecText(b.spec), "), got ",
                             a.ToString());
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
  if (outputs_.size() == 1) return s + outputs_[0].ToString();
  s += "(";
  for (size_t i = 0; i < outputs_.size(); ++i) s += (i ? ", " : "") + outputs_[i].ToString();
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
      args_section += "    " + b.name + ": " + PrettySpecText(b.spec) + "\n";
    }
  }
  s += ")\n";
  if (!args_section.empty()) s += "  Args:\n" + args_section;
  s += "  Returns:\n";
  if (outputs_.empty()) return s + "    None\n";
  if (outputs_.size() == 1) return s + "    " + PrettySpecText(outputs_[0]) + "\n";
  s += "    (";
  for (size_t i = 0; i < outputs_.size(); ++i)
    s += (i ? ", " : "") + ("<" + std::to_string(i + 1) + ">");
  s += ")\n";
  for (size_t i = 0; i < outputs_.size(); ++i) {
    s += "      <" + std::to_string(i + 1) + ">: " + PrettySpecText(outputs_[i]) + "\n";
  }
  return s;
}

}  // namespace kiln::trace
