// HostCallback: an EagerPyFunc node bound to a callback registered in this process.
#include "kiln/trace/host_callback.h"

#include <string>

#include "graph.h"
#include "kiln/exec/host_callback.h"
#include "kiln/trace/op_builder.h"
#include "trace_extras.h"

namespace kiln::trace {

Result<Values> HostCallback(std::string_view name, HostCallbackFn fn, const Values& inputs,
                            const std::vector<DType>& output_dtypes) {
  KILN_RETURN_IF_ERROR_CTX(FirstError(inputs), "host callback '", name, "'");
  if (!IsTracing()) {
    std::vector<Tensor> in;
    for (const Value& v : inputs) {
      KILN_ASSIGN_OR_RETURN(Tensor t, v.tensor());
      in.push_back(std::move(t));
    }
    std::vector<Tensor> out;
    KILN_RETURN_IF_ERROR_CTX(fn(in, &out), "host callback '", name, "'");
    if (out.size() != output_dtypes.size()) {
      return InvalidArgument("host callback '", name, "' returned ", out.size(),
                             " tensor(s), expected ", output_dtypes.size());
    }
    Values values;
    for (size_t i = 0; i < out.size(); ++i) {
      if (!out[i].IsInitialized() || out[i].dtype() != output_dtypes[i]) {
        return InvalidArgument("host callback '", name, "' output ", i, ": expected dtype ",
                               DTypeShortName(output_dtypes[i]));
      }
      values.emplace_back(std::move(out[i]));
    }
    return values;
  }
  std::shared_ptr<const exec::HostCallbackEntry> entry =
      exec::RegisterHostCallback(std::string(name), std::move(fn));
  // The concrete function keeps the registration alive and remembers that it cannot be saved.
  if (internal::TraceExtras* extras = internal::CurrentTraceExtras()) {
    extras->host_callbacks.emplace_back(name);
    extras->keep_alive.push_back(entry);
  }
  std::vector<DType> tin;
  for (const Value& v : inputs) tin.push_back(v.dtype());
  Values out = OpBuilder("EagerPyFunc")
                   .Inputs(inputs)
                   .Attr("token", entry->token)
                   .Attr("Tin", std::span<const DType>(tin))
                   .Attr("Tout", std::span<const DType>(output_dtypes))
                   .Build();
  KILN_RETURN_IF_ERROR_CTX(FirstError(out), "host callback '", name, "'");
  return out;
}

}  // namespace kiln::trace
