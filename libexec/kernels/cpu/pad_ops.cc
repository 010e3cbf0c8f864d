// The CPU kernels of the ops in kernels/pad_ops.cc: Pad fills the border and copies the
// interior, MirrorPad copies through per-dim index maps, MirrorPadGrad adds each input element
// onto the element it was mirrored from.
#include "kernels/pad_ops.h"

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/dim_map_copy.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using pad::CheckMirror;
using pad::Mirror;
using pad::MirrorState;
using pad::Paddings;
using pad::Pads;

Status ComputePad(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  auto pads = Paddings(ctx.input(1), x.rank());
  if (!pads.ok()) return Wrap(ctx, pads.status());
  const std::vector<Pads>& p = *pads;
  Shape shape;
  for (int d = 0; d < x.rank(); ++d) shape.AddDim(x.dim(d) + p[d].before + p[d].after);
  if (ctx.num_inputs() == 3 && ctx.input(2).NumElements() != 1) {
    return ctx.Error("input 'constant_values' must be a scalar, got shape ",
                     ctx.input(2).shape().ToString());
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.dtype(), shape));
  // The interior: input element i goes to the output at (i + before) along every dim.
  const auto out_strides = RowMajorStrides(shape);
  const auto in_strides = RowMajorStrides(x.shape());
  StridedPlan<2> plan;
  for (int d = 0; d < x.rank(); ++d) {
    plan.offset[0] += p[d].before * out_strides[d];
    plan.AddDim(x.dim(d), {out_strides[d], in_strides[d]});
  }
  return DispatchStorage(x.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    U* dst = Elems<U>(*out);
    const U border = ctx.num_inputs() == 3 ? Elems<U>(ctx.input(2))[0] : U{};
    if (out->NumElements() != x.NumElements()) {
      ctx.threads().ParallelFor(out->NumElements(), 65536, [&](int64_t begin, int64_t end) {
        std::fill(dst + begin, dst + end, border);
      });
    }
    const U* src = Elems<U>(x);
    ParallelWalk(plan, ctx.threads(), 65536, [&](const auto& off, int64_t n, const auto& s) {
      U* to = dst + off[0];
      const U* from = src + off[1];
      if (s[0] == 1) {
        std::copy(from, from + n, to);
      } else {
        for (int64_t j = 0; j < n; ++j) to[j * s[0]] = from[j];
      }
    });
    return OkStatus();
  });
}

Status ComputeMirrorPad(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Mirror mode = ctx.state<MirrorState>().value;
  auto pads = Paddings(ctx.input(1), x.rank());
  if (!pads.ok()) return Wrap(ctx, pads.status());
  const std::vector<Pads>& p = *pads;
  const auto in_strides = RowMajorStrides(x.shape());
  Shape shape;
  DimOffsets maps(x.rank());
  for (int d = 0; d < x.rank(); ++d) {
    const int64_t dim = x.dim(d);
    Status s = CheckMirror(mode, d, dim, p[d].before, p[d].after);
    if (!s.ok()) return Wrap(ctx, s);
    const int64_t size = dim + p[d].before + p[d].after;
    shape.AddDim(size);
    maps[d].resize(size);
    const int64_t edge = mode == Mirror::kReflect ? 0 : 1;
    for (int64_t o = 0; o < size; ++o)
      maps[d][o] = pad::MirrorIndex(o, p[d].before, dim, edge) * in_strides[d];
  }
  return CopyByDimMaps(ctx, 0, x, shape, maps);
}

// ---- MirrorPadGrad ---------------------------------------------------------------------------

template <typename C>
inline void AddInto(C* dst, C v) {
  if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<C>;
    *dst = static_cast<C>(static_cast<U>(static_cast<U>(*dst) + static_cast<U>(v)));
  } else {
    *dst = *dst + v;
  }
}

// Adds the input block at dims [d, rank) into the output block, through the per-dim maps from
// input index to output offset.
template <typename C>
void FoldDims(const C* in, C* out, const std::vector<int64_t>& in_strides,
              const std::vector<std::vector<int64_t>>& maps, int d) {
  const int rank = static_cast<int>(maps.size());
  const std::vector<int64_t>& map = maps[d];
  const int64_t n = static_cast<int64_t>(map.size());
  if (d == rank - 1) {
    for (int64_t i = 0; i < n; ++i) AddInto(out + map[i], in[i]);
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    FoldDims(in + i * in_strides[d], out + map[i], in_strides, maps, d + 1);
}

Status ComputeMirrorPadGrad(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Mirror mode = ctx.state<MirrorState>().value;
  auto pads = Paddings(ctx.input(1), x.rank());
  if (!pads.ok()) return Wrap(ctx, pads.status());
  const std::vector<Pads>& p = *pads;
  Shape shape;
  for (int d = 0; d < x.rank(); ++d) {
    const int64_t size = x.dim(d) - p[d].before - p[d].after;
    Status s = CheckMirror(mode, d, size, p[d].before, p[d].after);
    if (!s.ok()) return Wrap(ctx, s);
    shape.AddDim(size);
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, shape));
  const int rank = x.rank();
  const auto out_strides = RowMajorStrides(shape);
  const auto in_strides_arr = RowMajorStrides(x.shape());
  const std::vector<int64_t> in_strides(in_strides_arr.begin(), in_strides_arr.begin() + rank);
  // maps[d][i]: the output offset (along dim d) that input index i folds onto.
  std::vector<std::vector<int64_t>> maps(rank);
  const int64_t edge = mode == Mirror::kReflect ? 0 : 1;
  for (int d = 0; d < rank; ++d) {
    maps[d].resize(x.dim(d));
    for (int64_t i = 0; i < x.dim(d); ++i) {
      int64_t o = i - p[d].before;
      if (o < 0) o = -o - edge;
      if (o >= shape.dim(d)) o = 2 * shape.dim(d) - 2 + edge - o;
      maps[d][i] = o * out_strides[d];
    }
  }
  return Dispatch<NumberTypes>(x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* src = ComputeData<T>(x);
    C* dst = MutableComputeData<T>(out);
    std::fill_n(dst, out->NumElements(), C(0));
    if (rank == 0) {
      if (x.NumElements() == 1) dst[0] = src[0];
      return OkStatus();
    }
    if (x.NumElements() == 0) return OkStatus();
    // Threads take output rows (dim 0); each adds the input rows that fold onto its rows, in
    // input order, so every sum runs in one order.
    std::vector<std::vector<int64_t>> rows_of(shape.dim(0));
    for (int64_t i = 0; i < x.dim(0); ++i) rows_of[maps[0][i] / out_strides[0]].push_back(i);
    const int64_t row = x.NumElements() / x.dim(0);
    ctx.threads().ParallelFor(shape.dim(0), std::max<int64_t>(1, 16384 / std::max<int64_t>(1, row)),
                              [&](int64_t r0, int64_t r1) {
                                for (int64_t r = r0; r < r1; ++r) {
                                  for (int64_t i : rows_of[r]) {
                                    if (rank == 1) {
                                      AddInto(dst + maps[0][i], src[i]);
                                    } else {
                                      FoldDims(src + i * in_strides[0], dst + maps[0][i],
                                               in_strides, maps, 1);
                                    }
                                  }
                                }
                              });
    return OkStatus();
  });
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"Pad", ComputePad},
    {"PadV2", ComputePad},
    {"MirrorPad", ComputeMirrorPad},
    {"MirrorPadGrad", ComputeMirrorPadGrad},
};

}  // namespace

std::span<const KernelEntry> PadCpuKernels() { return kCpu; }

}  // namespace kiln::exec
