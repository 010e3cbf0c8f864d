// Gathering slices by index: Gather (v1: rows of params) and GatherNd (index vectors into the
// leading dims of params). The CPU kernels are in kernels/cpu/gather_ops.cc.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/array_util.h"

namespace kiln::exec {
namespace {

// ---- Gather (v1) -------------------------------------------------------------------------------

Status PrepareGatherV1(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "params", "Tparams"));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 1, "indices", "Tindices").status());
  KILN_PREPARE_ASSIGN(ctx, bool validate, ctx.attrs.GetBool("validate_indices", true));
  (void)validate;  // deprecated in TF: indices are always validated on the CPU
  const PartialShape& params = ctx.inputs[0].shape;
  const PartialShape& indices = ctx.inputs[1].shape;
  if (!params.unknown_rank() && params.rank() == 0) {
    return ctx.Error("params must be at least 1 dimensional");
  }
  PartialShape out;
  if (!params.unknown_rank() && !indices.unknown_rank()) {
    std::vector<int64_t> dims(indices.dims().begin(), indices.dims().end());
    dims.insert(dims.end(), params.dims().begin() + 1, params.dims().end());
    if (dims.size() > static_cast<size_t>(kMaxRank)) {
      return ctx.Error("result would have rank ", dims.size(), "; at most ", kMaxRank,
                       " is supported");
    }
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

// ---- GatherNd ----------------------------------------------------------------------------------

// bad_indices_policy: "" and "DEFAULT" mean ERROR on the CPU; IGNORE gives zeros.
Result<bool> IgnoreBadIndices(const PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, std::string policy, ctx.attrs.GetString("bad_indices_policy", ""));
  if (policy.empty() || policy == "DEFAULT" || policy == "ERROR") return false;
  if (policy == "IGNORE") return true;
  return ctx.Error(
      "attr 'bad_indices_policy' must be \"\", \"DEFAULT\", \"ERROR\" or "
      "\"IGNORE\", got \"",
      policy, "\"");
}

using IgnoreState = TypedOpState<bool>;

Status PrepareGatherNd(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "params", "Tparams"));
  KILN_PREPARE_ASSIGN(ctx, DType ti, ctx.attrs.GetType("Tindices"));
  KILN_RETURN_IF_ERROR(
      ExpectAttrDTypeIn(ctx, "Tindices", ti, {DType::kInt16, DType::kInt32, DType::kInt64}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "indices", ti));
  KILN_ASSIGN_OR_RETURN(bool ignore, IgnoreBadIndices(ctx));
  const PartialShape& params = ctx.inputs[0].shape;
  const PartialShape& indices = ctx.inputs[1].shape;
  if (!indices.unknown_rank() && indices.rank() == 0) {
    return ctx.Error("input 'indices' must have rank at least 1, got a scalar");
  }
  PartialShape out;
  if (!params.unknown_rank() && !indices.unknown_rank() && indices.dim(indices.rank() - 1) >= 0) {
    const int64_t k = indices.dim(indices.rank() - 1);
    if (k > params.rank()) {
      return ctx.Error("index innermost dimension length must be <= params rank; saw: ", k, " vs. ",
                       params.rank());
    }
    std::vector<int64_t> dims(indices.dims().begin(), indices.dims().end() - 1);
    dims.insert(dims.end(), params.dims().begin() + k, params.dims().end());
    if (dims.size() > static_cast<size_t>(kMaxRank)) {
      return ctx.Error("result would have rank ", dims.size());
    }
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::make_shared<IgnoreState>(ignore);
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"Gather", "output", kOpFreshOutputs, PrepareGatherV1},
    {"GatherNd", "output", kOpFreshOutputs, PrepareGatherNd},
};

}  // namespace

std::span<const OpDefinition> GatherOpDefs() { return kDefs; }

}  // namespace kiln::exec
