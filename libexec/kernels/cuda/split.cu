// Split, SplitV and Unpack on the GPU: every piece is one 2-D copy (rows of the dims before
// the axis, each row the piece's part of the axis and everything after it).
#include <vector>

#include "kernels/array_util.h"
#include "kernels/cuda/launch.cuh"

namespace kiln::exec::cuda {
namespace {

// Writes output k = x's slab [begin, begin + size) along `axis`; with `drop`, the axis (of
// size 1 per piece) is left out of the output shape (Unpack).
Status CopyPieces(const KernelContext& ctx, const Tensor& x, int axis,
                  const std::vector<int64_t>& sizes, bool drop) {
  CudaDevice& dev = DeviceOf(ctx);
  KILN_RETURN_IF_ERROR(dev.Activate());
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  const size_t elem = DTypeSize(x.dtype());
  const size_t src_pitch = static_cast<size_t>(x.dim(axis) * inner) * elem;
  int64_t begin = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    Shape shape;
    for (int d = 0; d < x.rank(); ++d) {
      if (d != axis) {
        shape.AddDim(x.dim(d));
      } else if (!drop) {
        shape.AddDim(sizes[k]);
      }
    }
    KILN_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(static_cast<int>(k), shape));
    const size_t row = static_cast<size_t>(sizes[k] * inner) * elem;
    if (row > 0 && outer > 0) {
      const char* src = static_cast<const char*>(x.raw_data()) + begin * inner * elem;
      const cudaError_t err =
          cudaMemcpy2DAsync(y->raw_data(), row, src, src_pitch, row, static_cast<size_t>(outer),
                            cudaMemcpyDeviceToDevice, dev.stream());
      if (err != cudaSuccess) return Check(err, "split copy");
    }
    begin += sizes[k];
  }
  return OkStatus();
}

// The axis, canonical, or an error naming the node (CanonicalAxis's checks and message).
Result<int> Axis(const KernelContext& ctx, int64_t a, int rank) {
  Result<int> axis = CanonicalAxis(a, rank, "axis");
  if (!axis.ok()) return Wrap(ctx, axis.status());
  return *axis;
}

// Split: split_dim (input 0, host), value (input 1); num_split equal pieces.
Status ComputeSplit(const KernelContext& ctx) {
  const Tensor& x = ctx.input(1);
  KILN_ASSIGN_OR_RETURN(int axis, Axis(ctx, IndexAt(ctx.input(0), 0), x.rank()));
  const int n = ctx.num_outputs();
  if (x.dim(axis) % n != 0)
    return ctx.Error("dimension ", axis, " (size ", x.dim(axis), ") does not split into ", n);
  return CopyPieces(ctx, x, axis, std::vector<int64_t>(n, x.dim(axis) / n), false);
}

// SplitV: value (0), size_splits (1, host), split_dim (2, host); one size may be -1.
Status ComputeSplitV(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(int axis, Axis(ctx, IndexAt(ctx.input(2), 0), x.rank()));
  std::vector<int64_t> sizes = IndexValues(ctx.input(1));
  int64_t known = 0;
  int unknown = -1;
  for (size_t k = 0; k < sizes.size(); ++k) {
    if (sizes[k] == -1 && unknown < 0) {
      unknown = static_cast<int>(k);
    } else if (sizes[k] < 0) {
      return ctx.Error("size_splits has a negative size other than one -1");
    } else {
      known += sizes[k];
    }
  }
  if (unknown >= 0) sizes[unknown] = x.dim(axis) - known;
  if ((unknown >= 0 && sizes[unknown] < 0) || (unknown < 0 && known != x.dim(axis)))
    return ctx.Error("size_splits do not add up to dimension ", axis, " (size ", x.dim(axis), ")");
  if (static_cast<int>(sizes.size()) != ctx.num_outputs())
    return ctx.Error("size_splits has ", sizes.size(), " sizes for ", ctx.num_outputs(),
                     " outputs");
  return CopyPieces(ctx, x, axis, sizes, false);
}

struct AxisAttr final : OpState {
  int64_t axis = 0;
};
Status CreateUnpackState(PrepareContext& ctx) {
  auto st = std::make_shared<AxisAttr>();
  KILN_ASSIGN_OR_RETURN(st->axis, ctx.attrs.GetInt("axis", 0));
  ctx.state = st;
  return OkStatus();
}
Status ComputeUnpack(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(int axis, Axis(ctx, ctx.state<AxisAttr>().axis, x.rank()));
  if (x.dim(axis) != ctx.num_outputs())
    return ctx.Error("dimension ", axis, " has size ", x.dim(axis),
                     ", not num = ", ctx.num_outputs());
  return CopyPieces(ctx, x, axis, std::vector<int64_t>(ctx.num_outputs(), 1), true);
}

// The value's dtype (whichever input holds it) is any POD but int32, which stays on the host.
bool SupportsPieces(const PrepareContext& ctx) {
  for (const TensorSpec& s : ctx.outputs)
    if (!DTypeIsPod(s.dtype) || s.dtype == DType::kInt32) return false;
  return !ctx.outputs.empty();
}

const KernelEntry kRows[] = {
    {"Split", &ComputeSplit, 1u << 0, 0, &SupportsPieces, nullptr},
    {"SplitV", &ComputeSplitV, (1u << 1) | (1u << 2), 0, &SupportsPieces, nullptr},
    {"Unpack", &ComputeUnpack, 0, 0, &SupportsPieces, &CreateUnpackState},
};

}  // namespace

std::span<const KernelEntry> SplitKernels() { return kRows; }

}  // namespace kiln::exec::cuda
