// NumpyStr against what numpy (2.x, default print options) prints for the same arrays; every
// expected string below was produced by numpy's str().
#include "numpy_format.h"

#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <numeric>
#include <vector>

namespace kiln::cli {
namespace {

template <typename T>
Tensor Make(const std::vector<T>& values, const Shape& shape) {
  auto t = Tensor::FromVector(values, shape);
  REQUIRE(t.ok());
  return *t;
}

TEST_CASE("0-d arrays print as numpy scalars") {
  CHECK(NumpyStr(Tensor::Scalar<float>(61.0f)) == "61.0");
  CHECK(NumpyStr(Tensor::Scalar<float>(7.6666669845581055f)) == "7.666667");
  CHECK(NumpyStr(Tensor::Scalar<float>(1e20f)) == "1e+20");
  CHECK(NumpyStr(Tensor::Scalar<float>(1e-5f)) == "1e-05");
  CHECK(NumpyStr(Tensor::Scalar<double>(0.1)) == "0.1");
  CHECK(NumpyStr(Tensor::Scalar<int32_t>(-5)) == "-5");
  CHECK(NumpyStr(Tensor::Scalar<bool>(true)) == "True");
  CHECK(NumpyStr(Tensor::StringScalar("abc")) == "b'abc'");
}

TEST_CASE("float arrays") {
  CHECK(NumpyStr(Make<float>({1, 2, 3}, {3})) == "[1. 2. 3.]");
  CHECK(NumpyStr(Make<float>({1.0f, 2.5f, 3.25f}, {3})) == "[1.   2.5  3.25]");
  CHECK(NumpyStr(Make<float>({-1, 2}, {2})) == "[-1.  2.]");
  CHECK(NumpyStr(Make<float>({1e10f, 1.5f}, {2})) == "[1.0e+10 1.5e+00]");
  CHECK(NumpyStr(Make<double>({1.0 / 3, 2.0 / 3}, {2})) == "[0.33333333 0.66666667]");
  CHECK(NumpyStr(Make<double>({1e-5, 1.0}, {2})) == "[1.e-05 1.e+00]");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(NumpyStr(Make<float>({nan, 1.5f, -inf}, {3})) == "[ nan  1.5 -inf]");
  CHECK(NumpyStr(Make<float>({0, 0, 0, 0}, {2, 2})) == "[[0. 0.]\n [0. 0.]]");
  CHECK(NumpyStr(Make<double>({1.23456789e-7, 123.0, -4.5e12}, {3})) ==
        "[ 1.23456789e-07  1.23000000e+02 -4.50000000e+12]");
  CHECK(NumpyStr(Make<float>({0.1f}, {1})) == "[0.1]");
  std::vector<float> q(12);
  for (int i = 0; i < 12; ++i) q[i] = i / 4.0f;
  CHECK(NumpyStr(Make<float>(q, {2, 3, 2})) ==
        "[[[0.   0.25]\n  [0.5  0.75]\n  [1.   1.25]]\n\n [[1.5  1.75]\n  [2.   2.25]\n  [2.5  "
        "2.75]]]");
}

TEST_CASE("long rows wrap at 75 columns") {
  std::vector<float> v(30);
  for (int i = 0; i < 30; ++i) v[i] = i * 1.5f;
  CHECK(NumpyStr(Make<float>(v, {30})) ==
        "[ 0.   1.5  3.   4.5  6.   7.5  9.  10.5 12.  13.5 15.  16.5 18.  19.5\n"
        " 21.  22.5 24.  25.5 27.  28.5 30.  31.5 33.  34.5 36.  37.5 39.  40.5\n"
        " 42.  43.5]");
}

TEST_CASE("more than 1000 elements are summarized") {
  std::vector<int32_t> v(2000);
  std::iota(v.begin(), v.end(), 0);
  CHECK(NumpyStr(Make<int32_t>(v, {2000})) == "[   0    1    2 ... 1997 1998 1999]");
  std::vector<float> m(1200);
  std::iota(m.begin(), m.end(), 0.0f);
  CHECK(NumpyStr(Make<float>(m, {40, 30})) ==
        "[[0.000e+00 1.000e+00 2.000e+00 ... 2.700e+01 2.800e+01 2.900e+01]\n"
        " [3.000e+01 3.100e+01 3.200e+01 ... 5.700e+01 5.800e+01 5.900e+01]\n"
        " [6.000e+01 6.100e+01 6.200e+01 ... 8.700e+01 8.800e+01 8.900e+01]\n"
        " ...\n"
        " [1.110e+03 1.111e+03 1.112e+03 ... 1.137e+03 1.138e+03 1.139e+03]\n"
        " [1.140e+03 1.141e+03 1.142e+03 ... 1.167e+03 1.168e+03 1.169e+03]\n"
        " [1.170e+03 1.171e+03 1.172e+03 ... 1.197e+03 1.198e+03 1.199e+03]]");
}

TEST_CASE("ints, bools, strings, half, complex, empty") {
  CHECK(NumpyStr(Make<int32_t>({1, 2, 3, 4}, {2, 2})) == "[[1 2]\n [3 4]]");
  CHECK(NumpyStr(Make<int64_t>({1, 10, -100}, {3})) == "[   1   10 -100]");
  CHECK(NumpyStr(Make<uint8_t>({0, 255}, {1, 2})) == "[[  0 255]]");
  CHECK(NumpyStr(Make<bool>({true, false}, {2})) == "[ True False]");
  CHECK(NumpyStr(Make<std::string>({"ab", "it's"}, {2})) == "[b'ab' b\"it's\"]");
  // float16 0.1 and 1.5: bits 0x2e66 and 0x3e00; shortest digits are float16's.
  CHECK(NumpyStr(Make<Half>({Half{0x2e66}, Half{0x3e00}}, {2})) == "[0.1 1.5]");
  CHECK(NumpyStr(Make<std::complex<float>>({{1, 2}, {-0.5f, -1}}, {2})) == "[ 1. +2.j -0.5-1.j]");
  CHECK(NumpyStr(Tensor(DType::kFloat, Shape({0}))) == "[]");
  CHECK(NumpyStr(Tensor(DType::kInt32, Shape({2, 0}))) == "[]");
}

TEST_CASE("float8 prints as NumPy prints ml_dtypes' float8 arrays") {
  // 1, 0.1015625, NaN, 448, -0.0703125 in e4m3fn; 3, 512, inf, 2^-10, 2^-16 in e5m2.
  CHECK(NumpyStr(Make<Float8E4M3FN>({{0x38}, {0x1d}, {0x7f}, {0x7e}, {0x99}}, {5})) ==
        "[1 0.101562 nan 448 -0.0703125]");
  CHECK(NumpyStr(Make<Float8E5M2>({{0x42}, {0x60}, {0x7c}, {0x14}, {0x01}}, {5})) ==
        "[3 512 inf 0.000976562 1.52588e-05]");
  CHECK(NumpyStr(Make<Float8E4M3FN>({{0x1d}}, {})) == "0.101562");
}

}  // namespace
}  // namespace kiln::cli
