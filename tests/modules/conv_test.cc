// Conv1D / Conv2D against a plain-loop convolution (strides, dilation, same/valid, groups),
// eagerly and traced; the other convolution layers' variables, shapes and errors. Their
// numbers against Keras are in tests/tf/test_layers_forward.py.
#include "kiln/modules/conv.h"

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "layer_test_util.h"

namespace kiln::modules {
namespace {

using testing::MaxRelDiff;
using testing::Mentions;
using testing::OpsOf;
using testing::RandomTensor;
using trace::Value;
using trace::Values;

struct Geometry {
  int64_t out;
  int64_t pad_before;
};

// TensorFlow's window geometry for one spatial dimension.
Geometry Window(int64_t in, int64_t k, int64_t s, int64_t d, Padding p) {
  const int64_t dk = (k - 1) * d + 1;
  if (p == Padding::kValid) return {(in - dk) / s + 1, 0};
  const int64_t out = (in + s - 1) / s;
  const int64_t total = std::max<int64_t>((out - 1) * s + dk - in, 0);
  return {out, total / 2};
}

// NHWC convolution with a [kh, kw, in / groups, out] kernel, then bias and relu if asked.
Tensor ReferenceConv2D(const Tensor& x, const Tensor& k, const Tensor* bias, int64_t sh, int64_t sw,
                       int64_t dh, int64_t dw, Padding p, int64_t groups, bool relu) {
  const int64_t n = x.shape()[0], h = x.shape()[1], w = x.shape()[2], c = x.shape()[3];
  const int64_t kh = k.shape()[0], kw = k.shape()[1], icg = k.shape()[2], oc = k.shape()[3];
  const Geometry gh = Window(h, kh, sh, dh, p), gw = Window(w, kw, sw, dw, p);
  const int64_t ocg = oc / groups;
  Tensor y(DType::kFloat, Shape{n, gh.out, gw.out, oc});
  auto X = [&](int64_t b, int64_t i, int64_t j, int64_t ch) {
    return x.flat<float>()[((b * h + i) * w + j) * c + ch];
  };
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oy = 0; oy < gh.out; ++oy)
      for (int64_t ox = 0; ox < gw.out; ++ox)
        for (int64_t o = 0; o < oc; ++o) {
          const int64_t g = o / ocg;
          double acc = bias != nullptr ? bias->flat<float>()[o] : 0.0;
          for (int64_t ky = 0; ky < kh; ++ky)
            for (int64_t kx = 0; kx < kw; ++kx) {
              const int64_t iy = oy * sh - gh.pad_before + ky * dh;
              const int64_t ix = ox * sw - gw.pad_before + kx * dw;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
              for (int64_t ci = 0; ci < icg; ++ci) {
                acc += static_cast<double>(X(b, iy, ix, g * icg + ci)) *
                       k.flat<float>()[((ky * kw + kx) * icg + ci) * oc + o];
              }
            }
          const float v = static_cast<float>(acc);
          y.flat<float>()[((b * gh.out + oy) * gw.out + ox) * oc + o] =
              relu ? std::max(v, 0.0f) : v;
        }
  return y;
}

// Gives the bias non-zero values so that BiasAdd is really checked.
Tensor RandomBias(ConvBase& layer, uint32_t seed) {
  Tensor b = RandomTensor(*layer.bias().shape().ToShape(), seed);
  REQUIRE(layer.bias().SetValue(b).ok());
  return b;
}

TEST_CASE("Conv2D matches a plain-loop convolution: strides, dilation, padding, groups") {
  struct Case {
    std::vector<int64_t> kernel, strides, dilation;
    Padding padding;
    int64_t groups;
  };
  const Case cases[] = {
      {{3}, {1}, {1}, Padding::kValid, 1},      {{3}, {1}, {1}, Padding::kSame, 1},
      {{3, 2}, {2, 1}, {1}, Padding::kSame, 1}, {{3}, {2}, {1}, Padding::kValid, 1},
      {{2, 3}, {1}, {2, 1}, Padding::kSame, 1}, {{3}, {1}, {2}, Padding::kValid, 1},
      {{3}, {1}, {1}, Padding::kSame, 2},       {{1}, {2}, {1}, Padding::kSame, 2},
  };
  for (const Case& c : cases) {
    ConvOptions o;
    o.filters = 4;
    o.kernel_size = c.kernel;
    o.strides = c.strides;
    o.dilation_rate = c.dilation;
    o.padding = c.padding;
    o.groups = c.groups;
    o.activation = Activation::kRelu;
    o.seed = 3;
    Conv2D conv(o);
    const Tensor x = RandomTensor(Shape{2, 7, 6, 4}, 11);
    Value y = conv(x);
    REQUIRE(y.ok());
    const std::vector<int64_t>& k = conv.options().kernel_size;
    CHECK(conv.kernel().shape() == PartialShape{k[0], k[1], 4 / c.groups, 4});
    const Tensor bias = RandomBias(conv, 5);
    y = conv(x);
    const std::vector<int64_t>& s = conv.options().strides;
    const std::vector<int64_t>& d = conv.options().dilation_rate;
    const Tensor expected = ReferenceConv2D(x, *conv.kernel().value(), &bias, s[0], s[1], d[0],
                                            d[1], c.padding, c.groups, true);
    CHECK(y.shape() == PartialShape(expected.shape()));
    CHECK(*conv.OutputShape(PartialShape{-1, 7, 6, 4}) ==
          PartialShape{-1, expected.shape()[1], expected.shape()[2], 4});
    CHECK(MaxRelDiff(*y.tensor(), expected) < 1e-5f);
  }
}

TEST_CASE("Conv1D is a Conv2D over one row, emitted as ExpandDims + Conv2D + Squeeze") {
  ConvOptions o;
  o.filters = 3;
  o.kernel_size = {3};
  o.strides = {2};
  o.padding = Padding::kSame;
  o.seed = 1;
  Conv1D conv(o);
  const Tensor x = RandomTensor(Shape{2, 9, 5}, 2);
  Value y = conv(x);
  REQUIRE(y.ok());
  CHECK(conv.kernel().shape() == PartialShape{3, 5, 3});
  CHECK(y.shape() == PartialShape{2, 5, 3});
  const Tensor bias = RandomBias(conv, 9);
  y = conv(x);
  // The same numbers as a Conv2D with a 1 x 3 kernel over (batch, 1, steps, channels).
  const Tensor x4 = x.Reshaped(Shape{2, 1, 9, 5});
  const Tensor k4 = conv.kernel().value()->Reshaped(Shape{1, 3, 5, 3});
  const Tensor expected =
      ReferenceConv2D(x4, k4, &bias, 1, 2, 1, 1, Padding::kSame, 1, /*relu=*/false)
          .Reshaped(Shape{2, 5, 3});
  CHECK(MaxRelDiff(*y.tensor(), expected) < 1e-5f);

  trace::Function f("call", {{"x", DType::kFloat, PartialShape{-1, 9, 5}}},
                    [&conv](const Values& a) { return Values{conv(a[0])}; });
  auto cf = f.GetConcreteFunction();
  REQUIRE(cf.ok());
  const std::vector<std::string> ops = OpsOf(**cf);
  CHECK(testing::Contains(ops, "ExpandDims"));
  CHECK(testing::Contains(ops, "Conv2D"));
  CHECK(testing::Contains(ops, "Squeeze"));
  CHECK((*cf)->outputs()[0].shape == PartialShape{-1, 5, 3});
  auto traced = f(x);
  REQUIRE(traced.ok());
  CHECK(MaxRelDiff((*traced)[0], expected) < 1e-5f);
}

TEST_CASE("Conv2D in a traced function: Conv2D, BiasAdd and the activation under its scope") {
  Conv2D conv(ConvOptions{.filters = 8,
                          .kernel_size = {3},
                          .padding = Padding::kSame,
                          .activation = Activation::kRelu,
                          .seed = 4});
  trace::Function f("call", {{"x", DType::kFloat, PartialShape{-1, 6, 6, 2}}},
                    [&conv](const Values& a) { return Values{conv(a[0])}; });
  auto cf = f.GetConcreteFunction();
  REQUIRE(cf.ok());
  std::vector<std::string> names;
  for (const auto& n : (*cf)->function_def().node_def()) names.push_back(n.name());
  CHECK(OpsOf(**cf) == std::vector<std::string>{"ReadVariableOp", "Conv2D", "ReadVariableOp",
                                                "BiasAdd", "Relu", "Identity"});
  CHECK(names[1] == "conv2d/Conv2D");
  CHECK((*cf)->outputs()[0].shape == PartialShape{-1, 6, 6, 8});
  const Tensor x = RandomTensor(Shape{3, 6, 6, 2}, 8);
  auto traced = f(x);
  REQUIRE(traced.ok());
  CHECK(MaxRelDiff((*traced)[0], *conv(x).tensor()) < 1e-6f);
}

TEST_CASE("convolution layers: Keras's variable names, shapes and parameter counts") {
  Conv2D conv(ConvOptions{.filters = 32, .kernel_size = {5}, .input_shape = {28, 28, 1}});
  REQUIRE(conv.built());
  CHECK(conv.CountParams() == 5 * 5 * 1 * 32 + 32);
  CHECK(conv.built_input_shape() == PartialShape{-1, 28, 28, 1});
  CHECK(*conv.OutputShape(conv.built_input_shape()) == PartialShape{-1, 24, 24, 32});

  DepthwiseConv2D dw(
      ConvOptions{.kernel_size = {3}, .depth_multiplier = 2, .input_shape = {8, 8, 3}});
  REQUIRE(dw.built());
  std::vector<std::string> names;
  for (const auto& [path, v] : dw.named_variables()) names.push_back(path);
  CHECK(names == std::vector<std::string>{"kernel", "bias"});
  CHECK(dw.kernel().shape() == PartialShape{3, 3, 3, 2});
  CHECK(dw.bias().shape() == PartialShape{6});
  CHECK(*dw.OutputShape(PartialShape{-1, 8, 8, 3}) == PartialShape{-1, 6, 6, 6});

  SeparableConv2D sep(ConvOptions{
      .filters = 5, .kernel_size = {3}, .padding = Padding::kSame, .input_shape = {8, 8, 3}});
  names.clear();
  for (const auto& [path, v] : sep.named_variables()) names.push_back(path);
  CHECK(names == std::vector<std::string>{"depthwise_kernel", "pointwise_kernel", "bias"});
  CHECK(sep.pointwise_kernel().shape() == PartialShape{1, 1, 3, 5});
  CHECK(sep.CountParams() == 27 + 15 + 5);

  Conv2DTranspose tr(
      ConvOptions{.filters = 4, .kernel_size = {3}, .strides = {2}, .input_shape = {5, 5, 2}});
  CHECK(tr.kernel().shape() == PartialShape{3, 3, 4, 2});
  CHECK(*tr.OutputShape(PartialShape{-1, 5, 5, 2}) == PartialShape{-1, 11, 11, 4});
  Value y = tr(RandomTensor(Shape{2, 5, 5, 2}, 1));
  REQUIRE(y.ok());
  CHECK(y.shape() == PartialShape{2, 11, 11, 4});
  // A transposed convolution with a dynamic batch size traces (the output size is packed).
  trace::Function f("call", {{"x", DType::kFloat, PartialShape{-1, 5, 5, 2}}},
                    [&tr](const Values& a) { return Values{tr(a[0])}; });
  auto traced = f(RandomTensor(Shape{3, 5, 5, 2}, 2));
  REQUIRE(traced.ok());
  CHECK((*traced)[0].shape() == Shape{3, 11, 11, 4});
}

TEST_CASE("convolution errors name the layer and what it expected") {
  Conv2D conv(16, 3);
  Value bad_rank = conv(RandomTensor(Shape{2, 8, 8}, 1));
  REQUIRE_FALSE(bad_rank.ok());
  CHECK(Mentions(bad_rank.status(), "Conv2D 'conv2d'"));
  CHECK(Mentions(bad_rank.status(), "rank-4 input (batch, height, width, channels)"));
  CHECK(Mentions(bad_rank.status(), "(2, 8, 8)"));

  REQUIRE(conv(RandomTensor(Shape{1, 8, 8, 3}, 1)).ok());
  Value bad_channels = conv(RandomTensor(Shape{1, 8, 8, 4}, 1));
  REQUIRE_FALSE(bad_channels.ok());
  CHECK(Mentions(bad_channels.status(), "built for 3 input channels, got (1, 8, 8, 4)"));

  Value too_small = conv(RandomTensor(Shape{1, 2, 8, 3}, 1));
  REQUIRE_FALSE(too_small.ok());
  CHECK(Mentions(too_small.status(), "too small"));

  // While tracing too: the trace fails with the layer's message.
  trace::Function f("call", {{"x", DType::kFloat, PartialShape{-1, 8, 8, 5}}},
                    [&conv](const Values& a) { return Values{conv(a[0])}; });
  auto traced = f.GetConcreteFunction();
  REQUIRE_FALSE(traced.ok());
  CHECK(Mentions(traced.status(),
                 "Conv2D 'conv2d': built for 3 input channels, got (None, 8, 8, 5)"));

  Conv2D grouped(ConvOptions{.filters = 4, .kernel_size = {1}, .groups = 2});
  Value odd = grouped(RandomTensor(Shape{1, 4, 4, 3}, 1));
  REQUIRE_FALSE(odd.ok());
  CHECK(Mentions(odd.status(), "input channels (3) must be a multiple of groups (2)"));

  Conv2D no_filters(ConvOptions{.kernel_size = {3}});
  CHECK(Mentions(no_filters.status(), "filters must be positive"));
  Conv2D both(ConvOptions{.filters = 1, .kernel_size = {3}, .strides = {2}, .dilation_rate = {2}});
  CHECK(Mentions(both.status(), "cannot be combined with dilation_rate"));
  Conv1D wrong_kernel(ConvOptions{.filters = 1, .kernel_size = {3, 3}});
  CHECK(Mentions(wrong_kernel.status(), "Conv1D 'conv1d': kernel_size: expected 1 or 1 values"));
  DepthwiseConv2D dw_filters(ConvOptions{.filters = 3, .kernel_size = {3}});
  CHECK(Mentions(dw_filters.status(), "has no filters option"));
}

}  // namespace
}  // namespace kiln::modules
