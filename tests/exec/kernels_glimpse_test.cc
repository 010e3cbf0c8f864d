// ExtractGlimpse / ExtractGlimpseV2's noise, which TF draws unseeded (so only its distribution
// can be checked: where the values lie, per image or per channel, and that calls differ), the
// attrs that pick it, and the errors.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "exec/kernel_test_util.h"

namespace kiln::exec {
namespace {

using testing::CheckError;
using testing::Make;
using testing::OpRunner;

// A [1, 4, 5, 2] image: channel 0 in [0, 1], channel 1 in [100, 101].
Tensor TwoChannelImage() {
  std::vector<float> v;
  for (int i = 0; i < 20; ++i) {
    v.push_back(static_cast<float>(i) / 19.0f);
    v.push_back(100.0f + static_cast<float>(19 - i) / 19.0f);
  }
  return Make<float>(v, {1, 4, 5, 2});
}

// A 6 x 6 glimpse whose top-left 2 x 3 corner is image pixels (2, 2) .. (3, 4); the rest noise.
// Pixel offsets: V1 measures them to the window's centre, V2 to its corner.
Result<Tensor> Glimpse(const std::string& op, const Tensor& image, OpRunner r) {
  const float offset = op == "ExtractGlimpse" ? 5.0f : 2.0f;
  r.Input(image)
      .Input(Make<int32_t>({6, 6}, {2}))
      .Input(Make<float>({offset, offset}, {1, 2}))
      .Bool("normalized", false)
      .Bool("centered", false);
  return r.Run1();
}

// Whether pixel (y, x) of the 6 x 6 glimpse is a copied image pixel.
bool Inside(int64_t y, int64_t x) { return y < 2 && x < 3; }

TEST_CASE("ExtractGlimpse noise: uniform over the image's range, gaussian per channel") {
  const Tensor image = TwoChannelImage();
  const float* img = image.data<float>();
  for (const std::string op : {"ExtractGlimpse", "ExtractGlimpseV2"}) {
    CAPTURE(op);
    // Uniform (V1's uniform_noise=false still reads the default noise "uniform", as in TF).
    OpRunner u(op);
    u.Bool("uniform_noise", false);
    auto a = Glimpse(op, image, u);
    REQUIRE(a.ok());
    bool spread = false;
    for (int64_t y = 0; y < 6; ++y)
      for (int64_t x = 0; x < 6; ++x)
        for (int64_t c = 0; c < 2; ++c) {
          const float v = a->data<float>()[(y * 6 + x) * 2 + c];
          if (Inside(y, x)) {
            CHECK(v == img[((2 + y) * 5 + 2 + x) * 2 + c]);
          } else {
            CHECK(v >= 0.0f);
            CHECK(v <= 101.0f);
            spread |= c == 0 && v > 1.0f;
          }
        }
    CHECK(spread);  // channel 0 draws from the whole image's range
    // Another call draws again.
    auto b = Glimpse(op, image, u);
    REQUIRE(b.ok());
    int64_t same = 0;
    for (int64_t i = 0; i < a->NumElements(); ++i)
      same += a->data<float>()[i] == b->data<float>()[i];
    CHECK(same < a->NumElements());
    // Gaussian (noise "" with uniform_noise false): each channel within its own range.
    OpRunner g(op);
    g.Bool("uniform_noise", false).String("noise", "");
    auto n = Glimpse(op, image, g);
    REQUIRE(n.ok());
    for (int64_t y = 0; y < 6; ++y)
      for (int64_t x = 0; x < 6; ++x) {
        if (Inside(y, x)) continue;
        const float c0 = n->data<float>()[(y * 6 + x) * 2],
                    c1 = n->data<float>()[(y * 6 + x) * 2 + 1];
        CHECK(c0 >= 0.0f);
        CHECK(c0 <= 1.0f);
        CHECK(c1 >= 100.0f);
        CHECK(c1 <= 101.0f);
      }
  }
}

TEST_CASE(
    "ExtractGlimpse noise of an empty image is NaN (zero noise: 0), and NaN pixels stay out of its "
    "range") {
  for (const std::string noise : {"uniform", "gaussian", "zero"}) {
    CAPTURE(noise);
    OpRunner r("ExtractGlimpseV2");
    r.Input(Tensor(DType::kFloat, Shape{1, 0, 6, 2}))
        .Input(Make<int32_t>({2, 2}, {2}))
        .Input(Make<float>({0.0f, 0.0f}, {1, 2}))
        .Bool("uniform_noise", false)
        .String("noise", noise);
    auto got = r.Run1();
    REQUIRE(got.ok());
    for (int64_t i = 0; i < got->NumElements(); ++i) {
      const float v = got->data<float>()[i];
      CHECK((noise == "zero" ? v == 0.0f : std::isnan(v)));
    }
  }
  // Uniform noise leaves NaN out of the image's min and max.
  std::vector<float> v(12);
  for (int i = 0; i < 12; ++i) v[i] = static_cast<float>(i);
  v[0] = std::numeric_limits<float>::quiet_NaN();
  OpRunner r("ExtractGlimpseV2");
  r.Input(Make<float>(v, {1, 2, 3, 2}))
      .Input(Make<int32_t>({3, 3}, {2}))
      .Input(Make<float>({5.0f, 5.0f}, {1, 2}))
      .Bool("normalized", false)
      .Bool("centered", false)
      .Bool("uniform_noise", false);
  auto got = r.Run1();
  REQUIRE(got.ok());
  for (int64_t i = 0; i < got->NumElements(); ++i) {
    CHECK(got->data<float>()[i] >= 1.0f);
    CHECK(got->data<float>()[i] <= 11.0f);
  }
}

TEST_CASE("ExtractGlimpse errors") {
  const auto prepare = [](OpRunner r) {
    r.InputSpec({DType::kFloat, PartialShape{1, 4, 5, 2}})
        .ConstantInput(Make<int32_t>({2, 2}, {2}))
        .InputSpec({DType::kFloat, PartialShape{1, 2}});
    return r.Prepare();
  };
  {
    OpRunner r("ExtractGlimpseV2", "g");
    r.String("noise", "gaussian");  // uniform_noise defaults to true
    CheckError(prepare(r), {"node 'g'", "uniform_noise and noise could not be specified"});
  }
  {
    OpRunner r("ExtractGlimpseV2");
    r.Bool("uniform_noise", false).String("noise", "pink");
    CheckError(prepare(r), {"The noise could only be uniform, gaussian, or zero, got pink"});
  }
  const auto run = [](const Tensor& image, const Tensor& size, const Tensor& offsets) {
    OpRunner r("ExtractGlimpseV2");
    r.Bool("uniform_noise", false).String("noise", "zero");
    r.Input(image, {DType::kFloat, PartialShape::UnknownRank()})
        .Input(size, {DType::kInt32, PartialShape::UnknownRank()})
        .Input(offsets, {DType::kFloat, PartialShape::UnknownRank()});
    return r.Run1().status();
  };
  const Tensor image(DType::kFloat, Shape{2, 4, 5, 1});
  const Tensor offsets = Make<float>({0, 0, 0, 0}, {2, 2});
  CheckError(run(Tensor(DType::kFloat, Shape{4, 5, 1}), Make<int32_t>({2, 2}, {2}), offsets),
             {"input must be 4-dimensional"});
  CheckError(run(image, Make<int32_t>({2, 2, 2}, {3}), offsets),
             {"input must be a vector of size 2 (height, width)"});
  CheckError(run(image, Make<int32_t>({-1, 2}, {2}), offsets),
             {"Expected a non-negative size, got -1"});
  CheckError(run(image, Make<int32_t>({2, 2}, {2}), Make<float>({0, 0}, {2})),
             {"input must be a matrix"});
  CheckError(run(image, Make<int32_t>({2, 2}, {2}), Make<float>({0, 0}, {1, 2})),
             {"first dimension should be batch"});
  CheckError(run(image, Make<int32_t>({2, 2}, {2}), Make<float>({0, 0, 0, 0, 0, 0}, {2, 3})),
             {"second dimension should be of size 2 (y,x)"});
}

}  // namespace
}  // namespace kiln::exec
