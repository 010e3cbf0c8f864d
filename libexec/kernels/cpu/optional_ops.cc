// The CPU kernels of the Optional ops in kernels/optional_ops.cc.
#include "kernels/optional_ops.h"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

Status ComputeFromValue(const KernelContext& ctx) {
  std::vector<Tensor> values;
  values.reserve(static_cast<size_t>(ctx.num_inputs()));
  for (int i = 0; i < ctx.num_inputs(); ++i) values.push_back(ctx.input(i));
  ctx.SetOutput(0, OptionalValue::Wrap(std::make_shared<const OptionalValue>(std::move(values))));
  return OkStatus();
}

Status ComputeNone(const KernelContext& ctx) {
  ctx.SetOutput(0, OptionalValue::Wrap(std::make_shared<const OptionalValue>(std::nullopt)));
  return OkStatus();
}

Status ComputeHasValue(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN_CTX(const OptionalValue* opt, OptionalValue::From(ctx.input(0), "optional"),
                            "node '", ctx.node_name(), "'");
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape()));
  out->scalar<bool>() = opt->has_value();
  return OkStatus();
}

Status ComputeGetValue(const KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN_CTX(const OptionalValue* opt, OptionalValue::From(ctx.input(0), "optional"),
                            "node '", ctx.node_name(), "'");
  // TF's message for an empty optional.
  if (!opt->has_value()) return ctx.Error("The optional does not have a value");
  if (static_cast<int>(opt->values().size()) != ctx.num_outputs())
    return ctx.Error("the optional holds ", opt->values().size(), " tensors; ", ctx.num_outputs(),
                     " expected");
  for (int i = 0; i < ctx.num_outputs(); ++i) ctx.SetOutput(i, opt->values()[i]);
  return OkStatus();
}

constexpr KernelEntry kCpu[] = {
    {"OptionalFromValue", ComputeFromValue},
    {"OptionalNone", ComputeNone},
    {"OptionalHasValue", ComputeHasValue},
    {"OptionalGetValue", ComputeGetValue},
};

}  // namespace

std::span<const KernelEntry> OptionalCpuKernels() { return kCpu; }

}  // namespace kiln::exec
