// LSTMBlockCell (tf.raw_ops.LSTMBlockCell, TF 1's LSTMBlockCell / LSTMBlockFusedCell step),
// BlockLSTM / BlockLSTMV2 (LSTMBlockFusedCell: the cell over x's leading time dim, for
// seq_len_max steps) and GRUBlockCell: definitions. The CPU kernels, with the cells' formulas,
// are in kernels/cpu/rnn_ops.cc.
#include "kernels/rnn_ops.h"

#include <cstdint>
#include <memory>

#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using rnn::kGruInputNames;
using rnn::kInputNames;
using rnn::LstmState;
using rnn::LstmTypes;

// LSTMBlockCell (block false) and BlockLSTM / BlockLSTMV2 (block true, whose inputs follow a
// seq_len_max scalar and whose x and outputs have a leading time dim).
Status PrepareLstm(PrepareContext& ctx, bool block, bool v2) {
  const int k0 = block ? 1 : 0;  // index of x
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(8 + k0));
  auto st = std::make_shared<LstmState>();
  st->block = block;
  st->ifco = v2;
  KILN_PREPARE_ASSIGN(ctx, st->t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->t, LstmTypes::kDTypes));
  if (v2) {
    st->forget_bias = 0;  // BlockLSTMV2 has no forget_bias
  } else {
    KILN_PREPARE_ASSIGN(ctx, st->forget_bias, ctx.attrs.GetFloat("forget_bias", 1.0f));
  }
  KILN_PREPARE_ASSIGN(ctx, st->cell_clip, ctx.attrs.GetFloat("cell_clip", v2 ? 0.0f : 3.0f));
  KILN_PREPARE_ASSIGN(ctx, st->peephole, ctx.attrs.GetBool("use_peephole", false));
  if (block) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "seq_len_max", DType::kInt64));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "seq_len_max", 0));
  }
  const int kRanks[] = {block ? 3 : 2, 2, 2, 2, 1, 1, 1, 1};
  for (int i = 0; i < 8; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, k0 + i, kInputNames[i], st->t));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, k0 + i, kInputNames[i], kRanks[i]));
  }
  auto dim = [&](int i, int d) {
    const PartialShape& s = ctx.inputs[k0 + i].shape;
    return s.unknown_rank() ? int64_t{-1} : s.dim(d);
  };
  // batch from x, cs_prev, h_prev; cell from cs_prev, h_prev, the peepholes, w and b.
  int64_t batch = dim(0, k0), cell = -1;
  const int64_t input = dim(0, k0 + 1), time = block ? dim(0, 0) : 0;
  auto merge = [&](int64_t* into, int64_t v, int i, const char* what) -> Status {
    if (v < 0) return OkStatus();
    if (*into >= 0 && *into != v) {
      return ctx.Error("input '", kInputNames[i], "' has shape ",
                       ctx.inputs[k0 + i].shape.ToPythonString(), ", which disagrees on the ", what,
                       " (", *into, ") with the other inputs");
    }
    *into = v;
    return OkStatus();
  };
  for (int i : {1, 2}) KILN_RETURN_IF_ERROR(merge(&batch, dim(i, 0), i, "batch size"));
  for (int i : {1, 2}) KILN_RETURN_IF_ERROR(merge(&cell, dim(i, 1), i, "cell size"));
  for (int i : {4, 5, 6}) KILN_RETURN_IF_ERROR(merge(&cell, dim(i, 0), i, "cell size"));
  if (dim(3, 1) >= 0) {
    if (dim(3, 1) % 4 != 0) {
      return ctx.Error("input 'w' must have 4 * cell_size columns, got shape ",
                       ctx.inputs[k0 + 3].shape.ToPythonString());
    }
    KILN_RETURN_IF_ERROR(merge(&cell, dim(3, 1) / 4, 3, "cell size"));
  }
  if (dim(7, 0) >= 0) {
    if (dim(7, 0) % 4 != 0) {
      return ctx.Error("input 'b' must have 4 * cell_size elements, got shape ",
                       ctx.inputs[k0 + 7].shape.ToPythonString());
    }
    KILN_RETURN_IF_ERROR(merge(&cell, dim(7, 0) / 4, 7, "cell size"));
  }
  if (input >= 0 && cell >= 0 && dim(3, 0) >= 0 && dim(3, 0) != input + cell) {
    return ctx.Error("input 'w' must have input_size + cell_size = ", input + cell,
                     " rows, got shape ", ctx.inputs[k0 + 3].shape.ToPythonString());
  }
  const PartialShape out = block ? PartialShape{time, batch, cell} : PartialShape{batch, cell};
  ctx.outputs.assign(7, TensorSpec{st->t, out});
  ctx.state = std::move(st);
  return OkStatus();
}

Status PrepareLstmBlockCell(PrepareContext& ctx) { return PrepareLstm(ctx, false, false); }
Status PrepareBlockLstm(PrepareContext& ctx) { return PrepareLstm(ctx, true, false); }
Status PrepareBlockLstmV2(PrepareContext& ctx) { return PrepareLstm(ctx, true, true); }

// GRUBlockCell (TF 1's GRUBlockCell), float only as TF's CPU kernel:
//   [r, u] = sigmoid([x, h_prev] * w_ru + b_ru), c = tanh([x, h_prev * r] * w_c + b_c),
//   h = u * (h_prev - c) + c.
Status PrepareGruBlockCell(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(6));
  DType t = DType::kFloat;
  KILN_PREPARE_ASSIGN(ctx, t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, {DType::kFloat}));
  static constexpr int kRanks[] = {2, 2, 2, 2, 1, 1};
  for (int i = 0; i < 6; ++i) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, kGruInputNames[i], t));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, i, kGruInputNames[i], kRanks[i]));
  }
  auto dim = [&](int i, int d) {
    const PartialShape& s = ctx.inputs[i].shape;
    return s.unknown_rank() ? int64_t{-1} : s.dim(d);
  };
  const int64_t batch = dim(0, 0) >= 0 ? dim(0, 0) : dim(1, 0);
  const int64_t cell = dim(1, 1) >= 0 ? dim(1, 1) : dim(3, 1);
  ctx.outputs.assign(4, TensorSpec{t, PartialShape{batch, cell}});
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"BlockLSTM", "i,cs,f,o,ci,co,h", kOpFreshOutputs, PrepareBlockLstm},
    {"BlockLSTMV2", "i,cs,f,o,ci,co,h", kOpFreshOutputs, PrepareBlockLstmV2},
    {"GRUBlockCell", "r,u,c,h", kOpFreshOutputs, PrepareGruBlockCell},
    {"LSTMBlockCell", "i,cs,f,o,ci,co,h", kOpFreshOutputs, PrepareLstmBlockCell},
};

}  // namespace

std::span<const OpDefinition> RnnOpDefs() { return kDefs; }

}  // namespace kiln::exec
