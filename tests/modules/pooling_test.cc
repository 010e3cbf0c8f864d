// Pooling layers against plain loops, eagerly and traced; shapes and errors.
#include "kiln/modules/pooling.h"

#include <doctest/doctest.h>

#include <limits>
#include <vector>

#include "layer_test_util.h"

namespace kiln::modules {
namespace {

using testing::MaxRelDiff;
using testing::Mentions;
using testing::RandomTensor;
using trace::Value;
using trace::Values;

// NHWC max / average pool; "same" windows are cut at the edges (the average counts only the
// positions inside, as TensorFlow's AvgPool).
Tensor ReferencePool(const Tensor& x, bool max, int64_t ph, int64_t pw, int64_t sh, int64_t sw,
                     Padding p) {
  const int64_t n = x.shape()[0], h = x.shape()[1], w = x.shape()[2], c = x.shape()[3];
  auto geometry = [p](int64_t in, int64_t k, int64_t s) {
    if (p == Padding::kValid) return std::pair<int64_t, int64_t>{(in - k) / s + 1, 0};
    const int64_t out = (in + s - 1) / s;
    return std::pair<int64_t, int64_t>{out, std::max<int64_t>((out - 1) * s + k - in, 0) / 2};
  };
  const auto [oh, pad_h] = geometry(h, ph, sh);
  const auto [ow, pad_w] = geometry(w, pw, sw);
  Tensor y(DType::kFloat, Shape{n, oh, ow, c});
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox)
        for (int64_t ch = 0; ch < c; ++ch) {
          float best = -std::numeric_limits<float>::infinity();
          double sum = 0;
          int count = 0;
          for (int64_t ky = 0; ky < ph; ++ky)
            for (int64_t kx = 0; kx < pw; ++kx) {
              const int64_t iy = oy * sh - pad_h + ky, ix = ox * sw - pad_w + kx;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
              const float v = x.flat<float>()[((b * h + iy) * w + ix) * c + ch];
              best = std::max(best, v);
              sum += v;
              ++count;
            }
          y.flat<float>()[((b * oh + oy) * ow + ox) * c + ch] =
              max ? best : static_cast<float>(sum / count);
        }
  return y;
}

TEST_CASE("MaxPooling2D and AveragePooling2D match plain loops") {
  const Tensor x = RandomTensor(Shape{2, 7, 6, 3}, 4);
  for (bool max : {true, false}) {
    for (Padding p : {Padding::kValid, Padding::kSame}) {
      PoolOptions o{.pool_size = {3, 2}, .strides = {2, 1}, .padding = p};
      MaxPooling2D mp(o);
      AveragePooling2D ap(o);
      Layer& layer = max ? static_cast<Layer&>(mp) : static_cast<Layer&>(ap);
      CAPTURE(max);
      CAPTURE(static_cast<int>(p));
      Value y = layer(x);
      REQUIRE(y.ok());
      const Tensor expected = ReferencePool(x, max, 3, 2, 2, 1, p);
      CHECK(MaxRelDiff(*y.tensor(), expected) < 1e-6f);
      CHECK(*layer.OutputShape(PartialShape{-1, 7, 6, 3}) ==
            PartialShape{-1, expected.shape()[1], expected.shape()[2], 3});
      CHECK(layer.CountParams() == 0);
    }
  }
  MaxPool2D seed_pool;  // the seed's MaxPool2D(pool_size=[2, 2], strides=2)
  CHECK(seed_pool.type_name() == "MaxPooling2D");
  CHECK(seed_pool.name() == "max_pooling2d");
  CHECK(*seed_pool.OutputShape(PartialShape{-1, 28, 28, 32}) == PartialShape{-1, 14, 14, 32});
}

TEST_CASE("1-D pools are 2-D pools over one row, eagerly and traced") {
  const Tensor x = RandomTensor(Shape{2, 9, 4}, 5);
  const Tensor x4 = x.Reshaped(Shape{2, 1, 9, 4});
  for (bool max : {true, false}) {
    PoolOptions o{.pool_size = {3}, .strides = {2}, .padding = Padding::kSame};
    MaxPooling1D mp(o);
    AveragePooling1D ap(o);
    Layer& layer = max ? static_cast<Layer&>(mp) : static_cast<Layer&>(ap);
    const Tensor expected =
        ReferencePool(x4, max, 1, 3, 1, 2, Padding::kSame).Reshaped(Shape{2, 5, 4});
    Value y = layer(x);
    REQUIRE(y.ok());
    CHECK(MaxRelDiff(*y.tensor(), expected) < 1e-6f);
    trace::Function f("pool", {{"x", DType::kFloat, PartialShape{-1, 9, 4}}},
                      [&layer](const Values& a) { return Values{layer(a[0])}; });
    auto traced = f(x);
    REQUIRE(traced.ok());
    CHECK(MaxRelDiff((*traced)[0], expected) < 1e-6f);
  }
}

TEST_CASE("global pools reduce the spatial axes, with and without keepdims") {
  const Tensor x = RandomTensor(Shape{2, 3, 4, 5}, 6);
  GlobalMaxPooling2D gmax;
  GlobalAveragePooling2D gavg(/*keepdims=*/true);
  Value m = gmax(x);
  Value a = gavg(x);
  REQUIRE(m.ok());
  REQUIRE(a.ok());
  CHECK(m.shape() == PartialShape{2, 5});
  CHECK(a.shape() == PartialShape{2, 1, 1, 5});
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t c = 0; c < 5; ++c) {
      float best = -1e30f;
      double sum = 0;
      for (int64_t i = 0; i < 12; ++i) {
        const float v = x.flat<float>()[(b * 12 + i) * 5 + c];
        best = std::max(best, v);
        sum += v;
      }
      CHECK(m.tensor()->flat<float>()[b * 5 + c] == best);
      CHECK(a.tensor()->flat<float>()[b * 5 + c] == doctest::Approx(sum / 12).epsilon(1e-6));
    }
  GlobalAveragePooling1D g1;
  Value y1 = g1(RandomTensor(Shape{2, 7, 3}, 1));
  REQUIRE(y1.ok());
  CHECK(y1.shape() == PartialShape{2, 3});
  CHECK(GlobalMaxPool1D(true).OutputShape(PartialShape{-1, 7, 3}).value() ==
        PartialShape{-1, 1, 3});
}

TEST_CASE("pooling errors name the layer and what it expected") {
  MaxPooling2D pool;
  Value bad = pool(RandomTensor(Shape{2, 8, 3}, 1));
  REQUIRE_FALSE(bad.ok());
  CHECK(Mentions(bad.status(), "MaxPooling2D 'max_pooling2d': expected a rank-4 input"));
  AveragePooling1D small(PoolOptions{.pool_size = {5}});
  Value tiny = small(RandomTensor(Shape{1, 3, 2}, 1));
  REQUIRE_FALSE(tiny.ok());
  CHECK(Mentions(tiny.status(), "smaller than the pool"));
  GlobalAveragePooling1D g;
  Value g_bad = g(RandomTensor(Shape{2, 3, 4, 5}, 1));
  REQUIRE_FALSE(g_bad.ok());
  CHECK(Mentions(g_bad.status(),
                 "GlobalAveragePooling1D 'global_average_pooling1d': expected a rank-3 input"));
  MaxPooling2D zero(PoolOptions{.pool_size = {0}});
  CHECK(Mentions(zero.status(), "pool_size: values must be positive"));
}

}  // namespace
}  // namespace kiln::modules
