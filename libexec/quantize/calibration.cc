#include "quantize/calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kiln/core/file_util.h"

namespace kiln::exec::quantize {
namespace fs = std::filesystem;

void RangeObserver::Add(const float* x, int64_t n) {
  if (n <= 0) return;
  float lo = std::numeric_limits<float>::infinity(), hi = -lo;
  bool finite = true;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) {
      finite = false;
      continue;
    }
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  std::lock_guard<std::mutex> lock(mu_);
  finite_ = finite_ && finite;
  if (lo > hi) return;  // nothing finite
  min_ = count_ == 0 ? lo : std::min<double>(min_, lo);
  max_ = count_ == 0 ? hi : std::max<double>(max_, hi);
  const double top = std::max(std::abs(min_), std::abs(max_));
  if (bins_.empty()) {
    bins_.assign(kBins, 0);
    width_ = top > 0 ? top / kBins * 1.0001 : 1e-30;
  }
  // Widen the bins (merging pairs) until they cover the largest magnitude.
  while (top >= width_ * kBins) {
    for (size_t b = 0; b < kBins / 2; ++b) bins_[b] = bins_[2 * b] + bins_[2 * b + 1];
    std::fill(bins_.begin() + kBins / 2, bins_.end(), 0);
    width_ *= 2;
  }
  const double inv = 1.0 / width_;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) continue;
    const auto b = static_cast<int64_t>(std::abs(static_cast<double>(x[i])) * inv);
    ++bins_[std::min<int64_t>(b, kBins - 1)];
    ++count_;
  }
}

double RangeObserver::Magnitude(CalibrationMethod method, double percentile) const {
  const double top = std::max(std::abs(min_), std::abs(max_));
  if (method == CalibrationMethod::kMinMax || count_ == 0) return top;
  const auto want = static_cast<int64_t>(std::ceil(static_cast<double>(count_) * percentile / 100));
  int64_t sum = 0;
  for (int b = 0; b < kBins; ++b) {
    sum += bins_[b];
    if (sum >= want) return std::min(top, (b + 1) * width_);
  }
  return top;
}

void ChooseRange(const RangeObserver& seen, const QuantizeOptions& options,
                 QuantizedActivation* a) {
  a->elements = seen.count();
  a->seen_min = seen.min();
  a->seen_max = seen.max();
  if (seen.count() == 0) {
    a->kept_because = "the calibration runs never computed it";
    return;
  }
  if (!seen.finite()) {
    a->kept_because = "it held inf or NaN on the calibration data";
    return;
  }
  const auto r = static_cast<float>(seen.Magnitude(options.method, options.percentile));
  if (!(r > 0) || !std::isfinite(r)) {
    a->kept_because = "it was zero on all the calibration data";
    return;
  }
  // Non-negative activations (after a ReLU) use all 256 levels from 0; signed ones a
  // symmetric range of 255 levels, so that 0 is exact and the levels are those of an int8
  // with one scale (max / 127), as the integer kernels take them.
  a->narrow_range = seen.min() < 0;
  a->min = a->narrow_range ? -r : 0.f;
  a->max = r;
}

Status WriteLinkedBundle(const fs::path& input, const fs::path& dir,
                         const tensorflow::SavedModel& proto) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return PermissionDenied("cannot create '", dir.string(), "': ", ec.message());
  const fs::path from = fs::absolute(input, ec);
  for (const auto& entry : fs::directory_iterator(from, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == "saved_model.pb" || name == "saved_model.pbtxt" || name == "fingerprint.pb" ||
        name == "assets.extra")
      continue;
    fs::create_symlink(entry.path(), dir / name, ec);
    if (ec)
      return PermissionDenied("cannot link '", (dir / name).string(), "' to '",
                              entry.path().string(), "': ", ec.message());
  }
  if (ec) return NotFound("cannot list '", from.string(), "': ", ec.message());
  std::string pb;
  if (!proto.SerializeToString(&pb))
    return Internal("the calibration copy's saved_model.pb does not serialize");
  return WriteStringToFile(dir / "saved_model.pb", pb);
}

}  // namespace kiln::exec::quantize
