// Op-tester cases of Dilation2D, Dilation2DBackpropInput, Dilation2DBackpropFilter,
// MirrorPadGrad, MaxPoolGradGrad(V2) and MaxPoolGradWithArgmax, against plain loops written from
// TensorFlow's definitions.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ops/cases_grad.h"
#include "ops/op_cases.h"
#include "ops/ref_util.h"

namespace kiln::testing {
namespace {

// ---- Dilation2D ------------------------------------------------------------------------------

struct DilationGeom {
  int64_t out = 0, pad = 0;
};

// TF's windowed output size and leading padding, from their definition.
DilationGeom RefWindow(int64_t in, int64_t k, int64_t stride, int64_t rate, bool same) {
  const int64_t eff = (k - 1) * rate + 1;
  DilationGeom g;
  if (same) {
    g.out = (in + stride - 1) / stride;
    g.pad = std::max<int64_t>(0, (g.out - 1) * stride + eff - in) / 2;
  } else {
    g.out = (in - eff + stride) / stride;
  }
  return g;
}

// which: 0 forward, 1 input gradient, 2 filter gradient. The first maximum wins, as TF.
Tensor RefDilation(const std::vector<Tensor>& in, const std::vector<int64_t>& strides,
                   const std::vector<int64_t>& rates, bool same, int which) {
  const Tensor& x = in[0];
  const Tensor& f = in[1];
  const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), d = x.dim(3), fh = f.dim(0),
                fw = f.dim(1);
  const DilationGeom gr = RefWindow(h, fh, strides[1], rates[1], same);
  const DilationGeom gc = RefWindow(w, fw, strides[2], rates[2], same);
  const std::vector<double> xv = Doubles(x), fv = Doubles(f);
  std::vector<double> grad;
  if (which != 0) grad = Doubles(in[2]);
  double lowest = -std::numeric_limits<double>::max();
  if (x.dtype() == DType::kFloat) lowest = -std::numeric_limits<float>::max();
  if (x.dtype() == DType::kHalf) lowest = -65504;
  if (x.dtype() == DType::kInt32) lowest = std::numeric_limits<int32_t>::min();
  Shape out_shape = which == 0 ? Shape{n, gr.out, gc.out, d} : which == 1 ? x.shape() : f.shape();
  std::vector<double> out(out_shape.num_elements(), 0.0);
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t y = 0; y < gr.out; ++y) {
      for (int64_t xo = 0; xo < gc.out; ++xo) {
        for (int64_t c = 0; c < d; ++c) {
          const int64_t r0 = y * strides[1] - gr.pad, c0 = xo * strides[2] - gc.pad;
          double best = lowest;
          int64_t br = std::max<int64_t>(r0, 0), bc = std::max<int64_t>(c0, 0), bi = 0, bj = 0;
          for (int64_t i = 0; i < fh; ++i) {
            for (int64_t j = 0; j < fw; ++j) {
              const int64_t r = r0 + i * rates[1], cc = c0 + j * rates[2];
              if (r < 0 || r >= h || cc < 0 || cc >= w) continue;
              const double v = xv[((b * h + r) * w + cc) * d + c] + fv[(i * fw + j) * d + c];
              if (v > best) {
                best = v;
                br = r;
                bc = cc;
                bi = i;
                bj = j;
              }
            }
          }
          const int64_t o = ((b * gr.out + y) * gc.out + xo) * d + c;
          if (which == 0) {
            out[o] = best;
          } else if (which == 1) {
            if (br < h && bc < w) out[((b * h + br) * w + bc) * d + c] += grad[o];
          } else {
            out[(bi * fw + bj) * d + c] += grad[o];
          }
        }
      }
    }
  }
  return FromDoubles(x.dtype(), out_shape, out);
}

void AddDilation(std::vector<OpCase>* c) {
  uint32_t seed = 700;
  struct Config {
    Shape in, filter;
    std::vector<int64_t> strides, rates;
    bool same;
  };
  const Config configs[] = {{Shape{2, 5, 6, 3}, Shape{2, 3, 3}, {1, 1, 1, 1}, {1, 1, 1, 1}, false},
                            {Shape{2, 5, 6, 3}, Shape{2, 3, 3}, {1, 1, 1, 1}, {1, 1, 1, 1}, true},
                            {Shape{1, 7, 8, 2}, Shape{3, 2, 2}, {1, 2, 3, 1}, {1, 1, 2, 1}, true},
                            {Shape{1, 7, 8, 2}, Shape{3, 2, 2}, {1, 2, 1, 1}, {1, 2, 2, 1}, false},
                            {Shape{1, 2, 2, 1}, Shape{3, 3, 1}, {1, 1, 1, 1}, {1, 3, 3, 1}, true}};
  for (const Config& cfg : configs) {
    const std::string geom = " " + cfg.in.ToString() + " * " + cfg.filter.ToString() + " s" +
                             std::to_string(cfg.strides[1]) + std::to_string(cfg.strides[2]) +
                             " r" + std::to_string(cfg.rates[1]) + std::to_string(cfg.rates[2]) +
                             (cfg.same ? " SAME" : " VALID");
    const DilationGeom gr =
        RefWindow(cfg.in.dim(1), cfg.filter.dim(0), cfg.strides[1], cfg.rates[1], cfg.same);
    const DilationGeom gc =
        RefWindow(cfg.in.dim(2), cfg.filter.dim(1), cfg.strides[2], cfg.rates[2], cfg.same);
    const Shape out{cfg.in.dim(0), gr.out, gc.out, cfg.in.dim(3)};
    for (int which = 0; which < 3; ++which) {
      const char* op = which == 0   ? "Dilation2D"
                       : which == 1 ? "Dilation2DBackpropInput"
                                    : "Dilation2DBackpropFilter";
      for (DType t : {DType::kFloat, DType::kDouble, DType::kInt32, DType::kHalf}) {
        if (t == DType::kHalf && which != 0) continue;  // ties after rounding may pick other taps
        OpCaseBuilder b(op, std::string(op) + " " + DTypeShortName(t) + geom);
        b.T(t)
            .IntList("strides", cfg.strides)
            .IntList("rates", cfg.rates)
            .String("padding", cfg.same ? "SAME" : "VALID")
            .Input(RandomOf(t, cfg.in, NextSeed(seed), -20, 20))
            .Input(RandomOf(t, cfg.filter, NextSeed(seed), -20, 20));
        if (which != 0) b.Input(RandomOf(t, out, NextSeed(seed), -5, 5));
        const std::vector<int64_t> strides = cfg.strides, rates = cfg.rates;
        const bool same = cfg.same;
        c->push_back(b.Reference1([strides, rates, same, which](const std::vector<Tensor>& in) {
                        return RefDilation(in, strides, rates, same, which);
                      })
                         .Tolerance(t == DType::kHalf    ? 2e-3
                                    : t == DType::kFloat ? 1e-5
                                                         : 1e-9)
                         .Build());
      }
    }
  }
}

// ---- MirrorPadGrad ---------------------------------------------------------------------------

// Each input element adds into the output element that MirrorPad would have copied it from.
Tensor RefMirrorPadGrad(const Tensor& x, const std::vector<int64_t>& pads, bool reflect) {
  const int rank = x.rank();
  Shape out;
  for (int d = 0; d < rank; ++d) out.AddDim(x.dim(d) - pads[2 * d] - pads[2 * d + 1]);
  const std::vector<double> v = Doubles(x);
  std::vector<double> o(out.num_elements(), 0.0);
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    int64_t rem = i, flat = 0, stride = 1;
    std::vector<int64_t> idx(rank);
    for (int d = rank - 1; d >= 0; --d) {
      idx[d] = rem % x.dim(d);
      rem /= x.dim(d);
    }
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t n = out.dim(d);
      int64_t q = idx[d] - pads[2 * d];
      if (q < 0) q = reflect ? -q : -q - 1;
      if (q >= n) q = reflect ? 2 * (n - 1) - q : 2 * n - 1 - q;
      flat += q * stride;
      stride *= n;
    }
    o[flat] += v[i];
  }
  return FromDoubles(x.dtype(), out, o);
}

void AddMirrorPadGrad(std::vector<OpCase>* c) {
  uint32_t seed = 900;
  struct Config {
    Shape in;
    std::vector<int64_t> pads;
  };
  const Config configs[] = {{Shape{4, 5}, {1, 1, 2, 0}},
                            {Shape{9}, {3, 2}},
                            {Shape{3, 6, 7, 2}, {0, 1, 1, 2, 1, 2, 0, 0}},
                            {Shape{40, 300}, {5, 7, 0, 9}}};
  for (const Config& cfg : configs) {
    for (bool reflect : {true, false}) {
      for (DType t : {DType::kFloat, DType::kDouble, DType::kInt32, DType::kHalf, DType::kInt64}) {
        if (cfg.in.num_elements() > 1000 && t != DType::kFloat) continue;
        for (DType tp : {DType::kInt32, DType::kInt64}) {
          if (tp == DType::kInt64 && t != DType::kFloat) continue;
          const std::vector<int64_t> pads = cfg.pads;
          const int64_t rows = static_cast<int64_t>(pads.size() / 2);
          const Tensor paddings =
              tp == DType::kInt32
                  ? Make<int32_t>(std::vector<int32_t>(pads.begin(), pads.end()), {rows, 2})
                  : Make<int64_t>(pads, {rows, 2});
          OpCaseBuilder b("MirrorPadGrad", "MirrorPadGrad " + DTypeShortName(t) + " " +
                                               cfg.in.ToString() +
                                               (reflect ? " REFLECT" : " SYMMETRIC") +
                                               " paddings " + DTypeShortName(tp));
          b.T(t).Type("Tpaddings", tp).String("mode", reflect ? "REFLECT" : "SYMMETRIC");
          b.Input(RandomOf(t, cfg.in, NextSeed(seed), -4, 4));
          if (tp == DType::kInt32) {
            b.ConstInput(paddings);
          } else {
            b.Input(paddings);
          }
          c->push_back(b.Reference1([pads, reflect](const std::vector<Tensor>& in) {
                          return RefMirrorPadGrad(in[0], pads, reflect);
                        })
                           .Tolerance(t == DType::kHalf ? 5e-3 : 1e-6)
                           .Build());
        }
      }
    }
  }
  // TF's example: [[24, 48, 48], [14, 28, 28]] for REFLECT (tf.raw_ops.MirrorPadGrad).
  std::vector<float> x(20);
  for (int i = 0; i < 20; ++i) x[i] = static_cast<float>(i);
  c->push_back(OpCaseBuilder("MirrorPadGrad", "MirrorPadGrad TF's values")
                   .T(DType::kFloat)
                   .String("mode", "REFLECT")
                   .Input(Make<float>(x, {4, 5}))
                   .ConstInput(Make<int32_t>({1, 1, 2, 0}, {2, 2}))
                   .Reference1([](const auto&) {
                     return Make<float>({24, 48, 48, 14, 28, 28}, {2, 3});
                   })
                   .Build());
}

// ---- max-pool gradients ----------------------------------------------------------------------

// 2-D max pooling from its definition: for each output element the first maximum of its window
// (window order: rows, then columns), as a flat index within the image.
struct RefPool {
  Shape out;
  std::vector<double> value;
  std::vector<int64_t> argmax;
};

RefPool RefMaxPool(const Tensor& x, int64_t k, int64_t s, bool same) {
  const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), c = x.dim(3);
  const DilationGeom gr = RefWindow(h, k, s, 1, same), gc = RefWindow(w, k, s, 1, same);
  const std::vector<double> v = Doubles(x);
  RefPool r;
  r.out = Shape{n, gr.out, gc.out, c};
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t y = 0; y < gr.out; ++y) {
      for (int64_t xo = 0; xo < gc.out; ++xo) {
        for (int64_t ch = 0; ch < c; ++ch) {
          double best = 0;
          int64_t arg = -1;
          for (int64_t i = y * s - gr.pad; i < y * s - gr.pad + k; ++i) {
            for (int64_t j = xo * s - gc.pad; j < xo * s - gc.pad + k; ++j) {
              if (i < 0 || i >= h || j < 0 || j >= w) continue;
              const int64_t at = (i * w + j) * c + ch;
              const double val = v[b * h * w * c + at];
              if (arg < 0 || val > best) {
                best = val;
                arg = at;
              }
            }
          }
          r.value.push_back(best);
          r.argmax.push_back(arg);
        }
      }
    }
  }
  return r;
}

void AddMaxPoolGrads(std::vector<OpCase>* c) {
  uint32_t seed = 1100;
  struct Config {
    Shape in;
    int64_t k, s;
    bool same;
  };
  const Config configs[] = {{Shape{2, 6, 5, 3}, 2, 2, false},
                            {Shape{2, 6, 5, 3}, 3, 2, true},
                            {Shape{1, 7, 7, 2}, 3, 1, false}};
  for (const Config& cfg : configs) {
    const std::string geom = " " + cfg.in.ToString() + " k" + std::to_string(cfg.k) + " s" +
                             std::to_string(cfg.s) + (cfg.same ? " SAME" : " VALID");
    const std::vector<int64_t> ksize = {1, cfg.k, cfg.k, 1}, strides = {1, cfg.s, cfg.s, 1};
    for (DType t : {DType::kFloat, DType::kDouble, DType::kInt32, DType::kHalf}) {
      // Integers in a wide range so that windows rarely tie (ties follow the first maximum).
      const Tensor x = RandomOf(t, cfg.in, NextSeed(seed), -100, 100);
      const RefPool pool = RefMaxPool(x, cfg.k, cfg.s, cfg.same);
      const Tensor y = FromDoubles(t, pool.out, pool.value);
      const Tensor dx = RandomOf(t, cfg.in, NextSeed(seed), -3, 3);
      const int64_t per_out = pool.out.num_elements() / pool.out.dim(0);
      const int64_t per_in = cfg.in.num_elements() / cfg.in.dim(0);
      // MaxPoolGradGrad(V2): the grad at each window's maximum.
      auto gg_ref = [pool, per_out, per_in](const std::vector<Tensor>& in) {
        const std::vector<double> g = Doubles(in[2]);
        std::vector<double> out(pool.argmax.size());
        for (size_t i = 0; i < out.size(); ++i)
          out[i] = g[static_cast<int64_t>(i) / per_out * per_in + pool.argmax[i]];
        return FromDoubles(in[0].dtype(), pool.out, out);
      };
      for (bool v2 : {false, true}) {
        OpCaseBuilder b(
            v2 ? "MaxPoolGradGradV2" : "MaxPoolGradGrad",
            std::string(v2 ? "MaxPoolGradGradV2 " : "MaxPoolGradGrad ") + DTypeShortName(t) + geom);
        b.T(t).String("padding", cfg.same ? "SAME" : "VALID").Input(x).Input(y).Input(dx);
        if (v2) {
          b.ConstInput(
               Make<int32_t>({1, static_cast<int32_t>(cfg.k), static_cast<int32_t>(cfg.k), 1}, {4}))
              .ConstInput(Make<int32_t>(
                  {1, static_cast<int32_t>(cfg.s), static_cast<int32_t>(cfg.s), 1}, {4}));
        } else {
          b.IntList("ksize", ksize).IntList("strides", strides);
        }
        c->push_back(b.Reference1(gg_ref).Build());
      }
      // MaxPoolGradWithArgmax: grad scattered to the argmax, per image or over the batch.
      for (DType targmax : {DType::kInt64, DType::kInt32}) {
        for (bool batch_index : {false, true}) {
          if (targmax == DType::kInt32 && (batch_index || t != DType::kFloat)) continue;
          std::vector<int64_t> am = pool.argmax;
          if (batch_index) {
            for (size_t i = 0; i < am.size(); ++i)
              am[i] += static_cast<int64_t>(i) / per_out * per_in;
          }
          const Tensor argmax =
              targmax == DType::kInt64
                  ? Make<int64_t>(am, pool.out)
                  : Make<int32_t>(std::vector<int32_t>(am.begin(), am.end()), pool.out);
          const Tensor grad = RandomOf(t, pool.out, NextSeed(seed), -3, 3);
          const Shape in_shape = cfg.in;
          c->push_back(
              OpCaseBuilder("MaxPoolGradWithArgmax", "MaxPoolGradWithArgmax " + DTypeShortName(t) +
                                                         geom + " " + DTypeShortName(targmax) +
                                                         (batch_index ? " batch index" : ""))
                  .T(t)
                  .Type("Targmax", targmax)
                  .Bool("include_batch_in_index", batch_index)
                  .IntList("ksize", ksize)
                  .IntList("strides", strides)
                  .String("padding", cfg.same ? "SAME" : "VALID")
                  .Input(x)
                  .Input(grad)
                  .Input(argmax)
                  .Reference1([pool, per_out, per_in, in_shape](const std::vector<Tensor>& in) {
                    const std::vector<double> g = Doubles(in[1]);
                    std::vector<double> out(in_shape.num_elements(), 0.0);
                    for (size_t i = 0; i < g.size(); ++i)
                      out[static_cast<int64_t>(i) / per_out * per_in + pool.argmax[i]] += g[i];
                    return FromDoubles(in[0].dtype(), in_shape, out);
                  })
                  .Tolerance(t == DType::kHalf ? 5e-3 : 1e-6)
                  .Build());
        }
      }
    }
  }
  // TF's rule when orig_output is not the maximum: the first element equal to it, else 0
  // (values recorded from TensorFlow 2.21: [1, 3, 8, 0]).
  std::vector<float> grad(16);
  for (int i = 0; i < 16; ++i) grad[i] = static_cast<float>(i);
  c->push_back(
      OpCaseBuilder("MaxPoolGradGrad", "MaxPoolGradGrad orig_output not the maximum")
          .T(DType::kFloat)
          .IntList("ksize", {1, 2, 2, 1})
          .IntList("strides", {1, 2, 2, 1})
          .String("padding", "VALID")
          .Input(Make<float>({1, 3, 3, 2, 0, 1, 5, 5, 2, 2, 1, 0, 4, 4, 0, 1}, {1, 4, 4, 1}))
          .Input(Make<float>({3, 2, 2, 9}, {1, 2, 2, 1}))
          .Input(Make<float>(grad, {1, 4, 4, 1}))
          .Reference1([](const auto&) {
            return Make<float>({1, 3, 8, 0}, {1, 2, 2, 1});
          })
          .Build());
}
}  // namespace

void AddWindowGradCases(std::vector<OpCase>* c) {
  AddDilation(c);
  AddMirrorPadGrad(c);
  AddMaxPoolGrads(c);
}

}  // namespace kiln::testing
