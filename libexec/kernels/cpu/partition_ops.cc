// The CPU kernels of the ops in kernels/partition_ops.cc. DynamicStitch and
// ParallelDynamicStitch are the same here: merged in input order, so a later index wins,
// deterministically; rows no index names are zeros.
#include "kernels/partition_ops.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/nd_index.h"

namespace kiln::exec {
namespace {

using partition::StartsWith;

// ---- DynamicPartition ------------------------------------------------------------------------

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

constexpr KernelEntry kCpu[] = {
    {"DynamicPartition", ComputePartition},
    {"DynamicStitch", ComputeStitch},
    {"ParallelDynamicStitch", ComputeStitch},
};

}  // namespace

std::span<const KernelEntry> PartitionCpuKernels() { return kCpu; }

}  // namespace kiln::exec
