// The CPU kernels of the ops in kernels/concat_ops.cc: Pack, ConcatV2 and ParallelConcat copy
// rows of their inputs side by side; Unpack is a strided copy per output.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/array_util.h"

namespace kiln::exec {
namespace {

// ---- Pack, ConcatV2 ------------------------------------------------------------------------

// Copies inputs viewed as [outer, chunk[k]] side by side into a new tensor of `shape`.
Status ConcatInto(const KernelContext& ctx, int n, int64_t outer,
                  const std::vector<int64_t>& chunks, const Shape& shape) {
  const DType dt = ctx.input(0).dtype();
  KILN_ASSIGN_OR_RETURN(Tensor * out_ptr, ctx.AllocateOutput(0, dt, shape));
  Tensor& out = *out_ptr;
  if (out.NumElements() == 0) return OkStatus();
  return DispatchStorage(dt, [&](auto tag) {
    using U = typename decltype(tag)::type;
    // Row o of the output is the rows o of the inputs side by side; rows are independent.
    int64_t row = 0;
    for (int64_t c : chunks) row += c;
    U* dst = Elems<U>(out);
    ctx.threads().ParallelFor(outer, std::max<int64_t>(1, 65536 / std::max<int64_t>(1, row)),
                              [&](int64_t begin, int64_t end) {
                                for (int64_t o = begin; o < end; ++o) {
                                  U* to = dst + o * row;
                                  for (int k = 0; k < n; ++k) {
                                    const U* src = Elems<U>(ctx.input(k)) + o * chunks[k];
                                    to = std::copy(src, src + chunks[k], to);
                                  }
                                }
                              });
    return OkStatus();
  });
}

Status ComputePack(const KernelContext& ctx) {
  const int n = ctx.num_inputs();
  const Shape& s0 = ctx.input(0).shape();
  for (int i = 1; i < n; ++i) {
    if (ctx.input(i).shape() != s0) {
      return ctx.Error("shapes of all inputs must match: values:0 has shape ", s0.ToString(),
                       " but values:", i, " has shape ", ctx.input(i).shape().ToString());
    }
  }
  if (s0.rank() >= kMaxRank) return ctx.Error("values have rank ", s0.rank());
  auto axis = CanonicalAxis(ctx.state<TypedOpState<int64_t>>().value, s0.rank() + 1, "axis");
  if (!axis.ok()) return Wrap(ctx, axis.status());
  std::vector<int64_t> dims = s0.ToVector();
  dims.insert(dims.begin() + *axis, n);
  int64_t outer = 1;
  for (int i = 0; i < *axis; ++i) outer *= s0.dim(i);
  const int64_t chunk = outer == 0 ? 0 : s0.num_elements() / outer;
  return ConcatInto(ctx, n, outer, std::vector<int64_t>(n, chunk), *Shape::FromDims(dims));
}

Status ComputeConcat(const KernelContext& ctx) {
  const int n = ctx.num_inputs() - 1;
  const Tensor& axis_t = ctx.input(n);
  if (axis_t.NumElements() != 1) {
    return ctx.Error("input 'axis' must be a scalar, got shape ", axis_t.shape().ToString());
  }
  const Shape& s0 = ctx.input(0).shape();
  if (s0.rank() == 0) return ctx.Error("cannot concatenate scalars; use Pack");
  auto axis = CanonicalAxis(IndexValues(axis_t)[0], s0.rank(), "axis");
  if (!axis.ok()) return Wrap(ctx, axis.status());
  Shape out = s0;
  int64_t total = 0;
  int64_t outer = 1;
  for (int d = 0; d < *axis; ++d) outer *= s0.dim(d);
  std::vector<int64_t> chunks(n);
  for (int i = 0; i < n; ++i) {
    const Shape& s = ctx.input(i).shape();
    bool ok = s.rank() == s0.rank();
    for (int d = 0; ok && d < s.rank(); ++d) ok = d == *axis || s.dim(d) == s0.dim(d);
    if (!ok) {
      return ctx.Error("values must match in all dimensions but axis ", *axis,
                       ": values:0 has shape ", s0.ToString(), ", values:", i, " has shape ",
                       s.ToString());
    }
    total += s.dim(*axis);
    chunks[i] = outer == 0 ? 0 : s.num_elements() / outer;
  }
  out.set_dim(*axis, total);
  return ConcatInto(ctx, n, outer, chunks, out);
}

// ---- ParallelConcat --------------------------------------------------------------------------

Status ComputeParallelConcat(const KernelContext& ctx) {
  const int n = ctx.num_inputs();
  const Shape& s0 = ctx.input(0).shape();
  std::vector<int64_t> chunks(n);
  for (int i = 0; i < n; ++i) {
    const Shape& s = ctx.input(i).shape();
    bool ok = s.rank() == s0.rank() && s.rank() >= 1 && s.dim(0) == 1;
    for (int d = 1; ok && d < s.rank(); ++d) ok = s.dim(d) == s0.dim(d);
    if (!ok) {
      return ctx.Error("values must have shape [1, ...] and match: values:0 has shape ",
                       s0.ToString(), ", values:", i, " has shape ", s.ToString());
    }
    chunks[i] = s.num_elements();
  }
  Shape out = s0;
  out.set_dim(0, n);
  return ConcatInto(ctx, n, 1, chunks, out);
}

// ---- ConcatOffset ----------------------------------------------------------------------------

Status ComputeConcatOffset(const KernelContext& ctx) {
  const int n = ctx.num_inputs() - 1;
  const std::vector<int64_t> s0 = IndexValues(ctx.input(1));
  const int64_t rank = static_cast<int64_t>(s0.size());
  int64_t axis = IndexValues(ctx.input(0))[0];
  if (axis < -rank || axis >= rank) {
    return ctx.Error("concat_dim ", axis, " is out of range for shapes of rank ", rank);
  }
  if (axis < 0) axis += rank;
  int64_t offset = 0;
  for (int i = 0; i < n; ++i) {
    const std::vector<int64_t> s = IndexValues(ctx.input(i + 1));
    if (static_cast<int64_t>(s.size()) != rank) {
      return ctx.Error("input shape:", i, " should have ", rank, " elements, got ", s.size());
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis && s[d] != s0[d]) {
        return ctx.Error("dimension ", d, " of shape:", i, " is ", s[d], " but of shape:0 is ",
                         s0[d], " (concat_dim ", axis, ")");
      }
    }
    KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(i, Shape{rank}));
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t v = d == axis ? offset : 0;
      if (out->dtype() == DType::kInt64) {
        out->data<int64_t>()[d] = v;
      } else {
        out->data<int32_t>()[d] = static_cast<int32_t>(v);
      }
    }
    offset += s[axis];
  }
  return OkStatus();
}

// ---- Unpack ----------------------------------------------------------------------------------

Status ComputeUnpack(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() == 0) return ctx.Error("input 'value' must have rank >= 1, got a scalar");
  auto axis = CanonicalAxis(ctx.state<TypedOpState<int64_t>>().value, x.rank(), "axis");
  if (!axis.ok()) return Wrap(ctx, axis.status());
  const int num = ctx.num_outputs();
  if (x.dim(*axis) != num) {
    return ctx.Error("expected ", num, " values along axis ", *axis, " of 'value' ",
                     x.shape().ToString(), ", got ", x.dim(*axis));
  }
  Shape piece;
  for (int d = 0; d < x.rank(); ++d) {
    if (d != *axis) piece.AddDim(x.dim(d));
  }
  const auto strides = RowMajorStrides(x.shape());
  for (int k = 0; k < num; ++k) {
    CopyPlan plan;
    plan.offset[1] = k * strides[*axis];
    for (int d = 0; d < x.rank(); ++d) {
      if (d != *axis) AddCopyDim(&plan, x.dim(d), strides[d]);
    }
    KILN_RETURN_IF_ERROR(CopyIntoOutput(ctx, k, x, piece, plan));
  }
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"Pack", ComputePack},
    {"Unpack", ComputeUnpack},
    {"ConcatV2", ComputeConcat},
    {"ParallelConcat", ComputeParallelConcat},
    {"ConcatOffset", ComputeConcatOffset},
};

}  // namespace

std::span<const KernelEntry> ConcatCpuKernels() { return kCpu; }

}  // namespace kiln::exec
