// Helpers of the functional control-flow ops (If/While in control_flow_ops.cc, Case in
// case_ops.cc): preparing the function a func attr names, merging branch output specs, and
// running a prepared function from a kernel.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/exec/executor.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::control_flow {

using PreparedPtr = std::shared_ptr<const PreparedFunction>;

// The most specific shape that both `a` and `b` are compatible with: equal dims stay, other
// dims become unknown, and a rank mismatch gives unknown rank.
PartialShape MostSpecificCompatibleShape(const PartialShape& a, const PartialShape& b);
// TF's truth value of a tensor: a scalar is true when non-zero (non-empty for strings), any
// other tensor when it has elements.
Result<bool> ToBool(const Tensor& t);
// Prepares library function `name` (named by attr `attr`, for errors) for `specs`; refuses
// nesting deeper than 64 (a function that reaches itself).
Result<PreparedPtr> PrepareNamedFunction(const PrepareContext& ctx, std::string_view attr,
                                         const std::string& name,
                                         std::span<const TensorSpec> specs);
// Looks `attr` (a func attr) up in the library and prepares it for `specs`.
Result<PreparedPtr> PrepareFunctionAttr(const PrepareContext& ctx, std::string_view attr,
                                        std::span<const TensorSpec> specs);
// Checks optional list(type) attr `attr` against `specs`.
Status CheckTypeListAttr(const PrepareContext& ctx, std::string_view attr,
                         std::span<const TensorSpec> specs, std::string_view what);
// Refines `specs` with the node's output_shapes attr where it is given and compatible.
Status ApplyOutputShapes(const PrepareContext& ctx, std::vector<TensorSpec>* specs);
// Runs `fn` on `args` with the caller's print sink and threads, naming the node on failure.
Status RunFunction(const KernelContext& ctx, const PreparedFunction& fn,
                   std::span<const Tensor> args, std::vector<Tensor>* outs);

}  // namespace kiln::exec::control_flow
