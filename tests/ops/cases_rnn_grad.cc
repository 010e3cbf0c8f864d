// Op-tester cases of the fused recurrent cells' gradients: LSTMBlockCellGrad, BlockLSTMGrad,
// BlockLSTMGradV2 and GRUBlockCellGrad. Two kinds of reference:
//   - TF's backward formulas (lstm_ops.h, gru_ops.h) in double with plain loops, on random
//     gates and grads (any values: the ops do not check that they came from a forward run);
//   - central differences, in double, of a plain-loop forward run: the case's gate inputs are
//     that run's outputs, and the grads must be those of L = sum(cs_grad * cs + h_grad * h)
//     (GRU: sum(d_h * h)) with respect to each input, and to the gates' pre-activations for
//     dicfo, d_c_bar and d_r_bar_u_bar. This checks that TF's formulas are the gradients.
// TF's own results for a few of them are replayed by cases_tf_recorded.cc.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "ops/op_cases.h"
#include "ops/ref_util.h"

namespace kiln::testing {
namespace {

using Vec = std::vector<double>;

double Sigmoid(double z) { return 1 / (1 + std::exp(-z)); }

// Central differences of f() with respect to each element of v.
Vec NumericGrad(Vec* v, const std::function<double()>& f) {
  Vec g(v->size());
  for (size_t k = 0; k < v->size(); ++k) {
    const double keep = (*v)[k], e = 1e-5 * std::max(1.0, std::abs(keep));
    (*v)[k] = keep + e;
    const double up = f();
    (*v)[k] = keep - e;
    const double down = f();
    (*v)[k] = keep;
    g[k] = (up - down) / (2 * e);
  }
  return g;
}

struct LstmDims {
  int64_t time, steps, batch, input, cell;
  bool peephole;
};

// "BlockLSTMGrad float32 time 3 steps 2 batch 2 input 3 cell 4 peephole"; the cases checked by
// finite differences start "<op> of a forward run, " (non_finite.cc exempts them by that).
constexpr const char* kOfForwardRun = " of a forward run,";
std::string LstmName(const std::string& op, DType t, const LstmDims& p, bool block,
                     bool forward_run = false) {
  std::string s = op + (forward_run ? kOfForwardRun : "") + " " + DTypeShortName(t);
  if (block) s += " time " + std::to_string(p.time) + " steps " + std::to_string(p.steps);
  return s + " batch " + std::to_string(p.batch) + " input " + std::to_string(p.input) + " cell " +
         std::to_string(p.cell) + (p.peephole ? " peephole" : "");
}

// Column offsets of the gates i, ci, f, o along w (V2: i, f, ci, o).
struct Gates {
  int64_t i, c, f, o;
};
Gates GatesOf(int64_t cell, bool ifco) {
  return ifco ? Gates{0, 2 * cell, cell, 3 * cell} : Gates{0, cell, 2 * cell, 3 * cell};
}

// TF's LSTM backward step in double: dgates [batch, 4 cell] and cs_prev_grad [batch, cell]
// from one step's gates and incoming grads; adds the peephole grads to wc[0..2].
void LstmBackRef(int64_t b, int64_t h, bool ifco, bool peephole, const double* cs_prev,
                 const double* i, const double* cs, const double* f, const double* o,
                 const double* ci, const double* co, const double* cs_grad, const double* h_grad,
                 const Vec& wci, const Vec& wcf, const Vec& wco, double* dgates,
                 double* cs_prev_grad, Vec* wc) {
  const Gates g = GatesOf(h, ifco);
  for (int64_t r = 0; r < b; ++r) {
    for (int64_t j = 0; j < h; ++j) {
      const int64_t e = r * h + j;
      const double d_o = o[e] * (1 - o[e]) * h_grad[e] * co[e];
      const double dcs =
          (1 - co[e] * co[e]) * h_grad[e] * o[e] + cs_grad[e] + (peephole ? d_o * wco[j] : 0);
      const double dci = (1 - ci[e] * ci[e]) * dcs * i[e];
      const double df = f[e] * (1 - f[e]) * dcs * cs_prev[e];
      const double di = i[e] * (1 - i[e]) * dcs * ci[e];
      double* dg = dgates + r * 4 * h;
      dg[g.i + j] = di;
      dg[g.c + j] = dci;
      dg[g.f + j] = df;
      dg[g.o + j] = d_o;
      cs_prev_grad[e] = dcs * f[e] + (peephole ? di * wci[j] + df * wcf[j] : 0);
      if (peephole) {
        wc[0][j] += di * cs_prev[e];
        wc[1][j] += df * cs_prev[e];
        wc[2][j] += d_o * cs[e];
      }
    }
  }
}

// LSTMBlockCellGrad's outputs from its 16 inputs.
std::vector<Tensor> LstmCellGradRef(bool peephole, const std::vector<Tensor>& in) {
  std::vector<Vec> v;
  for (const Tensor& t : in) v.push_back(Doubles(t));
  const int64_t b = in[0].dim(0), h = in[1].dim(1);
  Vec dgates(b * 4 * h), cs_prev_grad(b * h);
  std::vector<Vec> wc(3, Vec(h, 0.0));
  LstmBackRef(b, h, false, peephole, v[1].data(), v[8].data(), v[9].data(), v[10].data(),
              v[11].data(), v[12].data(), v[13].data(), v[14].data(), v[15].data(), v[4], v[5],
              v[6], dgates.data(), cs_prev_grad.data(), wc.data());
  const DType t = in[0].dtype();
  return {FromDoubles(t, Shape{b, h}, cs_prev_grad), FromDoubles(t, Shape{b, 4 * h}, dgates),
          FromDoubles(t, Shape{h}, wc[0]), FromDoubles(t, Shape{h}, wc[1]),
          FromDoubles(t, Shape{h}, wc[2])};
}

// BlockLSTMGrad(V2)'s outputs from its 18 inputs, step by step from the last.
std::vector<Tensor> BlockLstmGradRef(const LstmDims& p, bool v2, const std::vector<Tensor>& in) {
  std::vector<Vec> v;
  for (size_t q = 1; q < in.size(); ++q) v.push_back(Doubles(in[q]));
  const Vec &x = v[0], &w = v[3], &cs = v[9], &hs = v[14];
  const int64_t b = p.batch, n = p.input, h = p.cell, k = n + h, bh = b * h;
  Vec x_grad(p.time * b * n, 0.0), cs_prev_grad(bh, 0.0), h_prev_grad(bh, 0.0),
      w_grad(k * 4 * h, 0.0), b_grad(4 * h, 0.0), dgates(b * 4 * h);
  std::vector<Vec> wc(3, Vec(h, 0.0));
  for (int64_t t = p.steps - 1; t >= 0; --t) {
    Vec csg(bh), hg(bh);
    for (int64_t e = 0; e < bh; ++e) {
      csg[e] = cs_prev_grad[e] + v[15][t * bh + e];
      hg[e] = h_prev_grad[e] + v[16][t * bh + e];
    }
    const double* cs_prev = t == 0 ? v[1].data() : cs.data() + (t - 1) * bh;
    const double* h_prev = t == 0 ? v[2].data() : hs.data() + (t - 1) * bh;
    auto at = [&](int q) { return v[q].data() + t * bh; };
    LstmBackRef(b, h, v2, p.peephole, cs_prev, at(8), at(9), at(10), at(11), at(12), at(13),
                csg.data(), hg.data(), v[4], v[5], v[6], dgates.data(), cs_prev_grad.data(),
                wc.data());
    for (int64_t r = 0; r < b; ++r) {
      for (int64_t q = 0; q < k; ++q) {
        double acc = 0;
        for (int64_t g = 0; g < 4 * h; ++g) acc += dgates[r * 4 * h + g] * w[q * 4 * h + g];
        if (q < n) {
          x_grad[(t * b + r) * n + q] = acc;
        } else {
          h_prev_grad[r * h + q - n] = acc;
        }
        const double xh = q < n ? x[(t * b + r) * n + q] : h_prev[r * h + q - n];
        for (int64_t g = 0; g < 4 * h; ++g) w_grad[q * 4 * h + g] += xh * dgates[r * 4 * h + g];
      }
      for (int64_t g = 0; g < 4 * h; ++g) b_grad[g] += dgates[r * 4 * h + g];
    }
  }
  const DType t = in[1].dtype();
  return {FromDoubles(t, Shape{p.time, b, n}, x_grad),
          FromDoubles(t, Shape{b, h}, cs_prev_grad),
          FromDoubles(t, Shape{b, h}, h_prev_grad),
          FromDoubles(t, Shape{k, 4 * h}, w_grad),
          FromDoubles(t, Shape{h}, wc[0]),
          FromDoubles(t, Shape{h}, wc[1]),
          FromDoubles(t, Shape{h}, wc[2]),
          FromDoubles(t, Shape{4 * h}, b_grad)};
}

// GRUBlockCellGrad's outputs from its 10 inputs.
std::vector<Tensor> GruGradRef(const std::vector<Tensor>& in) {
  std::vector<Vec> v;
  for (const Tensor& t : in) v.push_back(Doubles(t));
  const Vec &hp = v[1], &w_ru = v[2], &w_c = v[3], &r = v[6], &u = v[7], &c = v[8], &dh = v[9];
  const int64_t b = in[0].dim(0), n = in[0].dim(1), h = in[1].dim(1), k = n + h;
  Vec d_x(b * n), d_h_prev(b * h), d_c_bar(b * h), d_rbub(b * 2 * h);
  for (int64_t row = 0; row < b; ++row) {
    Vec d_hr(h);
    for (int64_t j = 0; j < h; ++j) {
      const int64_t e = row * h + j;
      d_c_bar[e] = dh[e] * (1 - u[e]) * (1 - c[e] * c[e]);
      d_rbub[row * 2 * h + h + j] = dh[e] * (hp[e] - c[e]) * u[e] * (1 - u[e]);
    }
    auto comp2 = [&](int64_t q) {  // (d_c_bar w_c^T)[row, q]
      double acc = 0;
      for (int64_t j = 0; j < h; ++j) acc += d_c_bar[row * h + j] * w_c[q * h + j];
      return acc;
    };
    for (int64_t j = 0; j < h; ++j) {
      const int64_t e = row * h + j;
      d_hr[j] = comp2(n + j);
      d_rbub[row * 2 * h + j] = d_hr[j] * hp[e] * r[e] * (1 - r[e]);
    }
    for (int64_t q = 0; q < k; ++q) {
      double comp1 = 0;
      for (int64_t g = 0; g < 2 * h; ++g) comp1 += d_rbub[row * 2 * h + g] * w_ru[q * 2 * h + g];
      if (q < n) {
        d_x[row * n + q] = comp1 + comp2(q);
      } else {
        const int64_t e = row * h + q - n;
        d_h_prev[e] = comp1 + d_hr[q - n] * r[e] + dh[e] * u[e];
      }
    }
  }
  return {FromDoubles(DType::kFloat, Shape{b, n}, d_x),
          FromDoubles(DType::kFloat, Shape{b, h}, d_h_prev),
          FromDoubles(DType::kFloat, Shape{b, h}, d_c_bar),
          FromDoubles(DType::kFloat, Shape{b, 2 * h}, d_rbub)};
}

// The LSTM's forward run in double over `steps` steps (outputs past them stay zero). params:
// x [time, batch, input], cs_prev, h_prev, w, wci, wcf, wco, b; `offset` [batch, 4 cell], when
// given, is added to step 0's gate pre-activations. Fills out[0..6] (i, cs, f, o, ci, co, h)
// when given; returns sum(cs_grad * cs + h_grad * h).
double LstmForward(const LstmDims& p, bool ifco, double forget_bias, const std::vector<Vec>& params,
                   const Vec* offset, const Vec& cs_grad, const Vec& h_grad,
                   std::vector<Vec>* out) {
  const Vec &x = params[0], &w = params[3], &wci = params[4], &wcf = params[5], &wco = params[6],
            &bias = params[7];
  const int64_t b = p.batch, n = p.input, h = p.cell, bh = b * h;
  const Gates gt = GatesOf(h, ifco);
  Vec cs_prev = params[1], h_prev = params[2];
  if (out) out->assign(7, Vec(p.time * bh, 0.0));
  double loss = 0;
  for (int64_t t = 0; t < p.steps; ++t) {
    Vec cs_next(bh), h_next(bh);
    for (int64_t r = 0; r < b; ++r) {
      for (int64_t j = 0; j < h; ++j) {
        auto pre = [&](int64_t col) {
          double acc = bias[col] + (offset && t == 0 ? (*offset)[r * 4 * h + col] : 0);
          for (int64_t q = 0; q < n; ++q) acc += x[(t * b + r) * n + q] * w[q * 4 * h + col];
          for (int64_t q = 0; q < h; ++q) acc += h_prev[r * h + q] * w[(n + q) * 4 * h + col];
          return acc;
        };
        const int64_t e = r * h + j;
        const double cp = cs_prev[e];
        const double i = Sigmoid(pre(gt.i + j) + (p.peephole ? cp * wci[j] : 0));
        const double ci = std::tanh(pre(gt.c + j));
        const double f = Sigmoid(pre(gt.f + j) + forget_bias + (p.peephole ? cp * wcf[j] : 0));
        const double cs = ci * i + cp * f;
        const double co = std::tanh(cs);
        const double o = Sigmoid(pre(gt.o + j) + (p.peephole ? cs * wco[j] : 0));
        cs_next[e] = cs;
        h_next[e] = co * o;
        loss += cs_grad[t * bh + e] * cs + h_grad[t * bh + e] * co * o;
        if (out) {
          const double vals[7] = {i, cs, f, o, ci, co, co * o};
          for (int q = 0; q < 7; ++q) (*out)[q][t * bh + e] = vals[q];
        }
      }
    }
    cs_prev = cs_next;
    h_prev = h_next;
  }
  return loss;
}

// Random x, cs_prev, h_prev, w, wci, wcf, wco, b as float tensors (x [time, batch, input]).
std::vector<Tensor> LstmParams(const LstmDims& p, DType t, uint32_t* seed) {
  const int64_t b = p.batch, n = p.input, h = p.cell;
  return {RandomOf(t, Shape{p.time, b, n}, NextSeed(*seed), -1, 1),
          RandomOf(t, Shape{b, h}, NextSeed(*seed), -2, 2),
          RandomOf(t, Shape{b, h}, NextSeed(*seed), -1, 1),
          RandomOf(t, Shape{n + h, 4 * h}, NextSeed(*seed), -0.5, 0.5),
          RandomOf(t, Shape{h}, NextSeed(*seed), -1, 1),
          RandomOf(t, Shape{h}, NextSeed(*seed), -1, 1),
          RandomOf(t, Shape{h}, NextSeed(*seed), -1, 1),
          RandomOf(t, Shape{4 * h}, NextSeed(*seed), -1, 1)};
}

void AddLstmCellGrad(std::vector<OpCase>* c) {
  uint32_t seed = 7500;
  // TF's formulas on random gates and grads.
  for (DType t : {DType::kFloat, DType::kHalf}) {
    for (const LstmDims& p : {LstmDims{1, 1, 2, 3, 4, false}, LstmDims{1, 1, 3, 5, 2, true},
                              LstmDims{1, 1, 1, 2, 3, true}, LstmDims{1, 1, 0, 2, 3, true},
                              LstmDims{1, 1, 2, 0, 3, false}, LstmDims{1, 1, 16, 32, 64, true}}) {
      const int64_t b = p.batch, n = p.input, h = p.cell;
      OpCaseBuilder cb("LSTMBlockCellGrad", LstmName("LSTMBlockCellGrad", t, p, false));
      cb.T(t).Bool("use_peephole", p.peephole);
      std::vector<Tensor> params = LstmParams(p, t, &seed);
      params[0] = RandomOf(t, Shape{b, n}, NextSeed(seed), -1, 1);
      for (const Tensor& x : params) cb.Input(x);
      // i, cs, f, o, ci, co, cs_grad, h_grad
      const double lo[8] = {0, -3, 0, 0, -1, -1, -1, -1}, hi[8] = {1, 3, 1, 1, 1, 1, 1, 1};
      for (int q = 0; q < 8; ++q) cb.Input(RandomOf(t, Shape{b, h}, NextSeed(seed), lo[q], hi[q]));
      cb.Reference([p](const std::vector<Tensor>& in) {
          return LstmCellGradRef(p.peephole, in);
        }).Tolerance(t == DType::kHalf ? 5e-3 : 1e-6);
      c->push_back(cb.Build());
    }
  }
  // The gradients of a forward run.
  for (const LstmDims& p : {LstmDims{1, 1, 3, 2, 4, true}, LstmDims{1, 1, 2, 3, 3, false}}) {
    const int64_t b = p.batch, n = p.input, h = p.cell;
    std::vector<Tensor> params = LstmParams(p, DType::kFloat, &seed);
    std::vector<Vec> pv;
    for (const Tensor& x : params) pv.push_back(Doubles(x));
    const Tensor cs_grad = RandomOf(DType::kFloat, Shape{b, h}, NextSeed(seed), -1, 1);
    const Tensor h_grad = RandomOf(DType::kFloat, Shape{b, h}, NextSeed(seed), -1, 1);
    std::vector<Vec> fwd;
    const double forget_bias = 0.7;
    LstmForward(p, false, forget_bias, pv, nullptr, Doubles(cs_grad), Doubles(h_grad), &fwd);
    OpCaseBuilder cb("LSTMBlockCellGrad",
                     LstmName("LSTMBlockCellGrad", DType::kFloat, p, false, true));
    cb.T(DType::kFloat).Bool("use_peephole", p.peephole);
    cb.Input(FromDoubles(DType::kFloat, Shape{b, n}, pv[0]));
    for (int q = 1; q < 8; ++q) cb.Input(params[q]);
    for (int q = 0; q < 6; ++q) cb.Input(FromDoubles(DType::kFloat, Shape{b, h}, fwd[q]));
    cb.Input(cs_grad).Input(h_grad);
    cb.Reference([p, b, h, forget_bias](const std::vector<Tensor>& in) {
        std::vector<Vec> v;
        for (int q = 0; q < 8; ++q) v.push_back(Doubles(in[q]));
        const Vec csg = Doubles(in[14]), hg = Doubles(in[15]);
        Vec offset(b * 4 * h, 0.0);
        auto loss = [&] {
          return LstmForward(p, false, forget_bias, v, &offset, csg, hg, nullptr);
        };
        return std::vector<Tensor>{
            FromDoubles(DType::kFloat, Shape{b, h}, NumericGrad(&v[1], loss)),
            FromDoubles(DType::kFloat, Shape{b, 4 * h}, NumericGrad(&offset, loss)),
            FromDoubles(DType::kFloat, Shape{h}, NumericGrad(&v[4], loss)),
            FromDoubles(DType::kFloat, Shape{h}, NumericGrad(&v[5], loss)),
            FromDoubles(DType::kFloat, Shape{h}, NumericGrad(&v[6], loss))};
      }).Tolerance(1e-5);
    c->push_back(cb.Build());
  }
}

void AddBlockLstmGrad(std::vector<OpCase>* c) {
  uint32_t seed = 7600;
  for (bool v2 : {false, true}) {
    const std::string op = v2 ? "BlockLSTMGradV2" : "BlockLSTMGrad";
    // TF's formulas on random gates and grads.
    for (DType t : {DType::kFloat, DType::kHalf}) {
      for (const LstmDims& p : {LstmDims{3, 3, 2, 3, 4, false}, LstmDims{4, 2, 3, 5, 2, true},
                                LstmDims{2, 2, 1, 2, 3, true}, LstmDims{3, 0, 2, 2, 3, false},
                                LstmDims{2, 2, 0, 2, 3, true}, LstmDims{0, 0, 2, 2, 3, true},
                                LstmDims{2, 2, 2, 0, 3, true}, LstmDims{5, 4, 8, 16, 32, true}}) {
        const int64_t b = p.batch, h = p.cell;
        OpCaseBuilder cb(op, LstmName(op, t, p, true));
        cb.T(t).Bool("use_peephole", p.peephole);
        cb.ConstInput(FromDoubles(DType::kInt64, Shape{}, {static_cast<double>(p.steps)}));
        for (const Tensor& x : LstmParams(p, t, &seed)) cb.Input(x);
        // i, cs, f, o, ci, co, h, cs_grad, h_grad
        const double lo[9] = {0, -3, 0, 0, -1, -1, -1, -1, -1};
        const double hi[9] = {1, 3, 1, 1, 1, 1, 1, 1, 1};
        for (int q = 0; q < 9; ++q)
          cb.Input(RandomOf(t, Shape{p.time, b, h}, NextSeed(seed), lo[q], hi[q]));
        cb.Reference([p, v2](const std::vector<Tensor>& in) {
            return BlockLstmGradRef(p, v2, in);
          }).Tolerance(t == DType::kHalf ? 2e-2 : 1e-5);
        c->push_back(cb.Build());
      }
    }
    // The gradients of a forward run (no clipping: TF's gradient ignores cell_clip).
    for (const LstmDims& p : {LstmDims{3, 3, 2, 3, 2, true}, LstmDims{3, 2, 2, 2, 3, false}}) {
      const int64_t b = p.batch, h = p.cell;
      std::vector<Tensor> params = LstmParams(p, DType::kFloat, &seed);
      std::vector<Vec> pv;
      for (const Tensor& x : params) pv.push_back(Doubles(x));
      const Tensor cs_grad = RandomOf(DType::kFloat, Shape{p.time, b, h}, NextSeed(seed), -1, 1);
      const Tensor h_grad = RandomOf(DType::kFloat, Shape{p.time, b, h}, NextSeed(seed), -1, 1);
      const double forget_bias = v2 ? 0.0 : 0.7;
      std::vector<Vec> fwd;
      LstmForward(p, v2, forget_bias, pv, nullptr, Doubles(cs_grad), Doubles(h_grad), &fwd);
      OpCaseBuilder cb(op, LstmName(op, DType::kFloat, p, true, true));
      cb.T(DType::kFloat).Bool("use_peephole", p.peephole);
      cb.ConstInput(FromDoubles(DType::kInt64, Shape{}, {static_cast<double>(p.steps)}));
      for (const Tensor& x : params) cb.Input(x);
      for (int q = 0; q < 7; ++q) cb.Input(FromDoubles(DType::kFloat, Shape{p.time, b, h}, fwd[q]));
      cb.Input(cs_grad).Input(h_grad);
      cb.Reference([p, v2, forget_bias](const std::vector<Tensor>& in) {
          std::vector<Vec> v;
          for (int q = 1; q < 9; ++q) v.push_back(Doubles(in[q]));
          const Vec csg = Doubles(in[16]), hg = Doubles(in[17]);
          auto loss = [&] { return LstmForward(p, v2, forget_bias, v, nullptr, csg, hg, nullptr); };
          std::vector<Tensor> res;
          for (int q = 0; q < 8; ++q)
            res.push_back(FromDoubles(DType::kFloat, in[1 + q].shape(), NumericGrad(&v[q], loss)));
          return res;
        }).Tolerance(1e-5);
      c->push_back(cb.Build());
    }
  }
}

// The GRU cell's forward run in double: sum(d_h * h) for x, h_prev, w_ru, w_c, b_ru, b_c, with
// ru_off [batch, 2 cell] and c_off [batch, cell] added to the pre-activations. Fills r, u, c
// when `out` is given.
double GruForward(const std::vector<Vec>& v, int64_t b, int64_t n, int64_t h, const Vec& ru_off,
                  const Vec& c_off, const Vec& d_h, std::vector<Vec>* out) {
  const Vec &x = v[0], &hp = v[1], &w_ru = v[2], &w_c = v[3], &b_ru = v[4], &b_c = v[5];
  if (out) out->assign(3, Vec(b * h));
  double loss = 0;
  for (int64_t row = 0; row < b; ++row) {
    Vec ru(2 * h);
    for (int64_t g = 0; g < 2 * h; ++g) {
      double acc = b_ru[g] + ru_off[row * 2 * h + g];
      for (int64_t q = 0; q < n; ++q) acc += x[row * n + q] * w_ru[q * 2 * h + g];
      for (int64_t q = 0; q < h; ++q) acc += hp[row * h + q] * w_ru[(n + q) * 2 * h + g];
      ru[g] = Sigmoid(acc);
    }
    for (int64_t j = 0; j < h; ++j) {
      double acc = b_c[j] + c_off[row * h + j];
      for (int64_t q = 0; q < n; ++q) acc += x[row * n + q] * w_c[q * h + j];
      for (int64_t q = 0; q < h; ++q) acc += hp[row * h + q] * ru[q] * w_c[(n + q) * h + j];
      const int64_t e = row * h + j;
      const double cc = std::tanh(acc), u = ru[h + j];
      loss += d_h[e] * (u * (hp[e] - cc) + cc);
      if (out) {
        (*out)[0][e] = ru[j];
        (*out)[1][e] = u;
        (*out)[2][e] = cc;
      }
    }
  }
  return loss;
}

void AddGruGrad(std::vector<OpCase>* c) {
  uint32_t seed = 7700;
  struct P {
    int64_t batch, input, cell;
  };
  auto params = [&](int64_t b, int64_t n, int64_t h) {
    const int64_t k = n + h;
    return std::vector<Tensor>{RandomOf(DType::kFloat, Shape{b, n}, NextSeed(seed), -1, 1),
                               RandomOf(DType::kFloat, Shape{b, h}, NextSeed(seed), -1, 1),
                               RandomOf(DType::kFloat, Shape{k, 2 * h}, NextSeed(seed), -0.5, 0.5),
                               RandomOf(DType::kFloat, Shape{k, h}, NextSeed(seed), -0.5, 0.5),
                               RandomOf(DType::kFloat, Shape{2 * h}, NextSeed(seed), -1, 1),
                               RandomOf(DType::kFloat, Shape{h}, NextSeed(seed), -1, 1)};
  };
  // TF's formulas on random gates and grads.
  for (const P& p : {P{2, 3, 4}, P{1, 1, 1}, P{3, 5, 2}, P{0, 2, 3}, P{2, 0, 3}, P{16, 32, 64}}) {
    const int64_t b = p.batch, n = p.input, h = p.cell;
    OpCaseBuilder cb("GRUBlockCellGrad", "GRUBlockCellGrad batch " + std::to_string(b) + " input " +
                                             std::to_string(n) + " cell " + std::to_string(h));
    cb.T(DType::kFloat);
    for (const Tensor& x : params(b, n, h)) cb.Input(x);
    cb.Input(RandomOf(DType::kFloat, Shape{b, h}, NextSeed(seed), 0, 1))     // r
        .Input(RandomOf(DType::kFloat, Shape{b, h}, NextSeed(seed), 0, 1))   // u
        .Input(RandomOf(DType::kFloat, Shape{b, h}, NextSeed(seed), -1, 1))  // c
        .Input(RandomOf(DType::kFloat, Shape{b, h}, NextSeed(seed), -1, 1))  // d_h
        .Reference(GruGradRef)
        .Tolerance(1e-5);
    c->push_back(cb.Build());
  }
  // The gradients of a forward run.
  for (const P& p : {P{2, 3, 4}, P{3, 2, 2}}) {
    const int64_t b = p.batch, n = p.input, h = p.cell;
    const std::vector<Tensor> w = params(b, n, h);
    std::vector<Vec> wv;
    for (const Tensor& x : w) wv.push_back(Doubles(x));
    const Tensor d_h = RandomOf(DType::kFloat, Shape{b, h}, NextSeed(seed), -1, 1);
    std::vector<Vec> fwd;
    GruForward(wv, b, n, h, Vec(b * 2 * h, 0.0), Vec(b * h, 0.0), Doubles(d_h), &fwd);
    OpCaseBuilder cb("GRUBlockCellGrad", std::string("GRUBlockCellGrad") + kOfForwardRun +
                                             " batch " + std::to_string(b) + " input " +
                                             std::to_string(n) + " cell " + std::to_string(h));
    cb.T(DType::kFloat);
    for (const Tensor& x : w) cb.Input(x);
    for (int q = 0; q < 3; ++q) cb.Input(FromDoubles(DType::kFloat, Shape{b, h}, fwd[q]));
    cb.Input(d_h)
        .Reference([b, n, h](const std::vector<Tensor>& in) {
          std::vector<Vec> v;
          for (int q = 0; q < 6; ++q) v.push_back(Doubles(in[q]));
          const Vec dh = Doubles(in[9]);
          Vec ru_off(b * 2 * h, 0.0), c_off(b * h, 0.0);
          auto loss = [&] { return GruForward(v, b, n, h, ru_off, c_off, dh, nullptr); };
          return std::vector<Tensor>{
              FromDoubles(DType::kFloat, Shape{b, n}, NumericGrad(&v[0], loss)),
              FromDoubles(DType::kFloat, Shape{b, h}, NumericGrad(&v[1], loss)),
              FromDoubles(DType::kFloat, Shape{b, h}, NumericGrad(&c_off, loss)),
              FromDoubles(DType::kFloat, Shape{b, 2 * h}, NumericGrad(&ru_off, loss))};
        })
        .Tolerance(1e-5);
    c->push_back(cb.Build());
  }
}

}  // namespace

std::vector<OpCase> RnnGradCases() {
  std::vector<OpCase> c;
  AddLstmCellGrad(&c);
  AddBlockLstmGrad(&c);
  AddGruGrad(&c);
  return c;
}

}  // namespace kiln::testing
