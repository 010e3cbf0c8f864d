// The CPU kernels of the ops in kernels/gather_ops.cc. Every index is checked before anything is
// copied.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/nd_index.h"

namespace kiln::exec {
namespace {

// Copies `offsets.size()` slices of `slice` elements from params (at offsets[j], -1: zeros)
// to consecutive slices of `out`.
Status CopySlices(const KernelContext& ctx, const Tensor& params,
                  const std::vector<int64_t>& offsets, int64_t slice, Tensor* out) {
  if (out->NumElements() == 0) return OkStatus();
  return DispatchStorage(params.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U* src = Elems<U>(params);
    U* dst = Elems<U>(*out);
    ctx.threads().ParallelFor(static_cast<int64_t>(offsets.size()),
                              std::max<int64_t>(1, 65536 / std::max<int64_t>(1, slice)),
                              [&](int64_t begin, int64_t end) {
                                for (int64_t j = begin; j < end; ++j) {
                                  U* to = dst + j * slice;
                                  if (offsets[j] < 0) {
                                    std::fill(to, to + slice, U{});
                                  } else {
                                    std::copy(src + offsets[j], src + offsets[j] + slice, to);
                                  }
                                }
                              });
    return OkStatus();
  });
}

// ---- Gather (v1) -------------------------------------------------------------------------------

Status ComputeGatherV1(const KernelContext& ctx) {
  const Tensor& params = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  if (params.rank() == 0) return ctx.Error("params must be at least 1 dimensional");
  std::vector<int64_t> dims = indices.shape().ToVector();
  dims.insert(dims.end(), params.shape().dims().begin() + 1, params.shape().dims().end());
  auto shape = Shape::FromDims(dims);
  if (!shape.ok()) return Wrap(ctx, shape.status());
  const int64_t limit = params.dim(0);
  const int64_t slice = limit == 0 ? 0 : params.NumElements() / limit;
  std::vector<int64_t> offsets(indices.NumElements());
  KILN_RETURN_IF_ERROR(DispatchIndex(indices.dtype(), [&](auto tag) -> Status {
    using I = typename decltype(tag)::type;
    const I* idx = indices.data<I>();
    for (size_t j = 0; j < offsets.size(); ++j) {
      const int64_t v = IndexAt(idx, static_cast<int64_t>(j));
      if (v < 0 || v >= limit) {
        return ctx.Error("indices", PositionString(static_cast<int64_t>(j), indices.shape().dims()),
                         " = ", v, " is not in [0, ", limit, ")");
      }
      offsets[j] = v * slice;
    }
    return OkStatus();
  }));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, *shape));
  return CopySlices(ctx, params, offsets, slice, out);
}

// ---- GatherNd ----------------------------------------------------------------------------------

using IgnoreState = TypedOpState<bool>;

Status ComputeGatherNd(const KernelContext& ctx) {
  const Tensor& params = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  if (indices.rank() == 0) return ctx.Error("input 'indices' must have rank at least 1");
  const int64_t k = indices.dim(indices.rank() - 1);
  if (k > params.rank()) {
    return ctx.Error("index innermost dimension length must be <= params rank; saw: ", k, " vs. ",
                     params.rank());
  }
  std::vector<int64_t> dims(indices.shape().dims().begin(), indices.shape().dims().end() - 1);
  dims.insert(dims.end(), params.shape().dims().begin() + k, params.shape().dims().end());
  auto shape = Shape::FromDims(dims);
  if (!shape.ok()) return Wrap(ctx, shape.status());
  NdIndex nd;
  std::string bad;
  KILN_RETURN_IF_ERROR(DispatchIndex(indices.dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    nd = ResolveNdIndex<I>(indices, params.shape());
    if (nd.first_bad >= 0) bad = IndexVectorString<I>(indices, nd.first_bad, k);
    return OkStatus();
  }));
  if (nd.first_bad >= 0 && !ctx.state<IgnoreState>().value) {
    return ctx.Error(bad, " does not index into param shape ",
                     ShapeBrackets(params.shape().dims()));
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, *shape));
  return CopySlices(ctx, params, nd.offsets, nd.slice_size, out);
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"Gather", ComputeGatherV1},
    {"GatherNd", ComputeGatherNd},
};

}  // namespace

std::span<const KernelEntry> GatherCpuKernels() { return kCpu; }

}  // namespace kiln::exec
