// Op-tester cases of Conv (TF's generic convolution) and the image-transform convolutions
// FusedPadConv2D and FusedResizeAndPadConv2D, against plain loops in double written from the
// definitions: Conv over the flattened batch dims; the fused ops as bilinear resize (TF's
// legacy coordinates, in float) then mirror padding then a convolution whose windows sit where
// TF's fused kernel puts them, every image of a batch giving the first one's result as TF's
// kernel does (its row cache is not refilled between images; TF-recorded cases confirm it).
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "ops/op_cases.h"
#include "ops/ref_util.h"

namespace kiln::testing {
namespace {

double TolOf(DType t) {
  return t == DType::kHalf       ? 1e-2
         : t == DType::kBFloat16 ? 3e-2
         : t == DType::kFloat    ? 1e-4
         : t == DType::kDouble   ? 1e-10
                                 : 0;
}

Shape ShapeOf(const std::vector<int64_t>& d) { return *Shape::FromDims(d); }

// ---- Conv ------------------------------------------------------------------------------------

struct ConvCase {
  std::vector<int64_t> in;      // batch dims, spatial dims, channels
  std::vector<int64_t> filter;  // spatial dims, in, out
  int64_t batch_dims = 1;
  std::string padding = "SAME";
  std::vector<int64_t> strides, dilations;  // spatial entries; empty: all 1
  std::vector<int64_t> pads;                // EXPLICIT: before, after per spatial dim

  int Spatial() const { return static_cast<int>(filter.size()) - 2; }
  std::vector<int64_t> List(const std::vector<int64_t>& v) const {
    std::vector<int64_t> l = {1};
    for (int i = 0; i < Spatial(); ++i) l.push_back(v.empty() ? 1 : v[i]);
    l.push_back(1);
    return l;
  }
};

// The convolution of the flattened input, and TF's output shape: the batch dims restored unless
// the input or the output is empty.
Tensor RefConv(const ConvCase& c, const Tensor& x, const Tensor& f) {
  const int s = c.Spatial();
  int64_t batch = 1;
  for (int64_t i = 0; i < c.batch_dims; ++i) batch *= c.in[i];
  std::array<RefDim, 3> d;  // unused leading dims stay 1 x 1
  for (int i = 0; i < s; ++i) {
    const int64_t pb = c.pads.empty() ? 0 : c.pads[2 * i],
                  pa = c.pads.empty() ? 0 : c.pads[2 * i + 1];
    d[3 - s + i] = RefWindowDim(c.padding, c.in[c.batch_dims + i], c.filter[i],
                                c.strides.empty() ? 1 : c.strides[i],
                                c.dilations.empty() ? 1 : c.dilations[i], pb, pa);
  }
  const int64_t ci = c.in.back(), co = c.filter.back();
  std::vector<int64_t> flat_out = {batch};
  for (int i = 3 - s; i < 3; ++i) flat_out.push_back(d[i].out);
  flat_out.push_back(co);
  const std::vector<double> xv = Doubles(x), fv = Doubles(f);
  int64_t out_n = 1;
  for (int64_t v : flat_out) out_n *= v;
  std::vector<double> out(out_n, 0.0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t oz = 0; oz < d[0].out; ++oz)
      for (int64_t oy = 0; oy < d[1].out; ++oy)
        for (int64_t ox = 0; ox < d[2].out; ++ox)
          for (int64_t kz = 0; kz < d[0].k; ++kz)
            for (int64_t ky = 0; ky < d[1].k; ++ky)
              for (int64_t kx = 0; kx < d[2].k; ++kx) {
                const int64_t iz = RefIn(d[0], oz, kz), iy = RefIn(d[1], oy, ky),
                              ix = RefIn(d[2], ox, kx);
                if (iz < 0 || iy < 0 || ix < 0) continue;
                const int64_t pi = ((b * d[0].in + iz) * d[1].in + iy) * d[2].in + ix;
                const int64_t po = ((b * d[0].out + oz) * d[1].out + oy) * d[2].out + ox;
                const int64_t t = (kz * d[1].k + ky) * d[2].k + kx;
                for (int64_t i = 0; i < ci; ++i)
                  for (int64_t o = 0; o < co; ++o)
                    out[po * co + o] += xv[pi * ci + i] * fv[(t * ci + i) * co + o];
              }
  std::vector<int64_t> shape = flat_out;
  if (out_n > 0 && x.NumElements() > 0) {
    shape.assign(c.in.begin(), c.in.begin() + c.batch_dims);
    shape.insert(shape.end(), flat_out.begin() + 1, flat_out.end());
  }
  return FromDoubles(x.dtype(), ShapeOf(shape), out);
}

void AddConv(std::vector<OpCase>* cases) {
  std::vector<ConvCase> geoms;
  auto add = [&](ConvCase c) { geoms.push_back(std::move(c)); };
  add({.in = {2, 5, 6, 3}, .filter = {3, 2, 3, 4}});
  add({.in = {1, 7, 6, 2}, .filter = {3, 2, 2, 3}, .padding = "VALID", .strides = {2, 3}});
  add({.in = {1, 6, 7, 2}, .filter = {2, 3, 2, 2}, .dilations = {2, 1}});
  add({.in = {2, 5, 4, 2},
       .filter = {3, 3, 2, 2},
       .padding = "EXPLICIT",
       .strides = {2, 1},
       .pads = {1, 2, 0, 1}});
  add({.in = {2, 4, 5, 6, 3}, .filter = {2, 2, 3, 3, 4}});
  add({.in = {1, 5, 4, 6, 2}, .filter = {3, 2, 2, 2, 3}, .padding = "VALID", .strides = {2, 1, 3}});
  // Batch dims: none (one image), two, three.
  add({.in = {5, 6, 3}, .filter = {3, 2, 3, 4}, .batch_dims = 0});
  add({.in = {2, 3, 5, 6, 3}, .filter = {3, 2, 3, 4}, .batch_dims = 2});
  add({.in = {1, 2, 2, 4, 5, 2}, .filter = {2, 2, 2, 3}, .batch_dims = 3});
  // Empty: TF keeps the flattened shape ([0, 5, 6, 4], [6, 0, 6, 4]), even where padding alone
  // gives a non-empty output of zeros.
  add({.in = {0, 2, 5, 6, 3}, .filter = {3, 2, 3, 4}, .batch_dims = 2});
  add({.in = {2, 3, 0, 6, 3}, .filter = {3, 2, 3, 4}, .batch_dims = 2});
  add({.in = {2, 3, 0, 6, 3},
       .filter = {3, 2, 3, 4},
       .batch_dims = 2,
       .padding = "EXPLICIT",
       .pads = {2, 2, 0, 0}});
  add({.in = {2, 0, 6, 3}, .filter = {3, 2, 3, 4}, .padding = "EXPLICIT", .pads = {2, 2, 0, 0}});
  // Large enough for several chunks across threads.
  add({.in = {2, 16, 16, 8}, .filter = {3, 3, 8, 16}});
  uint32_t seed = 9100;
  const std::vector<DType> all = {DType::kFloat, DType::kDouble, DType::kHalf, DType::kBFloat16,
                                  DType::kInt32};
  for (size_t gi = 0; gi < geoms.size(); ++gi) {
    const ConvCase& c = geoms[gi];
    // Every dtype on the first 2-D and 3-D geometries, float and double on the rest.
    const bool every = gi == 0 || gi == 4;
    for (DType t : all) {
      if (!every && t != DType::kFloat && t != DType::kDouble) continue;
      if (c.in[1] == 16 && t != DType::kFloat) continue;
      std::string name = "Conv " + DTypeShortName(t) + " in " + ShapeOf(c.in).ToString() +
                         " filter " + ShapeOf(c.filter).ToString() + " " + c.padding +
                         " batch_dims " + std::to_string(c.batch_dims);
      OpCaseBuilder b("Conv", name);
      b.T(t)
          .Input(RandomOf(t, ShapeOf(c.in), NextSeed(seed)))
          .Input(RandomOf(t, ShapeOf(c.filter), NextSeed(seed)))
          .IntList("strides", c.List(c.strides))
          .String("padding", c.padding);
      if (c.batch_dims != 1) b.Int("batch_dims", c.batch_dims);
      if (!c.dilations.empty()) b.IntList("dilations", c.List(c.dilations));
      if (!c.pads.empty()) {
        std::vector<int64_t> ep = {0, 0};
        ep.insert(ep.end(), c.pads.begin(), c.pads.end());
        ep.insert(ep.end(), {0, 0});
        b.IntList("explicit_paddings", ep);
      }
      if (gi == 0) b.String("data_format", "CHANNELS_LAST").Int("groups", 1);
      cases->push_back(
          b.Reference1([c](const std::vector<Tensor>& in) { return RefConv(c, in[0], in[1]); })
              .Tolerance(TolOf(t))
              .Build());
    }
  }
}

// ---- FusedPadConv2D, FusedResizeAndPadConv2D --------------------------------------------------

struct FusedCase {
  std::vector<int64_t> in;      // NHWC
  std::vector<int64_t> size;    // resize target; empty: FusedPadConv2D
  std::array<int64_t, 4> pads;  // top, bottom, left, right
  std::vector<int64_t> filter;  // HWIO
  bool reflect = true, align = false;
  std::string padding = "SAME";
  int64_t stride_h = 1, stride_w = 1;
};

// Image 0 resized (legacy bilinear: coordinate x * scale in float) and mirror padded, [h, w, c].
std::vector<double> RefPadded(const FusedCase& c, const std::vector<double>& x, int64_t* ph,
                              int64_t* pw) {
  const int64_t ih = c.in[1], iw = c.in[2], ch = c.in[3];
  const int64_t rh = c.size.empty() ? ih : c.size[0], rw = c.size.empty() ? iw : c.size[1];
  auto scale = [&](int64_t in, int64_t out) {
    return c.align && in > 1 && out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                        : static_cast<float>(in) / static_cast<float>(out);
  };
  const float sy = scale(ih, rh), sx = scale(iw, rw);
  // Mirror an index of the padded dim into [0, n).
  auto mirror = [&](int64_t v, int64_t n) {
    if (v < 0) return c.reflect ? -v : -v - 1;
    if (v >= n) return c.reflect ? 2 * n - v - 2 : 2 * n - v - 1;
    return v;
  };
  *ph = rh + c.pads[0] + c.pads[1];
  *pw = rw + c.pads[2] + c.pads[3];
  std::vector<double> out(*ph * *pw * ch);
  for (int64_t y = 0; y < *ph; ++y) {
    const float fy = static_cast<float>(mirror(y - c.pads[0], rh)) * sy;
    const int64_t y0 = static_cast<int64_t>(std::floor(fy));
    const int64_t y1 = std::min<int64_t>(static_cast<int64_t>(std::ceil(fy)), ih - 1);
    const double ly = fy - std::floor(fy);
    for (int64_t xx = 0; xx < *pw; ++xx) {
      const float fx = static_cast<float>(mirror(xx - c.pads[2], rw)) * sx;
      const int64_t x0 = static_cast<int64_t>(std::floor(fx));
      const int64_t x1 = std::min<int64_t>(static_cast<int64_t>(std::ceil(fx)), iw - 1);
      const double lx = fx - std::floor(fx);
      for (int64_t k = 0; k < ch; ++k) {
        auto at = [&](int64_t yy, int64_t xi) { return x[(yy * iw + xi) * ch + k]; };
        if (c.size.empty()) {  // no resize: the pixel itself (TF copies it, Inf stays Inf)
          out[(y * *pw + xx) * ch + k] = at(y0, x0);
          continue;
        }
        const double top = at(y0, x0) + (at(y0, x1) - at(y0, x0)) * lx;
        const double bottom = at(y1, x0) + (at(y1, x1) - at(y1, x0)) * lx;
        out[(y * *pw + xx) * ch + k] = top + (bottom - top) * ly;
      }
    }
  }
  return out;
}

Tensor RefFused(const FusedCase& c, const Tensor& x, const Tensor& f) {
  int64_t ph = 0, pw = 0;
  const std::vector<double> img = RefPadded(c, Doubles(x), &ph, &pw);
  const std::vector<double> fv = Doubles(f);
  const int64_t fh = c.filter[0], fw = c.filter[1], ch = c.in[3], co = c.filter[3];
  const RefDim dy = RefWindowDim(c.padding, ph, fh, c.stride_h);
  const RefDim dx = RefWindowDim(c.padding, pw, fw, c.stride_w);
  // TF's fused kernel centres the windows: truncating division, + 1 for VALID.
  const int64_t extra = c.padding == "VALID" ? 1 : 0;
  const int64_t top = ((dy.out - 1) * c.stride_h + fh - ph + extra) / 2;
  const int64_t left = ((dx.out - 1) * c.stride_w + fw - pw + extra) / 2;
  std::vector<double> one(dy.out * dx.out * co, 0.0);
  for (int64_t oy = 0; oy < dy.out; ++oy)
    for (int64_t ox = 0; ox < dx.out; ++ox)
      for (int64_t ky = 0; ky < fh; ++ky)
        for (int64_t kx = 0; kx < fw; ++kx) {
          const int64_t iy = oy * c.stride_h - top + ky, ix = ox * c.stride_w - left + kx;
          if (iy < 0 || iy >= ph || ix < 0 || ix >= pw) continue;
          for (int64_t i = 0; i < ch; ++i)
            for (int64_t o = 0; o < co; ++o)
              one[(oy * dx.out + ox) * co + o] +=
                  img[(iy * pw + ix) * ch + i] * fv[((ky * fw + kx) * ch + i) * co + o];
        }
  std::vector<double> out;
  for (int64_t b = 0; b < c.in[0]; ++b) out.insert(out.end(), one.begin(), one.end());
  return FromDoubles(x.dtype(), Shape{c.in[0], dy.out, dx.out, co}, out);
}

void AddFused(std::vector<OpCase>* cases) {
  const std::vector<FusedCase> geoms = {
      {.in = {1, 5, 6, 3}, .pads = {1, 2, 2, 1}, .filter = {3, 2, 3, 4}},
      {.in = {3, 5, 6, 3}, .pads = {1, 2, 2, 1}, .filter = {3, 2, 3, 4}, .reflect = false},
      // Strides that leave a remainder: TF's windows start one pixel in.
      {.in = {1, 5, 6, 2},
       .pads = {1, 2, 2, 1},
       .filter = {3, 2, 2, 3},
       .stride_h = 5,
       .stride_w = 5},
      {.in = {2, 5, 6, 2},
       .pads = {1, 2, 2, 1},
       .filter = {3, 2, 2, 3},
       .reflect = false,
       .padding = "VALID",
       .stride_h = 4,
       .stride_w = 4},
      {.in = {1, 4, 3, 2}, .pads = {0, 0, 0, 0}, .filter = {1, 1, 2, 2}, .padding = "VALID"},
      // Resizes: up, down, align_corners, a 1-pixel side.
      {.in = {2, 5, 6, 3}, .size = {7, 9}, .pads = {1, 2, 2, 1}, .filter = {3, 2, 3, 4}},
      {.in = {1, 5, 6, 3},
       .size = {4, 3},
       .pads = {2, 1, 1, 2},
       .filter = {2, 2, 3, 2},
       .reflect = false,
       .align = true,
       .stride_h = 2,
       .stride_w = 2},
      {.in = {1, 1, 6, 2},
       .size = {3, 4},
       .pads = {1, 1, 0, 2},
       .filter = {2, 3, 2, 2},
       .align = true,
       .padding = "VALID"},
      {.in = {2, 6, 5, 2}, .size = {6, 5}, .pads = {2, 2, 1, 1}, .filter = {3, 3, 2, 3}},
  };
  uint32_t seed = 9300;
  for (const FusedCase& c : geoms) {
    const bool resize = !c.size.empty();
    const std::string op = resize ? "FusedResizeAndPadConv2D" : "FusedPadConv2D";
    std::vector<DType> types = {DType::kFloat, DType::kDouble, DType::kHalf};
    if (!resize) types.push_back(DType::kBFloat16);
    for (DType t : types) {
      OpCaseBuilder b(op, op + " " + DTypeShortName(t) + " in " + ShapeOf(c.in).ToString() +
                              (resize ? " size " + ShapeOf(c.size).ToString() : "") + " filter " +
                              ShapeOf(c.filter).ToString() +
                              (c.reflect ? " REFLECT " : " SYMMETRIC ") + c.padding + " stride " +
                              std::to_string(c.stride_h));
      b.T(t).Input(RandomOf(t, ShapeOf(c.in), NextSeed(seed)));
      if (resize) {
        b.ConstInput(
            Make<int32_t>({static_cast<int32_t>(c.size[0]), static_cast<int32_t>(c.size[1])}, {2}));
        if (c.align) b.Bool("resize_align_corners", true);
      }
      const Tensor pads =
          Make<int32_t>({0, 0, static_cast<int32_t>(c.pads[0]), static_cast<int32_t>(c.pads[1]),
                         static_cast<int32_t>(c.pads[2]), static_cast<int32_t>(c.pads[3]), 0, 0},
                        {4, 2});
      // Paddings known at prepare time in most cases, a runtime input in some.
      if (seed % 3 == 0) {
        b.Input(pads);
      } else {
        b.ConstInput(pads);
      }
      b.Input(RandomOf(t, ShapeOf(c.filter), NextSeed(seed)))
          .String("mode", c.reflect ? "REFLECT" : "SYMMETRIC")
          .IntList("strides", {1, c.stride_h, c.stride_w, 1})
          .String("padding", c.padding);
      const int filter_index = resize ? 3 : 2;
      cases->push_back(b.Reference1([c, filter_index](const std::vector<Tensor>& in) {
                          return RefFused(c, in[0], in[filter_index]);
                        })
                           // Half keeps the resized values in half, as TF: a few
                           // hundredths off on sums of ~20 products.
                           .Tolerance(t == DType::kHalf ? 3e-2 : TolOf(t))
                           .Build());
    }
  }
}

}  // namespace

std::vector<OpCase> ConvGenericCases() {
  std::vector<OpCase> c;
  AddConv(&c);
  AddFused(&c);
  return c;
}

}  // namespace kiln::testing
