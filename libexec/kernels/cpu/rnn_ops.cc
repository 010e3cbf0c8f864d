// The CPU kernels of the fused recurrent cells in kernels/rnn_ops.cc. LSTMBlockCell and
// BlockLSTM / BlockLSTMV2 (the cell over x's leading time dim, for seq_len_max steps; the outputs
// of later steps are zero):
//   xh = [x, h_prev]; [i, ci, f, o] = xh * w + b (V2: [i, f, ci, o])
//   i = sigmoid(i + cs_prev * wci), f = sigmoid(f + forget_bias + cs_prev * wcf),
//   ci = tanh(ci), cs = clip(ci * i + cs_prev * f, cell_clip), co = tanh(cs),
//   o = sigmoid(o + cs * wco), h = co * o
// with the peephole terms only when use_peephole, and the clip only when cell_clip > 0. V2 has no
// forget_bias. Half computes in float. GRUBlockCell below.
#include "kernels/rnn_ops.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"
#include "kernels/window_util.h"

namespace kiln::exec {
namespace {

using rnn::kGruInputNames;
using rnn::kInputNames;
using rnn::LstmState;
using rnn::LstmTypes;

// The weights of one cell and where its gates lie along w's columns.
struct LstmWeights {
  int64_t batch, input, cell;
  const float *w, *wci, *wcf, *wco, *b;
  int64_t c_off, f_off;  // column offset of ci and f: ICFO (cell, 2 cell) or IFCO (2 cell, cell)
};

// One step: writes i, cs, f, o, ci, co, h (each [batch, cell]) into out[0..6].
void LstmStep(const LstmState& st, const LstmWeights& wt, const float* x, const float* cs_prev,
              const float* h_prev, float* xh, float* icfo, float* const out[7]) {
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const int64_t batch = wt.batch, input = wt.input, cell = wt.cell, k = input + cell;
  // xh = [x, h_prev]; icfo = xh * w.
  for (int64_t r = 0; r < batch; ++r) {
    std::copy(x + r * input, x + (r + 1) * input, xh + r * k);
    std::copy(h_prev + r * cell, h_prev + (r + 1) * cell, xh + r * k + input);
  }
  Eigen::Map<Mat> gates(icfo, batch, 4 * cell);
  if (k > 0) {
    gates.noalias() =
        Eigen::Map<const Mat>(xh, batch, k) * Eigen::Map<const Mat>(wt.w, k, 4 * cell);
  } else {
    gates.setZero();
  }
  auto sigmoid = [](float v) { return 1.0f / (1.0f + std::exp(-v)); };
  const float* b = wt.b;
  const float *wci = wt.wci, *wcf = wt.wcf, *wco = wt.wco;
  const int64_t co_ = wt.c_off, fo = wt.f_off, oo = 3 * cell;
  for (int64_t r = 0; r < batch; ++r) {
    const float* g = icfo + r * 4 * cell;
    for (int64_t j = 0; j < cell; ++j) {
      const int64_t e = r * cell + j;
      const float cp = cs_prev[e];
      const float i = sigmoid(g[j] + b[j] + (st.peephole ? cp * wci[j] : 0.0f));
      const float ci = std::tanh(g[co_ + j] + b[co_ + j]);
      const float f =
          sigmoid(g[fo + j] + b[fo + j] + st.forget_bias + (st.peephole ? cp * wcf[j] : 0.0f));
      float cs = ci * i + cp * f;
      if (st.cell_clip > 0) cs = std::min(std::max(cs, -st.cell_clip), st.cell_clip);
      const float co = std::tanh(cs);
      const float o = sigmoid(g[oo + j] + b[oo + j] + (st.peephole ? cs * wco[j] : 0.0f));
      const float vals[7] = {i, cs, f, o, ci, co, co * o};
      for (int q = 0; q < 7; ++q) out[q][e] = vals[q];
    }
  }
}

Status ComputeLstm(const KernelContext& ctx) {
  const auto& st = ctx.state<LstmState>();
  const int k0 = st.block ? 1 : 0;
  auto in_at = [&](int i) -> const Tensor& { return ctx.input(k0 + i); };
  if (st.block && ctx.input(0).rank() != 0) {
    return ctx.Error("input 'seq_len_max' must be a scalar, got shape ",
                     ctx.input(0).shape().ToString());
  }
  for (int i = 0; i < 8; ++i) {
    const int want = i == 0 && st.block ? 3 : i < 4 ? 2 : 1;
    if (in_at(i).rank() != want) {
      return ctx.Error("input '", kInputNames[i], "' must have rank ", want, ", got shape ",
                       in_at(i).shape().ToString());
    }
  }
  const Tensor& x = in_at(0);
  const int64_t time = st.block ? x.dim(0) : 1;
  const int64_t batch = x.dim(k0), input = x.dim(k0 + 1), cell = in_at(1).dim(1);
  const Shape state_shape{batch, cell};
  bool ok = in_at(1).shape() == state_shape && in_at(2).shape() == state_shape &&
            in_at(3).shape() == Shape{input + cell, 4 * cell} &&
            in_at(7).shape() == Shape{4 * cell};
  for (int i : {4, 5, 6}) ok = ok && in_at(i).shape() == Shape{cell};
  if (!ok) {
    std::string shapes;
    for (int i = 0; i < 8; ++i)
      shapes += std::string(i ? ", " : "") + kInputNames[i] + " " + in_at(i).shape().ToString();
    return ctx.Error("inconsistent shapes: expected x ",
                     st.block ? "(time, batch, input_size)" : "(batch, input_size)",
                     ", cs_prev and h_prev (batch, cell_size), w (input_size + cell_size, ",
                     "4 * cell_size), wci/wcf/wco (cell_size,), b (4 * cell_size,); got ", shapes);
  }
  int64_t steps = 1;
  if (st.block) {
    steps = ctx.input(0).data<int64_t>()[0];
    if (steps < 0 || steps > time) {
      return ctx.Error("input 'seq_len_max' must be between 0 and ", time, " (x's time dim), got ",
                       steps);
    }
  }
  const Shape out_shape = st.block ? Shape{time, batch, cell} : state_shape;
  Tensor* outs[7];
  for (int i = 0; i < 7; ++i) {
    KILN_ASSIGN_OR_RETURN(outs[i], ctx.AllocateOutput(i, out_shape));
  }
  return Dispatch<LstmTypes>(st.t, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const float* in[8];
    for (int i = 0; i < 8; ++i) {
      KILN_ASSIGN_OR_RETURN(in[i],
                            AccCopy<C>(ctx, ComputeData<T>(in_at(i)), in_at(i).NumElements()));
    }
    const int64_t k = input + cell, n = batch * cell;
    // Scratch: xh, the gates and the seven outputs of every step in float (the next step reads
    // cs and h of the last one).
    KILN_ASSIGN_OR_RETURN(
        void* mem,
        ctx.AllocateTemp(sizeof(float) * (batch * k + batch * 4 * cell + 7 * time * n + 1)));
    float* xh = static_cast<float*>(mem);
    float* icfo = xh + batch * k;
    float* res = icfo + batch * 4 * cell;
    const LstmWeights wt{batch,
                         input,
                         cell,
                         in[3],
                         in[4],
                         in[5],
                         in[6],
                         in[7],
                         st.ifco ? 2 * cell : cell,
                         st.ifco ? cell : 2 * cell};
    for (int64_t t = 0; t < steps; ++t) {
      float* const out[7] = {res + (0 * time + t) * n, res + (1 * time + t) * n,
                             res + (2 * time + t) * n, res + (3 * time + t) * n,
                             res + (4 * time + t) * n, res + (5 * time + t) * n,
                             res + (6 * time + t) * n};
      const float* cs_prev = t == 0 ? in[1] : out[1] - n;
      const float* h_prev = t == 0 ? in[2] : out[6] - n;
      LstmStep(st, wt, in[0] + t * batch * input, cs_prev, h_prev, xh, icfo, out);
    }
    // TF zeroes cs and h past seq_len_max and leaves the rest unset: zero them all.
    for (int q = 0; q < 7; ++q) {
      const float* src = res + q * time * n;
      C* dst = MutableComputeData<T>(outs[q]);
      for (int64_t e = 0; e < steps * n; ++e) dst[e] = static_cast<C>(src[e]);
      for (int64_t e = steps * n; e < time * n; ++e) dst[e] = C(0);
    }
    return OkStatus();
  });
}

// GRUBlockCell (TF 1's GRUBlockCell), float only as TF's CPU kernel:
//   [r, u] = sigmoid([x, h_prev] * w_ru + b_ru), c = tanh([x, h_prev * r] * w_c + b_c),
//   h = u * (h_prev - c) + c.
Status ComputeGruBlockCell(const KernelContext& ctx) {
  for (int i = 0; i < 6; ++i) {
    const int want = i < 4 ? 2 : 1;
    if (ctx.input(i).rank() != want) {
      return ctx.Error("input '", kGruInputNames[i], "' must have rank ", want, ", got shape ",
                       ctx.input(i).shape().ToString());
    }
  }
  const int64_t batch = ctx.input(0).dim(0), input = ctx.input(0).dim(1);
  const int64_t cell = ctx.input(1).dim(1), k = input + cell;
  const Shape want[6] = {Shape{batch, input}, Shape{batch, cell}, Shape{k, 2 * cell},
                         Shape{k, cell},      Shape{2 * cell},    Shape{cell}};
  for (int i = 1; i < 6; ++i) {
    if (ctx.input(i).shape() != want[i]) {
      return ctx.Error("input '", kGruInputNames[i], "' must have shape ", want[i].ToString(),
                       " for x ", ctx.input(0).shape().ToString(), " and h_prev ",
                       ctx.input(1).shape().ToString(), ", got ", ctx.input(i).shape().ToString());
    }
  }
  Tensor* outs[4];
  for (int i = 0; i < 4; ++i) {
    KILN_ASSIGN_OR_RETURN(outs[i], ctx.AllocateOutput(i, Shape{batch, cell}));
  }
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const float* x = ctx.input(0).data<float>();
  const float* h_prev = ctx.input(1).data<float>();
  const float* b_ru = ctx.input(4).data<float>();
  const float* b_c = ctx.input(5).data<float>();
  KILN_ASSIGN_OR_RETURN(void* mem,
                        ctx.AllocateTemp(sizeof(float) * (batch * k + batch * 2 * cell + 1)));
  float* xh = static_cast<float*>(mem);
  float* ru = xh + batch * k;
  float* r = outs[0]->data<float>();
  float* u = outs[1]->data<float>();
  float* c = outs[2]->data<float>();
  float* h = outs[3]->data<float>();
  auto sigmoid = [](float v) { return 1.0f / (1.0f + std::exp(-v)); };
  auto fill_xh = [&](bool reset) {
    for (int64_t b = 0; b < batch; ++b) {
      std::copy(x + b * input, x + (b + 1) * input, xh + b * k);
      for (int64_t j = 0; j < cell; ++j)
        xh[b * k + input + j] = h_prev[b * cell + j] * (reset ? r[b * cell + j] : 1.0f);
    }
  };
  // The products of an empty xh (input + cell == 0) are empty too: batch x 0.
  fill_xh(false);
  Eigen::Map<Mat>(ru, batch, 2 * cell).noalias() =
      Eigen::Map<const Mat>(xh, batch, k) *
      Eigen::Map<const Mat>(ctx.input(2).data<float>(), k, 2 * cell);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t j = 0; j < cell; ++j) {
      r[b * cell + j] = sigmoid(ru[b * 2 * cell + j] + b_ru[j]);
      u[b * cell + j] = sigmoid(ru[b * 2 * cell + cell + j] + b_ru[cell + j]);
    }
  }
  fill_xh(true);
  Eigen::Map<Mat>(c, batch, cell).noalias() =
      Eigen::Map<const Mat>(xh, batch, k) *
      Eigen::Map<const Mat>(ctx.input(3).data<float>(), k, cell);
  for (int64_t e = 0; e < batch * cell; ++e) {
    c[e] = std::tanh(c[e] + b_c[e % cell]);
    h[e] = u[e] * (h_prev[e] - c[e]) + c[e];
  }
  return OkStatus();
}

constexpr KernelEntry kCpu[] = {
    {"BlockLSTM", ComputeLstm},
    {"BlockLSTMV2", ComputeLstm},
    {"GRUBlockCell", ComputeGruBlockCell},
    {"LSTMBlockCell", ComputeLstm},
};

}  // namespace

std::span<const KernelEntry> RnnCpuKernels() { return kCpu; }

}  // namespace kiln::exec
