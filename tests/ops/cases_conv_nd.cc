// Op-tester cases of the convolution family: Conv2D, DepthwiseConv2dNative, Conv3D, the input
// and filter backprops (Conv2DBackpropInput/Filter, DepthwiseConv2dNativeBackpropInput/Filter,
// Conv3DBackpropInputV2), MaxPool, AvgPool and MatMul. The references are plain loops over
// every (output position, tap) pair in double: forward sums, and the backprops as the adjoint
// sums (scatter), not the kernels' gather formulation.
#include <functional>
#include <string>
#include <vector>

#include "ops/op_cases.h"
#include "ops/ref_util.h"

namespace kiln::testing {
namespace {

// A convolution's geometry over three spatial dims (2-D: depth 1) from the op's attrs.
struct ConvSpec {
  int spatial = 2;
  std::vector<int64_t> in;      // NHWC / NDHWC
  std::vector<int64_t> filter;  // spatial..., in_c, out_c (depthwise: multiplier)
  std::string padding = "SAME";
  std::vector<int64_t> strides = {1, 1, 1};  // depth, height, width (2-D ignores depth)
  std::vector<int64_t> dilations = {1, 1, 1};
  std::vector<int64_t> explicit_pads;  // 2-D only: the 8-entry attr
  bool depthwise = false;

  std::array<RefDim, 3> Dims() const {
    std::array<RefDim, 3> d;
    for (int i = 0; i < 3; ++i) {
      const int s = i - (3 - spatial);  // index among the spatial dims
      if (s < 0) continue;
      const int64_t pb = explicit_pads.empty() ? 0 : explicit_pads[2 + 2 * s];
      const int64_t pa = explicit_pads.empty() ? 0 : explicit_pads[3 + 2 * s];
      d[i] = RefWindowDim(padding, in[1 + s], filter[s], strides[i], dilations[i], pb, pa);
    }
    return d;
  }
  int64_t InC() const { return in.back(); }
  int64_t OutC() const { return depthwise ? in.back() * filter.back() : filter.back(); }
  Shape OutShape() const {
    const auto d = Dims();
    std::vector<int64_t> o = {in[0]};
    for (int i = 3 - spatial; i < 3; ++i) o.push_back(d[i].out);
    o.push_back(OutC());
    return *Shape::FromDims(o);
  }
  std::vector<int64_t> ListAttr(const std::vector<int64_t>& v) const {
    std::vector<int64_t> a = {1};
    for (int i = 3 - spatial; i < 3; ++i) a.push_back(v[i]);
    a.push_back(1);
    return a;
  }
};

// Calls f(out_pixel, in_pixel, tap) for every output pixel (batch included) and tap that reads a
// real input pixel.
void ForEachTap(const ConvSpec& s, const std::function<void(int64_t, int64_t, int64_t)>& f) {
  const auto d = s.Dims();
  for (int64_t b = 0; b < s.in[0]; ++b)
    for (int64_t oz = 0; oz < d[0].out; ++oz)
      for (int64_t oy = 0; oy < d[1].out; ++oy)
        for (int64_t ox = 0; ox < d[2].out; ++ox)
          for (int64_t kz = 0; kz < d[0].k; ++kz)
            for (int64_t ky = 0; ky < d[1].k; ++ky)
              for (int64_t kx = 0; kx < d[2].k; ++kx) {
                const int64_t iz = RefIn(d[0], oz, kz), iy = RefIn(d[1], oy, ky),
                              ix = RefIn(d[2], ox, kx);
                if (iz < 0 || iy < 0 || ix < 0) continue;
                const int64_t po = ((b * d[0].out + oz) * d[1].out + oy) * d[2].out + ox;
                const int64_t pi = ((b * d[0].in + iz) * d[1].in + iy) * d[2].in + ix;
                f(po, pi, (kz * d[1].k + ky) * d[2].k + kx);
              }
}

// The three references; all index filters as [tap, in_c, out_c] (depthwise [tap, in_c, mult]).
std::vector<double> RefForward(const ConvSpec& s, const std::vector<double>& x,
                               const std::vector<double>& f) {
  const int64_t ci = s.InC(), co = s.OutC(), m = s.filter.back();
  // Grouped (Conv3D) when the filter has fewer in-channels fc than the input: input channel c
  // belongs to group c / fc and feeds only that group's co / groups outputs.
  const int64_t fc = s.filter[s.filter.size() - 2], ocg = s.depthwise ? 0 : co / (ci / fc);
  std::vector<double> out(s.OutShape().num_elements(), 0.0);
  ForEachTap(s, [&](int64_t po, int64_t pi, int64_t t) {
    for (int64_t c = 0; c < ci; ++c) {
      if (s.depthwise) {
        for (int64_t k = 0; k < m; ++k)
          out[po * co + c * m + k] += x[pi * ci + c] * f[(t * ci + c) * m + k];
      } else {
        const int64_t j = c / fc, cc = c % fc;
        for (int64_t o = j * ocg; o < (j + 1) * ocg; ++o)
          out[po * co + o] += x[pi * ci + c] * f[(t * fc + cc) * co + o];
      }
    }
  });
  return out;
}

std::vector<double> RefBackpropInput(const ConvSpec& s, const std::vector<double>& dy,
                                     const std::vector<double>& f) {
  const int64_t ci = s.InC(), co = s.OutC(), m = s.filter.back();
  int64_t n = 1;
  for (int64_t v : s.in) n *= v;
  std::vector<double> dx(n, 0.0);
  ForEachTap(s, [&](int64_t po, int64_t pi, int64_t t) {
    for (int64_t c = 0; c < ci; ++c) {
      if (s.depthwise) {
        for (int64_t k = 0; k < m; ++k)
          dx[pi * ci + c] += dy[po * co + c * m + k] * f[(t * ci + c) * m + k];
      } else {
        for (int64_t o = 0; o < co; ++o)
          dx[pi * ci + c] += dy[po * co + o] * f[(t * ci + c) * co + o];
      }
    }
  });
  return dx;
}

std::vector<double> RefBackpropFilter(const ConvSpec& s, const std::vector<double>& x,
                                      const std::vector<double>& dy) {
  const int64_t ci = s.InC(), co = s.OutC(), m = s.filter.back();
  int64_t n = 1;
  for (int64_t v : s.filter) n *= v;
  std::vector<double> df(n, 0.0);
  ForEachTap(s, [&](int64_t po, int64_t pi, int64_t t) {
    for (int64_t c = 0; c < ci; ++c) {
      if (s.depthwise) {
        for (int64_t k = 0; k < m; ++k)
          df[(t * ci + c) * m + k] += x[pi * ci + c] * dy[po * co + c * m + k];
      } else {
        for (int64_t o = 0; o < co; ++o)
          df[(t * ci + c) * co + o] += x[pi * ci + c] * dy[po * co + o];
      }
    }
  });
  return df;
}

// Window attrs on a case (strides, dilations, padding, explicit_paddings).
OpCaseBuilder& WindowAttrs(OpCaseBuilder& b, const ConvSpec& s, bool dilations = true) {
  b.IntList("strides", s.ListAttr(s.strides)).String("padding", s.padding);
  if (dilations) b.IntList("dilations", s.ListAttr(s.dilations));
  if (!s.explicit_pads.empty()) b.IntList("explicit_paddings", s.explicit_pads);
  return b;
}

std::string Describe(const std::string& op, DType t, const ConvSpec& s) {
  std::string d = op + " " + DTypeShortName(t) + " in " + Shape(*Shape::FromDims(s.in)).ToString() +
                  " filter " + Shape(*Shape::FromDims(s.filter)).ToString() + " " + s.padding;
  d += " strides " + std::to_string(s.strides[1]) + "," + std::to_string(s.strides[2]);
  if (s.dilations[2] != 1) d += " dilation " + std::to_string(s.dilations[2]);
  return d;
}

double TolFor(DType t) {
  return t == DType::kHalf       ? 1e-2
         : t == DType::kBFloat16 ? 3e-2
         : t == DType::kFloat    ? 1e-4
                                 : 1e-10;
}

// The geometries every 2-D convolution op runs over.
std::vector<ConvSpec> Geometries2D(bool depthwise) {
  std::vector<ConvSpec> g;
  auto add = [&](std::vector<int64_t> in, std::vector<int64_t> f, std::string pad, int64_t stride,
                 int64_t dil = 1, std::vector<int64_t> ep = {}) {
    ConvSpec s;
    s.in = std::move(in);
    s.filter = std::move(f);
    s.padding = std::move(pad);
    s.strides = {1, stride, stride};
    s.dilations = {1, dil, dil};
    s.explicit_pads = std::move(ep);
    s.depthwise = depthwise;
    g.push_back(s);
  };
  add({2, 5, 5, 3}, {3, 3, 3, depthwise ? 2 : 4}, "SAME", 1);
  add({1, 7, 6, 2}, {3, 2, 2, 3}, "VALID", 2);
  add({1, 6, 7, 2}, {2, 3, 2, depthwise ? 1 : 2}, "SAME", 1, 2);
  add({2, 5, 4, 2}, {3, 3, 2, 2}, "EXPLICIT", 2, 1, {0, 0, 1, 2, 0, 1, 0, 0});
  add({0, 4, 4, 2}, {2, 2, 2, 2}, "SAME", 1);
  // Large enough to split into several chunks across threads.
  add({2, 16, 16, 8}, {3, 3, 8, depthwise ? 2 : 16}, "SAME", 1);
  // A batch the float backprops cut into sub-batches with a shorter last one.
  add({19, 6, 5, 3}, {3, 3, 3, depthwise ? 1 : 5}, "SAME", 2);
  return g;
}

void AddConv2D(std::vector<OpCase>* c, bool depthwise) {
  const std::string op = depthwise ? "DepthwiseConv2dNative" : "Conv2D";
  uint32_t seed = depthwise ? 300 : 100;
  for (DType t : {DType::kFloat, DType::kDouble}) {
    for (const ConvSpec& s : Geometries2D(depthwise)) {
      if (s.in[1] == 16 && t != DType::kFloat) continue;  // the large one in float only
      OpCaseBuilder b(op, Describe(op, t, s));
      b.T(t)
          .Input(RandomOf(t, *Shape::FromDims(s.in), NextSeed(seed)))
          .Input(RandomOf(t, *Shape::FromDims(s.filter), NextSeed(seed)));
      WindowAttrs(b, s)
          .Reference1([s](const std::vector<Tensor>& in) {
            return FromDoubles(in[0].dtype(), s.OutShape(),
                               RefForward(s, Doubles(in[0]), Doubles(in[1])));
          })
          .Tolerance(TolFor(t));
      c->push_back(b.Build());
    }
  }
}

// Conv2DBackpropInput / DepthwiseConv2dNativeBackpropInput over the 2-D geometries, input_sizes
// as a constant (4 entries, and the 2-entry spatial form) and as a runtime input.
void AddBackpropInput2D(std::vector<OpCase>* c, bool depthwise, const std::vector<DType>& types) {
  const std::string op = depthwise ? "DepthwiseConv2dNativeBackpropInput" : "Conv2DBackpropInput";
  uint32_t seed = depthwise ? 500 : 400;
  for (DType t : types) {
    int k = 0;
    for (const ConvSpec& s : Geometries2D(depthwise)) {
      if (s.in[1] == 16 && t != DType::kFloat) continue;  // the large one in float only
      const bool runtime_sizes = k % 3 == 1, spatial_sizes = !depthwise && k % 3 == 2;
      ++k;
      Tensor sizes =
          spatial_sizes
              ? Make<int32_t>({static_cast<int32_t>(s.in[1]), static_cast<int32_t>(s.in[2])}, {2})
              : Make<int32_t>({static_cast<int32_t>(s.in[0]), static_cast<int32_t>(s.in[1]),
                               static_cast<int32_t>(s.in[2]), static_cast<int32_t>(s.in[3])},
                              {4});
      OpCaseBuilder b(op, Describe(op, t, s) + (runtime_sizes ? " runtime sizes" : "") +
                              (spatial_sizes ? " 2-entry sizes" : ""));
      b.T(t);
      if (runtime_sizes) {
        b.Input(sizes);
      } else {
        b.ConstInput(sizes);
      }
      b.Input(RandomOf(t, *Shape::FromDims(s.filter), NextSeed(seed)))
          .Input(RandomOf(t, s.OutShape(), NextSeed(seed)));
      WindowAttrs(b, s)
          .Reference1([s](const std::vector<Tensor>& in) {
            return FromDoubles(in[1].dtype(), *Shape::FromDims(s.in),
                               RefBackpropInput(s, Doubles(in[2]), Doubles(in[1])));
          })
          .Tolerance(TolFor(t));
      c->push_back(b.Build());
    }
  }
}

void AddBackpropFilter2D(std::vector<OpCase>* c, bool depthwise) {
  const std::string op = depthwise ? "DepthwiseConv2dNativeBackpropFilter" : "Conv2DBackpropFilter";
  uint32_t seed = depthwise ? 700 : 600;
  std::vector<ConvSpec> geoms = Geometries2D(depthwise);
  ConvSpec big;  // many pixel chunks: the filter sum runs over several groups
  big.in = {4, 32, 32, 4};
  big.filter = {3, 3, 4, depthwise ? 1 : 4};
  big.depthwise = depthwise;
  geoms.push_back(big);
  for (DType t : {DType::kFloat, DType::kDouble, DType::kHalf, DType::kBFloat16}) {
    for (const ConvSpec& s : geoms) {
      if (t != DType::kFloat && s.in[1] >= 16) continue;  // the large ones in float only
      std::vector<int32_t> fs(s.filter.begin(), s.filter.end());
      OpCaseBuilder b(op, Describe(op, t, s));
      b.T(t)
          .Input(RandomOf(t, *Shape::FromDims(s.in), NextSeed(seed)))
          .ConstInput(Make<int32_t>(fs, {4}))
          .Input(RandomOf(t, s.OutShape(), NextSeed(seed)));
      WindowAttrs(b, s)
          .Reference1([s](const std::vector<Tensor>& in) {
            return FromDoubles(in[0].dtype(), *Shape::FromDims(s.filter),
                               RefBackpropFilter(s, Doubles(in[0]), Doubles(in[2])));
          })
          // Filter sums run over every output pixel: float rounding grows with their number.
          .Tolerance(t == DType::kHalf || t == DType::kBFloat16 ? 5e-2
                     : s.in[1] == 32                            ? 2e-3
                                                                : TolFor(t));
      c->push_back(b.Build());
    }
  }
}

std::vector<ConvSpec> Geometries3D() {
  std::vector<ConvSpec> g;
  auto add = [&](std::vector<int64_t> in, std::vector<int64_t> f, std::string pad,
                 std::vector<int64_t> strides, std::vector<int64_t> dil = {1, 1, 1}) {
    ConvSpec s;
    s.spatial = 3;
    s.in = std::move(in);
    s.filter = std::move(f);
    s.padding = std::move(pad);
    s.strides = std::move(strides);
    s.dilations = std::move(dil);
    g.push_back(s);
  };
  add({2, 4, 5, 5, 2}, {2, 3, 3, 2, 3}, "SAME", {1, 1, 1});
  add({1, 5, 6, 4, 3}, {3, 2, 2, 3, 2}, "VALID", {2, 2, 1});
  add({1, 5, 5, 5, 2}, {2, 2, 2, 2, 2}, "SAME", {1, 2, 2}, {2, 1, 1});
  add({0, 3, 3, 3, 1}, {2, 2, 2, 1, 2}, "SAME", {1, 1, 1});
  return g;
}

void AddConv3D(std::vector<OpCase>* c) {
  uint32_t seed = 800;
  for (DType t : {DType::kFloat, DType::kDouble, DType::kHalf, DType::kBFloat16}) {
    for (const ConvSpec& s : Geometries3D()) {
      OpCaseBuilder b("Conv3D", Describe("Conv3D", t, s));
      b.T(t)
          .Input(RandomOf(t, *Shape::FromDims(s.in), NextSeed(seed)))
          .Input(RandomOf(t, *Shape::FromDims(s.filter), NextSeed(seed)));
      WindowAttrs(b, s)
          .Reference1([s](const std::vector<Tensor>& in) {
            return FromDoubles(in[0].dtype(), s.OutShape(),
                               RefForward(s, Doubles(in[0]), Doubles(in[1])));
          })
          .Tolerance(TolFor(t));
      c->push_back(b.Build());
    }
    // Grouped: 2 groups (filter in-channels 2 of 4), and one group per channel.
    for (const auto& [in_dims, f_dims] :
         std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
             {{1, 4, 5, 4, 4}, {2, 3, 2, 2, 6}}, {{2, 3, 4, 4, 3}, {2, 2, 2, 1, 3}}}) {
      ConvSpec s;
      s.spatial = 3;
      s.in = in_dims;
      s.filter = f_dims;
      s.strides = {1, 2, 1};
      OpCaseBuilder b("Conv3D", Describe("Conv3D grouped", t, s));
      b.T(t)
          .Input(RandomOf(t, *Shape::FromDims(s.in), NextSeed(seed)))
          .Input(RandomOf(t, *Shape::FromDims(s.filter), NextSeed(seed)));
      WindowAttrs(b, s)
          .Reference1([s](const std::vector<Tensor>& in) {
            return FromDoubles(in[0].dtype(), s.OutShape(),
                               RefForward(s, Doubles(in[0]), Doubles(in[1])));
          })
          .Tolerance(TolFor(t));
      c->push_back(b.Build());
    }
    for (const ConvSpec& s : Geometries3D()) {
      std::vector<int64_t> sizes(s.in.begin(), s.in.end());
      const bool int64_sizes = seed % 2 == 0;
      OpCaseBuilder b("Conv3DBackpropInputV2", Describe("Conv3DBackpropInputV2", t, s));
      b.T(t);
      if (int64_sizes) {
        b.Type("Tshape", DType::kInt64).ConstInput(Make<int64_t>(sizes, {5}));
      } else {
        std::vector<int32_t> s32(sizes.begin(), sizes.end());
        b.ConstInput(Make<int32_t>(s32, {5}));
      }
      b.Input(RandomOf(t, *Shape::FromDims(s.filter), NextSeed(seed)))
          .Input(RandomOf(t, s.OutShape(), NextSeed(seed)));
      WindowAttrs(b, s)
          .Reference1([s](const std::vector<Tensor>& in) {
            return FromDoubles(in[1].dtype(), *Shape::FromDims(s.in),
                               RefBackpropInput(s, Doubles(in[2]), Doubles(in[1])));
          })
          .Tolerance(TolFor(t));
      c->push_back(b.Build());
    }
    for (const ConvSpec& s : Geometries3D()) {
      std::vector<int32_t> fs(s.filter.begin(), s.filter.end());
      OpCaseBuilder b("Conv3DBackpropFilterV2", Describe("Conv3DBackpropFilterV2", t, s));
      b.T(t)
          .Input(RandomOf(t, *Shape::FromDims(s.in), NextSeed(seed)))
          .ConstInput(Make<int32_t>(fs, {5}))
          .Input(RandomOf(t, s.OutShape(), NextSeed(seed)));
      WindowAttrs(b, s)
          .Reference1([s](const std::vector<Tensor>& in) {
            return FromDoubles(in[0].dtype(), *Shape::FromDims(s.filter),
                               RefBackpropFilter(s, Doubles(in[0]), Doubles(in[2])));
          })
          .Tolerance(t == DType::kHalf || t == DType::kBFloat16 ? 5e-2 : TolFor(t));
      c->push_back(b.Build());
    }
  }
}

// MaxPool / AvgPool (NHWC): padding left out of the window, average over the real elements.
void AddPool2D(std::vector<OpCase>* c) {
  struct P {
    std::vector<int64_t> in;
    int64_t k, s;
    std::string pad;
  };
  const std::vector<P> geoms = {{{2, 5, 5, 3}, 2, 2, "VALID"},
                                {{1, 7, 6, 4}, 3, 2, "SAME"},
                                {{1, 4, 4, 2}, 3, 1, "SAME"},
                                {{0, 4, 4, 2}, 2, 2, "SAME"},
                                {{4, 32, 32, 16}, 3, 2, "SAME"}};
  uint32_t seed = 900;
  for (bool max : {true, false}) {
    const std::string op = max ? "MaxPool" : "AvgPool";
    std::vector<DType> types = {DType::kFloat, DType::kDouble};
    if (max)
      types.insert(types.end(), {DType::kInt32, DType::kInt64, DType::kInt8, DType::kUInt16});
    for (DType t : types) {
      for (const P& p : geoms) {
        const RefDim h = RefWindowDim(p.pad, p.in[1], p.k, p.s);
        const RefDim w = RefWindowDim(p.pad, p.in[2], p.k, p.s);
        const Shape out{p.in[0], h.out, w.out, p.in[3]};
        const int64_t ch = p.in[3];
        c->push_back(OpCaseBuilder(op)
                         .T(t)
                         .IntList("ksize", {1, p.k, p.k, 1})
                         .IntList("strides", {1, p.s, p.s, 1})
                         .String("padding", p.pad)
                         .Input(RandomOf(t, *Shape::FromDims(p.in), NextSeed(seed), -50, 50))
                         .Reference1([=](const std::vector<Tensor>& in) {
                           const std::vector<double> x = Doubles(in[0]);
                           std::vector<double> o(out.num_elements());
                           for (int64_t b = 0; b < out.dim(0); ++b)
                             for (int64_t oy = 0; oy < h.out; ++oy)
                               for (int64_t ox = 0; ox < w.out; ++ox)
                                 for (int64_t k = 0; k < ch; ++k) {
                                   double acc = max ? -1e300 : 0;
                                   int64_t n = 0;
                                   for (int64_t ty = 0; ty < p.k; ++ty)
                                     for (int64_t tx = 0; tx < p.k; ++tx) {
                                       const int64_t iy = RefIn(h, oy, ty), ix = RefIn(w, ox, tx);
                                       if (iy < 0 || ix < 0) continue;
                                       const double v = x[((b * h.in + iy) * w.in + ix) * ch + k];
                                       acc = max ? std::max(acc, v) : acc + v;
                                       ++n;
                                     }
                                   o[((b * h.out + oy) * w.out + ox) * ch + k] =
                                       max ? acc : acc / n;
                                 }
                           return FromDoubles(in[0].dtype(), out, o);
                         })
                         .Tolerance(TolFor(t))
                         .Build());
      }
    }
  }
}

void AddMatMul(std::vector<OpCase>* c) {
  struct M {
    int64_t m, k, n;
    bool ta, tb;
  };
  const std::vector<M> shapes = {{3, 4, 5, false, false},   {3, 4, 5, true, false},
                                 {3, 4, 5, false, true},    {3, 4, 5, true, true},
                                 {0, 3, 2, false, false},   {2, 0, 3, false, false},
                                 {64, 128, 32, false, true}};
  uint32_t seed = 1000;
  for (DType t : {DType::kFloat, DType::kDouble, DType::kInt32, DType::kInt64}) {
    for (const M& s : shapes) {
      const Shape a = s.ta ? Shape{s.k, s.m} : Shape{s.m, s.k};
      const Shape b = s.tb ? Shape{s.n, s.k} : Shape{s.k, s.n};
      c->push_back(OpCaseBuilder("MatMul")
                       .T(t)
                       .Bool("transpose_a", s.ta)
                       .Bool("transpose_b", s.tb)
                       .Input(RandomOf(t, a, NextSeed(seed)))
                       .Input(RandomOf(t, b, NextSeed(seed)))
                       .Reference1([s](const std::vector<Tensor>& in) {
                         const std::vector<double> x = Doubles(in[0]), y = Doubles(in[1]);
                         std::vector<double> o(s.m * s.n, 0.0);
                         for (int64_t i = 0; i < s.m; ++i)
                           for (int64_t j = 0; j < s.n; ++j)
                             for (int64_t p = 0; p < s.k; ++p)
                               o[i * s.n + j] += x[s.ta ? p * s.m + i : i * s.k + p] *
                                                 y[s.tb ? j * s.k + p : p * s.n + j];
                         return FromDoubles(in[0].dtype(), Shape{s.m, s.n}, o);
                       })
                       .Tolerance(TolFor(t))
                       .Build());
    }
  }
}

}  // namespace

std::vector<OpCase> ConvNdCases() {
  std::vector<OpCase> c;
  AddConv2D(&c, false);
  AddConv2D(&c, true);
  AddBackpropInput2D(
      &c, false, {DType::kFloat, DType::kDouble, DType::kHalf, DType::kBFloat16, DType::kInt32});
  AddBackpropInput2D(&c, true, {DType::kFloat, DType::kDouble, DType::kHalf, DType::kBFloat16});
  AddBackpropFilter2D(&c, false);
  AddBackpropFilter2D(&c, true);
  AddConv3D(&c);
  AddPool2D(&c);
  AddMatMul(&c);
  return c;
}

}  // namespace kiln::testing
