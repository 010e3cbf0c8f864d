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
    for (const auto& a : parts_.inputs) known |= a.key == key;
    if (!known)
      return InvalidArgument("signature '", parts_.name, "' has no input named '", key,
                             "'; expected inputs: ", KeyList(parts_.inputs));
  }
  std::vector<Tensor> flat;
  flat.reserve(parts_.inputs.size());
  for (const auto& a : parts_.inputs) {
    auto it = inputs.find(a.key);
    if (it == inputs.end())
      return InvalidArgument("signature '", parts_.name, "': missing input '", a.key,
                             "' (expected inputs: ", KeyList(parts_.inputs), ")");
    flat.push_back(it->second);
  }
  std::vector<Tensor> outs;
  KILN_RETURN_IF_ERROR(RunFlat(flat, &outs, options));
  std::map<std::string, Tensor> result;
  for (size_t i = 0; i < parts_.outputs.size(); ++i)
    result.emplace(parts_.outputs[i].key, std::move(outs[i]));
  return result;
}

Status Signature::RunFlat(std::span<const Tensor> inputs, std::vector<Tensor>* outputs,
                          const RunOptions& options) const {
  outputs->resize(parts_.outputs.size());
  return RunInto(inputs, *outputs, options);
}

Status Signature::RunInto(std::span<const Tensor> inputs, std::span<Tensor> outputs,
                          const RunOptions& options) const {
  if (inputs.size() != parts_.inputs.size())
    return InvalidArgument("signature '", parts_.name, "' takes ", parts_.inputs.size(),
                           " inputs (", KeyList(parts_.inputs), "), got ", inputs.size());
  if (outputs.size() != parts_.outputs.size())
    return InvalidArgument("signature '", parts_.name, "' has ", parts_.outputs.size(),
                           " outputs; the caller gave room for ", outputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSpec& spec = parts_.inputs[i].spec;
    Status s = CheckTensor(
        spec.dtype, parts_.fed_shapes.empty() ? spec.shape : parts_.fed_shapes[i], inputs[i]);
    if (!s.ok())
      return s.WithContext(
          internal::StrCat("signature '", parts_.name, "' input '", parts_.inputs[i].key, "'"));
  }
  RunOptions run_options = options;
  if (run_options.threads == nullptr) run_options.threads = threads_;
  Status s;
  if (args_in_input_order_ && outputs_in_ret_order_) {
    // The common case: no reordering, so nothing is copied or allocated here.
    s = parts_.function->Run(inputs, parts_.captures, outputs, run_options);
  } else {
    std::vector<Tensor> args(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) args[parts_.input_to_arg[i]] = inputs[i];
    std::vector<Tensor> rets(outputs.size());
    s = parts_.function->Run(args, parts_.captures, rets, run_options);
    for (size_t i = 0; s.ok() && i < outputs.size(); ++i)
      outputs[i] = std::move(rets[parts_.output_from_ret[i]]);
  }
  if (!s.ok()) return s.WithContext(internal::StrCat("signature '", parts_.name, "'"));
  return OkStatus();
}

Result<Signature> Signature::Make(Parts parts, const ThreadPool* threads) {
  const std::string where = "signature '" + parts.name + "'";
  if (parts.function == nullptr) return InvalidArgument(where, ": no function");
  const size_t n_in = parts.inputs.size();
  const size_t n_out = parts.outputs.size();
  if (parts.input_to_arg.size() != n_in || parts.output_from_ret.size() != n_out ||
      (!parts.fed_shapes.empty() && parts.fed_shapes.size() != n_in))
    return InvalidArgument(where, ": ", parts.input_to_arg.size(), " input_to_arg and ",
                           parts.fed_shapes.size(), " fed_shapes for ", n_in, " inputs, ",
                           parts.output_from_ret.size(), " output_from_ret for ", n_out,
                           " outputs");
  const PreparedFunction& fn = *parts.function;
  if (fn.arg_specs().size() != n_in + parts.captures.size() || fn.output_specs().size() != n_out)
    return InvalidArgument(where, ": ", n_in, " inputs, ", parts.captures.size(), " captures and ",
                           n_out, " outputs; function '", fn.name(), "' takes ",
                           fn.arg_specs().size(), " arguments and has ", fn.output_specs().size(),
                           " outputs");
  for (int a : parts.input_to_arg)
    if (a < 0 || static_cast<size_t>(a) >= n_in)
      return InvalidArgument(where, ": input_to_arg ", a, " is out of range");
  for (int r : parts.output_from_ret)
    if (r < 0 || static_cast<size_t>(r) >= n_out)
      return InvalidArgument(where, ": output_from_ret ", r, " is out of range");
  return Signature(std::move(parts), threads);
}

Signature::Signature(Parts parts, const ThreadPool* threads)
    : parts_(std::move(parts)), threads_(threads) {
  args_in_input_order_ = true;
  for (size_t i = 0; i < parts_.input_to_arg.size(); ++i)
    args_in_input_order_ &= parts_.input_to_arg[i] == static_cast<int>(i);
  outputs_in_ret_order_ = true;
  for (size_t i = 0; i < parts_.output_from_ret.size(); ++i)
    outputs_in_ret_order_ &= parts_.output_from_ret[i] == static_cast<int>(i);
}

Result<RestoredFunction> RestoredFunction::Make(Parts parts, const ThreadPool* threads) {
  for (const Concrete& c : parts.concretes) {
    const std::string where =
        "restored function '" + parts.name + "', concrete function '" + c.function_name + "'";
    if (c.function == nullptr) return InvalidArgument(where, ": no function");
    if (c.arg_names.size() != c.arg_specs.size() ||
        c.function->arg_specs().size() != c.arg_specs.size() + c.captures.size())
      return InvalidArgument(where, ": ", c.arg_names.size(), " argument names, ",
                             c.arg_specs.size(), " argument specs and ", c.captures.size(),
                             " captures; its function takes ", c.function->arg_specs().size(),
                             " arguments");
  }
  return RestoredFunction(std::move(parts), threads);
}

RestoredFunction::RestoredFunction(Parts parts, const ThreadPool* threads)
    : parts_(std::move(parts)), threads_(threads) {}

Result<std::vector<Tensor>> RestoredFunction::Call(std::span<const Tensor> args,
                                                   const RunOptions& options) const {
  for (const auto& c : parts_.concretes) {
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
                             "restored function '", parts_.name, "'");
    return outs;
  }
  std::string given = "(";
  for (size_t i = 0; i < args.size(); ++i)
    given += (i ? ", " : "") + DTypeShortName(args[i].dtype()) + " " + args[i].shape().ToString();
  given += ")";
  std::string options_text;
  for (const auto& c : parts_.concretes) {
    options_text += "\n  (";
    for (size_t i = 0; i < c.arg_specs.size(); ++i)
      options_text += (i ? ", " : "") + c.arg_names[i] + ": " + c.arg_specs[i].ToString();
    options_text += ")";
  }
  return InvalidArgument("restored function '", parts_.name, "' cannot be called with ", given,
                         "; it accepts:", options_text.empty() ? " nothing" : options_text);
}

}  // namespace kiln::exec
