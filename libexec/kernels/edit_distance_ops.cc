// EditDistance (tf.edit_distance): the Levenshtein distance between the sequences of two sparse
// tensors, one sequence per index of all but the last dimension.
// The CPU kernel is in kernels/cpu/edit_distance_ops.cc.
#include "kernels/edit_distance_ops.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/sparse_util.h"

namespace kiln::exec {
namespace {

using edit_distance::EditDistanceState;
using edit_distance::EditTypes;

Status PrepareEditDistance(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(6));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, EditTypes::kDTypes));
  auto state = std::make_shared<EditDistanceState>();
  KILN_PREPARE_ASSIGN(ctx, state->normalize, ctx.attrs.GetBool("normalize", true));
  KILN_RETURN_IF_ERROR(ExpectSparseInputs(ctx, 0, t, "hypothesis_"));
  KILN_RETURN_IF_ERROR(ExpectSparseInputs(ctx, 3, t, "truth_"));
  PartialShape out = PartialShape::UnknownRank();
  const Tensor* hs = ConstantInput(ctx, 2);
  const Tensor* ts = ConstantInput(ctx, 5);
  const int64_t rank = std::max(KnownLength(ctx.inputs[2].shape), KnownLength(ctx.inputs[5].shape));
  if (hs != nullptr && ts != nullptr && hs->NumElements() == ts->NumElements() &&
      ts->NumElements() >= 2) {
    std::vector<int64_t> dims;
    for (int64_t d = 0; d + 1 < ts->NumElements(); ++d)
      dims.push_back(std::max(hs->data<int64_t>()[d], ts->data<int64_t>()[d]));
    KILN_PREPARE_ASSIGN(ctx, out, PartialShape::FromDims(dims));
  } else if (rank >= 2) {
    out = UnknownDims(static_cast<int>(rank - 1));
  }
  ctx.outputs = {TensorSpec{DType::kFloat, out}};
  ctx.state = std::move(state);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"EditDistance", "output", kOpFreshOutputs, PrepareEditDistance},
};

}  // namespace

std::span<const OpDefinition> EditDistanceOpDefs() { return kDefs; }

}  // namespace kiln::exec
