// int8 calibration (quantize/calibration.h): the extremes and magnitude histogram one activation
// took over several runs, and the 8-bit range chosen from them.
#include "quantize/calibration.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

namespace kiln::exec::quantize {
namespace {

TEST_CASE("calibration: min/max and percentiles over batches whose range grows") {
  RangeObserver seen;
  // 1..10000 in four batches, the largest last: the histogram widens three times on the way.
  std::vector<float> all;
  for (int i = 1; i <= 10000; ++i) all.push_back(static_cast<float>(i));
  for (int b = 0; b < 4; ++b) seen.Add(all.data() + b * 2500, 2500);
  CHECK(seen.count() == 10000);
  CHECK(seen.min() == 1);
  CHECK(seen.max() == 10000);
  CHECK(seen.Magnitude(CalibrationMethod::kMinMax, 99) == 10000);
  // The 99th percentile is 9900, to within one bin of the widened histogram.
  const double p99 = seen.Magnitude(CalibrationMethod::kPercentile, 99);
  CHECK(p99 >= 9900);
  CHECK(p99 <= 9900 + 2 * 10000.0 / 2048);
  CHECK(seen.Magnitude(CalibrationMethod::kPercentile, 100) == 10000);
}

TEST_CASE("calibration: signed, non-negative, zero, unseen and non-finite activations") {
  QuantizeOptions options;
  const auto choose = [&](std::vector<float> v) {
    RangeObserver seen;
    seen.Add(v.data(), static_cast<int64_t>(v.size()));
    QuantizedActivation a;
    ChooseRange(seen, options, &a);
    return a;
  };
  const QuantizedActivation s = choose({-0.5f, 2.f, 1.f});
  CHECK(s.kept_because.empty());
  CHECK(s.narrow_range);
  CHECK(s.min == -2.f);
  CHECK(s.max == 2.f);
  const QuantizedActivation u = choose({0.f, 3.f, 1.f});
  CHECK(u.kept_because.empty());
  CHECK_FALSE(u.narrow_range);
  CHECK(u.min == 0.f);
  CHECK(u.max == 3.f);
  CHECK(choose({0.f, 0.f}).kept_because.find("zero") != std::string::npos);
  CHECK(choose({}).kept_because.find("never computed") != std::string::npos);
  CHECK(choose({1.f, std::nanf("")}).kept_because.find("inf or NaN") != std::string::npos);
}

}  // namespace
}  // namespace kiln::exec::quantize
