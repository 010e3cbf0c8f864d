// The CPU kernels of the ops in kernels/slice_ops.cc (strided copies of their input), and the
// writes of a strided slice on the CPU (WriteStridedSlice, kernels/strided_slice.h).
#include "kernels/slice_ops.h"

#include <algorithm>
#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/strided_slice.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using slice::BatchDimsState;
using slice::CheckPerm;
using slice::GatherBatchDims;
using slice::GatherDims;
using slice::StridedSliceState;

// ---- Transpose -------------------------------------------------------------------------------

// Output 0: `x` (the input's values, or a conjugated copy of them) with its dims permuted as
// input 1 says.
Status TransposeInto(const KernelContext& ctx, const Tensor& x) {
  std::vector<int64_t> perm = IndexValues(ctx.input(1));
  Status s = CheckPerm(perm, x.rank());
  if (!s.ok()) return Wrap(ctx, s);
  const auto in_strides = RowMajorStrides(x.shape());
  Shape shape;
  CopyPlan plan;
  for (int i = 0; i < x.rank(); ++i) {
    shape.AddDim(x.dim(perm[i]));
    AddCopyDim(&plan, x.dim(perm[i]), in_strides[perm[i]]);
  }
  // An identity permutation is a plain copy (the plan merges it to one run).
  return CopyIntoOutput(ctx, 0, x, shape, plan);
}

Status ComputeTranspose(const KernelContext& ctx) { return TransposeInto(ctx, ctx.input(0)); }

// ConjugateTranspose: the transpose of the complex conjugate (a plain transpose otherwise).
Status ComputeConjugateTranspose(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (!IsComplex(x.dtype())) return TransposeInto(ctx, x);
  Tensor conj(x.dtype(), x.shape());
  using ComplexTypes = TypeList<std::complex<float>, std::complex<double>>;
  KILN_RETURN_IF_ERROR(Dispatch<ComplexTypes>(x.dtype(), [&](auto tag) {
    using C = typename decltype(tag)::type;
    const C* in = x.data<C>();
    C* out = conj.data<C>();
    for (int64_t i = 0; i < x.NumElements(); ++i) out[i] = std::conj(in[i]);
    return OkStatus();
  }));
  return TransposeInto(ctx, conj);
}

// ---- StridedSlice ------------------------------------------------------------------------------

Status ComputeStridedSlice(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  DenseSlice dense;
  Status s = AnalyzeSliceOf(x.shape(), ctx.input(1), ctx.input(2), ctx.input(3),
                            ctx.state<StridedSliceState>().masks, &dense);
  if (!s.ok()) return Wrap(ctx, s);
  const Shape shape = *Shape::FromDims(dense.final_dims);
  const auto in_strides = RowMajorStrides(x.shape());
  CopyPlan plan;
  for (int i = 0; i < x.rank(); ++i) {
    AddCopyDim(&plan, dense.size[i], in_strides[i] * dense.stride[i]);
    plan.offset[1] += dense.begin[i] * in_strides[i];
  }
  return CopyIntoOutput(ctx, 0, x, shape, plan);
}

// ---- StridedSliceGrad, TensorStridedSliceUpdate ----------------------------------------------

template <bool kGrad>
Status ComputeStridedWrite(const KernelContext& ctx) {
  Shape shape;
  if (kGrad) {
    KILN_ASSIGN_OR_RETURN(shape, Shape::FromDims(IndexValues(ctx.input(0))));
  } else {
    shape = ctx.input(0).shape();
  }
  DenseSlice dense;
  Status s = AnalyzeSliceOf(shape, ctx.input(1), ctx.input(2), ctx.input(3),
                            ctx.state<StridedSliceState>().masks, &dense);
  if (!s.ok()) return Wrap(ctx, s);
  const Tensor& values = ctx.input(4);
  if (kGrad && values.shape().ToVector() != dense.final_dims) {
    return ctx.Error("shape of dy was ", values.shape().ToString(), " instead of ",
                     DimsString(dense.final_dims));
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, shape));
  KILN_RETURN_IF_ERROR(DispatchStorage(values.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    if (kGrad) {
      std::fill_n(Elems<U>(*out), out->NumElements(), U{});
    } else {
      std::copy_n(Elems<U>(ctx.input(0)), out->NumElements(), Elems<U>(*out));
    }
    return OkStatus();
  }));
  s = WriteStridedSlice(values, dense, out);
  return s.ok() ? OkStatus() : Wrap(ctx, s);
}

}  // namespace

Status WriteStridedSlice(const Tensor& values, const DenseSlice& dense, Tensor* dst) {
  KILN_ASSIGN_OR_RETURN(const Shape final_shape, Shape::FromDims(dense.final_dims));
  auto b_shape = BroadcastShapes(values.shape(), final_shape);
  if (!b_shape.ok() || *b_shape != final_shape) {
    return InvalidArgument("cannot broadcast a value of shape ", values.shape().ToString(),
                           " to the slice's shape ", final_shape.ToString());
  }
  const Shape& shape = dst->shape();
  return DispatchStorage(values.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    U* to_data = Elems<U>(*dst);
    // The slice's elements in order (the value broadcast), then written through the slice.
    std::vector<U> src(final_shape.num_elements());
    const auto b = BroadcastStrides(values.shape(), final_shape);
    const auto fs = RowMajorStrides(final_shape);
    StridedPlan<2> from;
    for (int i = 0; i < final_shape.rank(); ++i) from.AddDim(final_shape.dim(i), {fs[i], b[i]});
    const U* v = Elems<U>(values);
    WalkRange(from, 0, from.num_elements, [&](const auto& off, int64_t n, const auto& st) {
      for (int64_t j = 0; j < n; ++j) src[off[0] + j * st[0]] = v[off[1] + j * st[1]];
    });
    const auto os = RowMajorStrides(shape);
    StridedPlan<2> to;
    for (int i = 0; i < shape.rank(); ++i) {
      to.AddDim(dense.size[i], {os[i] * dense.stride[i], 0});
      to.offset[0] += dense.begin[i] * os[i];
    }
    int64_t k = 0;
    WalkRange(to, 0, to.num_elements, [&](const auto& off, int64_t n, const auto& st) {
      for (int64_t j = 0; j < n; ++j) to_data[off[0] + j * st[0]] = src[k++];
    });
    return OkStatus();
  });
}

namespace {

// ---- GatherV2 --------------------------------------------------------------------------------

// "[1, 0]" for flat position i of `shape`.
std::string IndexString(int64_t i, const Shape& shape) {
  std::vector<int64_t> idx(shape.rank());
  for (int d = shape.rank() - 1; d >= 0; --d) {
    idx[d] = i % shape.dim(d);
    i /= shape.dim(d);
  }
  std::string s = "[";
  for (size_t d = 0; d < idx.size(); ++d) s += (d ? "," : "") + std::to_string(idx[d]);
  return s + "]";
}

Status ComputeGather(const KernelContext& ctx) {
  const Tensor& params = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const Tensor& axis_t = ctx.input(2);
  if (axis_t.NumElements() != 1) {
    return ctx.Error("input 'axis' must be a scalar, got shape ", axis_t.shape().ToString());
  }
  if (params.rank() == 0) return ctx.Error("input 'params' must have rank >= 1, got a scalar");
  auto axis = CanonicalAxis(IndexValues(axis_t)[0], params.rank(), "axis");
  if (!axis.ok()) return Wrap(ctx, axis.status());
  auto bd = GatherBatchDims(ctx.state<BatchDimsState>().value, indices.rank(), *axis);
  if (!bd.ok()) return Wrap(ctx, bd.status());
  // params viewed as [batch, outer, limit, inner], indices as [batch, n]: the first batch_dims
  // dims are shared, each batch gathers from its own slice.
  int64_t batch = 1, outer = 1, inner = 1, n = 1;
  for (int d = 0; d < *bd; ++d) {
    if (params.dim(d) != indices.dim(d)) {
      return ctx.Error("params.shape[", d, "]: ", params.dim(d),
                       " should be equal to indices.shape[", d, "]: ", indices.dim(d));
    }
    batch *= params.dim(d);
  }
  for (int d = *bd; d < *axis; ++d) outer *= params.dim(d);
  for (int d = *axis + 1; d < params.rank(); ++d) inner *= params.dim(d);
  for (int d = *bd; d < indices.rank(); ++d) n *= indices.dim(d);
  auto shape =
      Shape::FromDims(GatherDims(params.shape().dims(), indices.shape().dims(), *axis, *bd));
  if (!shape.ok()) return Wrap(ctx, shape.status());
  const int64_t limit = params.dim(*axis);
  KILN_ASSIGN_OR_RETURN(Tensor * out_ptr, ctx.AllocateOutput(0, params.dtype(), *shape));
  Tensor& out = *out_ptr;
  auto run = [&](auto index_tag) -> Status {
    using Index = typename decltype(index_tag)::type;
    const Index* idx = indices.data<Index>();
    const int64_t count = indices.NumElements();
    for (int64_t j = 0; j < count; ++j) {
      if (idx[j] < 0 || idx[j] >= limit) {
        return ctx.Error("indices", IndexString(j, indices.shape()), " = ",
                         static_cast<int64_t>(idx[j]), " is not in [0, ", limit, ")");
      }
    }
    return DispatchStorage(params.dtype(), [&](auto tag) {
      using U = typename decltype(tag)::type;
      if (out.NumElements() == 0) return OkStatus();
      // out[b, o, j, :] = params[b, o, indices[b, j], :], one (b, o, j) row at a time.
      const U* src = Elems<U>(params);
      U* dst = Elems<U>(out);
      ctx.threads().ParallelFor(
          batch * outer * n, std::max<int64_t>(1, 65536 / std::max<int64_t>(1, inner)),
          [&](int64_t begin, int64_t end) {
            // Divisions once per (b, o) run of rows; an embedding's rows are short, so one
            // element is an assignment and a few a loop the compiler unrolls, not a memmove.
            for (int64_t r = begin; r < end;) {
              const int64_t bo = r / n, b = bo / outer;
              const int64_t stop = std::min(end, (bo + 1) * n);
              const Index* ib = idx + b * n;  // ib[r - first] is the index of row r
              const int64_t first = bo * n;
              const U* table = src + bo * limit * inner;
              U* to = dst + r * inner;
              if (inner == 1) {
                for (; r < stop; ++r) *to++ = table[ib[r - first]];
              } else if (inner <= 16) {
                for (; r < stop; ++r, to += inner) {
                  const U* from = table + static_cast<int64_t>(ib[r - first]) * inner;
                  for (int64_t k = 0; k < inner; ++k) to[k] = from[k];
                }
              } else {
                for (; r < stop; ++r, to += inner) {
                  const U* from = table + static_cast<int64_t>(ib[r - first]) * inner;
                  std::copy(from, from + inner, to);
                }
              }
            }
          });
      return OkStatus();
    });
  };
  KILN_RETURN_IF_ERROR(indices.dtype() == DType::kInt32 ? run(std::type_identity<int32_t>{})
                                                        : run(std::type_identity<int64_t>{}));
  return OkStatus();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"Transpose", ComputeTranspose},
    {"ConjugateTranspose", ComputeConjugateTranspose},
    {"StridedSliceGrad", ComputeStridedWrite<true>},
    {"TensorStridedSliceUpdate", ComputeStridedWrite<false>},
    {"StridedSlice", ComputeStridedSlice},
    {"GatherV2", ComputeGather},
};

}  // namespace

std::span<const KernelEntry> SliceCpuKernels() { return kCpu; }

}  // namespace kiln::exec
