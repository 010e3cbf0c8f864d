// Gathering slices by index: Gather (v1: rows of params) and GatherNd (index vectors into the
// leading dims of params). Every index is checked before anything is copied.
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

Status PrepareGatherV1(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "params", "Tparams"));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 1, "indices", "Tindices").status());
  KILN_PREPARE_ASSIGN(ctx, bool validate, ctx.attrs.GetBool("validate_indices", true));
  (void)validate;  // deprecated in TF: indices are always validated on the CPU
  const PartialShape& params = ctx.inputs[0].shape;
  const PartialShape& indices = ctx.inputs[1].shape;
  if (!params.unknown_rank() && params.rank() == 0) {
    return ctx.Error("params must be at least 1 dimensional");
  }
  PartialShape out;
  if (!params.unknown_rank() && !indices.unknown_rank()) {
    std::vector<int64_t> dims(indices.dims().begin(), indices.dims().end());
    dims.insert(dims.end(), params.dims().begin() + 1, params.dims().end());
    if (dims.size() > static_cast<size_t>(kMaxRank)) {
      return ctx.Error("result would have rank ", dims.size(), "; at most ", kMaxRank,
                       " is supported");
    }
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

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

// bad_indices_policy: "" and "DEFAULT" mean ERROR on the CPU; IGNORE gives zeros.
Result<bool> IgnoreBadIndices(const PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, std::string policy, ctx.attrs.GetString("bad_indices_policy", ""));
  if (policy.empty() || policy == "DEFAULT" || policy == "ERROR") return false;
  if (policy == "IGNORE") return true;
  return ctx.Error(
      "attr 'bad_indices_policy' must be \"\", \"DEFAULT\", \"ERROR\" or "
      "\"IGNORE\", got \"",
      policy, "\"");
}

using IgnoreState = TypedOpState<bool>;

Status PrepareGatherNd(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "params", "Tparams"));
  KILN_PREPARE_ASSIGN(ctx, DType ti, ctx.attrs.GetType("Tindices"));
  KILN_RETURN_IF_ERROR(
      ExpectAttrDTypeIn(ctx, "Tindices", ti, {DType::kInt16, DType::kInt32, DType::kInt64}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "indices", ti));
  KILN_ASSIGN_OR_RETURN(bool ignore, IgnoreBadIndices(ctx));
  const PartialShape& params = ctx.inputs[0].shape;
  const PartialShape& indices = ctx.inputs[1].shape;
  if (!indices.unknown_rank() && indices.rank() == 0) {
    return ctx.Error("input 'indices' must have rank at least 1, got a scalar");
  }
  PartialShape out;
  if (!params.unknown_rank() && !indices.unknown_rank() && indices.dim(indices.rank() - 1) >= 0) {
    const int64_t k = indices.dim(indices.rank() - 1);
    if (k > params.rank()) {
      return ctx.Error("index innermost dimension length must be <= params rank; saw: ", k, " vs. ",
                       params.rank());
    }
    std::vector<int64_t> dims(indices.dims().begin(), indices.dims().end() - 1);
    dims.insert(dims.end(), params.dims().begin() + k, params.dims().end());
    if (dims.size() > static_cast<size_t>(kMaxRank)) {
      return ctx.Error("result would have rank ", dims.size());
    }
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::make_shared<IgnoreState>(ignore);
  return OkStatus();
}

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

constexpr OpDefinition kDefs[] = {
    {"Gather", "output", kOpFreshOutputs, PrepareGatherV1},
    {"GatherNd", "output", kOpFreshOutputs, PrepareGatherNd},
};

constexpr KernelEntry kCpu[] = {
    {"Gather", ComputeGatherV1},
    {"GatherNd", ComputeGatherNd},
};

}  // namespace

std::span<const OpDefinition> GatherOpDefs() { return kDefs; }
std::span<const KernelEntry> GatherCpuKernels() { return kCpu; }

}  // namespace kiln::exec
