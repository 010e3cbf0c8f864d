// Checkpoint I/O: RestoreV2 reads whole tensors from a tensor bundle (what a SavedModel's
// restore function runs to load variable values).
// The CPU kernels are in kernels/cpu/io_ops.cc.
#include "kernels/io_ops.h"

#include <memory>
#include <utility>
#include <vector>

#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using io::RestoreState;

// ---- RestoreV2 -------------------------------------------------------------------------------
// inputs: prefix (string scalar), tensor_names (string[N]), shape_and_slices (string[N]);
// attr dtypes: list(type) of length N; outputs: tensors (N).

Status PrepareRestoreV2(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, std::vector<DType> dtypes, ctx.attrs.GetTypeList("dtypes"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "prefix", DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "tensor_names", DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "shape_and_slices", DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "prefix", 0));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "tensor_names", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "shape_and_slices", 1));
  const int64_t n = static_cast<int64_t>(dtypes.size());
  for (int i = 1; i <= 2; ++i) {
    const PartialShape& s = ctx.inputs[i].shape;
    if (s.rank() == 1 && s.dim(0) >= 0 && s.dim(0) != n) {
      return ctx.Error("input '", i == 1 ? "tensor_names" : "shape_and_slices", "' has ", s.dim(0),
                       " elements but attr 'dtypes' lists ", n, " types");
    }
  }
  for (DType t : dtypes) {
    if (!DTypeIsPod(t) && t != DType::kString) {
      return ctx.Error("attr 'dtypes': cannot restore a ", DTypeShortName(t), " tensor");
    }
  }
  ctx.outputs.clear();
  for (DType t : dtypes) ctx.outputs.push_back(TensorSpec{t, PartialShape::UnknownRank()});
  ctx.state = std::make_shared<RestoreState>(std::move(dtypes));
  return OkStatus();
}

// ---- ReadFile ------------------------------------------------------------------------------
// input: filename (string scalar); output: contents (string scalar). Assets read their files
// with it (TF's AssetModule fixture).

Status PrepareReadFile(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "filename", DType::kString));
  ctx.outputs = {TensorSpec{DType::kString, PartialShape::Scalar()}};
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"RestoreV2", "tensors", kOpStateful, PrepareRestoreV2},
    {"ReadFile", "contents", kOpNone, PrepareReadFile},
};

}  // namespace

std::span<const OpDefinition> IoOpDefs() { return kDefs; }

}  // namespace kiln::exec
