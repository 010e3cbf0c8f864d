// Reaching variables from kernels: the variable behind a resource-handle input, and the
// prepare-time checks the update ops share.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "kernels/array_util.h"
#include "kiln/exec/resources.h"

namespace kiln::exec {

// The variable a resource tensor points at; errors name the input.
inline Result<VariableResource*> VariableFromHandle(const Tensor& handle, std::string_view input) {
  if (handle.dtype() != DType::kResource || handle.NumElements() != 1)
    return InvalidArgument("input '", input, "': expected a resource handle scalar, got ",
                           handle.DebugString());
  const auto& r = handle.scalar<std::shared_ptr<ResourceBase>>();
  if (r == nullptr) return InvalidArgument("input '", input, "': the handle is null");
  VariableResource* var = AsVariable(r.get());
  if (var == nullptr)
    return InvalidArgument("input '", input, "': ", r->DebugString(), " is not a variable");
  return var;
}

// The variable behind input i when its handle is known at prepare time, else nullptr.
inline VariableResource* ConstantVariableInput(const PrepareContext& ctx, int i) {
  const Tensor* h = ConstantInput(ctx, i);
  if (h == nullptr) return nullptr;
  auto v = VariableFromHandle(*h, "");
  return v.ok() ? *v : nullptr;
}

inline Status ExpectVariableDType(const VariableResource& var, DType want) {
  if (var.dtype() == want) return OkStatus();
  return InvalidArgument("variable '", var.name(), "' has dtype ", DTypeShortName(var.dtype()),
                         ", the node uses ", DTypeShortName(want));
}

}  // namespace kiln::exec
