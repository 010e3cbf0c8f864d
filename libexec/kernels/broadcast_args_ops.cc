// Shape arithmetic of broadcasting: BroadcastArgs (the broadcast shape of two shapes) and
// BroadcastGradientArgs (the dims each side's gradient is summed over). Both take shape
// vectors; when these are known at prepare time the outputs are constants, so gradient graphs
// of fixed-shape models fold away. The CPU kernels are in kernels/cpu/broadcast_args_ops.cc.
#include "kernels/broadcast_args_ops.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/array_util.h"

namespace kiln::exec {
namespace {

using broadcast_args::Broadcast;
using broadcast_args::Outputs;
using broadcast_args::WriteVector;

Status PrepareBroadcastArgs(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_ASSIGN_OR_RETURN(DType t, IndexInputDType(ctx, 0, "s0", "T"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "s1", t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "s0", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "s1", 1));
  const bool args = ctx.op == "BroadcastArgs";
  PartialShape out_shape{-1};
  const int64_t n0 = KnownLength(ctx.inputs[0].shape), n1 = KnownLength(ctx.inputs[1].shape);
  if (args && n0 >= 0 && n1 >= 0) out_shape = PartialShape{std::max(n0, n1)};
  ctx.outputs.assign(args ? 1 : 2, TensorSpec{t, out_shape});
  const Tensor* s0 = ConstantInput(ctx, 0);
  const Tensor* s1 = ConstantInput(ctx, 1);
  if (s0 != nullptr && s1 != nullptr) {
    auto r = Broadcast(IndexValues(*s0), IndexValues(*s1));
    if (!r.ok()) return ctx.Error(r.status().message());
    ctx.constant_outputs.clear();
    for (const std::vector<int64_t>& v : Outputs(args, *r)) {
      Tensor value(t, Shape{static_cast<int64_t>(v.size())});
      Status s = WriteVector(v, &value);
      if (!s.ok()) return ctx.Error(s.message());
      ctx.constant_outputs.push_back(std::move(value));
    }
  }
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"BroadcastArgs", "r0", kOpFreshOutputs, PrepareBroadcastArgs},
    {"BroadcastGradientArgs", "r0,r1", kOpFreshOutputs, PrepareBroadcastArgs},
};

}  // namespace

std::span<const OpDefinition> BroadcastArgsOpDefs() { return kDefs; }

}  // namespace kiln::exec
