// Op-tester cases of normalisation, bias and RNN ops: FusedBatchNorm (V1, V2, V3; inference and
// training, with exponential_avg_factor), FusedBatchNormGradV3, LRN, BiasAddGrad, BiasAddV1 and
// LSTMBlockCell. References follow the ops' formulas in double, channel by channel.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ops/op_cases.h"
#include "ops/ref_util.h"

namespace kiln::testing {
namespace {

// Per channel, the flat indices of x's elements for a channels-last or channels-first layout.
std::vector<std::vector<int64_t>> ChannelElems(const Shape& s, bool channels_first) {
  const int ch = channels_first ? 1 : s.rank() - 1;
  std::vector<std::vector<int64_t>> e(s.dim(ch));
  for (int64_t i = 0; i < s.num_elements(); ++i) e[Unravel(i, s)[ch]].push_back(i);
  return e;
}

double Tol(DType t) {
  return t == DType::kHalf       ? 5e-3
         : t == DType::kBFloat16 ? 2e-2
         : t == DType::kFloat    ? 2e-5
                                 : 1e-12;
}

void AddBatchNorm(std::vector<OpCase>* c) {
  struct S {
    std::vector<int64_t> x;
    bool channels_first;
  };
  const std::vector<S> shapes = {{{2, 3, 4, 5}, false},    {{2, 5, 3, 4}, true},
                                 {{1, 1, 1, 3}, false},    {{0, 2, 2, 3}, false},
                                 {{2, 3, 4, 5, 6}, false}, {{2, 6, 3, 4, 5}, true},
                                 {{8, 16, 16, 32}, false}};
  uint32_t seed = 3000;
  for (int version : {1, 2, 3}) {
    const std::string op =
        version == 1 ? "FusedBatchNorm" : "FusedBatchNormV" + std::to_string(version);
    std::vector<DType> types = {DType::kFloat};
    if (version > 1) types.insert(types.end(), {DType::kHalf, DType::kBFloat16});
    for (DType t : types) {
      for (const S& s : shapes) {
        if (s.x.size() == 5 && version != 3) continue;
        if (s.x[1] == 16 && t != DType::kFloat) continue;
        for (int mode = 0; mode < 3; ++mode) {  // inference, training, training with averaging
          const bool training = mode > 0;
          const float factor = mode == 2 ? 0.25f : 1.0f;
          const Shape xs = *Shape::FromDims(s.x);
          const int64_t ch = s.x[s.channels_first ? 1 : s.x.size() - 1];
          const std::string format = s.x.size() == 5 ? (s.channels_first ? "NCDHW" : "NDHWC")
                                                     : (s.channels_first ? "NCHW" : "NHWC");
          OpCaseBuilder b(op, op + " " + DTypeShortName(t) + " " + xs.ToString() + " " + format +
                                  (training ? " training" : " inference") +
                                  (mode == 2 ? " factor 0.25" : ""));
          b.T(t);
          if (version > 1) b.Type("U", DType::kFloat);
          const DType u = version == 1 ? DType::kFloat : DType::kFloat;
          b.Float("epsilon", 0.001f)
              .Bool("is_training", training)
              .Float("exponential_avg_factor", factor)
              .String("data_format", format)
              .Input(RandomOf(t, xs, NextSeed(seed)))
              .Input(RandomOf(u, Shape{ch}, NextSeed(seed), 0.5, 2))
              .Input(RandomOf(u, Shape{ch}, NextSeed(seed)))
              .Input(RandomOf(u, Shape{ch}, NextSeed(seed)))
              .Input(RandomOf(u, Shape{ch}, NextSeed(seed), 0.5, 3));
          c->push_back(
              b.Reference([s, training, factor, version, ch](const std::vector<Tensor>& in) {
                 const std::vector<double> x = Doubles(in[0]), scale = Doubles(in[1]),
                                           offset = Doubles(in[2]), mean = Doubles(in[3]),
                                           var = Doubles(in[4]);
                 const auto elems = ChannelElems(in[0].shape(), s.channels_first);
                 std::vector<double> y(x.size()), o1(ch), o2(ch), r1(ch), r2(ch);
                 for (int64_t k = 0; k < ch; ++k) {
                   const auto& e = elems[k];
                   const double n = static_cast<double>(e.size());
                   double m = mean[k], v = var[k];
                   if (training) {
                     double sum = 0, sq = 0;
                     for (int64_t i : e) sum += x[i];
                     m = sum / n;
                     for (int64_t i : e) sq += (x[i] - m) * (x[i] - m);
                     v = sq / n;
                     const double unbiased = n > 1 ? v * n / (n - 1) : v;
                     r1[k] = m;
                     r2[k] = v;
                     o1[k] = (1 - factor) * mean[k] + factor * m;
                     o2[k] = (1 - factor) * var[k] + factor * unbiased;
                   } else {
                     o1[k] = r1[k] = m;
                     o2[k] = r2[k] = v;
                   }
                   if (e.empty()) {
                     const double nan = std::numeric_limits<double>::quiet_NaN();
                     o1[k] = o2[k] = r1[k] = r2[k] = nan;
                   }
                   for (int64_t i : e)
                     y[i] = (x[i] - m) / std::sqrt(v + 0.001) * scale[k] + offset[k];
                 }
                 std::vector<Tensor> out = {FromDoubles(in[0].dtype(), in[0].shape(), y)};
                 for (const auto* v : {&o1, &o2, &r1, &r2})
                   out.push_back(FromDoubles(DType::kFloat, Shape{ch}, *v));
                 if (version == 3) out.push_back(Tensor::Scalar<float>(0.0f));
                 return out;
               })
                  .Tolerance(Tol(t) * 4)
                  .Build());
        }
      }
    }
  }
}

void AddBatchNormGrad(std::vector<OpCase>* c) {
  struct S {
    std::vector<int64_t> x;
    bool channels_first;
  };
  const std::vector<S> shapes = {{{2, 3, 4, 5}, false},
                                 {{2, 5, 3, 4}, true},
                                 {{0, 2, 2, 3}, false},
                                 {{2, 3, 4, 5, 6}, false},
                                 {{4, 16, 16, 32}, false}};
  uint32_t seed = 3100;
  for (DType t : {DType::kFloat, DType::kHalf, DType::kBFloat16}) {
    for (const S& s : shapes) {
      if (s.x[1] == 16 && t != DType::kFloat) continue;
      for (bool training : {true, false}) {
        // V1 (float only) and V2 (no reserve_space_3) on the 4-D shapes; V3 on all.
        for (int version : {3, 2, 1}) {
          if (version < 3 && (s.x.size() != 4 || s.x[1] == 16)) continue;
          if (version == 1 && t != DType::kFloat) continue;
          const Shape xs = *Shape::FromDims(s.x);
          const int64_t ch = s.x[s.channels_first ? 1 : s.x.size() - 1];
          const std::string format =
              s.x.size() == 5 ? "NDHWC" : (s.channels_first ? "NCHW" : "NHWC");
          const std::string op = version == 3   ? "FusedBatchNormGradV3"
                                 : version == 2 ? "FusedBatchNormGradV2"
                                                : "FusedBatchNormGrad";
          OpCaseBuilder b(op, op + " " + DTypeShortName(t) + " " + xs.ToString() + " " + format +
                                  (training ? " training" : " inference"));
          if (version != 1) b.Type("U", DType::kFloat);
          b.T(t)
              .Float("epsilon", 0.001f)
              .Bool("is_training", training)
              .String("data_format", format)
              .Input(RandomOf(t, xs, NextSeed(seed)))
              .Input(RandomOf(t, xs, NextSeed(seed)))
              .Input(RandomOf(DType::kFloat, Shape{ch}, NextSeed(seed), 0.5, 2))
              .Input(RandomOf(DType::kFloat, Shape{ch}, NextSeed(seed)))
              .Input(RandomOf(DType::kFloat, Shape{ch}, NextSeed(seed), 0.5, 3));
          if (version == 3) b.Input(Tensor::Scalar<float>(0.0f));
          c->push_back(b.Reference([s, training, ch](const std::vector<Tensor>& in) {
                          const std::vector<double> dy = Doubles(in[0]), x = Doubles(in[1]),
                                                    scale = Doubles(in[2]), mean = Doubles(in[3]),
                                                    var = Doubles(in[4]);
                          const auto elems = ChannelElems(in[1].shape(), s.channels_first);
                          std::vector<double> dx(x.size()), ds(ch), doff(ch);
                          for (int64_t k = 0; k < ch; ++k) {
                            const auto& e = elems[k];
                            const double n = static_cast<double>(e.size());
                            const double inv = 1 / std::sqrt(var[k] + 0.001);
                            double sum_dy = 0, sum_dy_xc = 0;
                            for (int64_t i : e) {
                              sum_dy += dy[i];
                              sum_dy_xc += dy[i] * (x[i] - mean[k]);
                            }
                            doff[k] = sum_dy;
                            ds[k] = sum_dy_xc * inv;
                            for (int64_t i : e) {
                              dx[i] = training ? scale[k] * inv *
                                                     (dy[i] - sum_dy / n -
                                                      (x[i] - mean[k]) * inv * inv * sum_dy_xc / n)
                                               : dy[i] * scale[k] * inv;
                            }
                          }
                          return std::vector<Tensor>{FromDoubles(in[1].dtype(), in[1].shape(), dx),
                                                     FromDoubles(DType::kFloat, Shape{ch}, ds),
                                                     FromDoubles(DType::kFloat, Shape{ch}, doff),
                                                     Tensor(DType::kFloat, Shape{0}),
                                                     Tensor(DType::kFloat, Shape{0})};
                        })
                           .Tolerance(Tol(t) * 4)
                           .Build());
        }
      }
    }
  }
}

// LRNGrad: the derivative of y_i = x_i n_i^-beta, n_i = bias + alpha sum_{j in window(i)} x_j^2.
void AddLrnGrad(std::vector<OpCase>* c) {
  uint32_t seed = 3250;
  for (DType t : {DType::kFloat, DType::kHalf}) {
    for (int64_t radius : {2, 0}) {
      const Shape s{2, 2, 3, 7};
      const float bias = 1.5f, alpha = 0.2f, beta = 0.75f;
      const Tensor x = RandomOf(t, s, NextSeed(seed));
      const std::vector<double> xv = Doubles(x);
      const int64_t d = s.dim(3);
      auto norm = [xv, d, radius, bias, alpha](int64_t i) {
        const int64_t k = i % d, row = i - k;
        double sq = 0;
        for (int64_t j = std::max<int64_t>(0, k - radius); j <= std::min(d - 1, k + radius); ++j)
          sq += xv[row + j] * xv[row + j];
        return bias + alpha * sq;
      };
      std::vector<double> yv(xv.size());
      for (size_t i = 0; i < xv.size(); ++i) yv[i] = xv[i] / std::pow(norm(i), beta);
      c->push_back(OpCaseBuilder("LRNGrad", "LRNGrad " + DTypeShortName(t) + " radius " +
                                                std::to_string(radius))
                       .T(t)
                       .Int("depth_radius", radius)
                       .Float("bias", bias)
                       .Float("alpha", alpha)
                       .Float("beta", beta)
                       .Input(RandomOf(t, s, NextSeed(seed)))
                       .Input(x)
                       .Input(FromDoubles(t, s, yv))
                       .Reference1([=](const std::vector<Tensor>& in) {
                         const std::vector<double> g = Doubles(in[0]), y = Doubles(in[2]);
                         std::vector<double> dx(xv.size(), 0.0);
                         for (size_t i = 0; i < xv.size(); ++i) {
                           const int64_t k = static_cast<int64_t>(i) % d, row = i - k;
                           const double n = norm(i);
                           dx[i] += g[i] * std::pow(n, -beta);
                           for (int64_t j = std::max<int64_t>(0, k - radius);
                                j <= std::min(d - 1, k + radius); ++j)
                             dx[row + j] += -2 * alpha * beta * xv[row + j] * y[i] * g[i] / n;
                         }
                         return FromDoubles(in[0].dtype(), s, dx);
                       })
                       .Tolerance(Tol(t) * 5)
                       .Build());
    }
  }
}

void AddLrn(std::vector<OpCase>* c) {
  struct P {
    int64_t radius;
    float bias, alpha, beta;
  };
  uint32_t seed = 3200;
  for (DType t : {DType::kFloat, DType::kHalf, DType::kBFloat16}) {
    for (const P& p :
         {P{5, 1, 1, 0.5f}, P{2, 2, 1e-4f, 0.75f}, P{0, 1, 0.5f, 1}, P{3, 1.5f, 0.1f, 0.3f}}) {
      for (const Shape& s : {Shape{2, 3, 4, 9}, Shape{1, 1, 1, 3}, Shape{0, 2, 2, 4}}) {
        c->push_back(OpCaseBuilder("LRN", "LRN " + DTypeShortName(t) + " " + s.ToString() +
                                              " radius " + std::to_string(p.radius))
                         .T(t)
                         .Int("depth_radius", p.radius)
                         .Float("bias", p.bias)
                         .Float("alpha", p.alpha)
                         .Float("beta", p.beta)
                         .Input(RandomOf(t, s, NextSeed(seed)))
                         .Reference1([p](const std::vector<Tensor>& in) {
                           const std::vector<double> x = Doubles(in[0]);
                           const int64_t d = in[0].dim(3);
                           std::vector<double> o(x.size());
                           for (size_t i = 0; i < x.size(); ++i) {
                             const int64_t k = static_cast<int64_t>(i) % d, row = i - k;
                             double sq = 0;
                             for (int64_t j = std::max<int64_t>(0, k - p.radius);
                                  j <= std::min(d - 1, k + p.radius); ++j)
                               sq += x[row + j] * x[row + j];
                             o[i] = x[i] / std::pow(p.bias + p.alpha * sq, p.beta);
                           }
                           return FromDoubles(in[0].dtype(), in[0].shape(), o);
                         })
                         .Tolerance(Tol(t) * 5)
                         .Build());
      }
    }
  }
}

// _MklLayerNorm over the last dim: rows of one value, of a warp's width, past it, and none.
void AddLayerNorm(std::vector<OpCase>* c) {
  uint32_t seed = 3250;
  for (DType t : {DType::kFloat, DType::kHalf, DType::kBFloat16, DType::kDouble}) {
    for (const Shape& s : {Shape{3, 1}, Shape{4, 32}, Shape{2, 3, 77}, Shape{0, 5}}) {
      const int64_t n = s.dim(s.rank() - 1);
      c->push_back(
          OpCaseBuilder("_MklLayerNorm", "_MklLayerNorm " + DTypeShortName(t) + " " + s.ToString())
              .T(t)
              .Float("epsilon", 1e-3f)
              .Input(RandomOf(t, s, NextSeed(seed)))
              .Input(RandomOf(t, Shape{n}, NextSeed(seed), 0.5, 2))
              .Input(RandomOf(t, Shape{n}, NextSeed(seed)))
              .Reference1([n](const std::vector<Tensor>& in) {
                const std::vector<double> x = Doubles(in[0]), g = Doubles(in[1]),
                                          b = Doubles(in[2]);
                std::vector<double> o(x.size());
                for (size_t r = 0; r < x.size(); r += static_cast<size_t>(n)) {
                  double mean = 0, var = 0;
                  for (int64_t j = 0; j < n; ++j) mean += x[r + j];
                  mean /= static_cast<double>(n);
                  for (int64_t j = 0; j < n; ++j) var += (x[r + j] - mean) * (x[r + j] - mean);
                  const double inv = 1 / std::sqrt(var / static_cast<double>(n) + double{1e-3f});
                  for (int64_t j = 0; j < n; ++j) o[r + j] = (x[r + j] - mean) * inv * g[j] + b[j];
                }
                return FromDoubles(in[0].dtype(), in[0].shape(), o);
              })
              .Tolerance(Tol(t) * 5)
              .Build());
    }
  }
}

// _KilnAttention: softmax(scale * q . k + bias) . v per (batch, head, target), against a float64
// reference: one head and several, a source past a warp's width, a value dim other than the
// key's, heads past 32 values (several per GPU lane), an additive mask broadcast over heads
// (with -1e9 entries, as Keras's masks add), a bias with -inf first entries, no rows, and a
// source longer than the GPU's shared-memory kernel takes.
void AddAttention(std::vector<OpCase>* c) {
  uint32_t seed = 3280;
  struct Dims {
    int64_t b, t, s, n, h, hv;
  };
  const Dims dims[] = {
      {1, 3, 5, 1, 4, 4}, {2, 4, 40, 3, 8, 6},  {1, 7, 9, 2, 70, 33}, {2, 5, 6, 2, 16, 16},
      {0, 3, 4, 2, 8, 8}, {1, 2, 1100, 1, 4, 4}};  // past what the GPU keeps in shared memory
  for (DType t : {DType::kFloat, DType::kHalf, DType::kBFloat16, DType::kDouble}) {
    for (const Dims& d : dims) {
      for (int bias_kind = 0; bias_kind < 3; ++bias_kind) {
        if (bias_kind > 0 && d.b != 2) continue;
        const float scale = 1.0f / std::sqrt(static_cast<float>(d.h));
        OpCaseBuilder b("_KilnAttention",
                        "_KilnAttention " + DTypeShortName(t) + " b" + std::to_string(d.b) + " t" +
                            std::to_string(d.t) + " s" + std::to_string(d.s) + " n" +
                            std::to_string(d.n) + " h" + std::to_string(d.h) + " hv" +
                            std::to_string(d.hv) + " bias " + std::to_string(bias_kind));
        b.T(t).Float("scale", scale).Bool("has_bias", bias_kind > 0);
        b.Input(RandomOf(t, Shape{d.b, d.t, d.n, d.h}, NextSeed(seed)));
        b.Input(RandomOf(t, Shape{d.b, d.s, d.n, d.h}, NextSeed(seed)));
        b.Input(RandomOf(t, Shape{d.b, d.s, d.n, d.hv}, NextSeed(seed)));
        Shape bias_shape;
        if (bias_kind == 1) {  // a padding mask's adder, [b, 1, 1, s]: the last source masked
          bias_shape = Shape{d.b, 1, 1, d.s};
          Tensor m(DType::kFloat, bias_shape);
          for (int64_t i = 0; i < m.NumElements(); ++i)
            m.data<float>()[i] = i % d.s == d.s - 1 ? -1e9f : 0.0f;
          b.Input(m);
        } else if (bias_kind == 2) {  // [t, s] with -inf in the first column
          bias_shape = Shape{d.t, d.s};
          Tensor m = RandomOf(DType::kFloat, bias_shape, NextSeed(seed));
          for (int64_t i = 0; i < d.t; ++i)
            m.data<float>()[i * d.s] = -std::numeric_limits<float>::infinity();
          b.Input(m);
        }
        b.Reference1([d, scale, bias_kind](const std::vector<Tensor>& in) {
          const std::vector<double> q = Doubles(in[0]), k = Doubles(in[1]), v = Doubles(in[2]);
          const std::vector<double> bias = bias_kind > 0 ? Doubles(in[3]) : std::vector<double>{};
          std::vector<double> o(static_cast<size_t>(d.b * d.t * d.n * d.hv));
          for (int64_t bb = 0; bb < d.b; ++bb)
            for (int64_t n = 0; n < d.n; ++n)
              for (int64_t t = 0; t < d.t; ++t) {
                std::vector<double> p(static_cast<size_t>(d.s));
                double top = -std::numeric_limits<double>::infinity(), sum = 0;
                for (int64_t s = 0; s < d.s; ++s) {
                  double dot = 0;
                  for (int64_t i = 0; i < d.h; ++i)
                    dot += q[((bb * d.t + t) * d.n + n) * d.h + i] *
                           k[((bb * d.s + s) * d.n + n) * d.h + i];
                  double x = dot * scale;
                  if (bias_kind == 1) x += bias[bb * d.s + s];
                  if (bias_kind == 2) x += bias[t * d.s + s];
                  p[s] = x;
                  top = std::max(top, x);
                }
                for (int64_t s = 0; s < d.s; ++s) sum += p[s] = std::exp(p[s] - top);
                for (int64_t i = 0; i < d.hv; ++i) {
                  double acc = 0;
                  for (int64_t s = 0; s < d.s; ++s)
                    acc += p[s] * v[((bb * d.s + s) * d.n + n) * d.hv + i];
                  o[((bb * d.t + t) * d.n + n) * d.hv + i] = acc / sum;
                }
              }
          return FromDoubles(in[0].dtype(), Shape{d.b, d.t, d.n, d.hv}, o);
        });
        c->push_back(b.Tolerance(Tol(t) * 5).Build());
      }
    }
  }
}

void AddBias(std::vector<OpCase>* c) {
  uint32_t seed = 3300;
  for (DType t : {DType::kFloat, DType::kDouble, DType::kHalf, DType::kBFloat16, DType::kInt32,
                  DType::kInt64, DType::kUInt8, DType::kInt8}) {
    for (const Shape& s :
         {Shape{4, 3}, Shape{2, 3, 4, 5}, Shape{0, 3}, Shape{2, 70, 3, 3}, Shape{512, 200}}) {
      for (bool nchw : {false, true}) {
        const int ch = nchw ? 1 : s.rank() - 1;
        const bool small = t == DType::kUInt8 || t == DType::kInt8;
        // One-byte sums wrap (TF's do too); keep them below 128 so the reference needs no wrap.
        if (small && s.num_elements() > 100 * s.dim(ch)) continue;
        c->push_back(OpCaseBuilder("BiasAddGrad", "BiasAddGrad " + DTypeShortName(t) + " " +
                                                      s.ToString() + (nchw ? " NCHW" : " NHWC"))
                         .T(t)
                         .String("data_format", nchw ? "NCHW" : "NHWC")
                         .Input(RandomOf(t, s, NextSeed(seed), small ? 0 : -3, small ? 1 : 3))
                         .Reference1([ch](const std::vector<Tensor>& in) {
                           const Shape& sh = in[0].shape();
                           std::vector<double> o(sh.dim(ch), 0.0);
                           for (int64_t i = 0; i < sh.num_elements(); ++i)
                             o[Unravel(i, sh)[ch]] += ValueAt(in[0], i);
                           return FromDoubles(in[0].dtype(), Shape{sh.dim(ch)}, o);
                         })
                         .Tolerance(t == DType::kHalf       ? 2e-3
                                    : t == DType::kBFloat16 ? 1e-2
                                                            : 1e-5)
                         .Build());
      }
    }
    for (const Shape& s : {Shape{4, 3}, Shape{2, 3, 4, 5}, Shape{0, 3}, Shape{300, 256}}) {
      c->push_back(OpCaseBuilder("BiasAddV1")
                       .T(t)
                       .Input(RandomOf(t, s, NextSeed(seed)))
                       .Input(RandomOf(t, Shape{s.dim(s.rank() - 1)}, NextSeed(seed)))
                       .Reference1([](const std::vector<Tensor>& in) {
                         std::vector<double> o = Doubles(in[0]);
                         const int64_t c = in[1].NumElements();
                         for (size_t i = 0; i < o.size(); ++i) o[i] += ValueAt(in[1], i % c);
                         return FromDoubles(in[0].dtype(), in[0].shape(), o);
                       })
                       .Tolerance(1e-6)
                       .Build());
    }
  }
}

void AddLstm(std::vector<OpCase>* c) {
  uint32_t seed = 3400;
  struct P {
    int64_t batch, input, cell;
    float forget_bias, clip;
    bool peephole;
  };
  for (DType t : {DType::kFloat, DType::kHalf}) {
    for (const P& p : {P{2, 3, 4, 1.0f, 3.0f, false}, P{3, 5, 2, 0.5f, -1.0f, true},
                       P{1, 2, 3, 1.0f, 0.5f, true}, P{0, 2, 3, 1.0f, 3.0f, false},
                       P{16, 32, 64, 1.0f, 3.0f, true}}) {
      const int64_t b = p.batch, n = p.input, h = p.cell;
      c->push_back(OpCaseBuilder("LSTMBlockCell",
                                 "LSTMBlockCell " + DTypeShortName(t) + " batch " +
                                     std::to_string(b) + " input " + std::to_string(n) + " cell " +
                                     std::to_string(h) + (p.peephole ? " peephole" : ""))
                       .T(t)
                       .Float("forget_bias", p.forget_bias)
                       .Float("cell_clip", p.clip)
                       .Bool("use_peephole", p.peephole)
                       .Input(RandomOf(t, Shape{b, n}, NextSeed(seed), -1, 1))
                       .Input(RandomOf(t, Shape{b, h}, NextSeed(seed), -2, 2))
                       .Input(RandomOf(t, Shape{b, h}, NextSeed(seed), -1, 1))
                       .Input(RandomOf(t, Shape{n + h, 4 * h}, NextSeed(seed), -0.5, 0.5))
                       .Input(RandomOf(t, Shape{h}, NextSeed(seed), -1, 1))
                       .Input(RandomOf(t, Shape{h}, NextSeed(seed), -1, 1))
                       .Input(RandomOf(t, Shape{h}, NextSeed(seed), -1, 1))
                       .Input(RandomOf(t, Shape{4 * h}, NextSeed(seed), -1, 1))
                       .Reference([p, b, n, h](const std::vector<Tensor>& in) {
                         std::vector<std::vector<double>> v;
                         for (const Tensor& x : in) v.push_back(Doubles(x));
                         const auto &x = v[0], &cs_prev = v[1], &h_prev = v[2], &w = v[3],
                                    &wci = v[4], &wcf = v[5], &wco = v[6], &bias = v[7];
                         std::vector<std::vector<double>> out(7, std::vector<double>(b * h));
                         auto sig = [](double z) { return 1 / (1 + std::exp(-z)); };
                         for (int64_t r = 0; r < b; ++r) {
                           for (int64_t j = 0; j < h; ++j) {
                             double g[4];
                             for (int q = 0; q < 4; ++q) {
                               double acc = bias[q * h + j];
                               for (int64_t k = 0; k < n; ++k)
                                 acc += x[r * n + k] * w[k * 4 * h + q * h + j];
                               for (int64_t k = 0; k < h; ++k)
                                 acc += h_prev[r * h + k] * w[(n + k) * 4 * h + q * h + j];
                               g[q] = acc;
                             }
                             const double cp = cs_prev[r * h + j];
                             const double i = sig(g[0] + (p.peephole ? cp * wci[j] : 0));
                             const double ci = std::tanh(g[1]);
                             const double f =
                                 sig(g[2] + p.forget_bias + (p.peephole ? cp * wcf[j] : 0));
                             double cs = ci * i + cp * f;
                             if (p.clip > 0) cs = std::clamp<double>(cs, -p.clip, p.clip);
                             const double co = std::tanh(cs);
                             const double o = sig(g[3] + (p.peephole ? cs * wco[j] : 0));
                             const double vals[7] = {i, cs, f, o, ci, co, co * o};
                             for (int q = 0; q < 7; ++q) out[q][r * h + j] = vals[q];
                           }
                         }
                         std::vector<Tensor> res;
                         for (const auto& o : out)
                           res.push_back(FromDoubles(in[0].dtype(), Shape{b, h}, o));
                         return res;
                       })
                       .Tolerance(t == DType::kHalf ? 5e-3 : 2e-5)
                       .Build());
    }
  }
}

}  // namespace

std::vector<OpCase> NormCases() {
  std::vector<OpCase> c;
  AddBatchNorm(&c);
  AddBatchNormGrad(&c);
  AddLrn(&c);
  AddLrnGrad(&c);
  AddLayerNorm(&c);
  AddAttention(&c);
  AddBias(&c);
  AddLstm(&c);
  return c;
}

}  // namespace kiln::testing
