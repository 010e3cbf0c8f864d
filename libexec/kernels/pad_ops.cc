// Padding: Pad and PadV2 (a constant border), MirrorPad (reflected borders) and its gradient
// MirrorPadGrad. The paddings input is a [rank, 2] matrix of (before, after) counts per dim. The
// CPU kernels are in kernels/cpu/pad_ops.cc.
#include "kernels/pad_ops.h"

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using pad::CheckMirror;
using pad::Mirror;
using pad::MirrorState;
using pad::Paddings;

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

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"Pad", "output", kOpFreshOutputs, PreparePad},
    {"PadV2", "output", kOpFreshOutputs, PreparePad},
    {"MirrorPad", "output", kOpFreshOutputs, PreparePad},
    {"MirrorPadGrad", "output", kOpFreshOutputs, PrepareMirrorPadGrad},
};

}  // namespace

std::span<const OpDefinition> PadOpDefs() { return kDefs; }

}  // namespace kiln::exec
