// Splitting rows by a partition id and merging them back by index: DynamicPartition,
// DynamicStitch and ParallelDynamicStitch (the same here: merged in input order, so a later
// index wins, deterministically; rows no index names are zeros).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/nd_index.h"

namespace kiln::exec {
namespace {

// ---- DynamicPartition ------------------------------------------------------------------------

bool StartsWith(std::span<const int64_t> dims, std::span<const int64_t> prefix) {
  if (prefix.size() > dims.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (dims[i] >= 0 && prefix[i] >= 0 && dims[i] != prefix[i]) return false;
  }
  return true;
}

Status PreparePartition(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "data"));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "partitions", DType::kInt32));
  KILN_PREPARE_ASSIGN(ctx, int64_t num, ctx.attrs.GetInt("num_partitions"));
  if (num < 1) return ctx.Error("attr 'num_partitions' must be at least 1, got ", num);
  const PartialShape& data = ctx.inputs[0].shape;
  const PartialShape& parts = ctx.inputs[1].shape;
  PartialShape out;
  if (!data.unknown_rank() && !parts.unknown_rank()) {
    if (!StartsWith(data.dims(), parts.dims())) {
      return ctx.Error("data.shape must start with partitions.shape, got data.shape = ",
                       data.ToPythonString(), ", partitions.shape = ", parts.ToPythonString());
    }
    std::vector<int64_t> dims = {-1};
    dims.insert(dims.end(), data.dims().begin() + parts.rank(), data.dims().end());
    if (dims.size() > static_cast<size_t>(kMaxRank)) return ctx.Error("result rank too large");
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs.assign(num, TensorSpec{t, out});
  return OkStatus();
}

Status ComputePartition(const KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& parts = ctx.input(1);
  if (!StartsWith(data.shape().dims(), parts.shape().dims())) {
    return ctx.Error("data.shape must start with partitions.shape, got data.shape = ",
                     ShapeBrackets(data.shape().dims()),
                     ", partitions.shape = ", ShapeBrackets(parts.shape().dims()));
  }
  const int num = ctx.num_outputs();
  const int64_t n = parts.NumElements();
  const int32_t* p = parts.data<int32_t>();
  std::vector<int64_t> counts(num, 0);
  for (int64_t i = 0; i < n; ++i) {
    if (p[i] < 0 || p[i] >= num) {
      return ctx.Error("partitions", PositionString(i, parts.shape().dims()), " = ", p[i],
                       " is not in [0, ", num, ")");
    }
    ++counts[p[i]];
  }
  const int64_t slice = n == 0 ? 0 : data.NumElements() / n;
  std::vector<Tensor*> outs(num);
  for (int k = 0; k < num; ++k) {
    Shape s;
    s.AddDim(counts[k]);
    for (int d = parts.rank(); d < data.rank(); ++d) s.AddDim(data.dim(d));
    KILN_ASSIGN_OR_RETURN(outs[k], ctx.AllocateOutput(k, s));
  }
  if (slice == 0) return OkStatus();
  return DispatchStorage(data.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U* src = Elems<U>(data);
    std::vector<U*> to(num);
    for (int k = 0; k < num; ++k) to[k] = Elems<U>(*outs[k]);
    for (int64_t i = 0; i < n; ++i) {
      to[p[i]] = std::copy(src + i * slice, src + (i + 1) * slice, to[p[i]]);
    }
    return OkStatus();
  });
}

// ---- DynamicStitch, ParallelDynamicStitch ---------------------------------------------------

Status PrepareStitch(PrepareContext& ctx) {
  KILN_PREPARE_ASSIGN(ctx, int64_t n, ctx.attrs.GetInt("N"));
  if (n < 1) return ctx.Error("attr 'N' must be at least 1, got ", n);
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(static_cast<int>(2 * n)));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  std::vector<int64_t> slice;  // data[m].shape[indices[m].rank:], -1 unknown
  bool slice_known = false;
  for (int m = 0; m < n; ++m) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, m, internal::StrCat("indices:", m), DType::kInt32));
    KILN_RETURN_IF_ERROR(
        ExpectInputDType(ctx, static_cast<int>(n) + m, internal::StrCat("data:", m), t));
    const PartialShape& ind = ctx.inputs[m].shape;
    const PartialShape& dat = ctx.inputs[n + m].shape;
    if (ind.unknown_rank() || dat.unknown_rank()) continue;
    if (!StartsWith(dat.dims(), ind.dims())) {
      return ctx.Error("data[", m, "].shape = ", dat.ToPythonString(),
                       " does not start with indices[", m, "].shape = ", ind.ToPythonString());
    }
    std::vector<int64_t> s(dat.dims().begin() + ind.rank(), dat.dims().end());
    if (slice_known) {
      bool ok = s.size() == slice.size();
      for (size_t d = 0; ok && d < s.size(); ++d) {
        ok = s[d] < 0 || slice[d] < 0 || s[d] == slice[d];
        if (slice[d] < 0) slice[d] = s[d];
      }
      if (!ok) {
        return ctx.Error("need data[0].shape[indices[0].rank:] = data[", m, "].shape[indices[", m,
                         "].rank:], got ", DimsString(slice), " and ", DimsString(s));
      }
    } else {
      slice = s;
      slice_known = true;
    }
  }
  PartialShape out;
  if (slice_known && slice.size() < static_cast<size_t>(kMaxRank)) {
    std::vector<int64_t> dims = {-1};
    dims.insert(dims.end(), slice.begin(), slice.end());
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

Status ComputeStitch(const KernelContext& ctx) {
  const int n = ctx.num_inputs() / 2;
  int64_t max_index = -1;
  Shape slice_shape;
  int64_t slice = 0;
  for (int m = 0; m < n; ++m) {
    const Tensor& ind = ctx.input(m);
    const Tensor& dat = ctx.input(n + m);
    if (!StartsWith(dat.shape().dims(), ind.shape().dims())) {
      return ctx.Error("data[", m, "].shape = ", ShapeBrackets(dat.shape().dims()),
                       " does not start with indices[", m,
                       "].shape = ", ShapeBrackets(ind.shape().dims()));
    }
    Shape s;
    for (int d = ind.rank(); d < dat.rank(); ++d) s.AddDim(dat.dim(d));
    if (m == 0) {
      slice_shape = s;
      slice = s.num_elements();
    } else if (s != slice_shape) {
      return ctx.Error("need data[0].shape[indices[0].rank:] = data[", m, "].shape[indices[", m,
                       "].rank:], got ", slice_shape.ToString(), " and ", s.ToString());
    }
    const int32_t* idx = ind.data<int32_t>();
    for (int64_t i = 0; i < ind.NumElements(); ++i) {
      if (idx[i] < 0) {
        return ctx.Error("indices[", m, "]", PositionString(i, ind.shape().dims()), " = ", idx[i],
                         " is out of range (must be >= 0)");
      }
      max_index = std::max<int64_t>(max_index, idx[i]);
    }
  }
  Shape out_shape;
  out_shape.AddDim(max_index + 1);
  for (int64_t d : slice_shape.dims()) out_shape.AddDim(d);
  if (out_shape.rank() > kMaxRank) return ctx.Error("result rank too large");
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  return DispatchStorage(out->dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    U* dst = Elems<U>(*out);
    std::fill(dst, dst + out->NumElements(), U{});
    for (int m = 0; m < n; ++m) {
      const int32_t* idx = ctx.input(m).data<int32_t>();
      const U* src = Elems<U>(ctx.input(n + m));
      for (int64_t i = 0; i < ctx.input(m).NumElements(); ++i) {
        std::copy(src + i * slice, src + (i + 1) * slice, dst + idx[i] * slice);
      }
    }
    return OkStatus();
  });
}

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"DynamicPartition", "outputs", kOpFreshOutputs, PreparePartition},
    {"DynamicStitch", "merged", kOpFreshOutputs, PrepareStitch},
    {"ParallelDynamicStitch", "merged", kOpFreshOutputs, PrepareStitch},
};

constexpr KernelEntry kCpu[] = {
    {"DynamicPartition", ComputePartition},
    {"DynamicStitch", ComputeStitch},
    {"ParallelDynamicStitch", ComputeStitch},
};

}  // namespace

std::span<const OpDefinition> PartitionOpDefs() { return kDefs; }
std::span<const KernelEntry> PartitionCpuKernels() { return kCpu; }

}  // namespace kiln::exec
