// Conv2D, DepthwiseConv2dNative, MaxPool and AvgPool against plain-loop references: SAME,
// VALID and EXPLICIT padding, odd sizes with stride 2, dilation 2, empty batches; shape
// inference with unknown dims; and the attr / shape error paths.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <string>

#include "exec/kernel_test_util.h"

namespace kiln::exec {
namespace {

using testing::CheckClose;
using testing::CheckError;
using testing::OpRunner;
using testing::Random;

struct Spatial {
  int64_t out, pad_before;
};

// Output size and leading padding along one dim, from the definitions (ceil divisions).
Spatial RefWindow(const std::string& padding, int64_t in, int64_t k, int64_t stride,
                  int64_t dilation, int64_t pad_before = 0, int64_t pad_after = 0) {
  const int64_t ek = (k - 1) * dilation + 1;
  if (padding == "VALID") {
    return {in >= ek ? (in - ek) / stride + 1 : 0, 0};
  }
  if (padding == "SAME") {
    const int64_t out = (in + stride - 1) / stride;
    const int64_t total = std::max<int64_t>((out - 1) * stride + ek - in, 0);
    return {out, total / 2};
  }
  const int64_t padded = in + pad_before + pad_after;
  return {padded >= ek ? (padded - ek) / stride + 1 : 0, pad_before};
}

struct ConvCase {
  Shape input;   // NHWC
  Shape filter;  // HWIO (depthwise: H, W, C, multiplier)
  std::string padding;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  std::vector<int64_t> explicit_paddings = {};
};

template <typename T>
Tensor RefConv(const Tensor& x, const Tensor& f, const ConvCase& c, bool depthwise) {
  const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), ci = x.dim(3);
  const int64_t kh = f.dim(0), kw = f.dim(1), co = depthwise ? ci * f.dim(3) : f.dim(3);
  const auto& ep = c.explicit_paddings;
  Spatial sy =
      RefWindow(c.padding, h, kh, c.sh, c.dh, ep.empty() ? 0 : ep[2], ep.empty() ? 0 : ep[3]);
  Spatial sx =
      RefWindow(c.padding, w, kw, c.sw, c.dw, ep.empty() ? 0 : ep[4], ep.empty() ? 0 : ep[5]);
  Tensor out(kDTypeOf<T>, Shape{n, sy.out, sx.out, co});
  const T* xp = x.data<T>();
  const T* fp = f.data<T>();
  T* op = out.data<T>();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oy = 0; oy < sy.out; ++oy)
      for (int64_t ox = 0; ox < sx.out; ++ox)
        for (int64_t o = 0; o < co; ++o) {
          double acc = 0;
          for (int64_t ky = 0; ky < kh; ++ky)
            for (int64_t kx = 0; kx < kw; ++kx) {
              const int64_t iy = oy * c.sh - sy.pad_before + ky * c.dh;
              const int64_t ix = ox * c.sw - sx.pad_before + kx * c.dw;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
              if (depthwise) {
                const int64_t mult = f.dim(3), i = o / mult, m = o % mult;
                acc += double(xp[((b * h + iy) * w + ix) * ci + i]) *
                       fp[((ky * kw + kx) * ci + i) * mult + m];
              } else {
                for (int64_t i = 0; i < ci; ++i) {
                  acc += double(xp[((b * h + iy) * w + ix) * ci + i]) *
                         fp[((ky * kw + kx) * ci + i) * co + o];
                }
              }
            }
          op[((b * sy.out + oy) * sx.out + ox) * co + o] = static_cast<T>(acc);
        }
  return out;
}

OpRunner ConvRunner(const std::string& op, DType t, const ConvCase& c) {
  OpRunner r(op, "conv");
  r.T(t).String("padding", c.padding).IntList("strides", {1, c.sh, c.sw, 1});
  if (c.dh != 1 || c.dw != 1) r.IntList("dilations", {1, c.dh, c.dw, 1});
  if (!c.explicit_paddings.empty()) r.IntList("explicit_paddings", c.explicit_paddings);
  return r;
}

const std::vector<ConvCase>& ConvCases() {
  static const std::vector<ConvCase> cases = {
      {{1, 5, 5, 1}, {3, 3, 1, 1}, "VALID"},
      {{2, 5, 5, 3}, {3, 3, 3, 4}, "SAME"},
      {{2, 7, 6, 3}, {3, 3, 3, 2}, "SAME", 2, 2},
      {{1, 8, 8, 2}, {3, 3, 2, 5}, "SAME", 2, 2},
      {{1, 9, 7, 2}, {4, 2, 2, 3}, "SAME", 2, 3},
      {{1, 9, 7, 2}, {4, 2, 2, 3}, "VALID", 2, 3},
      {{2, 9, 9, 2}, {3, 3, 2, 3}, "SAME", 1, 1, 2, 2},
      {{1, 10, 9, 3}, {3, 2, 3, 2}, "VALID", 1, 2, 2, 3},
      {{1, 11, 11, 2}, {3, 3, 2, 2}, "SAME", 2, 2, 2, 2},
      {{3, 4, 5, 6}, {1, 1, 6, 7}, "VALID"},  // pointwise: no patch copy
      {{1, 4, 5, 6}, {1, 1, 6, 7}, "SAME", 2, 2},
      {{0, 5, 5, 2}, {3, 3, 2, 2}, "SAME"},
      {{1, 2, 2, 1}, {3, 3, 1, 1}, "VALID", 2, 2},  // output 0 x 0
      {{1, 5, 6, 2}, {3, 3, 2, 2}, "EXPLICIT", 1, 1, 1, 1, {0, 0, 1, 2, 0, 3, 0, 0}},
      {{1, 6, 5, 2}, {2, 3, 2, 3}, "EXPLICIT", 2, 1, 1, 2, {0, 0, 2, 0, 1, 1, 0, 0}},
      {{1, 3, 3, 1}, {5, 5, 1, 1}, "SAME"},  // filter larger than the image
  };
  return cases;
}

template <typename T>
void CheckConvCases(const std::string& op, bool depthwise) {
  uint32_t seed = 1;
  for (const ConvCase& c : ConvCases()) {
    CAPTURE(op);
    CAPTURE(c.input.ToString());
    CAPTURE(c.filter.ToString());
    CAPTURE(c.padding);
    CAPTURE(c.sh);
    CAPTURE(c.dh);
    Tensor x = Random<T>(c.input, seed++);
    Shape fs = c.filter;
    if (depthwise) fs.set_dim(2, c.input.dim(3));
    Tensor f = Random<T>(fs, seed++);
    OpRunner r = ConvRunner(op, kDTypeOf<T>, c);
    r.Input(x).Input(f);
    auto got = r.Run1();
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    Tensor want = RefConv<T>(x, f, c, depthwise);
    CheckClose<T>(*got, want, std::is_same_v<T, float> ? 1e-4 : 1e-12);
    CHECK(r.output_specs()[0].shape == PartialShape(want.shape()));
  }
}

TEST_CASE("Conv2D matches a direct convolution: float32") {
  CheckConvCases<float>("Conv2D", false);
}
TEST_CASE("Conv2D matches a direct convolution: float64") {
  CheckConvCases<double>("Conv2D", false);
}
TEST_CASE("DepthwiseConv2dNative matches a direct convolution") {
  CheckConvCases<float>("DepthwiseConv2dNative", true);
  CheckConvCases<double>("DepthwiseConv2dNative", true);
}

TEST_CASE("Conv2D on a larger image (several patch chunks' worth of work)") {
  ConvCase c{{2, 33, 31, 8}, {5, 5, 8, 16}, "SAME", 2, 1};
  Tensor x = Random<float>(c.input, 5);
  Tensor f = Random<float>(c.filter, 6, -0.5, 0.5);
  auto got = ConvRunner("Conv2D", DType::kFloat, c).Input(x).Input(f).Run1();
  REQUIRE(got.ok());
  CheckClose<float>(*got, RefConv<float>(x, f, c, false), 1e-4);
}

TEST_CASE("Conv2D infers shapes with unknown dims") {
  OpRunner r = ConvRunner("Conv2D", DType::kFloat, {{}, {}, "SAME", 2, 2});
  r.InputSpec({DType::kFloat, PartialShape{-1, 7, -1, 3}})
      .InputSpec({DType::kFloat, PartialShape{3, 3, 3, 8}});
  REQUIRE(r.Prepare().ok());
  CHECK(r.output_specs()[0].shape == PartialShape{-1, 4, -1, 8});
  OpRunner v = ConvRunner("Conv2D", DType::kDouble, {{}, {}, "VALID", 1, 1, 2, 2});
  v.InputSpec({DType::kDouble, PartialShape{5, 9, 10, 3}})
      .InputSpec({DType::kDouble, PartialShape{3, -1, 3, 8}});
  REQUIRE(v.Prepare().ok());
  CHECK(v.output_specs()[0].shape == PartialShape{5, 5, -1, 8});
}

TEST_CASE("Conv2D errors name the attr or shape at fault") {
  auto prepare = [](OpRunner r, const Shape& in = Shape{1, 5, 5, 2},
                    const Shape& filter = Shape{3, 3, 2, 4}, DType t = DType::kFloat) {
    r.InputSpec({t, in}).InputSpec({t, filter});
    return r.Prepare();
  };
  ConvCase same{{}, {}, "SAME"};
  {
    OpRunner r = ConvRunner("Conv2D", DType::kFloat, same);
    r.String("data_format", "NCHW");
    Status s = prepare(r);
    CheckError(s, {"node 'conv'", "data_format \"NCHW\"", "NHWC"});
    CHECK(s.code() == StatusCode::kUnimplemented);
  }
  {
    OpRunner r = ConvRunner("Conv2D", DType::kFloat, same);
    r.String("data_format", "HWNC");
    CheckError(prepare(r), {"attr 'data_format'", "HWNC"});
  }
  CheckError(prepare(ConvRunner("Conv2D", DType::kFloat, {{}, {}, "FULL"})),
             {"attr 'padding'", "\"FULL\""});
  {
    OpRunner r("Conv2D", "conv");
    r.T(DType::kFloat).String("padding", "SAME").IntList("strides", {1, 2, 2});
    CheckError(prepare(r), {"attr 'strides'", "4 entries", "[1, 2, 2]"});
  }
  {
    OpRunner r("Conv2D", "conv");
    r.T(DType::kFloat).String("padding", "SAME").IntList("strides", {2, 1, 1, 1});
    CheckError(prepare(r), {"attr 'strides'", "batch and depth"});
  }
  {
    OpRunner r = ConvRunner("Conv2D", DType::kFloat, same);
    r.IntList("dilations", {1, 0, 1, 1});
    CheckError(prepare(r), {"attr 'dilations'", "positive"});
  }
  CheckError(prepare(ConvRunner("Conv2D", DType::kFloat, same), {1, 5, 5, 3}),
             {"input depth", "(1, 5, 5, 3)", "(3, 3, 2, 4)"});
  // No input channels against a filter with some: an error, not a division by zero groups.
  CheckError(prepare(ConvRunner("Conv2D", DType::kFloat, same), {1, 5, 5, 0}, {3, 3, 2, 4}),
             {"input depth is 0 but the filter's in_channels is 2", "(1, 5, 5, 0)"});
  // Grouped: 2 groups cannot split 3 output channels (TF's rule and message).
  CheckError(prepare(ConvRunner("Conv2D", DType::kFloat, same), {1, 5, 5, 4}, {3, 3, 2, 3}),
             {"output depth must be evenly divisible by number of groups: 3 vs 2", "(1, 5, 5, 4)",
              "(3, 3, 2, 3)"});
  CheckError(prepare(ConvRunner("Conv2D", DType::kFloat, same), {1, 5, 5, 4}, {3, 3, 0, 3}),
             {"input depth must be evenly divisible by filter depth: 4 vs 0"});
  CheckError(prepare(ConvRunner("Conv2D", DType::kFloat, same), {1, 5, 5}),
             {"input 'input'", "expected rank 4"});
  CheckError(
      prepare(ConvRunner("Conv2D", DType::kInt64, same), {1, 5, 5, 2}, {3, 3, 2, 4}, DType::kInt64),
      {"attr 'T'", "int64", "not supported"});
  CheckError(
      prepare(ConvRunner("Conv2D", DType::kFloat, {{}, {}, "VALID"}), {1, 2, 5, 2}, {5, 3, 2, 4}),
      {"output size would be negative", "input size: 2", "effective filter size: 5"});
  CheckError(
      prepare(ConvRunner("Conv2D", DType::kFloat, {{}, {}, "EXPLICIT", 1, 1, 1, 1, {0, 0, 1, 1}})),
      {"attr 'explicit_paddings'", "8 entries"});
  CheckError(prepare(ConvRunner("Conv2D", DType::kFloat,
                                {{}, {}, "EXPLICIT", 1, 1, 1, 1, {1, 0, 1, 1, 0, 0, 0, 0}})),
             {"batch and depth dimensions cannot be padded"});
  CheckError(prepare(ConvRunner("Conv2D", DType::kFloat,
                                {{}, {}, "SAME", 1, 1, 1, 1, {0, 0, 1, 1, 0, 0, 0, 0}})),
             {"must be empty unless padding is \"EXPLICIT\""});
  // The runtime check when prepare saw unknown shapes.
  OpRunner r = ConvRunner("Conv2D", DType::kFloat, same);
  r.Input(Random<float>({1, 4, 4, 3}, 1), {DType::kFloat, PartialShape::UnknownRank()})
      .Input(Random<float>({3, 3, 2, 1}, 2), {DType::kFloat, PartialShape::UnknownRank()});
  CheckError(r.Run1().status(), {"node 'conv'", "input depth", "(1, 4, 4, 3)"});
}

// ---- pooling -----------------------------------------------------------------------------------

struct PoolCase {
  Shape input;
  int64_t kh, kw, sh, sw;
  std::string padding;
};

template <typename T>
Tensor RefPool(const Tensor& x, const PoolCase& c, bool is_max) {
  const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), ch = x.dim(3);
  Spatial sy = RefWindow(c.padding, h, c.kh, c.sh, 1);
  Spatial sx = RefWindow(c.padding, w, c.kw, c.sw, 1);
  Tensor out(kDTypeOf<T>, Shape{n, sy.out, sx.out, ch});
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oy = 0; oy < sy.out; ++oy)
      for (int64_t ox = 0; ox < sx.out; ++ox)
        for (int64_t k = 0; k < ch; ++k) {
          T best = std::numeric_limits<T>::lowest();
          double sum = 0;
          int count = 0;
          for (int64_t ky = 0; ky < c.kh; ++ky)
            for (int64_t kx = 0; kx < c.kw; ++kx) {
              const int64_t iy = oy * c.sh - sy.pad_before + ky;
              const int64_t ix = ox * c.sw - sx.pad_before + kx;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
              const T v = x.data<T>()[((b * h + iy) * w + ix) * ch + k];
              best = std::max(best, v);
              sum += v;
              ++count;
            }
          out.data<T>()[((b * sy.out + oy) * sx.out + ox) * ch + k] =
              is_max ? best : static_cast<T>(sum / count);
        }
  return out;
}

OpRunner PoolRunner(const std::string& op, DType t, const PoolCase& c) {
  OpRunner r(op, "pool");
  r.T(t)
      .String("padding", c.padding)
      .IntList("ksize", {1, c.kh, c.kw, 1})
      .IntList("strides", {1, c.sh, c.sw, 1});
  return r;
}

const std::vector<PoolCase>& PoolCases() {
  static const std::vector<PoolCase> cases = {
      {{1, 4, 4, 1}, 2, 2, 2, 2, "VALID"}, {{2, 5, 5, 3}, 2, 2, 2, 2, "SAME"},
      {{2, 5, 5, 3}, 3, 3, 2, 2, "SAME"},  {{1, 7, 6, 2}, 3, 2, 2, 3, "SAME"},
      {{1, 7, 6, 2}, 3, 2, 2, 3, "VALID"}, {{1, 5, 5, 4}, 3, 3, 1, 1, "SAME"},
      {{3, 6, 9, 5}, 1, 1, 1, 1, "VALID"}, {{0, 4, 4, 2}, 2, 2, 2, 2, "SAME"},
      {{1, 3, 3, 2}, 5, 5, 1, 1, "SAME"},  {{1, 9, 8, 17}, 4, 3, 3, 2, "SAME"},
  };
  return cases;
}

template <typename T>
void CheckPoolCases(const std::string& op, bool is_max) {
  uint32_t seed = 40;
  for (const PoolCase& c : PoolCases()) {
    CAPTURE(op);
    CAPTURE(c.input.ToString());
    CAPTURE(c.padding);
    Tensor x = Random<T>(c.input, seed++, -100, 100);
    OpRunner r = PoolRunner(op, kDTypeOf<T>, c);
    r.Input(x);
    auto got = r.Run1();
    REQUIRE_MESSAGE(got.ok(), got.status().ToString());
    Tensor want = RefPool<T>(x, c, is_max);
    CheckClose<T>(*got, want);
    CHECK(r.output_specs()[0].shape == PartialShape(want.shape()));
  }
}

TEST_CASE("MaxPool matches a reference") {
  CheckPoolCases<float>("MaxPool", true);
  CheckPoolCases<double>("MaxPool", true);
  CheckPoolCases<int32_t>("MaxPool", true);
  CheckPoolCases<int64_t>("MaxPool", true);
}

TEST_CASE("AvgPool divides by the real (unpadded) window size") {
  CheckPoolCases<float>("AvgPool", false);
  CheckPoolCases<double>("AvgPool", false);
  // A 2x2 SAME window on a 3x3 image: the last row/column average fewer elements.
  Tensor x = testing::Make<float>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 3, 3, 1});
  auto got = PoolRunner("AvgPool", DType::kFloat, {{}, 2, 2, 2, 2, "SAME"}).Input(x).Run1();
  REQUIRE(got.ok());
  CheckClose<float>(*got, testing::Make<float>({3, 4.5f, 7.5f, 9}, {1, 2, 2, 1}));
}

TEST_CASE("Pooling errors and shape inference") {
  OpRunner r = PoolRunner("MaxPool", DType::kFloat, {{}, 3, 3, 2, 2, "SAME"});
  r.InputSpec({DType::kFloat, PartialShape{-1, 9, -1, 4}});
  REQUIRE(r.Prepare().ok());
  CHECK(r.output_specs()[0].shape == PartialShape{-1, 5, -1, 4});

  OpRunner nchw = PoolRunner("AvgPool", DType::kFloat, {{}, 2, 2, 2, 2, "VALID"});
  nchw.String("data_format", "NCHW").InputSpec({DType::kFloat, Shape{1, 2, 4, 4}});
  Status s = nchw.Prepare();
  CheckError(s, {"node 'pool'", "(AvgPool)", "data_format \"NCHW\""});
  CHECK(s.code() == StatusCode::kUnimplemented);

  OpRunner depth("MaxPool", "pool");
  depth.T(DType::kFloat)
      .String("padding", "VALID")
      .IntList("ksize", {1, 1, 1, 2})
      .IntList("strides", {1, 1, 1, 2})
      .InputSpec({DType::kFloat, Shape{1, 2, 2, 4}});
  CheckError(depth.Prepare(), {"attr 'ksize'", "[1, 1, 1, 2]", "batch and depth"});

  OpRunner expl = PoolRunner("MaxPool", DType::kFloat, {{}, 2, 2, 2, 2, "EXPLICIT"});
  expl.InputSpec({DType::kFloat, Shape{1, 4, 4, 1}});
  CheckError(expl.Prepare(), {"attr 'padding'", "\"SAME\" or \"VALID\"", "EXPLICIT"});

  OpRunner avg_int = PoolRunner("AvgPool", DType::kInt32, {{}, 2, 2, 2, 2, "VALID"});
  avg_int.InputSpec({DType::kInt32, Shape{1, 4, 4, 1}});
  CheckError(avg_int.Prepare(), {"attr 'T'", "int32", "float32, float64"});

  OpRunner rank = PoolRunner("MaxPool", DType::kFloat, {{}, 2, 2, 2, 2, "VALID"});
  rank.InputSpec({DType::kFloat, Shape{4, 4, 1}});
  CheckError(rank.Prepare(), {"input 'input'", "expected rank 4", "(4, 4, 1)"});

  OpRunner big = PoolRunner("MaxPool", DType::kFloat, {{}, 5, 1, 1, 1, "VALID"});
  big.InputSpec({DType::kFloat, Shape{1, 3, 4, 1}});
  CheckError(big.Prepare(), {"output size would be negative", "input size: 3"});
}

}  // namespace
}  // namespace kiln::exec
