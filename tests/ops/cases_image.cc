// Op-tester cases of the image, detection, sequence and signal ops: the resizes, CropAndResize,
// the colour ops, non-max suppression, the codecs, CTCGreedyDecoder, CTCBeamSearchDecoder and the
// FFTs. References are the ops' definitions in double (coordinates in float where TensorFlow
// defines them in float); bicubic is the analytic Keys/legacy cubic sampled where TF's 1024-entry
// table samples it (the oracle test in tests/tf checks the exact values). The codec references
// are TensorFlow's own decodes of the fixtures in tests/testdata/images (make_images.py).
#include <algorithm>
#include <cmath>
#include <complex>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/core/npy.h"
#include "ops/array_ref.h"
#include "ops/filter_ref.h"
#include "ops/op_cases.h"
#include "ops/ref_util.h"

namespace kiln::testing {
namespace {

// ---- resize ----------------------------------------------------------------------------------

struct ResizeMode {
  bool align = false, half = false;
  std::string Name() const {
    return align ? " align_corners" : half ? " half_pixel_centers" : " legacy";
  }
};

// TF's CalculateResizeScale: a 1-pixel side aligns nothing.
float Scale(int64_t in, int64_t out, bool align) {
  return align && in > 1 && out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                    : static_cast<float>(in) / static_cast<float>(out);
}

// The source coordinate of output index x (float, as TF defines it).
float Source(int64_t x, float scale, const ResizeMode& m) {
  return m.half ? (static_cast<float>(x) + 0.5f) * scale - 0.5f : static_cast<float>(x) * scale;
}

Taps ResizeTaps(const std::string& op, int64_t in, int64_t out, const ResizeMode& m) {
  const float scale = Scale(in, out, m.align);
  Taps t(out);
  for (int64_t x = 0; x < out; ++x) {
    if (op == "ResizeNearestNeighbor") {
      const float src =
          m.half ? (static_cast<float>(x) + 0.5f) * scale : static_cast<float>(x) * scale;
      int64_t i =
          m.align ? static_cast<int64_t>(std::round(src)) : static_cast<int64_t>(std::floor(src));
      i = std::clamp<int64_t>(i, 0, in - 1);
      t[x] = {{i, 1.0}};
    } else if (op == "ResizeBilinear") {
      const float src = Source(x, scale, m);
      const double lerp = src - std::floor(src);
      const int64_t lo = std::max<int64_t>(static_cast<int64_t>(std::floor(src)), 0);
      const int64_t hi = std::min<int64_t>(static_cast<int64_t>(std::ceil(src)), in - 1);
      t[x] = {{lo, 1 - lerp}, {hi, lerp}};
    } else if (op == "ResizeBicubic") {
      const float src = Source(x, scale, m);
      const int64_t base = static_cast<int64_t>(std::floor(src));
      const double a = m.half ? -0.5 : -0.75;
      // TF samples the cubic at the fraction rounded to 1/1024 (its coefficient table).
      const double frac =
          static_cast<double>(std::lrint((src - static_cast<float>(base)) * 1024)) / 1024;
      double sum = 0;
      for (int64_t k = -1; k <= 2; ++k) {
        const int64_t i = base + k;
        // Half-pixel: samples outside weigh 0 (renormalised below); legacy: clamp to the edge.
        if (m.half && (i < 0 || i >= in)) continue;
        const double wgt = Cubic(frac - static_cast<double>(k), a);
        t[x].push_back({std::clamp<int64_t>(i, 0, in - 1), wgt});
        sum += wgt;
      }
      if (m.half)
        for (auto& p : t[x]) p.second /= sum;
    } else {  // ResizeArea: the source cells covering [x, x + 1) * scale, by overlap (in float)
      const float lo = static_cast<float>(x) * scale, hi = static_cast<float>(x + 1) * scale;
      for (int64_t i = static_cast<int64_t>(std::floor(lo)); i < std::ceil(hi); ++i) {
        const float w =
            std::min(static_cast<float>(i + 1), hi) - std::max(static_cast<float>(i), lo);
        if (w > 0)
          t[x].push_back({std::clamp<int64_t>(i, 0, in - 1), w / static_cast<double>(scale)});
      }
    }
  }
  return t;
}

void AddResize(std::vector<OpCase>* c) {
  const std::vector<std::pair<Shape, std::pair<int32_t, int32_t>>> sizes = {
      {Shape{2, 5, 4, 3}, {8, 7}}, {Shape{1, 8, 9, 2}, {3, 4}}, {Shape{1, 4, 4, 1}, {4, 4}},
      {Shape{1, 3, 5, 2}, {1, 1}}, {Shape{0, 3, 3, 2}, {2, 2}}, {Shape{2, 33, 47, 3}, {64, 20}},
      {Shape{1, 1, 3, 2}, {2, 3}}};
  uint32_t seed = 4000;
  for (const std::string op :
       {"ResizeNearestNeighbor", "ResizeBilinear", "ResizeBicubic", "ResizeArea"}) {
    std::vector<ResizeMode> modes = {{false, false}, {true, false}};
    if (op != "ResizeArea") modes.push_back({false, true});
    std::vector<DType> types = {DType::kFloat, DType::kUInt8, DType::kHalf, DType::kInt32};
    if (op == "ResizeBilinear")
      types.insert(types.end(), {DType::kDouble, DType::kBFloat16, DType::kInt16});
    for (DType t : types) {
      for (const ResizeMode& m : modes) {
        int k = 0;
        for (const auto& sz : sizes) {
          const Shape in = sz.first;
          const int64_t oh = sz.second.first, ow = sz.second.second;
          if (in.dim(1) > 10 && t != DType::kFloat) continue;
          const DType out_t = op == "ResizeNearestNeighbor" ? t : DType::kFloat;
          OpCaseBuilder b(op, op + " " + DTypeShortName(t) + " " + in.ToString() + " -> " +
                                  std::to_string(oh) + "x" + std::to_string(ow) + m.Name());
          b.T(t).Bool("align_corners", m.align);
          if (op != "ResizeArea") b.Bool("half_pixel_centers", m.half);
          b.Input(RandomOf(t, in, NextSeed(seed), t == DType::kUInt8 ? 0 : -50, 200));
          const Tensor size =
              Make<int32_t>({static_cast<int32_t>(oh), static_cast<int32_t>(ow)}, {2});
          if (k++ % 2) {
            b.Input(size);
          } else {
            b.ConstInput(size);
          }
          // Float coordinates and weights on values up to 200: absolute errors near 1e-4.
          const double tol = 5e-4;
          c->push_back(b.Reference1([op, m, oh, ow, out_t](const std::vector<Tensor>& inputs) {
                          const Tensor& x = inputs[0];
                          const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), ch = x.dim(3);
                          const Taps ty = ResizeTaps(op, h, oh, m), tx = ResizeTaps(op, w, ow, m);
                          const std::vector<double> v = Doubles(x);
                          std::vector<double> o(n * oh * ow * ch, 0.0);
                          for (int64_t b = 0; b < n; ++b)
                            for (int64_t y = 0; y < oh; ++y)
                              for (int64_t xx = 0; xx < ow; ++xx)
                                for (int64_t k2 = 0; k2 < ch; ++k2) {
                                  double acc = 0;
                                  for (const auto& [iy, wy] : ty[y])
                                    for (const auto& [ix, wx] : tx[xx])
                                      acc += wy * wx * v[((b * h + iy) * w + ix) * ch + k2];
                                  o[((b * oh + y) * ow + xx) * ch + k2] = acc;
                                }
                          return FromDoubles(out_t, Shape{n, oh, ow, ch}, o);
                        })
                           .Tolerance(tol)
                           .Build());
        }
      }
    }
  }
}

// ---- ScaleAndTranslate -----------------------------------------------------------------------

void AddScaleAndTranslate(std::vector<OpCase>* c) {
  struct Geometry {
    Shape in;
    int32_t oh, ow;
    float sy, sx, ty, tx;
  };
  const std::vector<Geometry> geos = {
      {Shape{2, 6, 8, 2}, 4, 5, 4.0f / 6, 5.0f / 8, 0, 0},       // downsample (as tf.image.resize)
      {Shape{1, 4, 5, 3}, 9, 7, 9.0f / 4, 7.0f / 5, 0, 0},       // upsample
      {Shape{1, 7, 6, 1}, 7, 6, 0.8f, 1.3f, 1.25f, -0.75f},      // translated
      {Shape{1, 5, 5, 2}, 6, 6, 1.0f, 0.5f, 3.0f, -2.0f},        // some samples fall outside
      {Shape{0, 3, 3, 2}, 2, 2, 2.0f / 3, 2.0f / 3, 0, 0},       // empty batch
      {Shape{1, 40, 30, 3}, 9, 11, 9.0f / 40, 11.0f / 30, 0, 0}  // wide antialias filter
  };
  uint32_t seed = 4050;
  for (const std::string k : {"lanczos1", "lanczos3", "lanczos5", "gaussian", "box", "triangle",
                              "keyscubic", "mitchellcubic"}) {
    for (bool antialias : {true, false}) {
      for (DType t : {DType::kFloat, DType::kUInt8, DType::kHalf, DType::kInt32, DType::kDouble}) {
        int g = 0;
        for (const Geometry& geo : geos) {
          // Every dtype on the first two geometries; the rest in float only.
          if (g++ >= 2 && t != DType::kFloat) continue;
          OpCaseBuilder b("ScaleAndTranslate",
                          "ScaleAndTranslate " + k + (antialias ? " antialias " : " ") +
                              DTypeShortName(t) + " " + geo.in.ToString() + " -> " +
                              std::to_string(geo.oh) + "x" + std::to_string(geo.ow) + " #" +
                              std::to_string(g));
          b.T(t).String("kernel_type", k).Bool("antialias", antialias);
          b.Input(RandomOf(t, geo.in, NextSeed(seed), t == DType::kUInt8 ? 0 : -50, 200));
          const Tensor size = Make<int32_t>({geo.oh, geo.ow}, {2});
          const Tensor scale = Make<float>({geo.sy, geo.sx}, {2});
          const Tensor tr = Make<float>({geo.ty, geo.tx}, {2});
          if (g % 2) {
            b.ConstInput(size).Input(scale).Input(tr);
          } else {
            b.Input(size).ConstInput(scale).ConstInput(tr);
          }
          c->push_back(b.Reference1([k, antialias, geo](const std::vector<Tensor>& inputs) {
                          const Tensor& x = inputs[0];
                          const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), ch = x.dim(3);
                          const int64_t oh = geo.oh, ow = geo.ow;
                          const Taps ty = FilterTaps(k, antialias, h, oh, geo.sy, geo.ty);
                          const Taps tx = FilterTaps(k, antialias, w, ow, geo.sx, geo.tx);
                          const std::vector<double> v = Doubles(x);
                          std::vector<double> o(n * oh * ow * ch, 0.0);
                          for (int64_t b2 = 0; b2 < n; ++b2)
                            for (int64_t y = 0; y < oh; ++y)
                              for (int64_t xx = 0; xx < ow; ++xx)
                                for (int64_t k2 = 0; k2 < ch; ++k2) {
                                  double acc = 0;
                                  for (const auto& [iy, wy] : ty[y])
                                    for (const auto& [ix, wx] : tx[xx])
                                      acc += wy * wx * v[((b2 * h + iy) * w + ix) * ch + k2];
                                  o[((b2 * oh + y) * ow + xx) * ch + k2] = acc;
                                }
                          return FromDoubles(DType::kFloat, Shape{n, oh, ow, ch}, o);
                        })
                           // Float weights on values up to 200, lanczos5 sums up to ~100 taps.
                           .Tolerance(2e-3)
                           .Build());
        }
      }
    }
  }
}

// ---- ImageProjectiveTransformV2/V3 ------------------------------------------------------------

// TF's coordinate mapping (image_ops.h, MapCoordinate), in float as TF computes it.
float MapCoord(const std::string& mode, float in, int64_t len) {
  const auto n = static_cast<float>(len);
  if (mode == "CONSTANT") return in;
  if (mode != "NEAREST" && len <= 1) return in < 0 || in > n - 1 ? 0.0f : std::min(in, n - 1);
  if (mode == "REFLECT") {
    if (in < 0) {
      if (in < 2 * n) in = 2 * n * std::trunc(-in / (2 * n)) + in;
      in = in < -n ? in + 2 * n : -in - 1;
    } else if (in > n - 1) {
      in -= 2 * n * std::trunc(in / (2 * n));
      if (in >= n) in = 2 * n - in - 1;
    }
  } else if (mode == "WRAP") {
    if (in < 0) {
      in += n * (std::trunc(-in / (n - 1)) + 1);
    } else if (in > n - 1) {
      in -= n * std::trunc(in / (n - 1));
    }
  }
  return in < 0 ? 0.0f : (in > n - 1 ? n - 1 : in);
}

// A whole coordinate as an index (TF converts unchecked; NaN and far-off values are outside).
int64_t PixelAt(float v) { return v >= -2.0f && v < 1e15f ? static_cast<int64_t>(v) : -2; }

void AddProjectiveTransform(std::vector<OpCase>* c) {
  uint32_t seed = 4070;
  // Identity, a rotation with a shift (points fall outside), a zoom, and a projective map.
  const Tensor transforms = Make<float>({1.0f, 0.0f,  0.0f,  0.0f,  1.0f, 0.0f,  0.0f,  0.0f,  //
                                         0.8f, -0.6f, 2.5f,  0.6f,  0.8f, -1.5f, 0.0f,  0.0f,  //
                                         0.6f, 0.0f,  1.2f,  0.0f,  0.6f, 0.9f,  0.0f,  0.0f,  //
                                         1.2f, 0.3f,  -1.1f, -0.2f, 1.3f, -2.0f, 0.04f, -0.05f},
                                        {4, 8});
  for (bool v3 : {true, false}) {
    for (const std::string interp : {"NEAREST", "BILINEAR"}) {
      for (const std::string mode : {"REFLECT", "WRAP", "CONSTANT", "NEAREST"}) {
        for (DType t :
             {DType::kFloat, DType::kUInt8, DType::kHalf, DType::kInt32, DType::kDouble}) {
          // V2 (no fill_value: 0) in float only.
          if (!v3 && t != DType::kFloat) continue;
          const std::string op = v3 ? "ImageProjectiveTransformV3" : "ImageProjectiveTransformV2";
          OpCaseBuilder b(op, op + " " + interp + " " + mode + " " + DTypeShortName(t));
          b.Type("dtype", t).String("interpolation", interp).String("fill_mode", mode);
          b.Input(RandomOf(t, Shape{4, 5, 6, 2}, NextSeed(seed), 0, 100));
          b.Input(transforms).ConstInput(Make<int32_t>({7, 4}, {2}));
          const float fill = v3 ? 3.0f : 0.0f;
          if (v3) b.Input(Make<float>({fill}, {}));
          c->push_back(
              b.Reference1([t, interp, mode, fill](const std::vector<Tensor>& in) {
                 const Tensor& x = in[0];
                 const float* m0 = in[1].data<float>();
                 const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), ch = x.dim(3);
                 const int64_t oh = 7, ow = 4;
                 const std::vector<double> v = Doubles(x);
                 // The image's type holds the fill value and each result (integers
                 // truncate), as TF's T(float).
                 auto as_t = [&](float f) {
                   return IsInteger(t) ? std::trunc(static_cast<double>(f))
                                       : static_cast<double>(f);
                 };
                 auto read = [&](int64_t b2, int64_t y, int64_t xx, int64_t k) {
                   return y >= 0 && y < h && xx >= 0 && xx < w
                              ? static_cast<float>(v[((b2 * h + y) * w + xx) * ch + k])
                              : static_cast<float>(as_t(fill));
                 };
                 std::vector<double> o(n * oh * ow * ch);
                 for (int64_t b2 = 0; b2 < n; ++b2)
                   for (int64_t oy = 0; oy < oh; ++oy)
                     for (int64_t ox = 0; ox < ow; ++ox) {
                       const float* m = m0 + b2 * 8;
                       const auto fx = static_cast<float>(ox);
                       const auto fy = static_cast<float>(oy);
                       const float k = m[6] * fx + m[7] * fy + 1.f;
                       const float px = MapCoord(mode, (m[0] * fx + m[1] * fy + m[2]) / k, w);
                       const float py = MapCoord(mode, (m[3] * fx + m[4] * fy + m[5]) / k, h);
                       for (int64_t q = 0; q < ch; ++q) {
                         double r = 0;
                         if (interp == "NEAREST") {
                           r = read(b2, PixelAt(std::round(py)), PixelAt(std::round(px)), q);
                         } else {
                           const float y0 = std::floor(py), x0 = std::floor(px);
                           const int64_t yi = PixelAt(y0), xi = PixelAt(x0);
                           const float top = (x0 + 1 - px) * read(b2, yi, xi, q) +
                                             (px - x0) * read(b2, yi, xi + 1, q);
                           const float bottom = (x0 + 1 - px) * read(b2, yi + 1, xi, q) +
                                                (px - x0) * read(b2, yi + 1, xi + 1, q);
                           r = as_t((y0 + 1 - py) * top + (py - y0) * bottom);
                         }
                         o[((b2 * oh + oy) * ow + ox) * ch + q] = r;
                       }
                     }
                 return FromDoubles(t, Shape{n, oh, ow, ch}, o);
               })
                  .Tolerance(1e-6)
                  .Build());
        }
      }
    }
  }
}

void AddCropAndResize(std::vector<OpCase>* c) {
  uint32_t seed = 4100;
  const Tensor boxes = Make<float>({0.1f,  0.2f, 0.8f, 0.9f,   //
                                    0.0f,  0.0f, 1.0f, 1.0f,   //
                                    0.5f,  0.6f, 0.2f, 0.1f,   // flipped
                                    -0.2f, 0.3f, 0.6f, 1.4f,   // partly outside
                                    0.3f,  0.3f, 0.3f, 0.7f},  // zero height
                                   {5, 4});
  const Tensor ind = Make<int32_t>({0, 1, 1, 0, 1}, {5});
  for (DType t : {DType::kFloat, DType::kUInt8, DType::kHalf, DType::kInt32, DType::kDouble}) {
    for (const std::string method : {"bilinear", "nearest"}) {
      for (const auto& crop : std::vector<std::pair<int32_t, int32_t>>{{4, 5}, {1, 1}, {1, 3}}) {
        const int64_t ch_h = crop.first, ch_w = crop.second;
        c->push_back(
            OpCaseBuilder("CropAndResize", "CropAndResize " + DTypeShortName(t) + " " + method +
                                               " crop " + std::to_string(ch_h) + "x" +
                                               std::to_string(ch_w))
                .T(t)
                .String("method", method)
                .Float("extrapolation_value", -7.5f)
                .Input(RandomOf(t, Shape{2, 6, 7, 3}, NextSeed(seed), 0, 100))
                .Input(boxes)
                .Input(ind)
                .ConstInput(Make<int32_t>({crop.first, crop.second}, {2}))
                .Reference1([method, ch_h, ch_w](const std::vector<Tensor>& in) {
                  const std::vector<double> img = Doubles(in[0]);
                  const int64_t H = in[0].dim(1), W = in[0].dim(2), C = in[0].dim(3);
                  const int64_t nb = in[1].dim(0);
                  std::vector<double> o(nb * ch_h * ch_w * C);
                  for (int64_t b = 0; b < nb; ++b) {
                    const float* bx = in[1].data<float>() + 4 * b;
                    const int64_t src = in[2].data<int32_t>()[b];
                    // TF's coordinates (float arithmetic).
                    auto coord = [&](float lo, float hi, int64_t i, int64_t n, int64_t size) {
                      if (n > 1) {
                        const float sc =
                            (hi - lo) * static_cast<float>(size - 1) / static_cast<float>(n - 1);
                        return lo * static_cast<float>(size - 1) + static_cast<float>(i) * sc;
                      }
                      return static_cast<float>(0.5 * (lo + hi) * static_cast<double>(size - 1));
                    };
                    for (int64_t y = 0; y < ch_h; ++y)
                      for (int64_t x = 0; x < ch_w; ++x)
                        for (int64_t k = 0; k < C; ++k) {
                          const float fy = coord(bx[0], bx[2], y, ch_h, H);
                          const float fx = coord(bx[1], bx[3], x, ch_w, W);
                          double v;
                          if (fy < 0 || fy > H - 1 || fx < 0 || fx > W - 1) {
                            v = -7.5;
                          } else if (method == "nearest") {
                            v = img[((src * H + static_cast<int64_t>(std::round(fy))) * W +
                                     static_cast<int64_t>(std::round(fx))) *
                                        C +
                                    k];
                          } else {
                            const int64_t y0 = static_cast<int64_t>(std::floor(fy)),
                                          y1 = static_cast<int64_t>(std::ceil(fy));
                            const int64_t x0 = static_cast<int64_t>(std::floor(fx)),
                                          x1 = static_cast<int64_t>(std::ceil(fx));
                            const double ly = fy - y0, lx = fx - x0;
                            auto at = [&](int64_t yy, int64_t xx) {
                              return img[((src * H + yy) * W + xx) * C + k];
                            };
                            const double top = at(y0, x0) + (at(y0, x1) - at(y0, x0)) * lx;
                            const double bot = at(y1, x0) + (at(y1, x1) - at(y1, x0)) * lx;
                            v = top + (bot - top) * ly;
                          }
                          o[((b * ch_h + y) * ch_w + x) * C + k] = v;
                        }
                  }
                  return FromDoubles(DType::kFloat, Shape{nb, ch_h, ch_w, C}, o);
                })
                .Tolerance(1e-5)
                .Build());
      }
    }
  }
}

// ---- colour ------------------------------------------------------------------------------------

void RgbToHsv(double r, double g, double b, double* h, double* s, double* v) {
  const double mx = std::max({r, g, b}), mn = std::min({r, g, b}), range = mx - mn;
  *v = mx;
  *s = mx > 0 ? range / mx : 0;
  if (range <= 0) {
    *h = 0;
    return;
  }
  double hh = mx == r ? (g - b) / range : mx == g ? 2 + (b - r) / range : 4 + (r - g) / range;
  hh /= 6;
  *h = hh < 0 ? hh + 1 : hh;
}

void HsvToRgb(double h, double s, double v, double* rgb) {
  // The standard piecewise-linear form: each channel ramps with distance from its hue.
  const double dh = h * 6;
  const double ramp[3] = {std::clamp(std::abs(dh - 3) - 1, 0.0, 1.0),
                          std::clamp(2 - std::abs(dh - 2), 0.0, 1.0),
                          std::clamp(2 - std::abs(dh - 4), 0.0, 1.0)};
  for (int k = 0; k < 3; ++k) rgb[k] = ((1 - s) + s * ramp[k]) * v;
}

void AddColor(std::vector<OpCase>* c) {
  uint32_t seed = 4200;
  const std::vector<Shape> shapes = {Shape{4, 3}, Shape{2, 5, 6, 3}, Shape{0, 3}, Shape{64, 64, 3}};
  for (DType t : {DType::kFloat, DType::kDouble, DType::kHalf, DType::kBFloat16}) {
    for (const Shape& s : shapes) {
      if (s.dim(0) == 64 && t != DType::kFloat) continue;
      // Inputs in [0, 1], with some gray pixels (r == g == b) to hit the zero-range branch.
      Tensor rgb = RandomOf(t, s, NextSeed(seed), 0, 1);
      if (s.num_elements() >= 6)
        rgb = FromDoubles(t, s, [&] {
          std::vector<double> v = Doubles(rgb);
          v[1] = v[2] = v[0];
          return v;
        }());
      const double tol = t == DType::kHalf ? 4e-3 : t == DType::kBFloat16 ? 3e-2 : 1e-5;
      c->push_back(OpCaseBuilder("RGBToHSV")
                       .T(t)
                       .Input(rgb)
                       .Reference1([](const std::vector<Tensor>& in) {
                         std::vector<double> v = Doubles(in[0]);
                         for (size_t i = 0; i < v.size(); i += 3)
                           RgbToHsv(v[i], v[i + 1], v[i + 2], &v[i], &v[i + 1], &v[i + 2]);
                         return FromDoubles(in[0].dtype(), in[0].shape(), v);
                       })
                       .Tolerance(tol)
                       .Build());
      c->push_back(OpCaseBuilder("HSVToRGB")
                       .T(t)
                       .Input(RandomOf(t, s, NextSeed(seed), 0, 1))
                       .Reference1([](const std::vector<Tensor>& in) {
                         std::vector<double> v = Doubles(in[0]);
                         for (size_t i = 0; i < v.size(); i += 3) {
                           double rgb[3];
                           HsvToRgb(v[i], v[i + 1], v[i + 2], rgb);
                           std::copy(rgb, rgb + 3, v.begin() + i);
                         }
                         return FromDoubles(in[0].dtype(), in[0].shape(), v);
                       })
                       .Tolerance(tol)
                       .Build());
    }
  }
  for (DType t : {DType::kFloat, DType::kHalf}) {
    const double tol = t == DType::kHalf ? 4e-3 : 2e-5;
    for (const Shape& s :
         {Shape{2, 5, 6, 3}, Shape{3, 4, 3}, Shape{0, 2, 2, 3}, Shape{64, 64, 3}}) {
      if (s.dim(0) == 64 && t != DType::kFloat) continue;
      for (float delta : {0.2f, -0.7f, 1.3f}) {
        c->push_back(OpCaseBuilder("AdjustHue", "AdjustHue " + DTypeShortName(t) + " " +
                                                    s.ToString() + " delta " +
                                                    std::to_string(delta))
                         .T(t)
                         .Input(RandomOf(t, s, NextSeed(seed), 0, 1))
                         .Input(Tensor::Scalar<float>(delta))
                         .Reference1([delta](const std::vector<Tensor>& in) {
                           std::vector<double> v = Doubles(in[0]);
                           for (size_t i = 0; i < v.size(); i += 3) {
                             double h, sat, val, rgb[3];
                             RgbToHsv(v[i], v[i + 1], v[i + 2], &h, &sat, &val);
                             h = std::fmod(h + delta, 1.0);
                             if (h < 0) h += 1;
                             HsvToRgb(h, sat, val, rgb);
                             std::copy(rgb, rgb + 3, v.begin() + i);
                           }
                           return FromDoubles(in[0].dtype(), in[0].shape(), v);
                         })
                         .Tolerance(tol)
                         .Build());
      }
      for (float scale : {0.0f, 0.5f, 1.7f}) {
        c->push_back(OpCaseBuilder("AdjustSaturation", "AdjustSaturation " + DTypeShortName(t) +
                                                           " " + s.ToString() + " scale " +
                                                           std::to_string(scale))
                         .T(t)
                         .Input(RandomOf(t, s, NextSeed(seed), 0, 1))
                         .Input(Tensor::Scalar<float>(scale))
                         .Reference1([scale](const std::vector<Tensor>& in) {
                           std::vector<double> v = Doubles(in[0]);
                           for (size_t i = 0; i < v.size(); i += 3) {
                             double h, sat, val, rgb[3];
                             RgbToHsv(v[i], v[i + 1], v[i + 2], &h, &sat, &val);
                             HsvToRgb(h, std::clamp(sat * scale, 0.0, 1.0), val, rgb);
                             std::copy(rgb, rgb + 3, v.begin() + i);
                           }
                           return FromDoubles(in[0].dtype(), in[0].shape(), v);
                         })
                         .Tolerance(tol)
                         .Build());
      }
    }
    for (const Shape& s : {Shape{2, 5, 6, 3}, Shape{4, 3, 1}, Shape{2, 2, 3, 4, 2},
                           Shape{0, 3, 3, 3}, Shape{1, 65, 63, 5}}) {
      if (s.dim(1) == 65 && t != DType::kFloat) continue;
      c->push_back(OpCaseBuilder("AdjustContrastv2",
                                 "AdjustContrastv2 " + DTypeShortName(t) + " " + s.ToString())
                       .T(t)
                       .Input(RandomOf(t, s, NextSeed(seed), 0, 1))
                       .Input(Tensor::Scalar<float>(1.8f))
                       .Reference1([](const std::vector<Tensor>& in) {
                         std::vector<double> v = Doubles(in[0]);
                         const int r = in[0].rank();
                         const int64_t ch = in[0].dim(r - 1),
                                       plane = in[0].dim(r - 2) * in[0].dim(r - 3) * ch;
                         for (size_t start = 0; start < v.size(); start += plane) {
                           for (int64_t k = 0; k < ch; ++k) {
                             double mean = 0;
                             for (int64_t i = k; i < plane; i += ch) mean += v[start + i];
                             mean /= static_cast<double>(plane / ch);
                             for (int64_t i = k; i < plane; i += ch)
                               v[start + i] = mean + 1.8 * (v[start + i] - mean);
                           }
                         }
                         return FromDoubles(in[0].dtype(), in[0].shape(), v);
                       })
                       .Tolerance(tol * 2)
                       .Build());
    }
  }
}

// ---- non-max suppression -----------------------------------------------------------------------

double RefIou(const std::vector<double>& b, int64_t i, int64_t j) {
  auto box = [&](int64_t k, double* y0, double* x0, double* y1, double* x1) {
    *y0 = std::min(b[4 * k], b[4 * k + 2]);
    *y1 = std::max(b[4 * k], b[4 * k + 2]);
    *x0 = std::min(b[4 * k + 1], b[4 * k + 3]);
    *x1 = std::max(b[4 * k + 1], b[4 * k + 3]);
  };
  double ay0, ax0, ay1, ax1, by0, bx0, by1, bx1;
  box(i, &ay0, &ax0, &ay1, &ax1);
  box(j, &by0, &bx0, &by1, &bx1);
  const double aa = (ay1 - ay0) * (ax1 - ax0), ab = (by1 - by0) * (bx1 - bx0);
  if (aa <= 0 || ab <= 0) return 0;
  const double inter = std::max(0.0, std::min(ay1, by1) - std::max(ay0, by0)) *
                       std::max(0.0, std::min(ax1, bx1) - std::max(ax0, bx0));
  return inter / (aa + ab - inter);
}

// Greedy (soft) NMS from its definition: repeatedly take the best remaining score (lower index on
// ties) above the threshold; with sigma 0, drop the rest that overlap it by more than iou; with
// sigma > 0, decay every remaining score by exp(-iou^2 / (2 sigma)).
void RefNms(const std::vector<double>& boxes, std::vector<double> scores, int64_t max_out,
            double iou, double score_thr, double sigma, std::vector<int64_t>* sel,
            std::vector<double>* sel_scores) {
  std::vector<bool> alive(scores.size(), true);
  while (static_cast<int64_t>(sel->size()) < max_out) {
    int64_t best = -1;
    for (size_t i = 0; i < scores.size(); ++i)
      if (alive[i] && scores[i] > score_thr && (best < 0 || scores[i] > scores[best])) best = i;
    if (best < 0) break;
    alive[best] = false;
    sel->push_back(best);
    sel_scores->push_back(scores[best]);
    for (size_t i = 0; i < scores.size(); ++i) {
      if (!alive[i]) continue;
      const double o = RefIou(boxes, best, static_cast<int64_t>(i));
      if (sigma > 0) {
        scores[i] *= std::exp(-o * o / (2 * sigma));
      } else if (o > iou) {
        alive[i] = false;
      }
    }
  }
}

// NonMaxSuppression (v1: the IoU threshold an attr, no score threshold) and
// NonMaxSuppressionWithOverlaps (the boxes' IoU matrix given as overlaps).
void AddNmsV1AndOverlaps(std::vector<OpCase>* c, const Tensor& boxes, const Tensor& scores) {
  const int64_t n = scores.NumElements();
  const std::vector<double> bv = Doubles(boxes);
  std::vector<double> ov(n * n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) ov[i * n + j] = RefIou(bv, i, j);
  const Tensor overlaps = FromDoubles(DType::kFloat, Shape{n, n}, ov);
  for (float iou : {0.5f, 0.2f}) {
    c->push_back(OpCaseBuilder("NonMaxSuppression", "NonMaxSuppression iou " + std::to_string(iou))
                     .Float("iou_threshold", iou)
                     .Input(boxes)
                     .Input(scores)
                     .ConstInput(Tensor::Scalar<int32_t>(7))
                     .Reference1([=](const std::vector<Tensor>& in) {
                       std::vector<int64_t> sel;
                       std::vector<double> sel_scores;
                       RefNms(Doubles(in[0]), Doubles(in[1]), 7, iou, -1e30, 0, &sel, &sel_scores);
                       return FromDoubles(DType::kInt32, Shape{static_cast<int64_t>(sel.size())},
                                          std::vector<double>(sel.begin(), sel.end()));
                     })
                     .Build());
    c->push_back(OpCaseBuilder("NonMaxSuppressionWithOverlaps",
                               "NonMaxSuppressionWithOverlaps overlap " + std::to_string(iou))
                     .Input(overlaps)
                     .Input(scores)
                     .ConstInput(Tensor::Scalar<int32_t>(10))
                     .Input(Tensor::Scalar<float>(iou))
                     .Input(Tensor::Scalar<float>(0.3f))
                     .Reference1([=](const std::vector<Tensor>& in) {
                       std::vector<int64_t> sel;
                       std::vector<double> sel_scores;
                       RefNms(bv, Doubles(in[1]), 10, iou, 0.3, 0, &sel, &sel_scores);
                       return FromDoubles(DType::kInt32, Shape{static_cast<int64_t>(sel.size())},
                                          std::vector<double>(sel.begin(), sel.end()));
                     })
                     .Build());
  }
}

void AddNms(std::vector<OpCase>* c) {
  // Boxes on a coarse grid (overlaps of several sizes), some given corner-flipped; distinct
  // scores so the order is defined.
  const int64_t n = 24;
  std::vector<float> bv, sv;
  for (int64_t i = 0; i < n; ++i) {
    const float y = static_cast<float>(i % 5) * 0.15f, x = static_cast<float>(i / 5) * 0.12f;
    const float hgt = 0.3f + 0.02f * static_cast<float>(i % 3), wid = 0.25f;
    if (i % 4 == 3) {
      bv.insert(bv.end(), {y + hgt, x + wid, y, x});
    } else {
      bv.insert(bv.end(), {y, x, y + hgt, x + wid});
    }
    sv.push_back(0.05f + 0.9f * static_cast<float>((i * 7) % n) / n);
  }
  const Tensor boxes = Make<float>(bv, {n, 4});
  const Tensor scores = Make<float>(sv, {n});
  AddNmsV1AndOverlaps(c, boxes, scores);
  for (DType t : {DType::kFloat, DType::kHalf}) {
    Tensor b = FromDoubles(t, boxes.shape(), Doubles(boxes));
    Tensor s = FromDoubles(t, scores.shape(), Doubles(scores));
    for (int version : {2, 3, 4, 5}) {
      for (int32_t max_out : {5, 30, 0}) {
        for (float iou : {0.5f, 0.2f}) {
          const float thr = version >= 3 ? 0.3f : -1e30f;
          const float sigma = version == 5 && iou > 0.3f ? 0.5f : 0.0f;
          for (bool pad : {false, true}) {
            if (pad && version < 4) continue;
            const std::string op = "NonMaxSuppressionV" + std::to_string(version);
            OpCaseBuilder bld(op, op + " " + DTypeShortName(t) + " max " + std::to_string(max_out) +
                                      " iou " + std::to_string(iou) + (sigma > 0 ? " soft" : "") +
                                      (pad ? " padded" : ""));
            bld.T(t).Input(b).Input(s).ConstInput(Tensor::Scalar<int32_t>(max_out));
            auto thr_tensor = [&](float v) {
              return FromDoubles(t, Shape{}, {static_cast<double>(v)});
            };
            if (version == 5) {
              bld.Input(thr_tensor(iou)).Input(thr_tensor(thr)).Input(thr_tensor(sigma));
            } else {
              bld.Type("T_threshold", DType::kFloat).Input(Tensor::Scalar<float>(iou));
              if (version >= 3) bld.Input(Tensor::Scalar<float>(thr));
            }
            if (version >= 4) bld.Bool("pad_to_max_output_size", pad);
            c->push_back(bld.Reference([=](const std::vector<Tensor>& in) {
                              std::vector<int64_t> sel;
                              std::vector<double> sel_scores;
                              RefNms(Doubles(in[0]), Doubles(in[1]), max_out, iou, thr, sigma, &sel,
                                     &sel_scores);
                              const int64_t valid = static_cast<int64_t>(sel.size());
                              std::vector<double> idx(sel.begin(), sel.end());
                              if (pad) {
                                idx.resize(max_out, 0);
                                sel_scores.resize(max_out, 0);
                              }
                              const Shape shape{static_cast<int64_t>(idx.size())};
                              std::vector<Tensor> out = {FromDoubles(DType::kInt32, shape, idx)};
                              if (version == 5) out.push_back(FromDoubles(t, shape, sel_scores));
                              if (version >= 4)
                                out.push_back(Tensor::Scalar<int32_t>(static_cast<int32_t>(valid)));
                              return out;
                            })
                             .Tolerance(t == DType::kHalf ? 4e-3 : 1e-5)
                             .Build());
          }
        }
      }
    }
  }
}

void AddCombinedNms(std::vector<OpCase>* c) {
  const int64_t batch = 2, n = 12, classes = 3;
  std::vector<float> bv, sv;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t q = 0; q < classes; ++q) {
        const float y = static_cast<float>((i + q) % 4) * 0.2f - 0.1f * static_cast<float>(b);
        const float x = static_cast<float>(i / 4) * 0.3f;
        bv.insert(bv.end(), {y, x, y + 0.35f, x + 0.4f + 0.1f * static_cast<float>(q)});
      }
  for (int64_t k = 0; k < batch * n * classes; ++k)
    sv.push_back(static_cast<float>((k * 37) % 97) / 97.0f);
  for (int64_t q : {int64_t{1}, classes}) {
    // q = 1: one box per anchor shared by all classes (the first of the three above).
    std::vector<float> boxes_q;
    for (int64_t k = 0; k < batch * n; ++k)
      for (int64_t j = 0; j < q; ++j)
        for (int m = 0; m < 4; ++m) boxes_q.push_back(bv[(k * classes + j) * 4 + m]);
    const Tensor boxes = Make<float>(boxes_q, {batch, n, q, 4});
    const Tensor scores = Make<float>(sv, {batch, n, classes});
    for (int32_t per_class : {2, 5}) {
      for (int32_t total : {4, 20}) {
        for (bool pad_per_class : {false, true}) {
          for (bool clip : {true, false}) {
            c->push_back(
                OpCaseBuilder("CombinedNonMaxSuppression",
                              "CombinedNonMaxSuppression q " + std::to_string(q) + " per class " +
                                  std::to_string(per_class) + " total " + std::to_string(total) +
                                  (pad_per_class ? " pad_per_class" : "") + (clip ? " clip" : ""))
                    .Bool("pad_per_class", pad_per_class)
                    .Bool("clip_boxes", clip)
                    .Input(boxes)
                    .Input(scores)
                    .ConstInput(Tensor::Scalar<int32_t>(per_class))
                    .ConstInput(Tensor::Scalar<int32_t>(total))
                    .Input(Tensor::Scalar<float>(0.4f))
                    .Input(Tensor::Scalar<float>(0.1f))
                    .Reference([=](const std::vector<Tensor>& in) {
                      const std::vector<double> bx = Doubles(in[0]), sc = Doubles(in[1]);
                      const int64_t per_batch =
                          pad_per_class ? std::min<int64_t>(total, per_class * classes) : total;
                      std::vector<double> ob, os, oc, ov;
                      for (int64_t b = 0; b < batch; ++b) {
                        struct R {
                          double score;
                          int64_t cls, box;
                        };
                        std::vector<R> all;
                        for (int64_t k = 0; k < classes; ++k) {
                          std::vector<double> boxes_k, scores_k;
                          for (int64_t i = 0; i < n; ++i) {
                            const int64_t j = q > 1 ? k : 0;
                            for (int m = 0; m < 4; ++m)
                              boxes_k.push_back(bx[((b * n + i) * q + j) * 4 + m]);
                            scores_k.push_back(sc[(b * n + i) * classes + k]);
                          }
                          std::vector<int64_t> sel;
                          std::vector<double> ss;
                          RefNms(boxes_k, scores_k, per_class, 0.4, 0.1, 0, &sel, &ss);
                          for (size_t m = 0; m < sel.size(); ++m)
                            all.push_back({ss[m], k, ((b * n + sel[m]) * q + (q > 1 ? k : 0))});
                        }
                        std::stable_sort(all.begin(), all.end(),
                                         [](const R& x, const R& y) { return x.score > y.score; });
                        const int64_t keep = std::min<int64_t>(all.size(), per_batch);
                        for (int64_t m = 0; m < per_batch; ++m) {
                          for (int e = 0; e < 4; ++e) {
                            double v = m < keep ? bx[all[m].box * 4 + e] : 0;
                            if (clip) v = std::clamp(v, 0.0, 1.0);
                            ob.push_back(v);
                          }
                          os.push_back(m < keep ? all[m].score : 0);
                          oc.push_back(m < keep ? static_cast<double>(all[m].cls) : 0);
                        }
                        ov.push_back(static_cast<double>(keep));
                      }
                      return std::vector<Tensor>{
                          FromDoubles(DType::kFloat, Shape{batch, per_batch, 4}, ob),
                          FromDoubles(DType::kFloat, Shape{batch, per_batch}, os),
                          FromDoubles(DType::kFloat, Shape{batch, per_batch}, oc),
                          FromDoubles(DType::kInt32, Shape{batch}, ov)};
                    })
                    .Tolerance(1e-6)
                    .Build());
          }
        }
      }
    }
  }
}

// ---- codecs ------------------------------------------------------------------------------------

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read ", p.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void AddCodecs(std::vector<OpCase>* c) {
  const std::filesystem::path dir = std::filesystem::path(KILN_TESTDATA_DIR) / "images";
  struct D {
    std::string file, op, tag;
    int64_t channels = 0;
    DType dtype = DType::kUInt8;
    int64_t ratio = 1;
    std::string dct;
    bool fancy = true;
    bool expand_animations = true;
  };
  const std::vector<D> decodes = {
      {"rgb.jpg", "DecodeJpeg", "c0"},
      {"rgb.jpg", "DecodeJpeg", "c1", 1},
      {"rgb.jpg", "DecodeJpeg", "r2", 0, DType::kUInt8, 2},
      {"rgb.jpg", "DecodeJpeg", "accurate", 0, DType::kUInt8, 1, "INTEGER_ACCURATE", false},
      {"gray.jpg", "DecodeJpeg", "c3", 3},
      {"progressive.jpg", "DecodeJpeg", "c0"},
      {"rgb.jpg", "DecodePng", "u16", 0, DType::kUInt16},
      {"rgb8.png", "DecodePng", "c0"},
      {"rgb8.png", "DecodePng", "c4u16", 4, DType::kUInt16},
      {"rgb8.png", "DecodeJpeg", "c0"},
      {"rgba16.png", "DecodePng", "c0u16", 0, DType::kUInt16},
      {"rgba16.png", "DecodePng", "c3", 3},
      {"graya8.png", "DecodePng", "c0"},
      {"graya8.png", "DecodePng", "c3", 3},
      {"palette.png", "DecodePng", "c0"},
      {"palette.png", "DecodePng", "c3", 3},
      {"gray2.png", "DecodePng", "c0"},
      {"gray2.png", "DecodePng", "c4", 4},
      {"bgr24.bmp", "DecodeBmp", "c0"},
      {"bgr24.bmp", "DecodeBmp", "c4", 4},
      {"bgra32.bmp", "DecodeBmp", "c0"},
      {"bgra32.bmp", "DecodeBmp", "c3", 3},
      {"gray8.bmp", "DecodeBmp", "c3", 3},
      {"gray8.bmp", "DecodeImage", "img_c0"},
      {"bgr24.bmp", "DecodeImage", "img_f32", 0, DType::kFloat},
      {"bgr24.bmp", "DecodeImage", "img_u16", 0, DType::kUInt16, 1, "", true, false},
      {"rgb.jpg", "DecodeImage", "img_c0"},
      {"rgb.jpg", "DecodeImage", "img_f32", 0, DType::kFloat},
      {"rgb.jpg", "DecodeImage", "img_c1u16", 1, DType::kUInt16},
      {"rgb8.png", "DecodeImage", "img_f32", 0, DType::kFloat},
      {"rgba16.png", "DecodeImage", "img_f32", 0, DType::kFloat},
      {"palette.png", "DecodeImage", "img_c4", 4, DType::kUInt8, 1, "", true, false},
      // GIF: Pillow's LZW (a still image, an interlaced one, an animation) and a hand-made
      // file of frames off the corner, past the edge, with local colour tables and
      // transparent colours (tests/testdata/images/make_images.py).
      {"still.gif", "DecodeGif", "gif_c0"},
      {"still.gif", "DecodeJpeg", "c0"},
      {"still.gif", "DecodePng", "c3", 3},
      {"interlace.gif", "DecodeGif", "gif_c0"},
      {"anim.gif", "DecodeGif", "gif_c0"},
      {"anim.gif", "DecodeImage", "img_c0"},
      {"anim.gif", "DecodeImage", "img_first", 0, DType::kUInt8, 1, "", true, false},
      {"anim.gif", "DecodeImage", "img_f32", 0, DType::kFloat},
      {"sprite.gif", "DecodeGif", "gif_c0"},
      {"sprite.gif", "DecodeImage", "img_u16", 0, DType::kUInt16},
      {"rgb8.png", "DecodeGif", "gif_c0"},
      // WebP: Pillow's lossy RGB and lossless RGBA, decoded by libwebp as TF's pixels.
      {"lossy.webp", "DecodeWebP", "webp_c0"},
      {"lossy.webp", "DecodeWebP", "webp_c3", 3},
      {"alpha.webp", "DecodeWebP", "webp_c4", 4},
      {"alpha.webp", "DecodeImage", "img_first", 0, DType::kUInt8, 1, "", true, false},
      {"lossy.webp", "DecodeGif", "gif_c0"},
  };
  for (const D& d : decodes) {
    auto want = ReadNpy(dir / (d.file + "." + d.tag + ".npy"));
    REQUIRE_MESSAGE(want.ok(), want.status().ToString());
    const Tensor expected = *want;
    OpCaseBuilder b(d.op, d.op + " " + d.file + " " + d.tag);
    if (d.op != "DecodeGif") b.Int("channels", d.channels);
    if (d.op == "DecodePng") {
      b.Type("dtype", d.dtype);
    } else if (d.op == "DecodeImage") {
      b.Type("dtype", d.dtype).Bool("expand_animations", d.expand_animations);
    } else if (d.op == "DecodeJpeg") {
      b.Int("ratio", d.ratio).String("dct_method", d.dct).Bool("fancy_upscaling", d.fancy);
    }
    c->push_back(b.Input(Tensor::StringScalar(ReadFile(dir / d.file)))
                     .Reference1([expected](const std::vector<Tensor>&) { return expected; })
                     .Build());
  }
  // DecodeAndCropJpeg: TF's DecodeAndCropJpeg equals decoding then cropping (checked on this
  // file), so the reference is a window of TF's decoded pixels.
  {
    auto full = ReadNpy(dir / "rgb.jpg.c0.npy");
    REQUIRE(full.ok());
    const Tensor f = *full;
    c->push_back(OpCaseBuilder("DecodeAndCropJpeg", "DecodeAndCropJpeg rgb.jpg [2, 1, 6, 8]")
                     .Input(Tensor::StringScalar(ReadFile(dir / "rgb.jpg")))
                     .Input(Make<int32_t>({2, 1, 6, 8}, {4}))
                     .Reference1([f](const std::vector<Tensor>&) {
                       return RefMove(f, Shape{6, 8, 3}, [&](const Index& o) {
                         return ((2 + o[0]) * f.dim(1) + 1 + o[1]) * 3 + o[2];
                       });
                     })
                     .Build());
    for (const auto& [file, shape] : std::vector<std::pair<std::string, std::vector<int32_t>>>{
             {"rgb.jpg", {13, 20, 3}}, {"gray.jpg", {}}}) {
      auto decoded = ReadNpy(dir / (file + (file == "gray.jpg" ? ".c3.npy" : ".c0.npy")));
      REQUIRE(decoded.ok());
      const std::vector<int32_t> want =
          shape.empty() ? std::vector<int32_t>{static_cast<int32_t>(decoded->dim(0)),
                                               static_cast<int32_t>(decoded->dim(1)), 1}
                        : shape;
      c->push_back(OpCaseBuilder("ExtractJpegShape", "ExtractJpegShape " + file)
                       .Input(Tensor::StringScalar(ReadFile(dir / file)))
                       .Reference1([want](const auto&) { return Make<int32_t>(want, {3}); })
                       .Build());
      if (file != "rgb.jpg") continue;
      for (DType t : {DType::kInt32, DType::kInt64})
        c->push_back(
            OpCaseBuilder("ExtractJpegShape", "ExtractJpegShape " + file + " " + DTypeShortName(t))
                .Type("output_type", t)
                .Input(Tensor::StringScalar(ReadFile(dir / file)))
                .Reference1([want, t](const auto&) {
                  return t == DType::kInt32 ? Make<int32_t>(want, {3})
                                            : Make<int64_t>({want[0], want[1], want[2]}, {3});
                })
                .Build());
    }
  }
  // EncodeJpeg: like EncodePng, bytes without an independent reference (decoded again in
  // kernels_image_test.cc, and by TensorFlow in tests/tf).
  for (int64_t ch : {1, 3}) {
    c->push_back(OpCaseBuilder("EncodeJpeg", "EncodeJpeg channels " + std::to_string(ch))
                     .Int("quality", 90)
                     .Bool("chroma_downsampling", ch == 1)
                     .String("xmp_metadata", ch == 3 ? "<x/>" : "")
                     .Input(RandomOf(DType::kUInt8, Shape{9, 17, ch}, 4299, 0, 255))
                     .Build());
  }
  c->push_back(OpCaseBuilder("EncodeJpegVariableQuality")
                   .Input(RandomOf(DType::kUInt8, Shape{8, 8, 3}, 4298, 0, 255))
                   .Input(Tensor::Scalar<int32_t>(50))
                   .Build());
  // EncodePng: its bytes have no independent reference (the round trip through DecodePng and
  // TensorFlow's decoder are checked in kernels_image_test.cc and tests/tf).
  uint32_t seed = 4300;
  for (DType t : {DType::kUInt8, DType::kUInt16}) {
    for (int64_t ch : {1, 2, 3, 4}) {
      c->push_back(OpCaseBuilder("EncodePng")
                       .T(t)
                       .Int("compression", ch == 3 ? 9 : -1)
                       .Input(RandomOf(t, Shape{5, 7, ch}, NextSeed(seed), 0,
                                       t == DType::kUInt8 ? 255 : 65535))
                       .Build());
    }
  }
}

// ---- CTC, FFT ----------------------------------------------------------------------------------

void AddCtc(std::vector<OpCase>* c) {
  uint32_t seed = 4400;
  for (DType t : {DType::kFloat, DType::kDouble}) {
    for (bool merge : {false, true}) {
      for (int64_t blank : {-1, 0, 2}) {
        const int64_t T = 6, B = 3, K = 4;
        // Values from a small integer grid: repeats and blanks are frequent.
        Tensor x = RandomOf(t, Shape{T, B, K}, NextSeed(seed), 0, 3);
        c->push_back(OpCaseBuilder("CTCGreedyDecoder", "CTCGreedyDecoder " + DTypeShortName(t) +
                                                           (merge ? " merge" : "") + " blank " +
                                                           std::to_string(blank))
                         .T(t)
                         .Bool("merge_repeated", merge)
                         .Int("blank_index", blank)
                         .Input(x)
                         .Input(Make<int32_t>({6, 0, 4}, {3}))
                         .Reference([merge, blank](const std::vector<Tensor>& in) {
                           const std::vector<double> v = Doubles(in[0]);
                           const int32_t* len = in[1].data<int32_t>();
                           const int64_t blank_c = blank < 0 ? K + blank : blank;
                           std::vector<double> idx, vals, lp(B, 0.0);
                           int64_t longest = 0;
                           for (int64_t b = 0; b < B; ++b) {
                             int64_t prev = -1, count = 0;
                             for (int64_t s = 0; s < len[b]; ++s) {
                               const double* row = v.data() + (s * B + b) * K;
                               const int64_t best =
                                   std::max_element(row, row + K) - row;  // first max
                               lp[b] -= row[best];
                               if (best != blank_c && !(merge && best == prev)) {
                                 idx.insert(idx.end(),
                                            {static_cast<double>(b), static_cast<double>(count++)});
                                 vals.push_back(static_cast<double>(best));
                               }
                               prev = best;
                             }
                             longest = std::max(longest, count);
                           }
                           const int64_t total = static_cast<int64_t>(vals.size());
                           return std::vector<Tensor>{
                               FromDoubles(DType::kInt64, Shape{total, 2}, idx),
                               FromDoubles(DType::kInt64, Shape{total}, vals),
                               FromDoubles(DType::kInt64, Shape{2},
                                           {static_cast<double>(B), static_cast<double>(longest)}),
                               FromDoubles(in[0].dtype(), Shape{B, 1}, lp)};
                         })
                         .Tolerance(1e-6)
                         .Build());
      }
    }
  }
}

// CTCBeamSearchDecoder: outputs recorded from TensorFlow 2.21 (tf.raw_ops.CTCBeamSearchDecoder)
// for the same inputs: random logits (beam 4, 2 paths, a shorter second sequence) and a designed
// case whose best prefixes repeat a label across a blank (merge_repeated joins them).
void AddCtcBeam(std::vector<OpCase>* c) {
  const std::vector<double> logits = {
      -1.6038628816604614,  -2.6487178802490234,  -0.4967232346534729,  0.8408904671669006,
      2.2720930576324463,   0.21941280364990234,  -1.1052945852279663,  -1.5695607662200928,
      1.4974915981292725,   3.269566059112549,    0.545537531375885,    -2.4666574001312256,
      -1.9165303707122803,  3.200038194656372,    0.4057648777961731,   -3.4642696380615234,
      -0.16739238798618317, -2.3264520168304443,  -1.2585761547088623,  -0.9760116338729858,
      -1.4266268014907837,  1.1067569255828857,   -0.12617194652557373, -1.1788625717163086,
      0.8192756772041321,   1.6597106456756592,   -3.2860467433929443,  -0.5134602785110474,
      -1.9614946842193604,  -0.34631043672561646, -2.5788373947143555,  0.04138078913092613,
      -0.07577148079872131, -0.608675479888916,   -2.095853090286255,   -0.792380690574646,
      -2.1826577186584473,  -2.7104175090789795,  0.4495714604854584,   -2.2186999320983887,
      2.3405921459198,      1.4331753253936768,   -3.995633363723755,   0.5442577600479126,
      -2.2034332752227783,  0.06611444056034088,  0.08726398646831512,  -3.9768595695495605,
      -0.4668450355529785,  -0.5115800499916077,  1.9240010976791382,   -2.362893581390381,
      1.476083755493164,    -2.1979455947875977,  -0.6625818014144897,  -1.6809463500976562,
      2.8974626064300537,   1.1364262104034424,   4.863464832305908,    1.2838327884674072};
  for (DType t : {DType::kFloat, DType::kDouble}) {
    for (bool merge : {false, true}) {
      const bool f32 = t == DType::kFloat;
      c->push_back(OpCaseBuilder("CTCBeamSearchDecoder", "CTCBeamSearchDecoder TF-recorded " +
                                                             DTypeShortName(t) +
                                                             (merge ? " merge" : ""))
                       .T(t)
                       .Int("beam_width", 4)
                       .Int("top_paths", 2)
                       .Bool("merge_repeated", merge)
                       .Input(FromDoubles(t, Shape{6, 2, 5}, logits))
                       .Input(Make<int32_t>({6, 4}, {2}))
                       .Reference([t, f32](const std::vector<Tensor>&) {
                         return std::vector<Tensor>{
                             Make<int64_t>({0, 0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 2}, {6, 2}),
                             Make<int64_t>({0, 0, 0, 1, 0, 2, 0, 3, 1, 0, 1, 1, 1, 2}, {7, 2}),
                             Make<int64_t>({3, 1, 0, 1, 0, 3}, {6}),
                             Make<int64_t>({3, 1, 0, 2, 3, 0, 3}, {7}),
                             Make<int64_t>({2, 3}, {2}),
                             Make<int64_t>({2, 4}, {2}),
                             f32 ? FromDoubles(t, Shape{2, 2},
                                               {-1.8988561630249023, -2.7288663387298584,
                                                -1.4903429746627808, -2.2663352489471436})
                                 : FromDoubles(t, Shape{2, 2},
                                               {-1.898856125508342, -2.728866215531621,
                                                -1.490342819466957, -2.2663349619691755})};
                       })
                       .Tolerance(1e-6)
                       .Build());
    }
  }
  for (bool merge : {false, true}) {
    c->push_back(
        OpCaseBuilder(
            "CTCBeamSearchDecoder",
            std::string("CTCBeamSearchDecoder TF-recorded repeats") + (merge ? " merge" : ""))
            .T(DType::kFloat)
            .Int("beam_width", 3)
            .Int("top_paths", 3)
            .Bool("merge_repeated", merge)
            .Input(Make<float>({3, 0, 0, 0, 0, 3, 3, 0, 0, 3, 0, 0, 0, 3, 0}, {5, 1, 3}))
            .Input(Make<int32_t>({5}, {1}))
            .Reference([merge](const std::vector<Tensor>&) {
              const Tensor lp = Make<float>(
                  {-0.37732842564582825F, -2.684237480163574F, -2.703463554382324F}, {1, 3});
              if (merge) {
                return std::vector<Tensor>{
                    Make<int64_t>({0, 0, 0, 1}, {2, 2}), Make<int64_t>({0, 0, 0, 1}, {2, 2}),
                    Make<int64_t>({0, 0}, {1, 2}),       Make<int64_t>({0, 1}, {2}),
                    Make<int64_t>({0, 1}, {2}),          Make<int64_t>({0}, {1}),
                    Make<int64_t>({1, 2}, {2}),          Make<int64_t>({1, 2}, {2}),
                    Make<int64_t>({1, 1}, {2}),          lp};
              }
              return std::vector<Tensor>{Make<int64_t>({0, 0, 0, 1, 0, 2}, {3, 2}),
                                         Make<int64_t>({0, 0, 0, 1}, {2, 2}),
                                         Make<int64_t>({0, 0, 0, 1}, {2, 2}),
                                         Make<int64_t>({0, 0, 1}, {3}),
                                         Make<int64_t>({0, 1}, {2}),
                                         Make<int64_t>({0, 0}, {2}),
                                         Make<int64_t>({1, 3}, {2}),
                                         Make<int64_t>({1, 2}, {2}),
                                         Make<int64_t>({1, 2}, {2}),
                                         lp};
            })
            .Tolerance(1e-6)
            .Build());
  }
}

template <typename R>
Tensor ComplexTensor(const Shape& s, const std::vector<std::complex<double>>& v) {
  Tensor t(kDTypeOf<std::complex<R>>, s);
  for (size_t i = 0; i < v.size(); ++i)
    t.data<std::complex<R>>()[i] = {static_cast<R>(v[i].real()), static_cast<R>(v[i].imag())};
  return t;
}

// The DFT of `len` points along `dims` of a block, by its definition.
std::vector<std::complex<double>> Dft(const std::vector<std::complex<double>>& x, int64_t outer,
                                      int64_t n0, int64_t n1, int64_t keep1) {
  const double pi = std::acos(-1.0);
  std::vector<std::complex<double>> out(outer * n0 * keep1);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k0 = 0; k0 < n0; ++k0)
      for (int64_t k1 = 0; k1 < keep1; ++k1) {
        std::complex<double> acc = 0;
        for (int64_t j0 = 0; j0 < n0; ++j0)
          for (int64_t j1 = 0; j1 < n1; ++j1) {
            const double ang =
                -2 * pi * (static_cast<double>(k0 * j0) / n0 + static_cast<double>(k1 * j1) / n1);
            acc += x[(o * n0 + j0) * n1 + j1] * std::polar(1.0, ang);
          }
        out[(o * n0 + k0) * keep1 + k1] = acc;
      }
  return out;
}

void AddFft(std::vector<OpCase>* c) {
  uint32_t seed = 4500;
  for (const Shape& s :
       {Shape{8}, Shape{3, 5}, Shape{2, 2, 12}, Shape{4, 1}, Shape{2, 0}, Shape{3, 97},
        Shape{2, 300}, Shape{1, 257}, Shape{2, 62}, Shape{2, 74}, Shape{1, 1024}}) {
    for (bool dbl : {false, true}) {
      const Tensor re = RandomOf(DType::kDouble, s, NextSeed(seed)),
                   im = RandomOf(DType::kDouble, s, NextSeed(seed));
      std::vector<std::complex<double>> v(s.num_elements());
      for (size_t i = 0; i < v.size(); ++i) v[i] = {re.data<double>()[i], im.data<double>()[i]};
      const Tensor x = dbl ? ComplexTensor<double>(s, v) : ComplexTensor<float>(s, v);
      const int64_t n = s.dim(s.rank() - 1), outer = n == 0 ? 0 : s.num_elements() / n;
      c->push_back(OpCaseBuilder("FFT", "FFT " + std::string(dbl ? "complex128 " : "complex64 ") +
                                            s.ToString())
                       .Type("Tcomplex", x.dtype())
                       .Input(x)
                       .Reference1([v, outer, n, s, dbl](const std::vector<Tensor>&) {
                         const auto y = Dft(v, outer, 1, n, n);
                         return dbl ? ComplexTensor<double>(s, y) : ComplexTensor<float>(s, y);
                       })
                       .Tolerance(dbl ? 1e-10 : 2e-5)
                       .Build());
    }
  }
  struct R {
    Shape in;
    std::vector<int32_t> len;
  };
  for (const R& r :
       {R{Shape{8}, {8}}, R{Shape{3, 10}, {7}}, R{Shape{2, 6}, {1}}, R{Shape{2, 5}, {0}},
        R{Shape{2, 3, 9}, {9}}, R{Shape{5, 6}, {4, 6}}, R{Shape{2, 5, 7}, {5, 5}},
        R{Shape{3, 4, 4}, {3, 1}}, R{Shape{1, 33, 20}, {32, 20}}}) {
    const bool two = r.len.size() == 2;
    for (bool dbl : {false, true}) {
      const DType rt = dbl ? DType::kDouble : DType::kFloat;
      const Tensor x = RandomOf(rt, r.in, NextSeed(seed));
      std::vector<int64_t> out_dims(r.in.dims().begin(), r.in.dims().end());
      const int64_t l1 = r.len.back(), l0 = two ? r.len[0] : 1;
      const int64_t keep1 = l1 == 0 ? 0 : l1 / 2 + 1;
      out_dims.back() = keep1;
      if (two) out_dims[out_dims.size() - 2] = l0;
      const Shape out = *Shape::FromDims(out_dims);
      const std::string op = two ? "RFFT2D" : "RFFT";
      c->push_back(OpCaseBuilder(op, op + " " + DTypeShortName(rt) + " " + r.in.ToString() +
                                         " length " + std::to_string(l1))
                       .Type("Treal", rt)
                       .Type("Tcomplex", dbl ? DType::kComplex128 : DType::kComplex64)
                       .Input(x)
                       .ConstInput(Make<int32_t>(r.len, {static_cast<int64_t>(r.len.size())}))
                       .Reference1([=](const std::vector<Tensor>& in) {
                         const std::vector<double> v = Doubles(in[0]);
                         const int64_t in1 = r.in.dim(r.in.rank() - 1),
                                       in0 = two ? r.in.dim(r.in.rank() - 2) : 1;
                         const int64_t outer = r.in.num_elements() / (in0 * in1);
                         std::vector<std::complex<double>> crop(outer * l0 * l1);
                         for (int64_t o = 0; o < outer; ++o)
                           for (int64_t a = 0; a < l0; ++a)
                             for (int64_t b = 0; b < l1; ++b)
                               crop[(o * l0 + a) * l1 + b] = v[(o * in0 + a) * in1 + b];
                         const auto y = Dft(crop, outer, l0, l1, keep1);
                         return dbl ? ComplexTensor<double>(out, y) : ComplexTensor<float>(out, y);
                       })
                       .Tolerance(dbl ? 1e-10 : 2e-5)
                       .Build());
    }
  }
}

// The DFT over the last dims of `x` (blocks of `n` points, [outer, n...]) by its definition:
// forward exp(-2 pi i k.j / n), or inverse exp(+...) / prod(n).
std::vector<std::complex<double>> DftNd(const std::vector<std::complex<double>>& x, int64_t outer,
                                        const std::vector<int64_t>& n, bool inverse) {
  const double pi = std::acos(-1.0);
  int64_t block = 1;
  for (int64_t d : n) block *= d;
  std::vector<std::complex<double>> out(outer * block);
  std::vector<int64_t> k(n.size()), j(n.size());
  auto unravel = [&n](int64_t flat, std::vector<int64_t>& idx) {
    for (size_t a = n.size(); a-- > 0;) {
      idx[a] = flat % n[a];
      flat /= n[a];
    }
  };
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t fk = 0; fk < block; ++fk) {
      unravel(fk, k);
      std::complex<double> acc = 0;
      for (int64_t fj = 0; fj < block; ++fj) {
        unravel(fj, j);
        double phase = 0;
        for (size_t a = 0; a < n.size(); ++a)
          phase += static_cast<double>(k[a] * j[a]) / static_cast<double>(n[a]);
        acc += x[o * block + fj] * std::polar(1.0, (inverse ? 2 : -2) * pi * phase);
      }
      out[o * block + fk] = inverse ? acc / static_cast<double>(block) : acc;
    }
  return out;
}

// FFT2D/3D and the inverses of every rank, against DftNd.
void AddFftNd(std::vector<OpCase>* c) {
  uint32_t seed = 4600;
  struct C {
    int rank;
    Shape s;
  };
  for (const C& k : {C{1, Shape{3, 5}}, C{1, Shape{2, 0}}, C{2, Shape{3, 5}}, C{2, Shape{2, 4, 6}},
                     C{2, Shape{2, 0, 3}}, C{3, Shape{2, 3, 4}}, C{3, Shape{2, 2, 3, 5}}}) {
    for (bool inverse : {false, true}) {
      if (!inverse && k.rank == 1) continue;  // FFT has its cases above
      for (bool dbl : {false, true}) {
        const Tensor re = RandomOf(DType::kDouble, k.s, NextSeed(seed)),
                     im = RandomOf(DType::kDouble, k.s, NextSeed(seed));
        std::vector<std::complex<double>> v(k.s.num_elements());
        for (size_t i = 0; i < v.size(); ++i) v[i] = {re.data<double>()[i], im.data<double>()[i]};
        const Tensor x = dbl ? ComplexTensor<double>(k.s, v) : ComplexTensor<float>(k.s, v);
        std::vector<int64_t> n(k.s.dims().end() - k.rank, k.s.dims().end());
        int64_t block = 1;
        for (int64_t d : n) block *= d;
        const int64_t outer = block == 0 ? 0 : k.s.num_elements() / block;
        const std::string op = std::string(inverse ? "IFFT" : "FFT") +
                               (k.rank == 1 ? "" : std::to_string(k.rank) + "D");
        const Shape s = k.s;
        c->push_back(OpCaseBuilder(op, op + " " + std::string(dbl ? "complex128 " : "complex64 ") +
                                           s.ToString())
                         .Type("Tcomplex", x.dtype())
                         .Input(x)
                         .Reference1([v, outer, n, s, dbl, inverse](const std::vector<Tensor>&) {
                           const auto y = DftNd(v, outer, n, inverse);
                           return dbl ? ComplexTensor<double>(s, y) : ComplexTensor<float>(s, y);
                         })
                         .Tolerance(dbl ? 1e-10 : 2e-5)
                         .Build());
      }
    }
  }
  // RFFT3D: crop to fft_length, transform, keep the last dim's n / 2 + 1.
  for (bool dbl : {false, true}) {
    const DType rt = dbl ? DType::kDouble : DType::kFloat;
    const Shape s{2, 4, 5, 6};
    const std::vector<int64_t> len{3, 4, 6};
    const Tensor x = RandomOf(rt, s, NextSeed(seed));
    const Shape out{2, 3, 4, 4};
    c->push_back(OpCaseBuilder("RFFT3D", "RFFT3D " + DTypeShortName(rt) + " " + s.ToString())
                     .Type("Treal", rt)
                     .Type("Tcomplex", dbl ? DType::kComplex128 : DType::kComplex64)
                     .Input(x)
                     .ConstInput(Make<int32_t>({3, 4, 6}, {3}))
                     .Reference1([=](const std::vector<Tensor>& in) {
                       const std::vector<double> v = Doubles(in[0]);
                       std::vector<std::complex<double>> crop;
                       for (int64_t o = 0; o < 2; ++o)
                         for (int64_t a = 0; a < 3; ++a)
                           for (int64_t b = 0; b < 4; ++b)
                             for (int64_t d = 0; d < 6; ++d)
                               crop.push_back(v[((o * 4 + a) * 5 + b) * 6 + d]);
                       const auto full = DftNd(crop, 2, len, false);
                       std::vector<std::complex<double>> y;
                       for (size_t i = 0; i < full.size(); ++i)
                         if (i % 6 < 4) y.push_back(full[i]);
                       return dbl ? ComplexTensor<double>(out, y) : ComplexTensor<float>(out, y);
                     })
                     .Tolerance(dbl ? 1e-10 : 2e-5)
                     .Build());
  }
  // IRFFT of every rank: the input cropped to fft_length (the last dim to n / 2 + 1), extended
  // to a Hermitian spectrum X[k] = conj(X[-k]), inverse transformed; the real part.
  struct R {
    Shape in;
    std::vector<int64_t> len;
  };
  for (const R& r :
       {R{Shape{3, 5}, {8}}, R{Shape{3, 5}, {7}}, R{Shape{2, 6}, {1}}, R{Shape{4}, {6}},
        R{Shape{2, 4, 5}, {3, 8}}, R{Shape{3, 4}, {2, 5}}, R{Shape{2, 3, 4, 3}, {2, 4, 4}}}) {
    const int rank = static_cast<int>(r.len.size());
    for (bool dbl : {false, true}) {
      const DType rt = dbl ? DType::kDouble : DType::kFloat;
      const Tensor re = RandomOf(DType::kDouble, r.in, NextSeed(seed)),
                   im = RandomOf(DType::kDouble, r.in, NextSeed(seed));
      std::vector<std::complex<double>> v(r.in.num_elements());
      for (size_t i = 0; i < v.size(); ++i) v[i] = {re.data<double>()[i], im.data<double>()[i]};
      const Tensor x = dbl ? ComplexTensor<double>(r.in, v) : ComplexTensor<float>(r.in, v);
      std::vector<int64_t> out_dims(r.in.dims().begin(), r.in.dims().end());
      for (int i = 0; i < rank; ++i) out_dims[out_dims.size() - rank + i] = r.len[i];
      const Shape out = *Shape::FromDims(out_dims);
      const std::vector<int64_t> in_n(r.in.dims().end() - rank, r.in.dims().end());
      int64_t in_block = 1, block = 1;
      for (int i = 0; i < rank; ++i) {
        in_block *= in_n[i];
        block *= r.len[i];
      }
      const int64_t outer = r.in.num_elements() / in_block;
      const std::string op = "IRFFT" + (rank == 1 ? std::string() : std::to_string(rank) + "D");
      std::vector<int32_t> len32(r.len.begin(), r.len.end());
      c->push_back(OpCaseBuilder(op, op + " " + DTypeShortName(rt) + " " + r.in.ToString() +
                                         " length " + std::to_string(r.len.back()))
                       .Type("Treal", rt)
                       .Type("Tcomplex", x.dtype())
                       .Input(x)
                       .ConstInput(Make<int32_t>(len32, {rank}))
                       .Reference1([=](const std::vector<Tensor>&) {
                         const int64_t n = r.len.back(), half = n / 2 + 1;
                         std::vector<std::complex<double>> full(outer * block);
                         std::vector<int64_t> k(rank);
                         for (int64_t o = 0; o < outer; ++o)
                           for (int64_t f = 0; f < block; ++f) {
                             int64_t rest = f;
                             for (int a = rank; a-- > 0;) {
                               k[a] = rest % r.len[a];
                               rest /= r.len[a];
                             }
                             const bool mirror = k[rank - 1] >= half;
                             int64_t src = 0;
                             for (int a = 0; a < rank; ++a) {
                               const int64_t ka = mirror ? (r.len[a] - k[a]) % r.len[a] : k[a];
                               src = src * in_n[a] + ka;
                             }
                             const std::complex<double> val = v[o * in_block + src];
                             full[o * block + f] = mirror ? std::conj(val) : val;
                           }
                         const auto y = DftNd(full, outer, r.len, true);
                         std::vector<double> real(y.size());
                         for (size_t i = 0; i < y.size(); ++i) real[i] = y[i].real();
                         return FromDoubles(rt, out, real);
                       })
                       .Tolerance(dbl ? 1e-10 : 2e-5)
                       .Build());
    }
  }
}

}  // namespace

namespace {

// The audio front end: AudioSpectrogram and Mfcc against TensorFlow 2.21's values.
void AddAudio(std::vector<OpCase>* c) {
  std::vector<float> x(40);
  for (int i = 0; i < 40; ++i) x[i] = static_cast<float>(std::sin(i * 0.3));
  c->push_back(
      OpCaseBuilder("AudioSpectrogram", "AudioSpectrogram stereo, window 8, stride 5, TF values")
          .Int("window_size", 8)
          .Int("stride", 5)
          .Input(Make<float>(x, {20, 2}))
          .Reference1([](const auto&) {
            return Make<float>(
                {1.82695758f, 1.92269993f, 0.660268307f, 0.0463614315f, 0.0134874592f,
                 2.09013295f, 1.9546746f,  0.654479802f, 0.0455935262f, 0.0154303377f,
                 2.31147456f, 1.98441935f, 0.648961723f, 0.044855766f,  0.0170643441f,
                 1.15595484f, 1.85904872f, 0.671364665f, 0.0478172004f, 0.00853379257f,
                 1.48946548f, 1.88737071f, 0.666496158f, 0.0471810661f, 0.0109958909f,
                 1.79316461f, 1.91887009f, 0.660951853f, 0.0464517325f, 0.0132379476f},
                {2, 3, 5});
          })
          .Tolerance(2e-5)
          .Build());
  std::vector<float> spec;
  for (int f = 0; f < 2; ++f)
    for (int k = 0; k < 33; ++k)
      spec.push_back(((k + 1) * (f + 2)) * 0.01f + static_cast<float>(k % 3));
  // 10 channels, 5 coefficients at 8000 Hz, against TF's values; an upper limit above the
  // Nyquist frequency (4000 Hz here) gives zeros in TF 2.21, which logs "Input too short to
  // compute filterbank".
  const auto mfcc = [&](const std::string& name, float upper, std::vector<float> want) {
    c->push_back(OpCaseBuilder("Mfcc", name)
                     .Float("upper_frequency_limit", upper)
                     .Float("lower_frequency_limit", 20)
                     .Int("filterbank_channel_count", 10)
                     .Int("dct_coefficient_count", 5)
                     .Input(Make<float>(spec, {1, 2, 33}))
                     .ConstInput(Tensor::Scalar<int32_t>(8000))
                     .Reference1([want](const auto&) {
                       return Make<float>(want, {1, 2, 5});
                     })
                     .Tolerance(2e-5)
                     .Build());
  };
  mfcc("Mfcc 10 channels, 5 coefficients, TF values", 3000,
       {3.02347612f, -1.49939835f, 0.175204203f, 0.0138552869f, 0.188579336f, 3.26191258f,
        -1.55952871f, 0.16662541f, -0.0054512159f, 0.1749883f});
  mfcc("Mfcc upper limit above Nyquist, zeros as TF", 6000, std::vector<float>(10, 0.0f));
}

}  // namespace

std::vector<OpCase> ImageCases() {
  std::vector<OpCase> c;
  AddResize(&c);
  AddScaleAndTranslate(&c);
  AddProjectiveTransform(&c);
  AddCropAndResize(&c);
  AddColor(&c);
  AddNms(&c);
  AddCombinedNms(&c);
  AddCodecs(&c);
  AddCtc(&c);
  AddCtcBeam(&c);
  AddFft(&c);
  AddFftNd(&c);
  AddAudio(&c);
  return c;
}

}  // namespace kiln::testing
