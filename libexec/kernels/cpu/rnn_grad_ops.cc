// The CPU kernels of the recurrent cells' gradients in kernels/rnn_grad_ops.cc, as TF's CPU
// kernels (lstm_ops.h's LSTMBlockCellBprop / BlockLSTMBprop, gru_ops.h's GRUBlockCellBprop):
//   LSTMBlockCellGrad(x, cs_prev, h_prev, w, wci, wcf, wco, b, i, cs, f, o, ci, co, cs_grad,
//     h_grad) -> cs_prev_grad, dicfo (the gate pre-activations' grads, i, ci, f, o), wci_grad,
//     wcf_grad, wco_grad:
//       do = o (1 - o) h_grad co, dcs = (1 - co^2) h_grad o + cs_grad [+ do wco],
//       dci = (1 - ci^2) dcs i, df = f (1 - f) dcs cs_prev, di = i (1 - i) dcs ci,
//       cs_prev_grad = dcs f [+ di wci + df wcf], wc*_grad = sums over the batch of di cs_prev,
//       df cs_prev, do cs (zero without use_peephole).
//   BlockLSTMGrad / BlockLSTMGradV2(seq_len_max, x, ..., b, i, cs, f, o, ci, co, h, cs_grad,
//     h_grad) -> x_grad, cs_prev_grad, h_prev_grad, w_grad, wci_grad, wcf_grad, wco_grad, b_grad:
//     the same step from seq_len_max - 1 down to 0, each taking the cs and h grads the later
//     step passed back plus that step's cs_grad and h_grad; [x, h_prev] grads = dgates w^T,
//     w_grad += [x, h_prev]^T dgates, b_grad += the batch sum of dgates. x_grad is zero past
//     seq_len_max. V2's gates lie along w's columns as i, f, ci, o instead of i, ci, f, o.
//     Neither grad reads cell_clip or forget_bias (TF's kernels take only use_peephole).
//   GRUBlockCellGrad(x, h_prev, w_ru, w_c, b_ru, b_c, r, u, c, d_h) -> d_x, d_h_prev, d_c_bar,
//     d_r_bar_u_bar: d_c_bar = d_h (1 - u) (1 - c^2), d_u_bar = d_h (h_prev - c) u (1 - u),
//     [., d_hr] = d_c_bar w_c^T, d_r_bar = d_hr h_prev r (1 - r), [d_x1, d_h1] = [d_r_bar,
//     d_u_bar] w_ru^T, d_x = d_x1 + (d_c_bar w_c^T)'s x part, d_h_prev = d_h1 + d_hr r + d_h u.
// TF computes half in half: every Eigen operation rounds to half, batch sums and products
// accumulate in half in order. The half path does the same operations in the same order
// (Eigen::half arithmetic), so it rounds where TF's does.
#include "kernels/rnn_grad_ops.h"

#include <Eigen/Core>
#include <algorithm>
#include <iterator>
#include <type_traits>

#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using rnn_grad::ArgsOf;
using rnn_grad::ArgSpec;
using rnn_grad::kB;
using rnn_grad::kH;
using rnn_grad::Kind;
using rnn_grad::kN;
using rnn_grad::kT;
using rnn_grad::OpArgs;
using rnn_grad::RnnGradState;
using rnn_grad::SymShapeString;
using rnn_grad::SymValue;

// An argument's shape for run-time sizes.
Shape SymShape(const ArgSpec& a, const int64_t d[4]) {
  Shape s;
  for (int k = 0; k < a.rank; ++k) s.AddDim(SymValue(d, a.dims[k]));
  return s;
}

// Run-time sizes T, B, N, H (T 1 for the cells) from x and cs_prev / h_prev, after checking
// every input's rank and shape against them.
Status CheckShapes(const KernelContext& ctx, const OpArgs& args, int64_t d[4]) {
  const int k0 = args.k0;
  for (int i = 0; i < std::ssize(args.ins); ++i) {
    const Tensor& t = ctx.input(k0 + i);
    if (t.rank() != args.ins[i].rank) {
      return ctx.Error("input '", args.ins[i].name, "' must have rank ", args.ins[i].rank,
                       ", got shape ", t.shape().ToString());
    }
  }
  const Tensor& x = ctx.input(k0);
  d[kT] = x.rank() == 3 ? x.dim(0) : 1;
  d[kB] = x.dim(x.rank() - 2);
  d[kN] = x.dim(x.rank() - 1);
  d[kH] = ctx.input(k0 + 1).dim(1);  // cs_prev (LSTM) or h_prev (GRU)
  for (int i = 1; i < std::ssize(args.ins); ++i) {
    const ArgSpec& a = args.ins[i];
    const Shape want_shape = SymShape(a, d);
    if (ctx.input(k0 + i).shape() != want_shape) {
      return ctx.Error("input '", a.name, "' must have shape ", SymShapeString(a), " = ",
                       want_shape.ToString(), " for x ", x.shape().ToString(), " and ",
                       args.ins[1].name, " ", ctx.input(k0 + 1).shape().ToString(), ", got ",
                       ctx.input(k0 + i).shape().ToString());
    }
  }
  return OkStatus();
}

// c[m, n] = a[m, k] * b[n, k]^T.
template <typename C>
void MatMulABt(const C* a, const C* b, int64_t m, int64_t k, int64_t n, C* c) {
  if constexpr (std::is_same_v<C, float>) {
    using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    Eigen::Map<Mat> out(c, m, n);
    if (k == 0) {
      out.setZero();
    } else {
      out.noalias() = Eigen::Map<const Mat>(a, m, k) * Eigen::Map<const Mat>(b, n, k).transpose();
    }
  } else {
    // Eigen's half contraction: products and sums round to half, k in order.
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t q = 0; q < n; ++q) {
        C s(0);
        for (int64_t p = 0; p < k; ++p) s = s + a[r * k + p] * b[q * k + p];
        c[r * n + q] = s;
      }
    }
  }
}

// c[m, n] += a[k, m]^T * b[k, n] (TF: the product, then added to c).
template <typename C>
void AddMatMulAtB(const C* a, const C* b, int64_t k, int64_t m, int64_t n, C* c) {
  if constexpr (std::is_same_v<C, float>) {
    using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    if (k == 0) return;
    Eigen::Map<Mat>(c, m, n).noalias() +=
        Eigen::Map<const Mat>(a, k, m).transpose() * Eigen::Map<const Mat>(b, k, n);
  } else {
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t q = 0; q < n; ++q) {
        C s(0);
        for (int64_t p = 0; p < k; ++p) s = s + a[p * m + r] * b[p * n + q];
        c[r * n + q] = c[r * n + q] + s;
      }
    }
  }
}

// One LSTM step's inputs, each [batch, cell] (the peephole weights [cell]).
template <typename C>
struct LstmStepIn {
  const C *cs_prev, *i, *cs, *f, *o, *ci, *co, *cs_grad, *h_grad, *wci, *wcf, *wco;
};

// The backward step (TF's LSTMBlockCellBprop) with TF's order of operations: writes dgates
// [batch, 4 cell] and cs_prev_grad, and adds the peephole weights' grads to wc_grad[0..2].
template <typename C>
void LstmBackStep(int64_t batch, int64_t cell, bool ifco, bool peephole, const LstmStepIn<C>& in,
                  C* dgates, C* cs_prev_grad, C* const wc_grad[3]) {
  const C one(1);
  const int64_t c_off = ifco ? 2 * cell : cell, f_off = ifco ? cell : 2 * cell, o_off = 3 * cell;
  for (int64_t r = 0; r < batch; ++r) {
    C* g = dgates + r * 4 * cell;
    for (int64_t j = 0; j < cell; ++j) {
      const int64_t e = r * cell + j;
      const C i = in.i[e], f = in.f[e], o = in.o[e], ci = in.ci[e], co = in.co[e];
      const C h_grad = in.h_grad[e], cs_prev = in.cs_prev[e];
      const C d_o = o * (one - o) * h_grad * co;
      C dcs = (one - co * co) * h_grad * o + in.cs_grad[e];
      if (peephole) dcs = dcs + d_o * in.wco[j];
      const C dci = (one - ci * ci) * dcs * i;
      const C df = f * (one - f) * dcs * cs_prev;
      const C di = i * (one - i) * dcs * ci;
      g[j] = di;
      g[c_off + j] = dci;
      g[f_off + j] = df;
      g[o_off + j] = d_o;
      C cpg = dcs * f;
      if (peephole) cpg = cpg + di * in.wci[j] + df * in.wcf[j];
      cs_prev_grad[e] = cpg;
    }
  }
  if (!peephole) return;
  // Batch sums of di cs_prev, df cs_prev and do cs, each row in order.
  const int64_t offs[3] = {0, f_off, o_off};
  for (int q = 0; q < 3; ++q) {
    const C* by = q == 2 ? in.cs : in.cs_prev;
    for (int64_t j = 0; j < cell; ++j) {
      C s(0);
      for (int64_t r = 0; r < batch; ++r)
        s = s + dgates[r * 4 * cell + offs[q] + j] * by[r * cell + j];
      wc_grad[q][j] = wc_grad[q][j] + s;
    }
  }
}

template <typename T>
Status LstmCellGrad(const KernelContext& ctx, const int64_t d[4], Tensor* const outs[5]) {
  using C = ComputeType<T>;
  const auto& st = ctx.state<RnnGradState>();
  auto in = [&](int i) { return ComputeData<T>(ctx.input(i)); };
  C* wc_grad[3];
  for (int q = 0; q < 3; ++q) {
    wc_grad[q] = MutableComputeData<T>(outs[2 + q]);
    std::fill_n(wc_grad[q], d[kH], C(0));
  }
  const LstmStepIn<C> step{in(1),  in(8),  in(9),  in(10), in(11), in(12),
                           in(13), in(14), in(15), in(4),  in(5),  in(6)};
  LstmBackStep<C>(d[kB], d[kH], /*ifco=*/false, st.peephole, step, MutableComputeData<T>(outs[1]),
                  MutableComputeData<T>(outs[0]), wc_grad);
  return OkStatus();
}

template <typename T>
Status BlockLstmGrad(const KernelContext& ctx, const int64_t d[4], int64_t steps,
                     Tensor* const outs[8]) {
  using C = ComputeType<T>;
  const auto& st = ctx.state<RnnGradState>();
  const int64_t batch = d[kB], input = d[kN], cell = d[kH], k = input + cell, bh = batch * cell;
  auto in = [&](int i) { return ComputeData<T>(ctx.input(1 + i)); };  // after seq_len_max
  const C *x = in(0), *w = in(3), *cs = in(9), *h = in(14), *cs_grad = in(15), *h_grad = in(16);
  C* o[8];
  for (int q = 0; q < 8; ++q) {
    o[q] = MutableComputeData<T>(outs[q]);
    std::fill_n(o[q], outs[q]->NumElements(), C(0));
  }
  C *x_grad = o[0], *cs_prev_grad = o[1], *h_prev_grad = o[2], *w_grad = o[3], *b_grad = o[7];
  C* const wc_grad[3] = {o[4], o[5], o[6]};
  // Scratch: the step's cs and h grads, dgates, [x, h_prev] and its grad.
  KILN_ASSIGN_OR_RETURN(void* mem,
                        ctx.AllocateTemp(sizeof(C) * (2 * bh + 4 * bh + 2 * batch * k + 1)));
  C* csg = static_cast<C*>(mem);
  C* hg = csg + bh;
  C* dgates = hg + bh;
  C* xh = dgates + 4 * bh;
  C* xh_grad = xh + batch * k;
  for (int64_t t = steps - 1; t >= 0; --t) {
    const int64_t at = t * bh;
    for (int64_t e = 0; e < bh; ++e) {
      csg[e] = cs_prev_grad[e] + cs_grad[at + e];
      hg[e] = h_prev_grad[e] + h_grad[at + e];
    }
    const C* cs_prev = t == 0 ? in(1) : cs + at - bh;
    const C* h_prev = t == 0 ? in(2) : h + at - bh;
    const LstmStepIn<C> step{cs_prev,     in(8) + at,  cs + at,     in(10) + at,
                             in(11) + at, in(12) + at, in(13) + at, csg,
                             hg,          in(4),       in(5),       in(6)};
    LstmBackStep<C>(batch, cell, st.kind == Kind::kBlockLstmV2, st.peephole, step, dgates,
                    cs_prev_grad, wc_grad);
    MatMulABt<C>(dgates, w, batch, 4 * cell, k, xh_grad);
    for (int64_t r = 0; r < batch; ++r) {
      std::copy_n(xh_grad + r * k, input, x_grad + (t * batch + r) * input);
      std::copy_n(xh_grad + r * k + input, cell, h_prev_grad + r * cell);
      std::copy_n(x + (t * batch + r) * input, input, xh + r * k);
      std::copy_n(h_prev + r * cell, cell, xh + r * k + input);
    }
    AddMatMulAtB<C>(xh, dgates, batch, k, 4 * cell, w_grad);
    for (int64_t j = 0; j < 4 * cell; ++j) {
      C s(0);
      for (int64_t r = 0; r < batch; ++r) s = s + dgates[r * 4 * cell + j];
      b_grad[j] = b_grad[j] + s;
    }
  }
  return OkStatus();
}

Status GruCellGrad(const KernelContext& ctx, const int64_t d[4], Tensor* const outs[4]) {
  const int64_t batch = d[kB], input = d[kN], cell = d[kH], k = input + cell;
  auto in = [&](int i) { return ctx.input(i).data<float>(); };
  const float *h_prev = in(1), *w_ru = in(2), *w_c = in(3), *r = in(6), *u = in(7), *c = in(8),
              *d_h = in(9);
  float* d_x = outs[0]->data<float>();
  float* d_h_prev = outs[1]->data<float>();
  float* d_c_bar = outs[2]->data<float>();
  float* d_rbub = outs[3]->data<float>();
  // Scratch: [d_x, d_hr] from d_c_bar and [d_x, d_h_prev] parts from the gates.
  KILN_ASSIGN_OR_RETURN(void* mem, ctx.AllocateTemp(sizeof(float) * (2 * batch * k + 1)));
  float* comp2 = static_cast<float*>(mem);
  float* comp1 = comp2 + batch * k;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t j = 0; j < cell; ++j) {
      const int64_t e = b * cell + j;
      d_c_bar[e] = d_h[e] * (1.0f - u[e]) * (1.0f - c[e] * c[e]);
      d_rbub[b * 2 * cell + cell + j] = d_h[e] * (h_prev[e] - c[e]) * u[e] * (1.0f - u[e]);
    }
  }
  MatMulABt<float>(d_c_bar, w_c, batch, cell, k, comp2);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t j = 0; j < cell; ++j) {
      const int64_t e = b * cell + j;
      d_rbub[b * 2 * cell + j] = comp2[b * k + input + j] * h_prev[e] * r[e] * (1.0f - r[e]);
    }
  }
  MatMulABt<float>(d_rbub, w_ru, batch, 2 * cell, k, comp1);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t q = 0; q < input; ++q) d_x[b * input + q] = comp1[b * k + q] + comp2[b * k + q];
    for (int64_t j = 0; j < cell; ++j) {
      const int64_t e = b * cell + j;
      const float d_hr = comp2[b * k + input + j];
      d_h_prev[e] = comp1[b * k + input + j] + d_hr * r[e] + d_h[e] * u[e];
    }
  }
  return OkStatus();
}

Status ComputeRnnGrad(const KernelContext& ctx) {
  const auto& st = ctx.state<RnnGradState>();
  const OpArgs args = ArgsOf(st.kind);
  int64_t steps = 0;
  if (args.k0 == 1 && ctx.input(0).rank() != 0) {
    return ctx.Error("input 'seq_len_max' must be a scalar, got shape ",
                     ctx.input(0).shape().ToString());
  }
  int64_t d[4];
  KILN_RETURN_IF_ERROR(CheckShapes(ctx, args, d));
  if (args.k0 == 1) {
    if (d[kH] == 0) {
      return ctx.Error("input 'w' must have a positive multiple of 4 columns, got shape ",
                       ctx.input(4).shape().ToString());
    }
    steps = ctx.input(0).data<int64_t>()[0];
    if (steps < 0 || steps > d[kT]) {
      return ctx.Error("input 'seq_len_max' must be between 0 and ", d[kT], " (x's time dim), got ",
                       steps);
    }
  }
  Tensor* outs[8];
  for (int q = 0; q < std::ssize(args.outs); ++q) {
    KILN_ASSIGN_OR_RETURN(outs[q], ctx.AllocateOutput(q, SymShape(args.outs[q], d)));
  }
  if (st.kind == Kind::kGru) return GruCellGrad(ctx, d, outs);
  return Dispatch<TypeList<float, Half>>(st.t, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if (st.kind == Kind::kLstmCell) return LstmCellGrad<T>(ctx, d, outs);
    return BlockLstmGrad<T>(ctx, d, steps, outs);
  });
}

constexpr KernelEntry kCpu[] = {
    {"BlockLSTMGrad", ComputeRnnGrad},
    {"BlockLSTMGradV2", ComputeRnnGrad},
    {"GRUBlockCellGrad", ComputeRnnGrad},
    {"LSTMBlockCellGrad", ComputeRnnGrad},
};

}  // namespace

std::span<const KernelEntry> RnnGradCpuKernels() { return kCpu; }

}  // namespace kiln::exec
