// Op-tester cases of ExtractGlimpse and ExtractGlimpseV2 against a plain reference written from
// the op's definition (Eigen's ExtractGlimpses): the window's corner from the offset in float,
// truncated toward zero, then a copy where the window covers the image. Exact for noise "zero"
// and for windows inside the image; windows with random noise (TF's is unseeded) only run here,
// their values are checked in tests/exec/kernels_glimpse_test.cc.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ops/op_cases.h"
#include "ops/ref_util.h"

namespace kiln::testing {
namespace {

struct GlimpseCase {
  std::string op = "ExtractGlimpseV2";
  std::vector<int64_t> in;
  int32_t h = 0, w = 0;
  std::vector<float> offsets;  // (y, x) per image
  bool normalized = true, centered = true;
  std::string noise = "zero";
};

// The corner along one dim, as the op defines it (V1 always takes off half the window, V2 only
// for normalized and centered offsets).
int64_t Corner(const GlimpseCase& c, float v, int64_t image, int64_t window) {
  const auto fi = static_cast<float>(image);
  if (c.op == "ExtractGlimpse") {
    if (c.normalized) v *= fi;
    if (c.centered) v = v / 2.0f + fi / 2.0f;
    v -= static_cast<float>(window) / 2.0f;
  } else if (c.normalized) {
    v *= fi;
    if (c.centered) v = v / 2.0f + fi / 2.0f - static_cast<float>(window) / 2.0f;
  } else if (c.centered) {
    v += fi / 2.0f;
  }
  if (!(std::abs(v) < 1e18f)) return std::numeric_limits<int64_t>::min() / 4;  // far outside
  return static_cast<int64_t>(std::trunc(v));
}

Tensor RefGlimpse(const GlimpseCase& c, const Tensor& x, const Tensor& offsets) {
  const int64_t n = c.in[0], ih = c.in[1], iw = c.in[2], ch = c.in[3];
  const std::vector<double> v = Doubles(x), off = Doubles(offsets);
  std::vector<double> out(n * c.h * c.w * ch, 0.0);
  for (int64_t b = 0; b < n; ++b) {
    const int64_t top = Corner(c, static_cast<float>(off[2 * b]), ih, c.h);
    const int64_t left = Corner(c, static_cast<float>(off[2 * b + 1]), iw, c.w);
    for (int64_t y = 0; y < c.h; ++y)
      for (int64_t xx = 0; xx < c.w; ++xx) {
        const int64_t sy = top + y, sx = left + xx;
        if (sy < 0 || sy >= ih || sx < 0 || sx >= iw) continue;
        for (int64_t k = 0; k < ch; ++k)
          out[((b * c.h + y) * c.w + xx) * ch + k] = v[((b * ih + sy) * iw + sx) * ch + k];
      }
  }
  return FromDoubles(DType::kFloat, Shape{n, c.h, c.w, ch}, out);
}

void AddGlimpses(std::vector<OpCase>* cases) {
  constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
  std::vector<GlimpseCase> g;
  for (const std::string op : {"ExtractGlimpse", "ExtractGlimpseV2"}) {
    for (bool normalized : {true, false}) {
      for (bool centered : {true, false}) {
        // Offsets in the units each mode takes: inside, partly outside (fractions truncate
        // toward zero), wholly outside.
        std::vector<float> off =
            normalized ? std::vector<float>{0.1f, -0.2f, -0.9f, 0.95f, 0.3f, 0.4f}
            : centered ? std::vector<float>{0.5f, -1.7f, -4.2f, 3.9f, 1.0f, 1.0f}
                       : std::vector<float>{1.0f, 2.0f, -1.5f, -0.7f, 5.0f, 4.5f};
        g.push_back({.op = op,
                     .in = {3, 6, 7, 2},
                     .h = 3,
                     .w = 4,
                     .offsets = off,
                     .normalized = normalized,
                     .centered = centered});
      }
    }
    // A window larger than the image, an empty window, NaN and huge offsets.
    g.push_back({.op = op, .in = {1, 5, 6, 2}, .h = 7, .w = 9, .offsets = {0.0f, 0.0f}});
    g.push_back({.op = op, .in = {2, 5, 6, 1}, .h = 0, .w = 3, .offsets = {0, 0, 0, 0}});
    g.push_back({.op = op,
                 .in = {2, 4, 4, 3},
                 .h = 2,
                 .w = 2,
                 .offsets = {kNaN, 0.0f, 1e30f, -1e30f},
                 .normalized = false,
                 .centered = false});
  }
  // Uniform noise that never shows: the windows lie inside the image (not touching the right or
  // bottom edge, where TF already draws noise that the copy then covers).
  g.push_back({.in = {2, 6, 7, 3},
               .h = 3,
               .w = 3,
               .offsets = {1, 2, 0, 0},
               .normalized = false,
               .centered = false,
               .noise = "uniform"});
  g.push_back({.op = "ExtractGlimpse",
               .in = {1, 6, 7, 1},
               .h = 2,
               .w = 2,
               .offsets = {0.1f, -0.2f},
               .noise = "uniform"});
  uint32_t seed = 9500;
  for (const GlimpseCase& c : g) {
    OpCaseBuilder b(c.op, c.op + " in " + Shape(*Shape::FromDims(c.in)).ToString() + " size " +
                              std::to_string(c.h) + "x" + std::to_string(c.w) +
                              (c.normalized ? " normalized" : "") +
                              (c.centered ? " centered" : "") + " noise " + c.noise);
    const Tensor off = *Tensor::FromVector(c.offsets, Shape{c.in[0], 2});
    b.Input(RandomOf(DType::kFloat, *Shape::FromDims(c.in), NextSeed(seed), -5, 5))
        .ConstInput(Make<int32_t>({c.h, c.w}, {2}))
        .Input(off)
        .Bool("normalized", c.normalized)
        .Bool("centered", c.centered)
        .String("noise", c.noise);
    if (c.noise != "uniform") b.Bool("uniform_noise", false);
    cases->push_back(b.Reference1([c](const std::vector<Tensor>& in) {
                        return RefGlimpse(c, in[0], in[2]);
                      }).Build());
  }
  // Random noise: runs on every path; the values are random (exec tests check them).
  for (const std::string noise : {"uniform", "gaussian"}) {
    cases->push_back(OpCaseBuilder("ExtractGlimpseV2", "ExtractGlimpseV2 noise " + noise)
                         .Input(RandomOf(DType::kFloat, Shape{2, 5, 6, 2}, NextSeed(seed)))
                         .ConstInput(Make<int32_t>({4, 4}, {2}))
                         .Input(Make<float>({0.9f, 0.9f, -1.0f, 0.2f}, {2, 2}))
                         .Bool("uniform_noise", false)
                         .String("noise", noise)
                         .NonDeterministic()
                         .Build());
  }
  // V1's own defaults: uniform_noise and the noise attr both left out (uniform).
  cases->push_back(OpCaseBuilder("ExtractGlimpse", "ExtractGlimpse defaults")
                       .Input(RandomOf(DType::kFloat, Shape{1, 5, 6, 2}, NextSeed(seed)))
                       .Input(Make<int32_t>({3, 3}, {2}))
                       .Input(Make<float>({0.95f, 0.95f}, {1, 2}))
                       .NonDeterministic()
                       .Build());
}

}  // namespace

std::vector<OpCase> GlimpseCases() {
  std::vector<OpCase> c;
  AddGlimpses(&c);
  return c;
}

}  // namespace kiln::testing
