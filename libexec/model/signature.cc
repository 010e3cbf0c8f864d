// Running signatures and restored functions: validate once at the boundary, then run the
// prepared schedule.
#include "kiln/exec/saved_model.h"

namespace kiln::exec {
namespace {

std::string KeyList(std::span<const SignatureArg> args) {
  std::string s;
  for (const auto& a : args) s += (s.empty() ? "'" : ", '") + a.key + "'";
  return s.empty() ? "none" : s;
}

// Errors get "signature 's' input 'k'" in front from the caller (built only on failure).
Status CheckTensor(DType dtype, const PartialShape& shape, const Tensor& t) {
  if (!t.IsInitialized()) return InvalidArgument("tensor is not initialized");
  if (t.dtype() != dtype)
    return InvalidArgument("expected dtype ", DTypeShortName(dtype), " (", DTypeEnumName(dtype),
                           "), got ", DTypeShortName(t.dtype()));
  if (!shape.IsCompatibleWith(t.shape()))
    return InvalidArgument("expected shape ", shape.ToPythonString(), ", got ",
                           t.shape().ToString(),
                           shape.rank() != t.rank() && shape.rank() >= 0
                               ? " (rank " + std::to_string(t.rank()) + " instead of " +
                                     std::to_string(shape.rank()) + ")"
                               : "");
  return OkStatus();
}

}  // namespace

Result<std::map<std::string, Tensor>> Signature::Run(const std::map<std::string, Tensor>& inputs,
                                                     const RunOptions& options) const {
  for (const auto& [key, t] : inputs) {
    bool known = false;
    for (const auto& a : inputs_) known |= a.key == key;
    if (!known)
      return InvalidArgument("signature '", name_, "' has no input named '", key,
                             "'; expected inputs: ", KeyList(inputs_));
  }
  std::vector<Tensor> flat;
  flat.reserve(inputs_.size());
  for (const auto& a : inputs_) {
    auto it = inputs.find(a.key);
    if (it == inputs.end())
      return InvalidArgument("signature '", name_, "': missing input '", a.key,
                             "' (expected inputs: ", KeyList(inputs_), ")");
    flat.push_back(it->second);
  }
  std::vector<Tensor> outs;
  KILN_RETURN_IF_ERROR(RunFlat(flat, &outs, options));
  std::map<std::string, Tensor> result;
  for (size_t i = 0; i < outputs_.size(); ++i) result.emplace(outputs_[i].key, std::move(outs[i]));
  return result;
}

Status Signature::RunFlat(std::span<const Tensor> inputs, std::vector<Tensor>* outputs,
                          const RunOptions& options) const {
  outputs->resize(outputs_.size());
  return RunInto(inputs, *outputs, options);
}

Status Signature::RunInto(std::span<const Tensor> inputs, std::span<Tensor> outputs,
                          const RunOptions& options) const {
  if (inputs.size() != inputs_.size())
    return InvalidArgument("signature '", name_, "' takes ", inputs_.size(), " inputs (",
                           KeyList(inputs_), "), got ", inputs.size());
  if (outputs.size() != outputs_.size())
    return InvalidArgument("signature '", name_, "' has ", outputs_.size(),
                           " outputs; the caller gave room for ", outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSpec& spec = inputs_[i].spec;
    Status s =
        CheckTensor(spec.dtype, fed_shapes_.empty() ? spec.shape : fed_shapes_[i], inputs[i]);
    if (!s.ok())
      return s.WithContext(
          internal::StrCat("signature '", name_, "' input '", inputs_[i].key, "'"));
  }
  RunOptions run_options = options;
  if (run_options.threads == nullptr) run_options.threads = threads_;
  Status s;
  if (args_in_input_order_ && outputs_in_ret_order_) {
    // The common case: no reordering, so nothing is copied or allocated here.
    s = function_->Run(inputs, captures_, outputs, run_options);
  } else {
    std::vector<Tensor> args(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) args[input_to_arg_[i]] = inputs[i];
    std::vector<Tensor> rets(outputs.size());
    s = function_->Run(args, captures_, rets, run_options);
    for (size_t i = 0; s.ok() && i < outputs.size(); ++i)
      outputs[i] = std::move(rets[output_from_ret_[i]]);
  }
  if (!s.ok()) return s.WithContext(internal::StrCat("signature '", name_, "'"));
  return OkStatus();
}

void Signature::Finish(const ThreadPool* threads) {
  args_in_input_order_ = true;
  for (size_t i = 0; i < input_to_arg_.size(); ++i)
    args_in_input_order_ &= input_to_arg_[i] == static_cast<int>(i);
  outputs_in_ret_order_ = true;
  for (size_t i = 0; i < output_from_ret_.size(); ++i)
    outputs_in_ret_order_ &= output_from_ret_[i] == static_cast<int>(i);
  threads_ = threads;
}

Result<std::vector<Tensor>> RestoredFunction::Call(std::span<const Tensor> args,
                                                   const RunOptions& options) const {
  for (const auto& c : concretes_) {
    if (c.arg_specs.size() != args.size()) continue;
    bool fits = true;
    for (size_t i = 0; i < args.size() && fits; ++i)
      fits = args[i].dtype() == c.arg_specs[i].dtype &&
             c.arg_specs[i].shape.IsCompatibleWith(args[i].shape());
    if (!fits) continue;
    std::vector<Tensor> outs(c.function->output_specs().size());
    RunOptions run_options = options;
    if (run_options.threads == nullptr) run_options.threads = threads_;
    KILN_RETURN_IF_ERROR_CTX(c.function->Run(args, c.captures, outs, run_options),
                             "restored function '", name_, "'");
    return outs;
  }
  std::string given = "(";
  for (size_t i = 0; i < args.size(); ++i)
    given += (i ? ", " : "") + DTypeShortName(args[i].dtype()) + " " + args[i].shape().ToString();
  given += ")";
  std::string options_text;
  for (const auto& c : concretes_) {
    options_text += "\n  (";
    for (size_t i = 0; i < c.arg_specs.size(); ++i)
      options_text += (i ? ", " : "") + c.arg_names[i] + ": " + c.arg_specs[i].ToString();
    options_text += ")";
  }
  return InvalidArgument("restored function '", name_, "' cannot be called with ", given,
                         "; it accepts:", options_text.empty() ? " nothing" : options_text);
}

}  // namespace kiln::exec
