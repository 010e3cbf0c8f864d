// Float ops at the edges of their range, held to a few ulps of each value: the op tester's
// tolerance is absolute below 1 (and relative above), which says nothing about exp(-87) or
// softplus(-13.8), and is loose for exp(88.5). Each case is one a TF comparison found off
// (Exp near overflow, LogSoftmax of large logits, Softplus below -5, Zeta of huge x, Atan2 of
// subnormals). Run at every ISA level the op tester runs at (KILN_MAX_CPU_ISA).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "exec/kernel_test_util.h"

namespace kiln::testing {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// x's unary `op` in float32, one element per value (enough for whole vectors and a tail).
std::vector<float> RunUnary(const std::string& op, const std::vector<float>& x) {
  auto got = OpRunner(op).T(DType::kFloat).Input(Make<float>(x, Shape{int64_t(x.size())})).Run1();
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  return std::vector<float>(got->data<float>(), got->data<float>() + x.size());
}

// |got - want| within `ulps` units of want's last place (the smallest normal's below it).
void CheckUlps(float got, double want, int ulps) {
  if (std::isinf(want) || std::isnan(want)) {
    CHECK_MESSAGE((std::isnan(want) ? std::isnan(got) : got == want), "got ", got, " want ", want);
    return;
  }
  const double ulp = std::max(std::abs(want), double{std::numeric_limits<float>::min()}) *
                     std::numeric_limits<float>::epsilon();
  CHECK_MESSAGE(std::abs(got - want) <= ulps * ulp, "got ", got, " want ", want);
}

TEST_CASE("Exp of float32 is exact to 2 ulps up to overflow and is 0 below the normal range") {
  // Near overflow: the whole band up to ln(FLT_MAX) = 88.7228 (it was flat at exp(88.376)).
  std::vector<float> x;
  for (float v = 80.0f; v < 88.72f; v += 0.0137f) x.push_back(v);
  for (float v : {88.376f, 88.4f, 88.5f, 88.6f, 88.7f, 88.72f, 88.7228f, 88.72283f}) x.push_back(v);
  // Near underflow: results down to FLT_MIN = exp(-87.3365).
  for (float v = -87.3365f; v < -80.0f; v += 0.0137f) x.push_back(v);
  std::vector<float> got = RunUnary("Exp", x);
  for (size_t i = 0; i < x.size(); ++i) {
    CAPTURE(x[i]);
    CheckUlps(got[i], std::exp(static_cast<double>(x[i])), 2);
  }
  // Past the ends: inf above ln(FLT_MAX); below ln(FLT_MIN) exp is subnormal, which kiln reads
  // as zero everywhere (docs/design.md, "Subnormals are zero"; TF gives the subnormal), and
  // exp(-104) underflows for both. NaN stays NaN.
  const std::vector<float> edges = {88.7229f, 89.0f,   1e10f,   kInf,   -87.34f, -90.0f,
                                    -100.0f,  -103.9f, -104.0f, -1e10f, -kInf};
  got = RunUnary("Exp", edges);
  for (size_t i = 0; i < edges.size(); ++i) {
    CAPTURE(edges[i]);
    CHECK(got[i] == (edges[i] > 0 ? kInf : 0.0f));
  }
  CHECK(std::isnan(RunUnary("Exp", {std::numeric_limits<float>::quiet_NaN()})[0]));
}

TEST_CASE("the activations over ExpApprox saturate at the edges") {
  const std::vector<float> x = {-1e10f, -100.0f, -88.7f, -88.5f, 88.5f, 88.7f, 100.0f, 1e10f};
  const std::vector<float> sigmoid = RunUnary("Sigmoid", x);
  const std::vector<float> tanh = RunUnary("Tanh", x);
  const std::vector<float> elu = RunUnary("Elu", x);
  for (size_t i = 0; i < x.size(); ++i) {
    CAPTURE(x[i]);
    CHECK(sigmoid[i] == (x[i] < 0 ? 0.0f : 1.0f));
    CHECK(tanh[i] == (x[i] < 0 ? -1.0f : 1.0f));
    CHECK(elu[i] == (x[i] < 0 ? -1.0f : x[i]));
  }
}

TEST_CASE("LogSoftmax of large logits keeps the log-sum term") {
  // TF 2.21: (x - max) - log(sum); max + log(sum) first loses log(sum) to rounding.
  const std::vector<float> x = {1e30f, 1e30f, 1e7f, 1e7f, 3e4f, 3e4f + 1};
  auto got = OpRunner("LogSoftmax").T(DType::kFloat).Input(Make<float>(x, Shape{3, 2})).Run1();
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  const double ln2 = std::log(2.0), e1 = std::log1p(std::exp(-1.0));
  const std::vector<double> want = {-ln2, -ln2, -ln2, -ln2, -1 - e1, -e1};
  for (size_t i = 0; i < x.size(); ++i) {
    CAPTURE(i);
    CheckUlps(got->data<float>()[i], want[i], 4);
  }
}

TEST_CASE("Softplus below -5 is log1p(exp(x)) to a few ulps") {
  // TF's middle range, up to its exp(x) threshold log(eps) + 2 = -13.94: log(exp(x) + 1) lost
  // exp(x)'s low bits there (5.6 % off at -13.8).
  std::vector<float> x = {-10.0f, -13.8f};
  for (float v = -13.9f; v < -5.0f; v += 0.0731f) x.push_back(v);
  const std::vector<float> got = RunUnary("Softplus", x);
  CheckUlps(got[0], 4.5398901e-05, 4);  // TF 2.21's
  CheckUlps(got[1], 1.0156307e-06, 4);
  for (size_t i = 0; i < x.size(); ++i) {
    CAPTURE(x[i]);
    CheckUlps(got[i], std::log1p(std::exp(static_cast<double>(x[i]))), 4);
  }
}

template <typename T>
std::vector<T> RunZeta(const std::vector<T>& x, const std::vector<T>& q) {
  const Shape s{int64_t(x.size())};
  auto got = OpRunner("Zeta").T(kDTypeOf<T>).Input(Make<T>(x, s)).Input(Make<T>(q, s)).Run1();
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  return std::vector<T>(got->template data<T>(), got->template data<T>() + x.size());
}

TEST_CASE("Zeta of a huge x is 0 where every term underflows, as TF's") {
  // TF 2.21: zeta(1e30, 1.5) = zeta(1e10, 1.5) = 0 (the bundled Eigen gave NaN); q = 1 leaves
  // the first term 1, q < 1 makes it inf.
  const std::vector<float> f = RunZeta<float>({1e30f, 1e10f, 100.0f, 1e30f, 1e30f, 50.0f},
                                              {1.5f, 1.5f, 1.5f, 1, 0.5f, 1e-3f});
  CHECK(f[0] == 0.0f);
  CHECK(f[1] == 0.0f);
  CHECK(std::abs(f[2] / 2.4596544e-18 - 1) < 1e-5);
  CHECK(f[3] == 1.0f);
  CHECK(f[4] == kInf);
  CHECK(f[5] == kInf);
  const std::vector<double> d = RunZeta<double>({1e30, 1e10, 1e300, 100}, {1.5, 1.5, 1.01, 1.5});
  CHECK(d[0] == 0.0);
  CHECK(d[1] == 0.0);
  CHECK(d[2] == 0.0);
  CHECK(std::abs(d[3] / (std::pow(1.5, -100) + std::pow(2.5, -100)) - 1) < 1e-12);
}

TEST_CASE("Atan2 reads subnormal operands as zeros of their sign") {
  // Subnormals are zero in kiln (docs/design.md): atan2(1e-39, 1e-39) is atan2(+0, +0) = 0, not
  // the NaN glibc's atan2f gives under flush-to-zero.
  const float sub = 1e-39f;
  const std::vector<float> y = {sub, sub, -sub, 1.0f, sub, 0.0f};
  const std::vector<float> x = {sub, 1.0f, sub, sub, -1.0f, sub};
  const Shape s{int64_t(y.size())};
  auto got =
      OpRunner("Atan2").T(DType::kFloat).Input(Make<float>(y, s)).Input(Make<float>(x, s)).Run1();
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  const float* g = got->data<float>();
  const float pi = static_cast<float>(M_PI);
  const std::vector<float> want = {0.0f, 0.0f, -0.0f, pi / 2, pi, 0.0f};
  for (size_t i = 0; i < y.size(); ++i) {
    CAPTURE(i);
    CHECK(g[i] == want[i]);
    CHECK(std::signbit(g[i]) == std::signbit(want[i]));
  }
}

}  // namespace
}  // namespace kiln::testing
