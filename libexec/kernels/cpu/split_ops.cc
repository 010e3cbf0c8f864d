// The CPU kernels of the ops in kernels/split_ops.cc. Every piece is a strided copy of its
// input; a dynamic update slice writes its update through a strided walk.
#include "kernels/split_ops.h"

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/array_util.h"

namespace kiln::exec {
namespace {

using split::ResolveSplits;
using split::SplitAxis;
using split::SplitState;

// Output `out` is x[.., begin:begin+size, ..] along `axis`.
Status CopySliceAlong(const KernelContext& ctx, int out, const Tensor& x, int axis, int64_t begin,
                      int64_t size) {
  const auto strides = RowMajorStrides(x.shape());
  Shape shape = x.shape();
  shape.set_dim(axis, size);
  CopyPlan plan;
  plan.offset[1] = begin * strides[axis];
  for (int d = 0; d < x.rank(); ++d) AddCopyDim(&plan, shape.dim(d), strides[d]);
  return CopyIntoOutput(ctx, out, x, shape, plan);
}

// ---- Slice -------------------------------------------------------------------------------------

// Output 0 is the window of x at `begin` of `size` (both checked to fit).
Status CopyWindow(const KernelContext& ctx, const Tensor& x, std::span<const int64_t> begin,
                  std::span<const int64_t> size) {
  const auto strides = RowMajorStrides(x.shape());
  Shape shape;
  CopyPlan plan;
  for (int d = 0; d < x.rank(); ++d) {
    shape.AddDim(size[d]);
    plan.offset[1] += begin[d] * strides[d];
    AddCopyDim(&plan, size[d], strides[d]);
  }
  return CopyIntoOutput(ctx, 0, x, shape, plan);
}

// begin/size made concrete against `dims`; size -1 means "to the end".
Status ResolveSlice(std::span<const int64_t> dims, std::vector<int64_t>* begin,
                    std::vector<int64_t>* size) {
  if (begin->size() != dims.size() || size->size() != dims.size()) {
    return InvalidArgument("expected begin and size to be vectors of length ", dims.size(),
                           " (the input's rank), got ", begin->size(), " and ", size->size());
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t b = (*begin)[i];
    if (b < 0 || b > dims[i]) {
      return InvalidArgument("expected begin[", i, "] in [0, ", dims[i], "], but got ", b);
    }
    const int64_t given = (*size)[i];
    const int64_t s = given == -1 ? dims[i] - b : given;
    if (s < 0 || b + s > dims[i]) {
      return InvalidArgument("expected size[", i, "] in [0, ", dims[i] - b, "], but got ", given);
    }
    (*size)[i] = s;
  }
  return OkStatus();
}

Status ComputeSlice(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> begin = IndexValues(ctx.input(1));
  std::vector<int64_t> size = IndexValues(ctx.input(2));
  if (ctx.input(1).rank() != 1 || ctx.input(2).rank() != 1) {
    return ctx.Error("inputs 'begin' and 'size' must be vectors, got shapes ",
                     ctx.input(1).shape().ToString(), " and ", ctx.input(2).shape().ToString());
  }
  Status s = ResolveSlice(x.shape().dims(), &begin, &size);
  if (!s.ok()) return Wrap(ctx, s);
  return CopyWindow(ctx, x, begin, size);
}

// ---- XlaDynamicSlice, XlaDynamicUpdateSlice ---------------------------------------------------

// XLA's clamp: each start moved into [0, dim - window] (the window must fit).
Status ClampStarts(const KernelContext& ctx, const Tensor& starts_t, const Shape& shape,
                   std::span<const int64_t> window, std::vector<int64_t>* starts) {
  if (starts_t.rank() != 1 || starts_t.NumElements() != shape.rank())
    return ctx.Error("start indices of shape ", starts_t.shape().ToString(),
                     " must be a vector of length ", shape.rank(), " (the input's rank)");
  *starts = IndexValues(starts_t);
  for (int d = 0; d < shape.rank(); ++d) {
    if (window[d] < 0 || window[d] > shape.dim(d))
      return ctx.Error("a window of ", window[d], " in dimension ", d,
                       " does not fit the input of shape ", shape.ToString());
    (*starts)[d] = std::clamp<int64_t>((*starts)[d], 0, shape.dim(d) - window[d]);
  }
  return OkStatus();
}

Status ComputeXlaDynamicSlice(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& size_t_ = ctx.input(2);
  if (size_t_.rank() != 1 || size_t_.NumElements() != x.rank())
    return ctx.Error("input 'size_indices' of shape ", size_t_.shape().ToString(),
                     " must be a vector of length ", x.rank(), " (the input's rank)");
  const std::vector<int64_t> size = IndexValues(size_t_);
  std::vector<int64_t> begin;
  KILN_RETURN_IF_ERROR(ClampStarts(ctx, ctx.input(1), x.shape(), size, &begin));
  return CopyWindow(ctx, x, begin, size);
}

Status ComputeXlaDynamicUpdateSlice(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& update = ctx.input(1);
  if (update.rank() != x.rank())
    return ctx.Error("input 'update' of shape ", update.shape().ToString(),
                     " must have the rank of 'input' ", x.shape().ToString());
  std::vector<int64_t> begin;
  KILN_RETURN_IF_ERROR(ClampStarts(ctx, ctx.input(2), x.shape(), update.shape().dims(), &begin));
  // A decoder's cache step: the input's buffer is taken over when nothing else reads it, so
  // only the update is written.
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.ForwardInputOrAllocateOutput(0, 0, x.shape()));
  const bool in_place = out->raw_data() == x.raw_data();
  const auto strides = RowMajorStrides(x.shape());
  StridedPlan<2> to;  // operand 0: the output window, operand 1: the update (contiguous)
  const auto us = RowMajorStrides(update.shape());
  for (int d = 0; d < x.rank(); ++d) {
    to.AddDim(update.dim(d), {strides[d], us[d]});
    to.offset[0] += begin[d] * strides[d];
  }
  return DispatchStorage(x.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    U* dst = Elems<U>(*out);
    if (!in_place) std::copy_n(Elems<U>(x), x.NumElements(), dst);
    const U* src = Elems<U>(update);
    WalkRange(to, 0, to.num_elements, [&](const auto& off, int64_t n, const auto& st) {
      for (int64_t j = 0; j < n; ++j) dst[off[0] + j * st[0]] = src[off[1] + j * st[1]];
    });
    return OkStatus();
  });
}

// ---- Split, SplitV -----------------------------------------------------------------------------

Status ComputeSplit(const KernelContext& ctx) {
  const auto& st = ctx.state<SplitState>();
  const Tensor& x = ctx.input(st.value_input);
  if (x.rank() == 0) return ctx.Error("cannot split a scalar");
  auto axis = SplitAxis(ctx.input(st.axis_input), x.rank());
  if (!axis.ok()) return Wrap(ctx, axis.status());
  const int num = ctx.num_outputs();
  const int64_t dim = x.dim(*axis);
  std::vector<int64_t> pieces;
  if (st.value_input == 1) {
    if (dim % num != 0) {
      return ctx.Error(
          "number of ways to split should evenly divide the split dimension, but got "
          "split_dim ",
          *axis, " (size = ", dim, ") and num_split ", num);
    }
    pieces.assign(num, dim / num);
  } else {
    const Tensor& s = ctx.input(1);
    if (s.rank() != 1 || s.NumElements() != num) {
      return ctx.Error("input 'size_splits' must be a vector of ", num, " sizes, got shape ",
                       s.shape().ToString());
    }
    std::vector<int64_t> sizes;
    for (int64_t i = 0; i < num; ++i) {
      sizes.push_back(s.dtype() == DType::kInt8    ? s.data<int8_t>()[i]
                      : s.dtype() == DType::kInt32 ? s.data<int32_t>()[i]
                                                   : s.data<int64_t>()[i]);
    }
    auto r = ResolveSplits(sizes, dim);
    if (!r.ok()) return Wrap(ctx, r.status());
    pieces = *r;
  }
  int64_t begin = 0;
  for (int k = 0; k < num; ++k) {
    KILN_RETURN_IF_ERROR(CopySliceAlong(ctx, k, x, *axis, begin, pieces[k]));
    begin += pieces[k];
  }
  return OkStatus();
}

// ---- Concat (v1) -------------------------------------------------------------------------------

Status ComputeConcatV1(const KernelContext& ctx) {
  const int n = ctx.num_inputs() - 1;
  const Tensor& first = ctx.input(1);
  if (first.rank() == 0) return ctx.Error("cannot concatenate scalars (use Pack)");
  const Tensor& axis_t = ctx.input(0);
  if (axis_t.NumElements() != 1) {
    return ctx.Error("input 'concat_dim' must be a scalar, got shape ", axis_t.shape().ToString());
  }
  auto axis = CanonicalAxis(IndexValues(axis_t)[0], first.rank(), "concat_dim");
  if (!axis.ok()) return Wrap(ctx, axis.status());
  Shape out_shape = first.shape();
  int64_t outer = 1;
  for (int d = 0; d < *axis; ++d) outer *= first.dim(d);
  std::vector<int64_t> chunks(n);
  int64_t total = 0;
  for (int i = 0; i < n; ++i) {
    const Shape& s = ctx.input(i + 1).shape();
    bool ok = s.rank() == first.rank();
    for (int d = 0; ok && d < s.rank(); ++d) ok = d == *axis || s.dim(d) == first.dim(d);
    if (!ok) {
      return ctx.Error("values must match in all dimensions but concat_dim ", *axis,
                       ": values:0 has shape ", first.shape().ToString(), ", values:", i,
                       " has shape ", s.ToString());
    }
    total += s.dim(*axis);
    chunks[i] = outer == 0 ? 0 : s.num_elements() / outer;
  }
  out_shape.set_dim(*axis, total);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  if (out->NumElements() == 0) return OkStatus();
  const int64_t row = out->NumElements() / outer;
  return DispatchStorage(first.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    U* dst = Elems<U>(*out);
    // Output row o is the inputs' rows o side by side; rows are independent.
    ctx.threads().ParallelFor(outer, std::max<int64_t>(1, 65536 / std::max<int64_t>(1, row)),
                              [&](int64_t begin, int64_t end) {
                                for (int64_t o = begin; o < end; ++o) {
                                  U* to = dst + o * row;
                                  for (int k = 0; k < n; ++k) {
                                    const U* src = Elems<U>(ctx.input(k + 1)) + o * chunks[k];
                                    to = std::copy(src, src + chunks[k], to);
                                  }
                                }
                              });
    return OkStatus();
  });
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"Slice", ComputeSlice},
    {"Split", ComputeSplit},
    {"SplitV", ComputeSplit},
    {"Concat", ComputeConcatV1},
    {"XlaDynamicSlice", ComputeXlaDynamicSlice},
    {"XlaDynamicUpdateSlice", ComputeXlaDynamicUpdateSlice},
};

}  // namespace

std::span<const KernelEntry> SplitCpuKernels() { return kCpu; }

}  // namespace kiln::exec
