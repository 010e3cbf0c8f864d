// Padding: Pad and PadV2 (a constant border) and MirrorPad (reflected borders). The paddings
// input is a [rank, 2] matrix of (before, after) counts per dim.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/dim_map_copy.h"
#include "kernels/op_families.h"

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

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"Pad", "output", kOpFreshOutputs, PreparePad},
    {"PadV2", "output", kOpFreshOutputs, PreparePad},
    {"MirrorPad", "output", kOpFreshOutputs, PreparePad},
};

constexpr KernelEntry kCpu[] = {
    {"Pad", ComputePad},
    {"PadV2", ComputePad},
    {"MirrorPad", ComputeMirrorPad},
};

}  // namespace

std::span<const OpDefinition> PadOpDefs() { return kDefs; }
std::span<const KernelEntry> PadCpuKernels() { return kCpu; }

}  // namespace kiln::exec
