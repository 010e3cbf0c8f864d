// Op-tester cases of the pooling family beyond MaxPool/AvgPool: AvgPool3D, MaxPool3D, MaxPoolV2,
// MaxPoolWithArgmax, MaxPoolGrad(V2), AvgPoolGrad, MaxPool3DGrad and AvgPool3DGrad. References are
// plain loops over every window in three spatial dims (2-D ops: depth 1): max takes the first
// maximum in window order (depth, rows, columns), average divides by the real (unpadded) elements;
// the gradients route or spread each output's gradient back over its window.
#include <string>
#include <vector>

#include "ops/op_cases.h"
#include "ops/ref_util.h"

namespace kiln::testing {
namespace {

struct PoolSpec {
  int spatial = 2;
  std::vector<int64_t> in;    // channels last
  std::vector<int64_t> k, s;  // spatial entries
  std::string padding = "VALID";

  std::array<RefDim, 3> Dims() const {
    std::array<RefDim, 3> d;
    for (int i = 0; i < spatial; ++i)
      d[3 - spatial + i] = RefWindowDim(padding, in[1 + i], k[i], s[i]);
    return d;
  }
  Shape OutShape() const {
    const auto d = Dims();
    std::vector<int64_t> o = {in[0]};
    for (int i = 3 - spatial; i < 3; ++i) o.push_back(d[i].out);
    o.push_back(in.back());
    return *Shape::FromDims(o);
  }
  Shape InShape() const { return *Shape::FromDims(in); }
  std::vector<int64_t> Attr(const std::vector<int64_t>& v) const {
    std::vector<int64_t> a = {1};
    a.insert(a.end(), v.begin(), v.end());
    a.push_back(1);
    return a;
  }
  std::string Name(const std::string& op, DType t) const {
    return op + " " + DTypeShortName(t) + " " + InShape().ToString() + " " + padding + " k" +
           std::to_string(k.back()) + " s" + std::to_string(s.back());
  }
};

// For every output element (flat index) the input elements (flat indices) of its window, in
// window order.
std::vector<std::vector<int64_t>> Windows(const PoolSpec& p) {
  const auto d = p.Dims();
  const int64_t c = p.in.back();
  std::vector<std::vector<int64_t>> w(p.OutShape().num_elements());
  for (int64_t b = 0; b < p.in[0]; ++b)
    for (int64_t oz = 0; oz < d[0].out; ++oz)
      for (int64_t oy = 0; oy < d[1].out; ++oy)
        for (int64_t ox = 0; ox < d[2].out; ++ox)
          for (int64_t ch = 0; ch < c; ++ch) {
            const int64_t o = (((b * d[0].out + oz) * d[1].out + oy) * d[2].out + ox) * c + ch;
            for (int64_t tz = 0; tz < d[0].k; ++tz)
              for (int64_t ty = 0; ty < d[1].k; ++ty)
                for (int64_t tx = 0; tx < d[2].k; ++tx) {
                  const int64_t iz = RefIn(d[0], oz, tz), iy = RefIn(d[1], oy, ty),
                                ix = RefIn(d[2], ox, tx);
                  if (iz < 0 || iy < 0 || ix < 0) continue;
                  w[o].push_back((((b * d[0].in + iz) * d[1].in + iy) * d[2].in + ix) * c + ch);
                }
          }
  return w;
}

// The first maximum of each window (flat input index).
std::vector<int64_t> ArgMaxes(const PoolSpec& p, const std::vector<double>& x) {
  std::vector<int64_t> am;
  for (const auto& win : Windows(p)) {
    int64_t best = win.empty() ? -1 : win[0];
    for (int64_t i : win)
      if (x[i] > x[best]) best = i;
    am.push_back(best);
  }
  return am;
}

std::vector<double> RefPool(const PoolSpec& p, const std::vector<double>& x, bool max) {
  std::vector<double> o;
  for (const auto& win : Windows(p)) {
    double acc = max ? x[win[0]] : 0;
    for (int64_t i : win) acc = max ? std::max(acc, x[i]) : acc + x[i];
    o.push_back(max ? acc : acc / static_cast<double>(win.size()));
  }
  return o;
}

// Gradients that several windows route to one element are rounded to the type per addition, as
// TensorFlow accumulates them.
double Tol(DType t) {
  return t == DType::kHalf       ? 4e-3
         : t == DType::kBFloat16 ? 3e-2
         : t == DType::kFloat    ? 1e-5
                                 : 1e-12;
}

std::vector<PoolSpec> Specs2D() {
  return {
      {2, {2, 5, 5, 3}, {2, 2}, {2, 2}, "VALID"},
      {2, {1, 7, 6, 4}, {3, 3}, {2, 2}, "SAME"},
      {2, {1, 4, 5, 2}, {3, 2}, {1, 2}, "SAME"},
      {2, {0, 4, 4, 2}, {2, 2}, {2, 2}, "SAME"},
      {2, {2, 16, 16, 8}, {3, 3}, {2, 2}, "SAME"},
      // Windows that tile the input exactly, and windows with gaps between them.
      {2, {2, 8, 6, 5}, {2, 2}, {2, 2}, "SAME"},
      {2, {1, 7, 8, 3}, {2, 3}, {3, 3}, "SAME"},
  };
}

std::vector<PoolSpec> Specs3D() {
  return {
      {3, {2, 4, 5, 5, 3}, {2, 2, 2}, {2, 2, 2}, "VALID"},
      {3, {1, 5, 6, 4, 2}, {3, 3, 2}, {2, 2, 1}, "SAME"},
      {3, {1, 3, 3, 3, 1}, {3, 3, 3}, {1, 1, 1}, "SAME"},
      {3, {0, 3, 3, 3, 2}, {2, 2, 2}, {1, 1, 1}, "SAME"},
  };
}

void AddPool3D(std::vector<OpCase>* c) {
  uint32_t seed = 2000;
  for (bool max : {true, false}) {
    const std::string op = max ? "MaxPool3D" : "AvgPool3D";
    std::vector<DType> types = {DType::kFloat, DType::kHalf, DType::kBFloat16};
    if (!max) types.push_back(DType::kDouble);
    for (DType t : types) {
      for (const PoolSpec& p : Specs3D()) {
        c->push_back(OpCaseBuilder(op, p.Name(op, t))
                         .T(t)
                         .IntList("ksize", p.Attr(p.k))
                         .IntList("strides", p.Attr(p.s))
                         .String("padding", p.padding)
                         .Input(RandomOf(t, p.InShape(), NextSeed(seed)))
                         .Reference1([p, max](const std::vector<Tensor>& in) {
                           return FromDoubles(in[0].dtype(), p.OutShape(),
                                              RefPool(p, Doubles(in[0]), max));
                         })
                         .Tolerance(Tol(t))
                         .Build());
      }
    }
  }
}

void AddMaxPoolV2(std::vector<OpCase>* c) {
  uint32_t seed = 2100;
  int k = 0;
  for (DType t : {DType::kFloat, DType::kHalf, DType::kInt32, DType::kUInt8, DType::kInt64}) {
    for (const PoolSpec& p : Specs2D()) {
      std::vector<int32_t> ks = {1, static_cast<int32_t>(p.k[0]), static_cast<int32_t>(p.k[1]), 1};
      std::vector<int32_t> ss = {1, static_cast<int32_t>(p.s[0]), static_cast<int32_t>(p.s[1]), 1};
      OpCaseBuilder b("MaxPoolV2", p.Name("MaxPoolV2", t) + (k % 2 ? " runtime ksize" : ""));
      b.T(t)
          .String("padding", p.padding)
          .Input(RandomOf(t, p.InShape(), NextSeed(seed), -100, 100));
      // ksize and strides known at load time, or only when running.
      if (k++ % 2) {
        b.Input(Make<int32_t>(ks, {4})).Input(Make<int32_t>(ss, {4}));
      } else {
        b.ConstInput(Make<int32_t>(ks, {4})).ConstInput(Make<int32_t>(ss, {4}));
      }
      c->push_back(b.Reference1([p](const std::vector<Tensor>& in) {
                      return FromDoubles(in[0].dtype(), p.OutShape(),
                                         RefPool(p, Doubles(in[0]), true));
                    }).Build());
    }
  }
}

void AddMaxPoolWithArgmax(std::vector<OpCase>* c) {
  uint32_t seed = 2200;
  for (DType t : {DType::kFloat, DType::kDouble, DType::kHalf, DType::kInt32}) {
    for (bool with_batch : {false, true}) {
      for (DType targmax : {DType::kInt64, DType::kInt32}) {
        for (const PoolSpec& p : Specs2D()) {
          // Integer inputs from a small range, so windows hold ties: the first one wins.
          c->push_back(OpCaseBuilder("MaxPoolWithArgmax", p.Name("MaxPoolWithArgmax", t) +
                                                              (with_batch ? " batch index" : "") +
                                                              " " + DTypeShortName(targmax))
                           .T(t)
                           .Type("Targmax", targmax)
                           .Bool("include_batch_in_index", with_batch)
                           .IntList("ksize", p.Attr(p.k))
                           .IntList("strides", p.Attr(p.s))
                           .String("padding", p.padding)
                           .Input(RandomOf(t, p.InShape(), NextSeed(seed), -2, 2))
                           .Reference([p, with_batch, targmax](const std::vector<Tensor>& in) {
                             const std::vector<double> x = Doubles(in[0]);
                             const std::vector<int64_t> am = ArgMaxes(p, x);
                             std::vector<double> vals, idx;
                             const int64_t per_image =
                                 p.InShape().num_elements() / std::max<int64_t>(p.in[0], 1);
                             for (int64_t i : am) {
                               vals.push_back(x[i]);
                               idx.push_back(static_cast<double>(with_batch ? i : i % per_image));
                             }
                             return std::vector<Tensor>{
                                 FromDoubles(in[0].dtype(), p.OutShape(), vals),
                                 FromDoubles(targmax, p.OutShape(), idx)};
                           })
                           .Build());
        }
      }
    }
  }
}

void AddMaxPoolGrad(std::vector<OpCase>* c) {
  uint32_t seed = 2300;
  std::vector<PoolSpec> specs = Specs2D();
  for (DType t : {DType::kFloat, DType::kDouble, DType::kHalf, DType::kBFloat16, DType::kInt32}) {
    for (const PoolSpec& p : specs) {
      Tensor x =
          RandomOf(t, p.InShape(), NextSeed(seed), -2, 2);  // ties: the first maximum gets it
      Tensor y = FromDoubles(t, p.OutShape(), RefPool(p, Doubles(x), true));
      c->push_back(OpCaseBuilder("MaxPoolGrad", p.Name("MaxPoolGrad", t))
                       .T(t)
                       .IntList("ksize", p.Attr(p.k))
                       .IntList("strides", p.Attr(p.s))
                       .String("padding", p.padding)
                       .Input(x)
                       .Input(y)
                       .Input(RandomOf(t, p.OutShape(), NextSeed(seed)))
                       .Reference1([p](const std::vector<Tensor>& in) {
                         const std::vector<int64_t> am = ArgMaxes(p, Doubles(in[0]));
                         const std::vector<double> g = Doubles(in[2]);
                         std::vector<double> dx(p.InShape().num_elements(), 0.0);
                         for (size_t i = 0; i < am.size(); ++i) dx[am[i]] += g[i];
                         return FromDoubles(in[0].dtype(), p.InShape(), dx);
                       })
                       .Tolerance(Tol(t))
                       .Build());
    }
  }
  // EXPLICIT padding (MaxPoolGrad takes it; the forward MaxPool of conv_ops.cc does not).
  PoolSpec e{2, {1, 5, 4, 2}, {3, 3}, {2, 2}, "VALID"};
  Tensor x = RandomOf(DType::kFloat, e.InShape(), 7);
  // Padding [1, 1] rows and [0, 2] columns: the window dims come from the padded sizes.
  const RefDim h = RefWindowDim("EXPLICIT", 5, 3, 2, 1, 1, 1),
               w = RefWindowDim("EXPLICIT", 4, 3, 2, 1, 0, 2);
  const Shape out{1, h.out, w.out, 2};
  c->push_back(OpCaseBuilder("MaxPoolGrad", "MaxPoolGrad float32 EXPLICIT padding")
                   .T(DType::kFloat)
                   .IntList("ksize", {1, 3, 3, 1})
                   .IntList("strides", {1, 2, 2, 1})
                   .String("padding", "EXPLICIT")
                   .IntList("explicit_paddings", {0, 0, 1, 1, 0, 2, 0, 0})
                   .Input(x)
                   .Input(RandomOf(DType::kFloat, out, 8))
                   .Input(RandomOf(DType::kFloat, out, 9))
                   .Reference1([h, w](const std::vector<Tensor>& in) {
                     const std::vector<double> xv = Doubles(in[0]), g = Doubles(in[2]);
                     std::vector<double> dx(xv.size(), 0.0);
                     for (int64_t oy = 0; oy < h.out; ++oy)
                       for (int64_t ox = 0; ox < w.out; ++ox)
                         for (int64_t ch = 0; ch < 2; ++ch) {
                           int64_t best = -1;
                           for (int64_t ty = 0; ty < 3; ++ty)
                             for (int64_t tx = 0; tx < 3; ++tx) {
                               const int64_t iy = RefIn(h, oy, ty), ix = RefIn(w, ox, tx);
                               if (iy < 0 || ix < 0) continue;
                               const int64_t i = (iy * 4 + ix) * 2 + ch;
                               if (best < 0 || xv[i] > xv[best]) best = i;
                             }
                           dx[best] += g[(oy * w.out + ox) * 2 + ch];
                         }
                     return FromDoubles(DType::kFloat, in[0].shape(), dx);
                   })
                   .Tolerance(1e-6)
                   .Build());
}

void AddAvgPoolGrad(std::vector<OpCase>* c) {
  uint32_t seed = 2400;
  for (DType t : {DType::kFloat, DType::kDouble, DType::kHalf, DType::kBFloat16}) {
    int k = 0;
    for (const PoolSpec& p : Specs2D()) {
      std::vector<int32_t> shape(p.in.begin(), p.in.end());
      OpCaseBuilder b("AvgPoolGrad", p.Name("AvgPoolGrad", t));
      b.T(t)
          .IntList("ksize", p.Attr(p.k))
          .IntList("strides", p.Attr(p.s))
          .String("padding", p.padding);
      if (k++ % 2) {
        b.Input(Make<int32_t>(shape, {4}));
      } else {
        b.ConstInput(Make<int32_t>(shape, {4}));
      }
      c->push_back(b.Input(RandomOf(t, p.OutShape(), NextSeed(seed)))
                       .Reference1([p](const std::vector<Tensor>& in) {
                         const std::vector<double> g = Doubles(in[1]);
                         std::vector<double> dx(p.InShape().num_elements(), 0.0);
                         const auto wins = Windows(p);
                         for (size_t o = 0; o < wins.size(); ++o)
                           for (int64_t i : wins[o])
                             dx[i] += g[o] / static_cast<double>(wins[o].size());
                         return FromDoubles(in[1].dtype(), p.InShape(), dx);
                       })
                       .Tolerance(Tol(t) * 4)
                       .Build());
    }
  }
}

// MaxPoolGradV2 (ksize and strides as inputs), MaxPool3DGrad and AvgPool3DGrad, against the
// same window references.
void AddGradsV2And3D(std::vector<OpCase>* c) {
  uint32_t seed = 2500;
  auto max_ref = [](const PoolSpec& p) {
    return [p](const std::vector<Tensor>& in) {
      const std::vector<int64_t> am = ArgMaxes(p, Doubles(in[0]));
      const std::vector<double> g = Doubles(in[2]);
      std::vector<double> dx(p.InShape().num_elements(), 0.0);
      for (size_t i = 0; i < am.size(); ++i) dx[am[i]] += g[i];
      return FromDoubles(in[0].dtype(), p.InShape(), dx);
    };
  };
  for (const PoolSpec& p : Specs2D()) {
    const DType t = DType::kFloat;
    Tensor x = RandomOf(t, p.InShape(), NextSeed(seed), -2, 2);
    Tensor y = FromDoubles(t, p.OutShape(), RefPool(p, Doubles(x), true));
    const std::vector<int64_t> ka = p.Attr(p.k), sa = p.Attr(p.s);
    const std::vector<int32_t> k(ka.begin(), ka.end()), st(sa.begin(), sa.end());
    c->push_back(OpCaseBuilder("MaxPoolGradV2", p.Name("MaxPoolGradV2", t))
                     .T(t)
                     .String("padding", p.padding)
                     .Input(x)
                     .Input(y)
                     .Input(RandomOf(t, p.OutShape(), NextSeed(seed)))
                     .ConstInput(Make<int32_t>(k, {4}))
                     .ConstInput(Make<int32_t>(st, {4}))
                     .Reference1(max_ref(p))
                     .Tolerance(Tol(t))
                     .Build());
  }
  for (DType t : {DType::kFloat, DType::kHalf}) {
    for (const PoolSpec& p : Specs3D()) {
      Tensor x = RandomOf(t, p.InShape(), NextSeed(seed), -2, 2);
      Tensor y = FromDoubles(t, p.OutShape(), RefPool(p, Doubles(x), true));
      c->push_back(OpCaseBuilder("MaxPool3DGrad", p.Name("MaxPool3DGrad", t))
                       .T(t)
                       .Type("TInput", t)
                       .IntList("ksize", p.Attr(p.k))
                       .IntList("strides", p.Attr(p.s))
                       .String("padding", p.padding)
                       .Input(x)
                       .Input(y)
                       .Input(RandomOf(t, p.OutShape(), NextSeed(seed)))
                       .Reference1(max_ref(p))
                       .Tolerance(Tol(t))
                       .Build());
      std::vector<int32_t> shape(p.in.begin(), p.in.end());
      c->push_back(OpCaseBuilder("AvgPool3DGrad", p.Name("AvgPool3DGrad", t))
                       .T(t)
                       .IntList("ksize", p.Attr(p.k))
                       .IntList("strides", p.Attr(p.s))
                       .String("padding", p.padding)
                       .ConstInput(Make<int32_t>(shape, {5}))
                       .Input(RandomOf(t, p.OutShape(), NextSeed(seed)))
                       .Reference1([p](const std::vector<Tensor>& in) {
                         const std::vector<double> g = Doubles(in[1]);
                         std::vector<double> dx(p.InShape().num_elements(), 0.0);
                         const auto wins = Windows(p);
                         for (size_t o = 0; o < wins.size(); ++o)
                           for (int64_t i : wins[o])
                             dx[i] += g[o] / static_cast<double>(wins[o].size());
                         return FromDoubles(in[1].dtype(), p.InShape(), dx);
                       })
                       .Tolerance(Tol(t) * 4)
                       .Build());
    }
  }
}

}  // namespace

std::vector<OpCase> PoolCases() {
  std::vector<OpCase> c;
  AddPool3D(&c);
  AddMaxPoolV2(&c);
  AddMaxPoolWithArgmax(&c);
  AddMaxPoolGrad(&c);
  AddAvgPoolGrad(&c);
  AddGradsV2And3D(&c);
  return c;
}

}  // namespace kiln::testing
