// Making tensors from values: Fill, Empty, Range, Tile, BroadcastTo. The CPU kernels are in
// kernels/cpu/fill_ops.cc.
#include "kernels/fill_ops.h"

#include <cstdint>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using fill::RangeSizeOf;

// ---- Fill --------------------------------------------------------------------------------------

Status PrepareFill(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 0, "dims", "index_type").status());
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 1, "value"));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "dims", 1));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "value", 0));
  PartialShape out = UnknownDims(static_cast<int>(KnownLength(ctx.inputs[0].shape)));
  if (const Tensor* dims = ConstantInput(ctx, 0)) {
    auto s = ShapeFromDimsTensor(*dims, "dims");
    if (!s.ok()) return ctx.Error(s.status().message());
    out = *s;
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

// ---- Range -------------------------------------------------------------------------------------

Status PrepareRange(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("Tidx", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tidx", t, BasicRealTypes::kDTypes));
  const char* names[] = {"start", "limit", "delta"};
  for (int i = 0; i < 3; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, names[i], t));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, i, names[i], 0));
  }
  PartialShape out{-1};
  const Tensor* s = ConstantInput(ctx, 0);
  const Tensor* l = ConstantInput(ctx, 1);
  const Tensor* d = ConstantInput(ctx, 2);
  if (s && l && d) {
    Result<int64_t> n = int64_t{0};
    KILN_RETURN_IF_ERROR(Dispatch<BasicRealTypes>(t, [&](auto tag) {
      n = RangeSizeOf<typename decltype(tag)::type>(*s, *l, *d);
      return OkStatus();
    }));
    if (!n.ok()) return ctx.Error(n.status().message());
    out = PartialShape{*n};
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

// ---- Tile, BroadcastTo -----------------------------------------------------------------------

Status PrepareTile(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 1, "multiples", "Tmultiples").status());
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "multiples", 1));
  const PartialShape& in = ctx.inputs[0].shape;
  const int64_t n = KnownLength(ctx.inputs[1].shape);
  if (!in.unknown_rank() && n >= 0 && n != in.rank()) {
    return ctx.Error("input 'multiples' has ", n, " entries but 'input' has shape ",
                     in.ToPythonString());
  }
  const int rank = in.unknown_rank() ? static_cast<int>(n) : in.rank();
  PartialShape out = UnknownDims(rank);
  if (const Tensor* m = ConstantInput(ctx, 1); m != nullptr && rank >= 0) {
    std::vector<int64_t> mult = IndexValues(*m);
    std::vector<int64_t> dims(rank, -1);
    for (int i = 0; i < rank; ++i) {
      if (mult[i] < 0) {
        return ctx.Error("input 'multiples' ", DimsString(mult), " has a negative entry");
      }
      const int64_t d = in.unknown_rank() ? -1 : in.dim(i);
      dims[i] = mult[i] == 0 ? 0 : d < 0 ? -1 : d * mult[i];
    }
    out = *PartialShape::FromDims(dims);
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

Status PrepareBroadcastTo(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  KILN_RETURN_IF_ERROR(IndexInputDType(ctx, 1, "shape", "Tidx").status());
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "shape", 1));
  PartialShape out = UnknownDims(static_cast<int>(KnownLength(ctx.inputs[1].shape)));
  if (const Tensor* shape_t = ConstantInput(ctx, 1)) {
    auto target = ShapeFromDimsTensor(*shape_t, "shape");
    if (!target.ok()) return ctx.Error(target.status().message());
    const PartialShape& in = ctx.inputs[0].shape;
    if (!in.unknown_rank()) {
      bool ok = in.rank() <= target->rank();
      for (int i = 0; ok && i < in.rank(); ++i) {
        const int64_t d = in.dim(in.rank() - 1 - i);
        const int64_t want = target->dim(target->rank() - 1 - i);
        ok = d == -1 || d == 1 || d == want;
      }
      if (!ok) {
        return ctx.Error("cannot broadcast a tensor of shape ", in.ToPythonString(), " to shape ",
                         target->ToString());
      }
    }
    out = *target;
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

// ---- Empty -----------------------------------------------------------------------------------

// Empty(shape) of attr dtype. TF leaves the elements uninitialised unless `init`; here they are
// always zero (strings empty), so no call ever reads stale memory.
Status PrepareEmpty(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "shape", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "shape", 1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("dtype"));
  if (!HoldsData(t)) return ctx.Error("attr 'dtype': ", DTypeShortName(t), " holds no data");
  PartialShape out = UnknownDims(static_cast<int>(KnownLength(ctx.inputs[0].shape)));
  if (const Tensor* dims = ConstantInput(ctx, 0)) {
    auto s = ShapeFromDimsTensor(*dims, "shape");
    if (!s.ok()) return ctx.Error(s.status().message());
    out = *s;
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"Fill", "output", kOpFreshOutputs, PrepareFill},
    {"Empty", "output", kOpFreshOutputs, PrepareEmpty},
    {"Range", "output", kOpFreshOutputs, PrepareRange},
    {"Tile", "output", kOpFreshOutputs, PrepareTile},
    {"BroadcastTo", "output", kOpNone, PrepareBroadcastTo},
};

}  // namespace

std::span<const OpDefinition> FillOpDefs() { return kDefs; }

}  // namespace kiln::exec
