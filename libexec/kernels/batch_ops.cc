// TF Serving's older in-graph batching ops, for one caller at a time: Batch, Unbatch and
// UnbatchGrad (batch_ops.batch; BatchFunction, the newer form, is inlined as a call: see
// kiln/exec/function_call.h). In TensorFlow, Batch queues concurrent session runs and one of
// them (the leader) gets the concatenated batch while the others get empty tensors; Unbatch
// gives each caller its rows back by the id Batch handed it. Batching concurrent requests is the
// server's job here (--enable_batching), so every call leads a batch of itself:
//   Batch(in...)              -> (in... unchanged, batch_index [[0, 0, rows]], id 0)
//   Unbatch(t, batch_index, id)          -> the rows [start, end) of t in id's row of batch_index
//   UnbatchGrad(x, batch_index, grad, id) -> grad, when batch_index holds id alone
// which is what TF computes for a caller whose batch holds only its own request.
// The CPU kernels are in kernels/cpu/batch_ops.cc.
#include <string>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

// ---- Batch ---------------------------------------------------------------------------------

Status PrepareBatch(PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, std::vector<DType> types, ctx.attrs.GetTypeList("T"));
  if (types.empty()) return ctx.Error("attr 'T' must name at least one tensor");
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(static_cast<int>(types.size())));
  for (size_t i = 0; i < types.size(); ++i) {
    KILN_RETURN_IF_ERROR(
        ExpectInputDType(ctx, static_cast<int>(i), internal::StrCat("in_tensors:", i), types[i]));
    const PartialShape& s = ctx.inputs[i].shape;
    if (!s.unknown_rank() && s.rank() == 0)
      return ctx.Error("in_tensors:", i, " must be at least 1-D (rows to batch), got a scalar");
  }
  ctx.outputs.assign(ctx.inputs.begin(), ctx.inputs.end());
  ctx.outputs.push_back(TensorSpec{DType::kInt64, PartialShape{1, 3}});
  ctx.outputs.push_back(TensorSpec{DType::kInt64, PartialShape::Scalar()});
  return OkStatus();
}

// ---- Unbatch, UnbatchGrad ------------------------------------------------------------------

// Checks batch_index ([k, 3] int64 rows of id, start, end) and id (an int64 scalar) at prepare.
Status ExpectBatchIndex(PrepareContext& ctx, int index_input, int id_input) {
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, index_input, "batch_index", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, index_input, "batch_index", 2));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, id_input, "id", DType::kInt64));
  return OkStatus();
}

Status PrepareUnbatch(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ValueDType(ctx, 0, "batched_tensor"));
  KILN_RETURN_IF_ERROR(ExpectBatchIndex(ctx, 1, 2));
  const PartialShape& in = ctx.inputs[0].shape;
  PartialShape out = in;
  if (!in.unknown_rank()) {
    if (in.rank() == 0) return ctx.Error("batched_tensor must be at least 1-D, got a scalar");
    std::vector<int64_t> dims(in.dims().begin(), in.dims().end());
    dims[0] = -1;
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

Status PrepareUnbatchGrad(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  KILN_PREPARE_ASSIGN(ctx, DType t, ValueDType(ctx, 0, "original_input"));
  KILN_RETURN_IF_ERROR(ExpectBatchIndex(ctx, 1, 3));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "grad", t));
  ctx.outputs = {TensorSpec{t, ctx.inputs[2].shape}};
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"Batch", "batched_tensors*T,batch_index,id", kOpNone, PrepareBatch},
    {"Unbatch", "unbatched_tensor", kOpFreshOutputs, PrepareUnbatch},
    {"UnbatchGrad", "batched_grad", kOpNone, PrepareUnbatchGrad},
};

}  // namespace

std::span<const OpDefinition> BatchOpDefs() { return kDefs; }

}  // namespace kiln::exec
