// Padding: Pad and PadV2 (a constant border), MirrorPad (reflected borders) and its gradient
// MirrorPadGrad. The paddings input is a [rank, 2] matrix of (before, after) counts per dim.
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/dim_map_copy.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

enum class Mirror { kNone, kReflect, kSymmetric };
using MirrorState = TypedOpState<Mirror>;

struct Pads {
  int64_t before = 0, after = 0;
};

// The (before, after) pairs of a paddings tensor for an input of `rank` dims.
Result<std::vector<Pads>> Paddings(const Tensor& p, int rank) {
  if (p.rank() != 2 || p.dim(0) != rank || p.dim(1) != 2) {
    return InvalidArgument("input 'paddings' must have shape [", rank,
                           ", 2] (the input's rank, 2), got ", p.shape().ToString());
  }
  const std::vector<int64_t> v = IndexValues(p);
  std::vector<Pads> pads(rank);
  for (size_t d = 0; d < pads.size(); ++d) {
    pads[d] = {v[2 * d], v[2 * d + 1]};
    if (pads[d].before < 0 || pads[d].after < 0) {
      return InvalidArgument("paddings must be non-negative: dim ", d, " has (", pads[d].before,
                             ", ", pads[d].after, ")");
    }
  }
  return pads;
}

// Checks the pads of a mirrored dim of size `dim` (REFLECT needs pads < dim, SYMMETRIC <= dim).
Status CheckMirror(Mirror mode, int d, int64_t dim, int64_t before, int64_t after) {
  const int64_t limit = mode == Mirror::kReflect ? dim - 1 : dim;
  if (before > limit || after > limit) {  // as TF: REFLECT refuses an empty dim
    return InvalidArgument("paddings (", before, ", ", after, ") of dim ", d, " (size ", dim,
                           ") must be ",
                           mode == Mirror::kReflect ? "less than the dimension size in REFLECT mode"
                                                    : "no greater than the dimension size in "
                                                      "SYMMETRIC mode");
  }
  return OkStatus();
}

Status PreparePad(PrepareContext& ctx) {
  const bool v2 = ctx.op == "PadV2";
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(v2 ? 3 : 2));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 1, "paddings", "Tpaddings", DType::kInt32).status());
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "paddings", 2));
  if (v2) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "constant_values", t));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "constant_values", 0));
  }
  Mirror mode = Mirror::kNone;
  if (ctx.op == "MirrorPad") {
    KILN_PREPARE_ASSIGN(ctx, std::string m, ctx.attrs.GetString("mode"));
    if (m == "REFLECT") {
      mode = Mirror::kReflect;
    } else if (m == "SYMMETRIC") {
      mode = Mirror::kSymmetric;
    } else {
      return ctx.Error("attr 'mode' must be \"REFLECT\" or \"SYMMETRIC\", got \"", m, "\"");
    }
  }
  const PartialShape& in = ctx.inputs[0].shape;
  const PartialShape& ps = ctx.inputs[1].shape;
  int rank = in.rank();
  if (!ps.unknown_rank()) {
    if (ps.dim(1) >= 0 && ps.dim(1) != 2) {
      return ctx.Error("input 'paddings' must have shape [rank, 2], got ", ps.ToPythonString());
    }
    if (ps.dim(0) >= 0) {
      if (rank >= 0 && ps.dim(0) != rank) {
        return ctx.Error("input 'paddings' ", ps.ToPythonString(), " must have one row per dim of ",
                         "'input' ", in.ToPythonString());
      }
      rank = static_cast<int>(ps.dim(0));
    }
  }
  PartialShape out = UnknownDims(rank);
  if (const Tensor* p = ConstantInput(ctx, 1); p != nullptr && rank >= 0) {
    auto pads = Paddings(*p, rank);
    if (!pads.ok()) return ctx.Error(pads.status().message());
    std::vector<int64_t> dims(rank, -1);
    for (int d = 0; d < rank; ++d) {
      if (in.unknown_rank() || in.dim(d) < 0) continue;
      if (mode != Mirror::kNone) {
        Status s = CheckMirror(mode, d, in.dim(d), (*pads)[d].before, (*pads)[d].after);
        if (!s.ok()) return ctx.Error(s.message());
      }
      dims[d] = in.dim(d) + (*pads)[d].before + (*pads)[d].after;
    }
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::make_shared<MirrorState>(mode);
  return OkStatus();
}

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
    // REFLECT mirrors around the edge element (it is not repeated), SYMMETRIC repeats it.
    const int64_t edge = mode == Mirror::kReflect ? 0 : 1;
    for (int64_t o = 0; o < size; ++o) {
      int64_t i = o - p[d].before;
      if (i < 0) i = -i - edge;
      if (i >= dim) i = 2 * dim - 2 + edge - i;
      maps[d][o] = i * in_strides[d];
    }
  }
  return CopyByDimMaps(ctx, 0, x, shape, maps);
}

// ---- MirrorPadGrad ---------------------------------------------------------------------------

// MirrorPadGrad(input, paddings): the gradient of MirrorPad. The output is input's shape less
// the pads; each input element is added to the output element MirrorPad copied it from (the
// border folds back onto the interior), in T's arithmetic (integers wrap).
Status PrepareMirrorPadGrad(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, NumberTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 1, "paddings", "Tpaddings", DType::kInt32).status());
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "paddings", 2));
  KILN_PREPARE_ASSIGN(ctx, std::string m, ctx.attrs.GetString("mode"));
  if (m != "REFLECT" && m != "SYMMETRIC") {
    return ctx.Error("attr 'mode' must be \"REFLECT\" or \"SYMMETRIC\", got \"", m, "\"");
  }
  const Mirror mode = m == "REFLECT" ? Mirror::kReflect : Mirror::kSymmetric;
  const PartialShape& in = ctx.inputs[0].shape;
  PartialShape out = UnknownDims(in.rank());
  if (const Tensor* p = ConstantInput(ctx, 1); p != nullptr && !in.unknown_rank()) {
    auto pads = Paddings(*p, in.rank());
    if (!pads.ok()) return ctx.Error(pads.status().message());
    std::vector<int64_t> dims(in.rank(), -1);
    for (int d = 0; d < in.rank(); ++d) {
      if (in.dim(d) < 0) continue;
      dims[d] = in.dim(d) - (*pads)[d].before - (*pads)[d].after;
      Status s = CheckMirror(mode, d, dims[d], (*pads)[d].before, (*pads)[d].after);
      if (!s.ok()) return ctx.Error(s.message());
    }
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::make_shared<MirrorState>(mode);
  return OkStatus();
}

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

constexpr OpDefinition kDefs[] = {
    {"Pad", "output", kOpFreshOutputs, PreparePad},
    {"PadV2", "output", kOpFreshOutputs, PreparePad},
    {"MirrorPad", "output", kOpFreshOutputs, PreparePad},
    {"MirrorPadGrad", "output", kOpFreshOutputs, PrepareMirrorPadGrad},
};

constexpr KernelEntry kCpu[] = {
    {"Pad", ComputePad},
    {"PadV2", ComputePad},
    {"MirrorPad", ComputeMirrorPad},
    {"MirrorPadGrad", ComputeMirrorPadGrad},
};

}  // namespace

std::span<const OpDefinition> PadOpDefs() { return kDefs; }
std::span<const KernelEntry> PadCpuKernels() { return kCpu; }

}  // namespace kiln::exec
