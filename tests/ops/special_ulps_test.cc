// Dawsn, Expint, FresnelCos, FresnelSin and Spence against TensorFlow's recorded outputs
// (special_values.h) to a few ulps of each value, however small: the op tester's tolerance is
// absolute below 1, which says little about values such as dawsn(1e9) = 5e-10.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "exec/kernel_test_util.h"
#include "ops/special_values.h"

namespace kiln::testing {
namespace {

namespace sv = special_values;

template <typename T>
void CheckUlps(const std::string& op, const std::vector<double>& x, const std::vector<double>& want,
               int max_ulps) {
  std::vector<T> xs(x.begin(), x.end());
  auto got = OpRunner(op).T(kDTypeOf<T>).Input(Make<T>(xs, Shape{int64_t(xs.size())})).Run1();
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  const T* g = got->template data<T>();
  for (size_t i = 0; i < x.size(); ++i) {
    const T w = static_cast<T>(want[i]);
    CAPTURE(op);
    CAPTURE(x[i]);
    if (std::isnan(w) || std::isinf(w)) {
      CHECK_MESSAGE((std::isnan(w) ? std::isnan(g[i]) : g[i] == w), "got ", g[i], " want ", w);
      continue;
    }
    // One ulp of the wanted value (the smallest normal's below it).
    const T ulp =
        std::max(std::abs(w), std::numeric_limits<T>::min()) * std::numeric_limits<T>::epsilon();
    CHECK_MESSAGE(std::abs(g[i] - w) <= max_ulps * ulp, "got ", g[i], " want ", w);
  }
}

TEST_CASE("special functions match TensorFlow's values to a few ulps") {
  struct Op {
    const char* name;
    const std::vector<double>& f;
    const std::vector<double>& d;
  };
  const Op ops[] = {{"Dawsn", sv::kDawsnF, sv::kDawsnD},
                    {"Expint", sv::kExpintF, sv::kExpintD},
                    {"FresnelCos", sv::kFresnelCosF, sv::kFresnelCosD},
                    {"FresnelSin", sv::kFresnelSinF, sv::kFresnelSinD},
                    {"Spence", sv::kSpenceF, sv::kSpenceD}};
  for (const Op& op : ops) {
    CheckUlps<float>(op.name, sv::kXF, op.f, 4);
    CheckUlps<double>(op.name, sv::kXD, op.d, 4);
  }
}

TEST_CASE("special functions refuse integer and half inputs, as TF registers float and double") {
  for (const char* op : {"Dawsn", "Expint", "FresnelCos", "FresnelSin", "Spence"}) {
    CAPTURE(op);
    CHECK_FALSE(OpRunner(op).T(DType::kInt32).Input(Make<int32_t>({1}, Shape{1})).Run().ok());
    CHECK_FALSE(OpRunner(op).T(DType::kHalf).Input(Tensor(DType::kHalf, Shape{1})).Run().ok());
  }
}

}  // namespace
}  // namespace kiln::testing
