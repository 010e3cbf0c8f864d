// The CPU kernels of Batch, Unbatch and UnbatchGrad (kernels/batch_ops.cc): every call leads a
// batch of itself, which holds only its own rows.
#include <cstdint>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

// ---- Batch ---------------------------------------------------------------------------------

Status ComputeBatch(const KernelContext& ctx) {
  const int n = ctx.num_inputs();
  const int64_t rows = ctx.input(0).rank() > 0 ? ctx.input(0).dim(0) : -1;
  for (int i = 0; i < n; ++i) {
    const Tensor& t = ctx.input(i);
    if (t.rank() == 0 || t.dim(0) != rows)
      return ctx.Error(
          "every in_tensor must have the same first dimension (rows); in_tensors:0 "
          "has shape ",
          ctx.input(0).shape().ToString(), ", in_tensors:", i, " ", t.shape().ToString());
    ctx.SetOutput(i, t);
  }
  KILN_ASSIGN_OR_RETURN(Tensor * index, ctx.AllocateOutput(n, Shape{1, 3}));
  index->data<int64_t>()[0] = 0;
  index->data<int64_t>()[1] = 0;
  index->data<int64_t>()[2] = rows;
  KILN_ASSIGN_OR_RETURN(Tensor * id, ctx.AllocateOutput(n + 1, Shape()));
  id->scalar<int64_t>() = 0;
  return OkStatus();
}

// ---- Unbatch, UnbatchGrad ------------------------------------------------------------------

// The [start, end) rows of `id` in batch_index, checked against `rows`.
Status FindRows(const KernelContext& ctx, const Tensor& index, const Tensor& id, int64_t rows,
                int64_t* start, int64_t* end, int64_t* entries) {
  if (index.rank() != 2 || index.dim(1) != 3)
    return ctx.Error("batch_index must have shape [batch, 3], got ", index.shape().ToString());
  if (id.NumElements() != 1)
    return ctx.Error("id must be a scalar, got shape ", id.shape().ToString());
  const int64_t want = id.data<int64_t>()[0];
  const int64_t* r = index.data<int64_t>();
  *entries = index.dim(0);
  for (int64_t i = 0; i < index.dim(0); ++i) {
    if (r[3 * i] != want) continue;
    *start = r[3 * i + 1];
    *end = r[3 * i + 2];
    if (*start < 0 || *end < *start || *end > rows)
      return ctx.Error("batch_index row ", i, " holds rows [", *start, ", ", *end,
                       ") of a batch of ", rows);
    return OkStatus();
  }
  return ctx.Error("id ", want, " is not in batch_index: this call did not join that batch");
}

Status ComputeUnbatch(const KernelContext& ctx) {
  const Tensor& batched = ctx.input(0);
  if (batched.rank() == 0) return ctx.Error("batched_tensor must be at least 1-D, got a scalar");
  int64_t start = 0, end = 0, entries = 0;
  KILN_RETURN_IF_ERROR(
      FindRows(ctx, ctx.input(1), ctx.input(2), batched.dim(0), &start, &end, &entries));
  Shape shape = batched.shape();
  shape.set_dim(0, end - start);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, shape));
  const int64_t row = batched.dim(0) == 0 ? 0 : batched.NumElements() / batched.dim(0);
  CopyElementRange(batched, start * row, out, 0, (end - start) * row);
  return OkStatus();
}

Status ComputeUnbatchGrad(const KernelContext& ctx) {
  const Tensor& grad = ctx.input(2);
  if (grad.rank() == 0) return ctx.Error("grad must be at least 1-D, got a scalar");
  int64_t start = 0, end = 0, entries = 0;
  KILN_RETURN_IF_ERROR(
      FindRows(ctx, ctx.input(1), ctx.input(3), grad.dim(0), &start, &end, &entries));
  if (entries != 1 || start != 0 || end != grad.dim(0))
    return Unimplemented(
        "UnbatchGrad of a batch that holds other callers' rows: batching across calls is the "
        "server's here (batch_index has ",
        entries, " entries)");
  ctx.SetOutput(0, grad);
  return OkStatus();
}

constexpr KernelEntry kCpu[] = {
    {"Batch", ComputeBatch},
    {"Unbatch", ComputeUnbatch},
    {"UnbatchGrad", ComputeUnbatchGrad},
};

}  // namespace

std::span<const KernelEntry> BatchCpuKernels() { return kCpu; }

}  // namespace kiln::exec
