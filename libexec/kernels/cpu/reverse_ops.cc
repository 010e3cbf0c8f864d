// The CPU kernels of the ops in kernels/reverse_ops.cc: ReverseV2 and Reverse are strided copies
// with negative strides, ReverseSequence strided walks per batch row, Roll a per-dim index map.
#include "kernels/reverse_ops.h"

#include <cstdint>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/dim_map_copy.h"

namespace kiln::exec {
namespace {

using reverse::CheckSequenceDims;
using reverse::ReversedDims;
using reverse::SequenceState;

// ---- ReverseV2 ---------------------------------------------------------------------------------

// Copies x into output 0 with the dims marked in `rev` reversed.
Status ReverseDims(const KernelContext& ctx, const Tensor& x, const std::vector<bool>& rev) {
  const auto strides = RowMajorStrides(x.shape());
  CopyPlan plan;
  for (int d = 0; d < x.rank(); ++d) {
    if (rev[d] && x.dim(d) > 0) {
      plan.offset[1] += (x.dim(d) - 1) * strides[d];
      AddCopyDim(&plan, x.dim(d), -strides[d]);
    } else {
      AddCopyDim(&plan, x.dim(d), strides[d]);
    }
  }
  return CopyIntoOutput(ctx, 0, x, x.shape(), plan);
}

Status ComputeReverse(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (ctx.input(1).rank() != 1) {
    return ctx.Error("input 'axis' must be a vector, got shape ", ctx.input(1).shape().ToString());
  }
  auto rev = ReversedDims(IndexValues(ctx.input(1)), x.rank());
  if (!rev.ok()) return Wrap(ctx, rev.status());
  return ReverseDims(ctx, x, *rev);
}

// ---- Reverse (v1: a bool per dim) --------------------------------------------------------------

Status ComputeReverseV1(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& dims = ctx.input(1);
  if (dims.rank() != 1 || dims.NumElements() != x.rank())
    return ctx.Error("input 'dims' must be a vector of ", x.rank(), " bools, got shape ",
                     dims.shape().ToString());
  std::vector<bool> rev(x.rank());
  for (int d = 0; d < x.rank(); ++d) rev[d] = dims.data<bool>()[d];
  return ReverseDims(ctx, x, rev);
}

// ---- ReverseSequence ---------------------------------------------------------------------------

Status ComputeReverseSequence(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& lens_t = ctx.input(1);
  const auto& st = ctx.state<SequenceState>();
  Status s = CheckSequenceDims(st.seq_dim, st.batch_dim, x.rank());
  if (!s.ok()) return Wrap(ctx, s);
  const int sd = static_cast<int>(st.seq_dim), bd = static_cast<int>(st.batch_dim);
  if (lens_t.rank() != 1 || lens_t.NumElements() != x.dim(bd)) {
    return ctx.Error("length of seq_lengths != input.dims(", bd, "), (", lens_t.NumElements(),
                     " vs. ", x.dim(bd), ")");
  }
  const std::vector<int64_t> lens = IndexValues(lens_t);
  for (size_t b = 0; b < lens.size(); ++b) {
    if (lens[b] < 0) return ctx.Error("seq_lens(", b, ") = ", lens[b], " < 0");
    if (lens[b] > x.dim(sd)) {
      return ctx.Error("seq_lens(", b, ") = ", lens[b], " > input.dims(", sd, ") = ", x.dim(sd));
    }
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  if (x.NumElements() == 0) return OkStatus();
  const auto strides = RowMajorStrides(x.shape());
  return DispatchStorage(x.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U* src = Elems<U>(x);
    U* dst = Elems<U>(*out);
    // Per batch row b: its first lens[b] steps along seq_dim reversed, the rest copied. Each is
    // a strided walk over the other dims with both operands strided.
    ctx.threads().ParallelFor(x.dim(bd), 1, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        for (int part = 0; part < 2; ++part) {
          const int64_t lo = part == 0 ? 0 : lens[b];
          const int64_t hi = part == 0 ? lens[b] : x.dim(sd);
          if (hi <= lo) continue;
          StridedPlan<2> plan;
          plan.offset = {b * strides[bd] + lo * strides[sd], b * strides[bd] + lo * strides[sd]};
          for (int d = 0; d < x.rank(); ++d) {
            if (d == bd) continue;
            if (d == sd && part == 0) {
              plan.offset[1] = b * strides[bd] + (hi - 1) * strides[sd];
              plan.AddDim(hi - lo, {strides[d], -strides[d]});
            } else {
              plan.AddDim(d == sd ? hi - lo : x.dim(d), {strides[d], strides[d]});
            }
          }
          WalkRange(plan, 0, plan.num_elements, [&](const auto& off, int64_t n, const auto& s) {
            for (int64_t j = 0; j < n; ++j) dst[off[0] + j * s[0]] = src[off[1] + j * s[1]];
          });
        }
      }
    });
    return OkStatus();
  });
}

// ---- Roll --------------------------------------------------------------------------------------

Status ComputeRoll(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() == 0) return ctx.Error("input 'input' must have rank at least 1, got a scalar");
  const Tensor& shift_t = ctx.input(1);
  const Tensor& axis_t = ctx.input(2);
  if (shift_t.rank() > 1 || axis_t.rank() > 1) {
    return ctx.Error("inputs 'shift' and 'axis' must be scalars or vectors, got shapes ",
                     shift_t.shape().ToString(), " and ", axis_t.shape().ToString());
  }
  if (shift_t.NumElements() != axis_t.NumElements()) {
    return ctx.Error("shift and axis must have the same size, got ", shift_t.NumElements(), " and ",
                     axis_t.NumElements());
  }
  const std::vector<int64_t> shifts = IndexValues(shift_t), axes = IndexValues(axis_t);
  std::vector<int64_t> total(x.rank(), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    auto a = CanonicalAxis(axes[i], x.rank(), "axis");
    if (!a.ok()) return Wrap(ctx, a.status());
    // Shifts on one axis add up; kept in [0, dim) to avoid overflow.
    const int64_t dim = x.dim(*a);
    if (dim > 0) total[*a] = ((total[*a] + shifts[i] % dim) % dim + dim) % dim;
  }
  const auto strides = RowMajorStrides(x.shape());
  DimOffsets maps(x.rank());
  for (int d = 0; d < x.rank(); ++d) {
    const int64_t dim = x.dim(d);
    maps[d].resize(dim);
    // Output o holds input element (o - shift) mod dim.
    for (int64_t o = 0; o < dim; ++o) maps[d][o] = ((o - total[d] + dim) % dim) * strides[d];
  }
  return CopyByDimMaps(ctx, 0, x, x.shape(), maps);
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"ReverseV2", ComputeReverse},
    {"Reverse", ComputeReverseV1},
    {"ReverseSequence", ComputeReverseSequence},
    {"Roll", ComputeRoll},
};

}  // namespace

std::span<const KernelEntry> ReverseCpuKernels() { return kCpu; }

}  // namespace kiln::exec
