// Gradients of TF 1's fused recurrent cells (rnn_ops.cc has the forward ops): LSTMBlockCellGrad,
// BlockLSTMGrad / BlockLSTMGradV2 and GRUBlockCellGrad: definitions. The CPU kernels, with TF's
// formulas, are in kernels/cpu/rnn_grad_ops.cc.
#include "kernels/rnn_grad_ops.h"

#include <cstdint>
#include <iterator>
#include <memory>

#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using rnn_grad::ArgsOf;
using rnn_grad::ArgSpec;
using rnn_grad::k2H;
using rnn_grad::k4H;
using rnn_grad::kH;
using rnn_grad::Kind;
using rnn_grad::kN;
using rnn_grad::kNH;
using rnn_grad::kSymNames;
using rnn_grad::OpArgs;
using rnn_grad::RnnGradState;
using rnn_grad::Sym;
using rnn_grad::SymShapeString;
using rnn_grad::SymValue;

// An argument's shape for prepare-time sizes (-1: unknown).
PartialShape SymPartialShape(const ArgSpec& a, const int64_t d[4]) {
  const int64_t v0 = SymValue(d, a.dims[0]);
  if (a.rank == 1) return PartialShape{v0};
  const int64_t v1 = SymValue(d, a.dims[1]);
  return a.rank == 2 ? PartialShape{v0, v1} : PartialShape{v0, v1, SymValue(d, a.dims[2])};
}

Status PrepareRnnGrad(PrepareContext& ctx, Kind kind) {
  const OpArgs args = ArgsOf(kind);
  const int k0 = args.k0;
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(k0 + static_cast<int>(std::ssize(args.ins))));
  auto st = std::make_shared<RnnGradState>();
  st->kind = kind;
  KILN_PREPARE_ASSIGN(ctx, st->t, ctx.attrs.GetType("T"));
  if (kind == Kind::kGru) {
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->t, {DType::kFloat}));
  } else {
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->t, {DType::kHalf, DType::kFloat}));
    // TF's OpDef gives use_peephole no default.
    if (!ctx.attrs.Has("use_peephole")) return ctx.Error("attr 'use_peephole' is required");
    KILN_PREPARE_ASSIGN(ctx, st->peephole, ctx.attrs.GetBool("use_peephole", false));
  }
  if (k0 == 1) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "seq_len_max", DType::kInt64));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "seq_len_max", 0));
  }
  int64_t d[4] = {-1, -1, -1, -1};
  auto merge = [&](Sym s, int64_t v, int i) -> Status {
    if (d[s] >= 0 && d[s] != v) {
      return ctx.Error("input '", args.ins[i].name, "' has shape ",
                       ctx.inputs[k0 + i].shape.ToPythonString(), ", which disagrees on the ",
                       kSymNames[s], " (", d[s], ") with the other inputs");
    }
    d[s] = v;
    return OkStatus();
  };
  for (int i = 0; i < std::ssize(args.ins); ++i) {
    const ArgSpec& a = args.ins[i];
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, k0 + i, a.name, st->t));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, k0 + i, a.name, a.rank));
    const PartialShape& s = ctx.inputs[k0 + i].shape;
    if (s.unknown_rank()) continue;
    for (int k = 0; k < a.rank; ++k) {
      const int64_t v = s.dim(k);
      const Sym sym = a.dims[k];
      if (v < 0 || sym == kNH) continue;
      if (sym == k2H || sym == k4H) {
        const int m = sym == k2H ? 2 : 4;
        if (v % m != 0) {
          return ctx.Error("input '", a.name, "' must have shape ", SymShapeString(a), ", got ",
                           s.ToPythonString());
        }
        KILN_RETURN_IF_ERROR(merge(kH, v / m, i));
      } else {
        KILN_RETURN_IF_ERROR(merge(sym, v, i));
      }
    }
  }
  // The weights' rows: input_size + cell_size.
  for (int i = 0; i < std::ssize(args.ins); ++i) {
    const PartialShape& s = ctx.inputs[k0 + i].shape;
    if (args.ins[i].dims[0] != kNH || s.unknown_rank() || s.dim(0) < 0) continue;
    if (d[kH] >= 0 && d[kN] < 0 && s.dim(0) >= d[kH]) d[kN] = s.dim(0) - d[kH];
    if (d[kN] >= 0 && d[kH] < 0 && s.dim(0) >= d[kN]) d[kH] = s.dim(0) - d[kN];
    if (SymValue(d, kNH) >= 0 && s.dim(0) != SymValue(d, kNH)) {
      return ctx.Error("input '", args.ins[i].name,
                       "' must have input_size + cell_size = ", SymValue(d, kNH),
                       " rows, got shape ", s.ToPythonString());
    }
  }
  if (k0 == 1 && d[kH] == 0) {
    return ctx.Error("input 'w' must have a positive multiple of 4 columns, got shape ",
                     ctx.inputs[k0 + 3].shape.ToPythonString());
  }
  for (const ArgSpec& a : args.outs)
    ctx.outputs.push_back(TensorSpec{st->t, SymPartialShape(a, d)});
  ctx.state = std::move(st);
  return OkStatus();
}

Status PrepareLstmBlockCellGrad(PrepareContext& ctx) {
  return PrepareRnnGrad(ctx, Kind::kLstmCell);
}
Status PrepareBlockLstmGrad(PrepareContext& ctx) { return PrepareRnnGrad(ctx, Kind::kBlockLstm); }
Status PrepareBlockLstmGradV2(PrepareContext& ctx) {
  return PrepareRnnGrad(ctx, Kind::kBlockLstmV2);
}
Status PrepareGruBlockCellGrad(PrepareContext& ctx) { return PrepareRnnGrad(ctx, Kind::kGru); }

constexpr OpDefinition kDefs[] = {
    {"BlockLSTMGrad", "x_grad,cs_prev_grad,h_prev_grad,w_grad,wci_grad,wcf_grad,wco_grad,b_grad",
     kOpFreshOutputs, PrepareBlockLstmGrad},
    {"BlockLSTMGradV2", "x_grad,cs_prev_grad,h_prev_grad,w_grad,wci_grad,wcf_grad,wco_grad,b_grad",
     kOpFreshOutputs, PrepareBlockLstmGradV2},
    {"GRUBlockCellGrad", "d_x,d_h_prev,d_c_bar,d_r_bar_u_bar", kOpFreshOutputs,
     PrepareGruBlockCellGrad},
    {"LSTMBlockCellGrad", "cs_prev_grad,dicfo,wci_grad,wcf_grad,wco_grad", kOpFreshOutputs,
     PrepareLstmBlockCellGrad},
};

}  // namespace

std::span<const OpDefinition> RnnGradOpDefs() { return kDefs; }

}  // namespace kiln::exec
