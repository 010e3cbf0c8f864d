// Op-tester cases of the oneDNN convolution paths: Conv2D and DepthwiseConv2dNative with
// constant and run-time filters, strides, dilations, SAME/VALID/EXPLICIT padding; the fused
// forms (bias or a batch norm folded in, residual add, activations); MaxPool and AvgPool.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/fake_quant.h"
#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

struct ConvSpec {
  Shape input;   // NHWC
  Shape filter;  // HWIO ([kh, kw, in / groups, out] grouped), or [kh, kw, c, multiplier] for
                 // depthwise
  int64_t stride = 1, dilation = 1;
  std::string padding = "SAME";
  std::vector<int64_t> explicit_paddings;
};

// The same windows TF computes, one output element at a time, in double.
Tensor RefConv(const Tensor& x, const Tensor& f, const ConvSpec& s, bool depthwise) {
  const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), c = x.dim(3);
  const int64_t kh = f.dim(0), kw = f.dim(1);
  const int64_t out_c = depthwise ? c * f.dim(3) : f.dim(3);
  auto out_size = [&](int64_t in, int64_t k, int64_t pb, int64_t pa, int64_t* before) {
    const int64_t eff = (k - 1) * s.dilation + 1;
    if (s.padding == "VALID") {
      *before = 0;
      return (in - eff + s.stride) / s.stride;
    }
    if (s.padding == "EXPLICIT") {
      *before = pb;
      return (in + pb + pa - eff + s.stride) / s.stride;
    }
    const int64_t o = (in + s.stride - 1) / s.stride;
    *before = std::max<int64_t>(0, (o - 1) * s.stride + eff - in) / 2;
    return o;
  };
  int64_t ph = 0, pw = 0;
  const auto& ep = s.explicit_paddings;
  const int64_t oh = out_size(h, kh, ep.empty() ? 0 : ep[2], ep.empty() ? 0 : ep[3], &ph);
  const int64_t ow = out_size(w, kw, ep.empty() ? 0 : ep[4], ep.empty() ? 0 : ep[5], &pw);
  Tensor out(DType::kDouble, Shape{n, oh, ow, out_c});
  const float* xd = x.data<float>();
  const float* fd = f.data<float>();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t xx = 0; xx < ow; ++xx)
        for (int64_t o = 0; o < out_c; ++o) {
          double sum = 0;
          for (int64_t ky = 0; ky < kh; ++ky)
            for (int64_t kx = 0; kx < kw; ++kx) {
              const int64_t iy = y * s.stride - ph + ky * s.dilation;
              const int64_t ix = xx * s.stride - pw + kx * s.dilation;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
              const float* px = xd + ((b * h + iy) * w + ix) * c;
              if (depthwise) {
                const int64_t mult = f.dim(3), ch = o / mult, m = o % mult;
                sum += px[ch] * fd[((ky * kw + kx) * c + ch) * mult + m];
              } else {
                // Grouped when the filter has fewer in-channels than the input: output o
                // reads only its group's channels.
                const int64_t fc = f.dim(2), ocg = out_c / (c / fc), first = o / ocg * fc;
                for (int64_t i = 0; i < fc; ++i)
                  sum += px[first + i] * fd[((ky * kw + kx) * fc + i) * out_c + o];
              }
            }
          out.data<double>()[((b * oh + y) * ow + xx) * out_c + o] = sum;
        }
  return out;
}

OpCaseBuilder ConvBuilder(const std::string& op, const std::string& name, const ConvSpec& s) {
  OpCaseBuilder b(op, name);
  b.T(DType::kFloat)
      .IntList("strides", {1, s.stride, s.stride, 1})
      .IntList("dilations", {1, s.dilation, s.dilation, 1})
      .String("padding", s.padding);
  if (!s.explicit_paddings.empty()) b.IntList("explicit_paddings", s.explicit_paddings);
  return b;
}

// FakeQuantWithMinMaxArgs(x) with 8 bits, as TF computes it in float32.
Tensor FakeQuantRef(const Tensor& x, float lo, float hi, bool narrow) {
  const exec::Nudged q = exec::Nudge(lo, hi, exec::QuantRange{narrow ? 1 : 0, 255});
  const float zero = exec::NudgedZero(q);
  Tensor y(DType::kFloat, x.shape());
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    const float clamped = std::max(std::min(x.data<float>()[i], q.max), q.min) - q.min;
    const float level = clamped * q.inv_scale;
    y.data<float>()[i] = std::floor(level - zero + 0.5f) * q.scale;
  }
  return y;
}

// Weights that are int8 levels times a scale per output channel (the innermost index, or the
// outer one with `outer`), as int8 bundles hold them once loaded.
Tensor Int8Levels(const Shape& shape, int64_t channels, bool outer, uint32_t seed) {
  const Tensor r = RandomOf(DType::kFloat, shape, seed, -127, 127);
  const Tensor s = RandomOf(DType::kFloat, Shape{channels}, seed + 7, 0.002, 0.02);
  const int64_t n = r.NumElements(), inner = n / channels;
  Tensor w(DType::kFloat, shape);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = outer ? i / inner : i % channels;
    w.data<float>()[i] = std::nearbyint(r.data<float>()[i]) * s.data<float>()[c];
  }
  return w;
}

Tensor ToFloat(const Tensor& t) {
  return RefUnaryDouble(
      t, [](double x) { return x; }, DType::kFloat);
}

// y (double, channels innermost) plus a bias per channel, then ReLU: the epilogue of the
// integer products' cases.
void AddBiasRelu(Tensor* y, const Tensor& bias) {
  const int64_t channels = bias.NumElements();
  for (int64_t i = 0; i < y->NumElements(); ++i)
    y->data<double>()[i] = std::max(y->data<double>()[i] + bias.data<float>()[i % channels], 0.0);
}

// Chained integer products pass levels as bytes. These cases keep every value exact so that
// the levels are one answer whichever way a kernel sums: input steps 2^-5, weight steps 2^-8
// (int8 levels, each channel reaching 127 once), so sums are exact multiples of 2^-13. No
// result may be a tie between two output levels (TF rounds halves up, oneDNN to even): with
// output steps of 2^-10 the biases sit 1/16 of a step off the sums' grid; with steps of 25
// sums' steps (odd) a sum on that grid is never half-way.
constexpr float kInStep = 1.f / 32, kOutStep = 1.f / 1024, kOddStep = 25.f / 8192;
Tensor GridWeights(const Shape& shape, int64_t channels, uint32_t seed) {
  Tensor w = RandomOf(DType::kFloat, shape, seed, -127, 127);
  for (int64_t i = 0; i < w.NumElements(); ++i)
    w.data<float>()[i] = (i < channels ? 127.f : std::nearbyint(w.data<float>()[i])) / 256;
  return w;
}
Tensor OffGridBias(int64_t channels, uint32_t seed) {
  Tensor b = RandomOf(DType::kFloat, Shape{channels}, seed, -60, 60);
  for (int64_t i = 0; i < channels; ++i)
    b.data<float>()[i] = (std::nearbyint(b.data<float>()[i]) + 1.f / 16) * kOutStep;
  return b;
}
// Levels (uint8, or int8 for a narrow signed range) as the floats they stand for.
Tensor LevelsAsFloat(const Tensor& levels, float step) {
  Tensor f(DType::kFloat, levels.shape());
  for (int64_t i = 0; i < levels.NumElements(); ++i)
    f.data<float>()[i] =
        step * (levels.dtype() == DType::kInt8 ? static_cast<float>(levels.data<int8_t>()[i])
                                               : static_cast<float>(levels.data<uint8_t>()[i]));
  return f;
}
// Doubles rounded to output levels of `step` within [lo, hi], as `dtype`.
Tensor AsLevels(const Tensor& y, float step, int lo, int hi, DType dtype) {
  Tensor out(dtype, y.shape());
  for (int64_t i = 0; i < y.NumElements(); ++i) {
    const double l = std::clamp(std::floor(y.data<double>()[i] / step + 0.5),
                                static_cast<double>(lo), static_cast<double>(hi));
    if (dtype == DType::kInt8)
      out.data<int8_t>()[i] = static_cast<int8_t>(l);
    else
      out.data<uint8_t>()[i] = static_cast<uint8_t>(l);
  }
  return out;
}

}  // namespace

std::vector<OpCase> ConvFusedCases() {
  std::vector<OpCase> c;
  const std::vector<ConvSpec> specs = {
      {Shape{1, 5, 5, 3}, Shape{3, 3, 3, 4}},
      {Shape{2, 8, 7, 16}, Shape{3, 3, 16, 32}, 2},
      {Shape{1, 9, 9, 4}, Shape{3, 3, 4, 8}, 1, 2, "VALID"},
      {Shape{1, 6, 6, 2}, Shape{2, 2, 2, 3}, 1, 1, "EXPLICIT", {0, 0, 1, 2, 2, 1, 0, 0}},
      {Shape{3, 28, 28, 1}, Shape{5, 5, 1, 32}},
      {Shape{1, 1, 1, 24}, Shape{1, 1, 24, 40}},  // one pixel: a row times the filter
      {Shape{3, 1, 1, 24}, Shape{1, 1, 24, 40}},  // one pixel of 3 images: a matmul
  };
  uint32_t seed = 1;
  for (const ConvSpec& s : specs) {
    for (bool constant : {true, false}) {
      const ConvSpec spec = s;
      OpCaseBuilder b = ConvBuilder("Conv2D", "", s);
      b.Input(RandomOf(DType::kFloat, s.input, NextSeed(seed)));
      Tensor f = RandomOf(DType::kFloat, s.filter, NextSeed(seed), -1, 1);
      constant ? b.ConstInput(f) : b.Input(f);
      c.push_back(b.Reference1([spec](const std::vector<Tensor>& in) {
                     return ToFloat(RefConv(in[0], in[1], spec, false));
                   })
                      .Tolerance(1e-5)
                      .Build());
    }
    // Depthwise with multiplier 2 on the same geometry.
    ConvSpec d = s;
    d.filter = Shape{s.filter.dim(0), s.filter.dim(1), s.input.dim(3), 2};
    if (d.padding != "EXPLICIT" && d.dilation == 1) {
      c.push_back(ConvBuilder("DepthwiseConv2dNative", "", d)
                      .Input(RandomOf(DType::kFloat, d.input, NextSeed(seed)))
                      .ConstInput(RandomOf(DType::kFloat, d.filter, NextSeed(seed), -1, 1))
                      .Reference1([d](const std::vector<Tensor>& in) {
                        return ToFloat(RefConv(in[0], in[1], d, true));
                      })
                      .Tolerance(1e-5)
                      .Build());
    }
  }
  // Grouped Conv2D (Keras' groups=, ConvNeXt's depthwise stage as one group per channel):
  // the filter's in-channels divide the input's.
  const std::vector<ConvSpec> grouped = {
      {Shape{2, 7, 7, 4}, Shape{3, 3, 2, 6}},                 // 2 groups of 3 outputs
      {Shape{1, 9, 8, 6}, Shape{3, 2, 2, 9}, 2, 1, "VALID"},  // 3 groups, strided
      {Shape{1, 8, 8, 8}, Shape{7, 7, 1, 8}},                 // one group per channel
      {Shape{1, 6, 6, 4}, Shape{1, 1, 1, 8}},                 // pointwise, 4 groups
      {Shape{1, 1, 1, 4}, Shape{1, 1, 2, 6}},                 // one pixel, 2 groups
      {Shape{1, 7, 7, 6}, Shape{3, 3, 3, 4}, 1, 2, "EXPLICIT", {0, 0, 1, 1, 2, 0, 0, 0}},
  };
  for (const ConvSpec& s : grouped) {
    for (bool constant : {true, false}) {
      const ConvSpec spec = s;
      OpCaseBuilder b = ConvBuilder("Conv2D", "", s);
      b.Input(RandomOf(DType::kFloat, s.input, NextSeed(seed)));
      Tensor f = RandomOf(DType::kFloat, s.filter, NextSeed(seed), -1, 1);
      constant ? b.ConstInput(f) : b.Input(f);
      c.push_back(b.Reference1([spec](const std::vector<Tensor>& in) {
                     return ToFloat(RefConv(in[0], in[1], spec, false));
                   })
                      .Tolerance(1e-5)
                      .Build());
    }
  }
  // Grouped in double (the Eigen path) and fused with a bias and Relu (oneDNN's post-ops).
  {
    const ConvSpec s{Shape{1, 6, 5, 6}, Shape{3, 3, 2, 6}};
    c.push_back(ConvBuilder("Conv2D", "Conv2D grouped double", s)
                    .T(DType::kDouble)
                    .Input(RandomOf(DType::kDouble, s.input, NextSeed(seed)))
                    .Input(RandomOf(DType::kDouble, s.filter, NextSeed(seed), -1, 1))
                    .Reference1([s](const std::vector<Tensor>& in) {
                      return RefConv(ToFloat(in[0]), ToFloat(in[1]), s, false);
                    })
                    .Tolerance(1e-5)
                    .Build());
    // int32 (TF's Eigen kernel): the values TF 2.21 gives for iota input and filter, SAME.
    const ConvSpec si{Shape{1, 3, 3, 2}, Shape{2, 2, 2, 2}};
    std::vector<int32_t> x(18), w(16);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int32_t>(i);
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int32_t>(i);
    c.push_back(ConvBuilder("Conv2D", "Conv2D int32", si)
                    .T(DType::kInt32)
                    .Input(Make<int32_t>(x, si.input))
                    .Input(Make<int32_t>(w, si.filter))
                    .Reference1([](const std::vector<Tensor>&) {
                      return Make<int32_t>({368, 404, 480, 532, 200, 230, 704, 788, 816, 916, 320,
                                            374, 172, 226, 196, 258, 34, 67},
                                           Shape{1, 3, 3, 2});
                    })
                    .Build());
    c.push_back(ConvBuilder("_FusedConv2D", "_FusedConv2D grouped BiasAdd Relu", s)
                    .StringList("fused_ops", {"BiasAdd", "Relu"})
                    .Int("num_args", 1)
                    .Input(RandomOf(DType::kFloat, s.input, NextSeed(seed)))
                    .ConstInput(RandomOf(DType::kFloat, s.filter, NextSeed(seed), -1, 1))
                    .ConstInput(RandomOf(DType::kFloat, Shape{6}, NextSeed(seed)))
                    .Reference1([s](const std::vector<Tensor>& in) {
                      Tensor y = RefConv(in[0], in[1], s, false);
                      for (int64_t i = 0; i < y.NumElements(); ++i)
                        y.data<double>()[i] =  // NaN stays NaN, as TF's ReLU
                            std::max(y.data<double>()[i] + in[2].data<float>()[i % 6], 0.0);
                      return ToFloat(y);
                    })
                    .Tolerance(1e-5)
                    .Build());
  }
  // _FusedConv2D: BiasAdd + activation; FusedBatchNorm (+ Relu); BiasAdd + Add + Relu.
  const ConvSpec s{Shape{2, 6, 6, 8}, Shape{3, 3, 8, 16}};
  for (const std::string act : {"", "Relu", "Relu6", "Elu", "LeakyRelu", "Sigmoid", "Tanh"}) {
    std::vector<std::string> ops = {"BiasAdd"};
    if (!act.empty()) ops.push_back(act);
    c.push_back(ConvBuilder("_FusedConv2D", "_FusedConv2D BiasAdd " + act, s)
                    .StringList("fused_ops", ops)
                    .Int("num_args", 1)
                    .Input(RandomOf(DType::kFloat, s.input, NextSeed(seed)))
                    .ConstInput(RandomOf(DType::kFloat, s.filter, NextSeed(seed), -1, 1))
                    .ConstInput(RandomOf(DType::kFloat, Shape{16}, NextSeed(seed)))
                    .Reference1([s, act](const std::vector<Tensor>& in) {
                      Tensor y = RefConv(in[0], in[1], s, false);
                      for (int64_t i = 0; i < y.NumElements(); ++i) {
                        double v = y.data<double>()[i] + in[2].data<float>()[i % 16];
                        if (act == "Relu") v = std::max(v, 0.0);
                        if (act == "Relu6") v = std::clamp(v, 0.0, 6.0);
                        if (act == "Elu") v = v < 0 ? std::exp(v) - 1 : v;
                        if (act == "LeakyRelu") v = v < 0 ? 0.2 * v : v;
                        if (act == "Sigmoid") v = 1 / (1 + std::exp(-v));
                        if (act == "Tanh") v = std::tanh(v);
                        y.data<double>()[i] = v;
                      }
                      return ToFloat(y);
                    })
                    .Tolerance(1e-5)
                    .Build());
  }
  // Non-finite inputs through fused activations: NaN stays NaN (oneDNN's ReLU is a max that
  // would make it 0), one +Inf reaches its receptive fields as +-Inf.
  // (Depthwise convolutions skip the input check that keeps NaN through ReLU: its cost; see
  // docs/tf-compat.md. Their NaN case uses activations oneDNN keeps NaN through.)
  for (const std::string act : {"Relu", "Relu6", "Elu", "LeakyRelu"}) {
    for (bool depthwise : {false, true}) {
      if (depthwise && (act == "Relu" || act == "Relu6")) continue;
      const ConvSpec ds = depthwise ? ConvSpec{Shape{2, 6, 6, 8}, Shape{3, 3, 8, 2}} : s;
      const int64_t out_c = depthwise ? 16 : 16;
      Tensor x = RandomOf(DType::kFloat, ds.input, NextSeed(seed));
      x.data<float>()[(0 * 36 + 1 * 6 + 1) * 8 + 2] = std::numeric_limits<float>::quiet_NaN();
      x.data<float>()[(1 * 36 + 4 * 6 + 4) * 8 + 5] = std::numeric_limits<float>::infinity();
      const std::string op = depthwise ? "_FusedDepthwiseConv2dNative" : "_FusedConv2D";
      c.push_back(ConvBuilder(op, op + " BiasAdd " + act + " NaN/Inf input", ds)
                      .StringList("fused_ops", {"BiasAdd", act})
                      .Int("num_args", 1)
                      .Input(x)
                      .ConstInput(RandomOf(DType::kFloat, ds.filter, NextSeed(seed), 0.1, 1))
                      .ConstInput(RandomOf(DType::kFloat, Shape{out_c}, NextSeed(seed)))
                      .Reference1([ds, act, depthwise, out_c](const std::vector<Tensor>& in) {
                        Tensor y = RefConv(in[0], in[1], ds, depthwise);
                        for (int64_t i = 0; i < y.NumElements(); ++i) {
                          double v = y.data<double>()[i] + in[2].data<float>()[i % out_c];
                          if (act == "Relu") v = std::max(v, 0.0);
                          if (act == "Relu6") v = std::clamp(v, 0.0, 6.0);
                          if (act == "Elu") v = v < 0 ? std::exp(v) - 1 : v;
                          if (act == "LeakyRelu") v = v < 0 ? 0.2 * v : v;
                          y.data<double>()[i] = v;
                        }
                        return ToFloat(y);
                      })
                      .Tolerance(1e-5)
                      .Build());
    }
  }
  for (bool constant : {true, false}) {
    for (bool relu : {false, true}) {
      std::vector<std::string> ops = {"FusedBatchNorm"};
      if (relu) ops.push_back("Relu");
      OpCaseBuilder b =
          ConvBuilder("_FusedConv2D",
                      std::string("_FusedConv2D FusedBatchNorm") + (relu ? " Relu" : "") +
                          (constant ? " (constants)" : " (run-time statistics)"),
                      s);
      b.StringList("fused_ops", ops).Int("num_args", 4).Float("epsilon", 0.001f);
      b.Input(RandomOf(DType::kFloat, s.input, NextSeed(seed)));
      std::vector<Tensor> args = {RandomOf(DType::kFloat, s.filter, NextSeed(seed), -1, 1),
                                  RandomOf(DType::kFloat, Shape{16}, NextSeed(seed), 0.5, 2),
                                  RandomOf(DType::kFloat, Shape{16}, NextSeed(seed)),
                                  RandomOf(DType::kFloat, Shape{16}, NextSeed(seed)),
                                  RandomOf(DType::kFloat, Shape{16}, NextSeed(seed), 0.1, 3)};
      for (const Tensor& t : args) constant ? b.ConstInput(t) : b.Input(t);
      c.push_back(b.Reference1([s, relu](const std::vector<Tensor>& in) {
                     Tensor y = RefConv(in[0], in[1], s, false);
                     for (int64_t i = 0; i < y.NumElements(); ++i) {
                       const int64_t o = i % 16;
                       double v = (y.data<double>()[i] - in[4].data<float>()[o]) /
                                      std::sqrt(in[5].data<float>()[o] + 0.001) *
                                      in[2].data<float>()[o] +
                                  in[3].data<float>()[o];
                       y.data<double>()[i] = relu ? std::max(v, 0.0) : v;
                     }
                     return ToFloat(y);
                   })
                      .Tolerance(1e-4)
                      .Build());
    }
  }
  c.push_back(ConvBuilder("_FusedConv2D", "_FusedConv2D BiasAdd Add Relu", s)
                  .StringList("fused_ops", {"BiasAdd", "Add", "Relu"})
                  .Int("num_args", 2)
                  .Input(RandomOf(DType::kFloat, s.input, NextSeed(seed)))
                  .ConstInput(RandomOf(DType::kFloat, s.filter, NextSeed(seed), -1, 1))
                  .ConstInput(RandomOf(DType::kFloat, Shape{16}, NextSeed(seed)))
                  .Input(RandomOf(DType::kFloat, Shape{2, 6, 6, 16}, NextSeed(seed)))
                  .Reference1([s](const std::vector<Tensor>& in) {
                    Tensor y = RefConv(in[0], in[1], s, false);
                    for (int64_t i = 0; i < y.NumElements(); ++i)
                      y.data<double>()[i] =
                          std::max(y.data<double>()[i] + in[2].data<float>()[i % 16] +
                                       in[3].data<float>()[i],
                                   0.0);  // NaN stays NaN, as TF's ReLU
                    return ToFloat(y);
                  })
                  .Tolerance(1e-5)
                  .Build());
  const ConvSpec dw{Shape{1, 7, 7, 6}, Shape{3, 3, 6, 1}, 2};
  c.push_back(
      ConvBuilder("_FusedDepthwiseConv2dNative", "_FusedDepthwiseConv2dNative BiasAdd Relu6", dw)
          .StringList("fused_ops", {"BiasAdd", "Relu6"})
          .Int("num_args", 1)
          .Input(RandomOf(DType::kFloat, dw.input, NextSeed(seed)))
          .ConstInput(RandomOf(DType::kFloat, dw.filter, NextSeed(seed), -1, 1))
          .ConstInput(RandomOf(DType::kFloat, Shape{6}, NextSeed(seed)))
          .Reference1([dw](const std::vector<Tensor>& in) {
            Tensor y = RefConv(in[0], in[1], dw, true);
            for (int64_t i = 0; i < y.NumElements(); ++i)
              y.data<double>()[i] =
                  std::clamp(y.data<double>()[i] + in[2].data<float>()[i % 6], 0.0, 6.0);
            return ToFloat(y);
          })
          .Tolerance(1e-5)
          .Build());
  // The integer products of int8 bundles (kernels/int8_product_ops.cc): the FakeQuant range
  // of their input in attrs, int8-level weights; signed and unsigned inputs past the range.
  const ConvSpec q8{Shape{2, 6, 6, 8}, Shape{3, 3, 8, 16}, 2};
  c.push_back(ConvBuilder("_KilnInt8Conv2D", "_KilnInt8Conv2D BiasAdd Relu signed", q8)
                  .StringList("fused_ops", {"BiasAdd", "Relu"})
                  .Int("num_args", 1)
                  .Float("fq_min", -2.f)
                  .Float("fq_max", 2.f)
                  .Bool("fq_narrow_range", true)
                  .Input(RandomOf(DType::kFloat, q8.input, NextSeed(seed), -2.5, 2.5))
                  .ConstInput(Int8Levels(q8.filter, 16, false, NextSeed(seed)))
                  .ConstInput(RandomOf(DType::kFloat, Shape{16}, NextSeed(seed)))
                  .Reference1([q8](const std::vector<Tensor>& in) {
                    Tensor y = RefConv(FakeQuantRef(in[0], -2.f, 2.f, true), in[1], q8, false);
                    AddBiasRelu(&y, in[2]);
                    return ToFloat(y);
                  })
                  .Tolerance(1e-5)
                  .Build());
  // A batch norm's shift folded into the bias can be thousands of times the sum: the kernel
  // hands oneDNN bias / scale, which must not round the sum away. (The bias is an input here,
  // divided on each call; the other cases' constant biases are divided once.)
  c.push_back(ConvBuilder("_KilnInt8Conv2D", "_KilnInt8Conv2D large folded shift", q8)
                  .StringList("fused_ops", {"BiasAdd", "Relu"})
                  .Int("num_args", 1)
                  .Float("fq_min", -2.f)
                  .Float("fq_max", 2.f)
                  .Bool("fq_narrow_range", true)
                  .Input(RandomOf(DType::kFloat, q8.input, NextSeed(seed), -2.5, 2.5))
                  .ConstInput(Int8Levels(q8.filter, 16, false, NextSeed(seed)))
                  .Input(RandomOf(DType::kFloat, Shape{16}, NextSeed(seed), -3000, 3000))
                  .Reference1([q8](const std::vector<Tensor>& in) {
                    Tensor y = RefConv(FakeQuantRef(in[0], -2.f, 2.f, true), in[1], q8, false);
                    AddBiasRelu(&y, in[2]);
                    return ToFloat(y);
                  })
                  .Tolerance(1e-5)
                  .Build());
  const ConvSpec q8dw{Shape{1, 7, 7, 6}, Shape{3, 3, 6, 2}};
  c.push_back(
      ConvBuilder("_KilnInt8DepthwiseConv2dNative", "_KilnInt8DepthwiseConv2dNative unsigned", q8dw)
          .Float("fq_min", 0.f)
          .Float("fq_max", 1.5f)
          .Bool("fq_narrow_range", false)
          .Input(RandomOf(DType::kFloat, q8dw.input, NextSeed(seed), -0.5, 2))
          .ConstInput(Int8Levels(q8dw.filter, 12, false, NextSeed(seed)))
          .Reference1([q8dw](const std::vector<Tensor>& in) {
            return ToFloat(RefConv(FakeQuantRef(in[0], 0.f, 1.5f, false), in[1], q8dw, true));
          })
          .Tolerance(1e-5)
          .Build());
  for (const bool transpose_b : {false, true}) {
    const Shape w = transpose_b ? Shape{12, 40} : Shape{40, 12};
    c.push_back(OpCaseBuilder("_KilnInt8MatMul", std::string("_KilnInt8MatMul BiasAdd Relu6") +
                                                     (transpose_b ? " transpose_b" : ""))
                    .T(DType::kFloat)
                    .Bool("transpose_b", transpose_b)
                    .StringList("fused_ops", {"BiasAdd", "Relu6"})
                    .Int("num_args", 1)
                    .Float("fq_min", -1.f)
                    .Float("fq_max", 1.f)
                    .Bool("fq_narrow_range", true)
                    .Input(RandomOf(DType::kFloat, Shape{5, 40}, NextSeed(seed), -1.2, 1.2))
                    .ConstInput(Int8Levels(w, 12, transpose_b, NextSeed(seed)))
                    .ConstInput(RandomOf(DType::kFloat, Shape{12}, NextSeed(seed)))
                    .Reference1([transpose_b](const std::vector<Tensor>& in) {
                      const Tensor x = FakeQuantRef(in[0], -1.f, 1.f, true);
                      Tensor y(DType::kFloat, Shape{5, 12});
                      for (int64_t r = 0; r < 5; ++r)
                        for (int64_t o = 0; o < 12; ++o) {
                          double sum = in[2].data<float>()[o];
                          for (int64_t k = 0; k < 40; ++k)
                            sum += double{x.data<float>()[r * 40 + k]} *
                                   in[1].data<float>()[transpose_b ? o * 40 + k : k * 12 + o];
                          y.data<float>()[r * 12 + o] =
                              static_cast<float>(std::clamp(sum, 0.0, 6.0));
                        }
                      return y;
                    })
                    .Tolerance(1e-5)
                    .Build());
  }
  // The batched form (BatchMatMulV2 of [..., k] by a [k, n] weight): rows of every batch.
  c.push_back(OpCaseBuilder("_KilnInt8MatMul", "_KilnInt8MatMul batched unsigned")
                  .T(DType::kFloat)
                  .Bool("batched", true)
                  .Float("fq_min", 0.f)
                  .Float("fq_max", 2.f)
                  .Bool("fq_narrow_range", false)
                  .Input(RandomOf(DType::kFloat, Shape{2, 3, 24}, NextSeed(seed), -0.5, 2.5))
                  .ConstInput(Int8Levels(Shape{24, 7}, 7, false, NextSeed(seed)))
                  .Reference1([](const std::vector<Tensor>& in) {
                    const Tensor x = FakeQuantRef(in[0], 0.f, 2.f, false);
                    Tensor y(DType::kFloat, Shape{2, 3, 7});
                    for (int64_t r = 0; r < 6; ++r)
                      for (int64_t o = 0; o < 7; ++o) {
                        double sum = 0;
                        for (int64_t k = 0; k < 24; ++k)
                          sum +=
                              double{x.data<float>()[r * 24 + k]} * in[1].data<float>()[k * 7 + o];
                        y.data<float>()[r * 7 + o] = static_cast<float>(sum);
                      }
                    return y;
                  })
                  .Tolerance(1e-5)
                  .Build());
  // Chained products (graph/fusion_int8.cc): levels in as bytes, levels of the next range out.
  const ConvSpec lv{Shape{2, 6, 6, 8}, Shape{3, 3, 8, 16}, 2};
  c.push_back(ConvBuilder("_KilnInt8Conv2D", "_KilnInt8Conv2D levels in, levels out", lv)
                  .StringList("fused_ops", {"BiasAdd", "Relu"})
                  .Int("num_args", 1)
                  .Float("fq_min", 0.f)
                  .Float("fq_max", 255 * kInStep)
                  .Bool("fq_narrow_range", false)
                  .Bool("input_levels", true)
                  .Float("out_fq_min", 0.f)
                  .Float("out_fq_max", 255 * kOutStep)
                  .Bool("out_fq_narrow_range", false)
                  .Input(RandomOf(DType::kUInt8, lv.input, NextSeed(seed), 0, 8))
                  .ConstInput(GridWeights(lv.filter, 16, NextSeed(seed)))
                  .ConstInput(OffGridBias(16, NextSeed(seed)))
                  .Reference1([lv](const std::vector<Tensor>& in) {
                    Tensor y = RefConv(LevelsAsFloat(in[0], kInStep), in[1], lv, false);
                    AddBiasRelu(&y, in[2]);
                    return AsLevels(y, kOutStep, 0, 255, DType::kUInt8);
                  })
                  .Build());
  // Levels out behind ReLU6 and leaky ReLU: the kernel folds the output step into the scales
  // and clips levels (or lets the bytes saturate). ReLU6 into a range wider than 6 clips at
  // 6 / step, into a narrower one at the top level; leaky ReLU (alpha 1/4) into signed levels.
  struct LevelsOut {
    const char* act;
    float out_max;
    bool out_signed;
  };
  for (const LevelsOut& t :
       {LevelsOut{"Relu6", 255.f / 32, false}, LevelsOut{"Relu6", 255 * kOutStep, false},
        LevelsOut{"LeakyRelu", 127.f / 32, true}}) {
    const float step = t.out_signed ? t.out_max / 127 : t.out_max / 255;
    const std::string act = t.act;
    const bool out_signed = t.out_signed;
    OpCaseBuilder b = ConvBuilder(
        "_KilnInt8Conv2D",
        "_KilnInt8Conv2D levels in, " + act + " levels out, max " + std::to_string(t.out_max), lv);
    b.StringList("fused_ops", {"BiasAdd", act})
        .Int("num_args", 1)
        .Float("fq_min", 0.f)
        .Float("fq_max", 255 * kInStep)
        .Bool("fq_narrow_range", false)
        .Bool("input_levels", true)
        .Float("out_fq_min", out_signed ? -t.out_max : 0.f)
        .Float("out_fq_max", t.out_max)
        .Bool("out_fq_narrow_range", out_signed);
    if (act == "LeakyRelu") b.Float("leakyrelu_alpha", 0.25f);
    c.push_back(b.Input(RandomOf(DType::kUInt8, lv.input, NextSeed(seed), 0, 64))
                    .ConstInput(GridWeights(lv.filter, 16, NextSeed(seed)))
                    .ConstInput(OffGridBias(16, NextSeed(seed)))
                    .Reference1([lv, act, step, out_signed](const std::vector<Tensor>& in) {
                      Tensor y = RefConv(LevelsAsFloat(in[0], kInStep), in[1], lv, false);
                      for (int64_t i = 0; i < y.NumElements(); ++i) {
                        double& v = y.data<double>()[i];
                        v += in[2].data<float>()[i % 16];
                        v = act == "Relu6" ? std::clamp(v, 0.0, 6.0) : (v < 0 ? v / 4 : v);
                      }
                      return out_signed ? AsLevels(y, step, -127, 127, DType::kInt8)
                                        : AsLevels(y, step, 0, 255, DType::kUInt8);
                    })
                    .Build());
  }
  // The weights as a serving plan stores them: int8 levels, their scales in attr weight_scales.
  {
    const Tensor w = GridWeights(lv.filter, 16, NextSeed(seed));
    Tensor levels(DType::kInt8, w.shape());
    for (int64_t i = 0; i < w.NumElements(); ++i)
      levels.data<int8_t>()[i] = static_cast<int8_t>(w.data<float>()[i] * 256);
    c.push_back(ConvBuilder("_KilnInt8Conv2D", "_KilnInt8Conv2D int8 weights with their scales", lv)
                    .StringList("fused_ops", {"BiasAdd", "Relu"})
                    .Int("num_args", 1)
                    .Float("fq_min", 0.f)
                    .Float("fq_max", 255 * kInStep)
                    .Bool("fq_narrow_range", false)
                    .FloatList("weight_scales", std::vector<float>(16, 1.f / 256))
                    .Input(RandomOf(DType::kFloat, lv.input, NextSeed(seed), -0.5, 8))
                    .ConstInput(levels)
                    .ConstInput(OffGridBias(16, NextSeed(seed)))
                    .Reference1([lv, w](const std::vector<Tensor>& in) {
                      Tensor y =
                          RefConv(FakeQuantRef(in[0], 0.f, 255 * kInStep, false), w, lv, false);
                      AddBiasRelu(&y, in[2]);
                      return ToFloat(y);
                    })
                    .Tolerance(1e-5)
                    .Build());
  }
  const ConvSpec lvdw{Shape{1, 7, 7, 6}, Shape{3, 3, 6, 2}};
  c.push_back(ConvBuilder("_KilnInt8DepthwiseConv2dNative",
                          "_KilnInt8DepthwiseConv2dNative signed levels in, float out", lvdw)
                  .Float("fq_min", -127 * kInStep)
                  .Float("fq_max", 127 * kInStep)
                  .Bool("fq_narrow_range", true)
                  .Bool("input_levels", true)
                  .Input(RandomOf(DType::kInt8, lvdw.input, NextSeed(seed), -127, 127))
                  .ConstInput(GridWeights(lvdw.filter, 12, NextSeed(seed)))
                  .Reference1([lvdw](const std::vector<Tensor>& in) {
                    return ToFloat(RefConv(LevelsAsFloat(in[0], kInStep), in[1], lvdw, true));
                  })
                  .Build());
  for (const bool batched : {false, true}) {
    OpCaseBuilder b("_KilnInt8MatMul", std::string("_KilnInt8MatMul float in, signed levels out") +
                                           (batched ? " batched" : ""));
    b.T(DType::kFloat)
        .Float("fq_min", -127 * kInStep)
        .Float("fq_max", 127 * kInStep)
        .Bool("fq_narrow_range", true)
        .Float("out_fq_min", -127 * kOddStep)
        .Float("out_fq_max", 127 * kOddStep)
        .Bool("out_fq_narrow_range", true);
    // Inputs on the levels' grid, a few past the range (clamped); a batched product has no bias.
    Tensor x = RandomOf(DType::kFloat, Shape{3, 4, 40}, NextSeed(seed), -4, 4);
    for (int64_t i = 0; i < x.NumElements(); ++i)
      x.data<float>()[i] = std::nearbyint(x.data<float>()[i]) * kInStep * (i % 7 == 0 ? 40 : 1);
    if (batched) {
      b.Bool("batched", true).Input(x);
    } else {
      b.StringList("fused_ops", {"BiasAdd"}).Int("num_args", 1);
      b.Input(x.Reshaped(Shape{12, 40}));
    }
    b.ConstInput(GridWeights(Shape{40, 12}, 12, NextSeed(seed)));
    Tensor bias = RandomOf(DType::kFloat, Shape{12}, NextSeed(seed), -2000, 2000);
    for (int64_t i = 0; i < 12; ++i)
      bias.data<float>()[i] = batched ? 0.f : std::nearbyint(bias.data<float>()[i]) / 8192;
    if (!batched) b.ConstInput(bias);
    c.push_back(b.Reference1([batched, bias](const std::vector<Tensor>& in) {
                   const Tensor xq = FakeQuantRef(in[0], -127 * kInStep, 127 * kInStep, true);
                   Tensor y(DType::kDouble, batched ? Shape{3, 4, 12} : Shape{12, 12});
                   for (int64_t r = 0; r < 12; ++r)
                     for (int64_t o = 0; o < 12; ++o) {
                       double sum = bias.data<float>()[o];
                       for (int64_t k = 0; k < 40; ++k)
                         sum +=
                             double{xq.data<float>()[r * 40 + k]} * in[1].data<float>()[k * 12 + o];
                       y.data<double>()[r * 12 + o] = sum;
                     }
                   return AsLevels(y, kOddStep, -127, 127, DType::kInt8);
                 }).Build());
  }
  // Pooling: windows with and without padding (average leaves padding out); with a NaN in the
  // input, max pooling skips it as TF's kernel does (the reference's std::max(acc, NaN) keeps
  // acc) and average pooling gives NaN.
  for (bool max : {true, false}) {
    for (auto [k, st, pad, nan] :
         std::vector<std::tuple<int64_t, int64_t, std::string, bool>>{{2, 2, "VALID", false},
                                                                      {3, 2, "SAME", false},
                                                                      {3, 1, "SAME", false},
                                                                      {3, 2, "SAME", true}}) {
      const int64_t kk = k, ss = st;
      const std::string pp = pad;
      Tensor input = RandomOf(DType::kFloat, Shape{2, 7, 6, 5}, NextSeed(seed));
      if (nan) input.data<float>()[(1 * 6 + 2) * 5 + 3] = std::numeric_limits<float>::quiet_NaN();
      c.push_back(OpCaseBuilder(max ? "MaxPool" : "AvgPool",
                                std::string(max ? "MaxPool" : "AvgPool") + (nan ? " NaN" : ""))
                      .T(DType::kFloat)
                      .IntList("ksize", {1, k, k, 1})
                      .IntList("strides", {1, st, st, 1})
                      .String("padding", pad)
                      .Input(input)
                      .Reference1([max, kk, ss, pp](const std::vector<Tensor>& in) {
                        const Tensor& x = in[0];
                        const int64_t h = 7, w = 6;
                        const int64_t oh = pp == "VALID" ? (h - kk) / ss + 1 : (h + ss - 1) / ss;
                        const int64_t ow = pp == "VALID" ? (w - kk) / ss + 1 : (w + ss - 1) / ss;
                        const int64_t ph =
                            pp == "VALID" ? 0 : std::max<int64_t>(0, (oh - 1) * ss + kk - h) / 2;
                        const int64_t pw =
                            pp == "VALID" ? 0 : std::max<int64_t>(0, (ow - 1) * ss + kk - w) / 2;
                        Tensor out(DType::kFloat, Shape{2, oh, ow, 5});
                        for (int64_t b = 0; b < 2; ++b)
                          for (int64_t y = 0; y < oh; ++y)
                            for (int64_t xx = 0; xx < ow; ++xx)
                              for (int64_t ch = 0; ch < 5; ++ch) {
                                double acc = max ? -1e30 : 0;
                                int count = 0;
                                for (int64_t ky = 0; ky < kk; ++ky)
                                  for (int64_t kx = 0; kx < kk; ++kx) {
                                    const int64_t iy = y * ss - ph + ky, ix = xx * ss - pw + kx;
                                    if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                                    const double v =
                                        x.data<float>()[((b * h + iy) * w + ix) * 5 + ch];
                                    acc = max ? std::max(acc, v) : acc + v;
                                    ++count;
                                  }
                                out.data<float>()[((b * oh + y) * ow + xx) * 5 + ch] =
                                    static_cast<float>(max ? acc : acc / count);
                              }
                        return out;
                      })
                      .Tolerance(1e-6)
                      .Build());
    }
  }
  return c;
}

}  // namespace kiln::testing
