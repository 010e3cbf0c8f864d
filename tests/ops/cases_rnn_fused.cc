// Op-tester cases of TF 1's fused recurrent ops: BlockLSTM and BlockLSTMV2 (LSTMBlockFusedCell
// over a sequence) and GRUBlockCell. The reference runs the cells step by step in double with plain
// loops.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ops/op_cases.h"
#include "ops/ref_util.h"

namespace kiln::testing {
namespace {

struct LstmParams {
  int64_t time, steps, batch, input, cell;
  float forget_bias, clip;
  bool peephole;
};

// The seven outputs [time, batch, cell] of BlockLSTM (v2: gates i, f, ci, o; no forget_bias),
// zero past `steps`.
std::vector<Tensor> BlockLstmRef(const LstmParams& p, bool v2, const std::vector<Tensor>& in) {
  std::vector<std::vector<double>> v;
  for (size_t q = 1; q < in.size(); ++q) v.push_back(Doubles(in[q]));
  const auto &x = v[0], &w = v[3], &wci = v[4], &wcf = v[5], &wco = v[6], &bias = v[7];
  const int64_t b = p.batch, n = p.input, h = p.cell, bh = b * h;
  std::vector<double> cs_prev = v[1], h_prev = v[2];
  std::vector<std::vector<double>> out(7, std::vector<double>(p.time * bh, 0.0));
  auto sig = [](double z) { return 1 / (1 + std::exp(-z)); };
  const int gi = 0, gc = v2 ? 2 : 1, gf = v2 ? 1 : 2, go = 3;
  const double fb = v2 ? 0.0 : p.forget_bias;
  for (int64_t t = 0; t < p.steps; ++t) {
    std::vector<double> cs_next(bh), h_next(bh);
    for (int64_t r = 0; r < b; ++r) {
      for (int64_t j = 0; j < h; ++j) {
        double g[4];
        for (int q = 0; q < 4; ++q) {
          double acc = bias[q * h + j];
          for (int64_t k = 0; k < n; ++k) acc += x[(t * b + r) * n + k] * w[k * 4 * h + q * h + j];
          for (int64_t k = 0; k < h; ++k) acc += h_prev[r * h + k] * w[(n + k) * 4 * h + q * h + j];
          g[q] = acc;
        }
        const double cp = cs_prev[r * h + j];
        const double i = sig(g[gi] + (p.peephole ? cp * wci[j] : 0));
        const double ci = std::tanh(g[gc]);
        const double f = sig(g[gf] + fb + (p.peephole ? cp * wcf[j] : 0));
        double cs = ci * i + cp * f;
        if (p.clip > 0) cs = std::clamp<double>(cs, -p.clip, p.clip);
        const double co = std::tanh(cs);
        const double o = sig(g[go] + (p.peephole ? cs * wco[j] : 0));
        const double vals[7] = {i, cs, f, o, ci, co, co * o};
        for (int q = 0; q < 7; ++q) out[q][t * bh + r * h + j] = vals[q];
        cs_next[r * h + j] = cs;
        h_next[r * h + j] = co * o;
      }
    }
    cs_prev = cs_next;
    h_prev = h_next;
  }
  std::vector<Tensor> res;
  for (const auto& o : out) res.push_back(FromDoubles(in[1].dtype(), Shape{p.time, b, h}, o));
  return res;
}

void AddBlockLstm(std::vector<OpCase>* c) {
  uint32_t seed = 7100;
  for (bool v2 : {false, true}) {
    const std::string op = v2 ? "BlockLSTMV2" : "BlockLSTM";
    for (DType t : {DType::kFloat, DType::kHalf}) {
      for (const LstmParams& p : {LstmParams{3, 3, 2, 3, 4, 1.0f, 3.0f, false},
                                  LstmParams{4, 2, 3, 5, 2, 0.5f, -1.0f, true},
                                  LstmParams{2, 2, 1, 2, 3, 1.0f, 0.5f, true},
                                  LstmParams{3, 0, 2, 2, 3, 1.0f, 3.0f, false},
                                  LstmParams{2, 2, 0, 2, 3, 1.0f, 3.0f, false},
                                  LstmParams{0, 0, 2, 2, 3, 1.0f, 3.0f, true},
                                  LstmParams{5, 4, 8, 16, 32, 1.0f, 3.0f, true}}) {
        const int64_t b = p.batch, n = p.input, h = p.cell;
        OpCaseBuilder cb(op, op + " " + DTypeShortName(t) + " time " + std::to_string(p.time) +
                                 " steps " + std::to_string(p.steps) + " batch " +
                                 std::to_string(b) + " input " + std::to_string(n) + " cell " +
                                 std::to_string(h) + (p.peephole ? " peephole" : ""));
        cb.T(t).Float("cell_clip", p.clip).Bool("use_peephole", p.peephole);
        if (!v2) cb.Float("forget_bias", p.forget_bias);
        cb.ConstInput(FromDoubles(DType::kInt64, Shape{}, {static_cast<double>(p.steps)}))
            .Input(RandomOf(t, Shape{p.time, b, n}, NextSeed(seed), -1, 1))
            .Input(RandomOf(t, Shape{b, h}, NextSeed(seed), -2, 2))
            .Input(RandomOf(t, Shape{b, h}, NextSeed(seed), -1, 1))
            .Input(RandomOf(t, Shape{n + h, 4 * h}, NextSeed(seed), -0.5, 0.5))
            .Input(RandomOf(t, Shape{h}, NextSeed(seed), -1, 1))
            .Input(RandomOf(t, Shape{h}, NextSeed(seed), -1, 1))
            .Input(RandomOf(t, Shape{h}, NextSeed(seed), -1, 1))
            .Input(RandomOf(t, Shape{4 * h}, NextSeed(seed), -1, 1))
            .Reference([p, v2](const std::vector<Tensor>& in) { return BlockLstmRef(p, v2, in); })
            .Tolerance(t == DType::kHalf ? 1e-2 : 5e-5);
        c->push_back(cb.Build());
      }
    }
  }
}

void AddGru(std::vector<OpCase>* c) {
  uint32_t seed = 7300;
  struct P {
    int64_t batch, input, cell;
  };
  for (const P& p : {P{2, 3, 4}, P{1, 1, 1}, P{3, 5, 2}, P{0, 2, 3}, P{2, 0, 3}, P{16, 32, 64}}) {
    const int64_t b = p.batch, n = p.input, h = p.cell, k = n + h;
    c->push_back(OpCaseBuilder("GRUBlockCell", "GRUBlockCell batch " + std::to_string(b) +
                                                   " input " + std::to_string(n) + " cell " +
                                                   std::to_string(h))
                     .T(DType::kFloat)
                     .Input(RandomOf(DType::kFloat, Shape{b, n}, NextSeed(seed), -1, 1))
                     .Input(RandomOf(DType::kFloat, Shape{b, h}, NextSeed(seed), -1, 1))
                     .Input(RandomOf(DType::kFloat, Shape{k, 2 * h}, NextSeed(seed), -0.5, 0.5))
                     .Input(RandomOf(DType::kFloat, Shape{k, h}, NextSeed(seed), -0.5, 0.5))
                     .Input(RandomOf(DType::kFloat, Shape{2 * h}, NextSeed(seed), -1, 1))
                     .Input(RandomOf(DType::kFloat, Shape{h}, NextSeed(seed), -1, 1))
                     .Reference([b, n, h](const std::vector<Tensor>& in) {
                       std::vector<std::vector<double>> v;
                       for (const Tensor& x : in) v.push_back(Doubles(x));
                       const auto &x = v[0], &hp = v[1], &w_ru = v[2], &w_c = v[3], &b_ru = v[4],
                                  &b_c = v[5];
                       std::vector<std::vector<double>> out(4, std::vector<double>(b * h));
                       auto sig = [](double z) { return 1 / (1 + std::exp(-z)); };
                       for (int64_t r = 0; r < b; ++r) {
                         for (int64_t j = 0; j < 2 * h; ++j) {  // r then u
                           double acc = b_ru[j];
                           for (int64_t q = 0; q < n; ++q)
                             acc += x[r * n + q] * w_ru[q * 2 * h + j];
                           for (int64_t q = 0; q < h; ++q)
                             acc += hp[r * h + q] * w_ru[(n + q) * 2 * h + j];
                           out[j < h ? 0 : 1][r * h + j % h] = sig(acc);
                         }
                         for (int64_t j = 0; j < h; ++j) {
                           double acc = b_c[j];
                           for (int64_t q = 0; q < n; ++q) acc += x[r * n + q] * w_c[q * h + j];
                           for (int64_t q = 0; q < h; ++q)
                             acc += hp[r * h + q] * out[0][r * h + q] * w_c[(n + q) * h + j];
                           const double cc = std::tanh(acc), u = out[1][r * h + j];
                           out[2][r * h + j] = cc;
                           out[3][r * h + j] = u * hp[r * h + j] + (1 - u) * cc;
                         }
                       }
                       std::vector<Tensor> res;
                       for (const auto& o : out)
                         res.push_back(FromDoubles(DType::kFloat, Shape{b, h}, o));
                       return res;
                     })
                     .Tolerance(5e-5)
                     .Build());
  }
}

}  // namespace

std::vector<OpCase> RnnFusedCases() {
  std::vector<OpCase> c;
  AddBlockLstm(&c);
  AddGru(&c);
  return c;
}

}  // namespace kiln::testing
