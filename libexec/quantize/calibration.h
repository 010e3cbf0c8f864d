// int8 calibration: what the activations that quantized weights compute with took on the
// calibration data, and the 8-bit range each gets (docs/quantize.md, "int8").
#pragma once

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/exec/quantize.h"
#include "tensorflow/saved_model.pb.h"

namespace kiln::exec::quantize {

// The extremes of the values one activation took and a histogram of their magnitudes, for
// percentiles. Add may be called from several threads.
class RangeObserver {
 public:
  void Add(const float* x, int64_t n);

  int64_t count() const { return count_; }
  double min() const { return min_; }
  double max() const { return max_; }
  bool finite() const { return finite_; }
  // The largest magnitude (kMinMax), or the smallest bin edge under which `percentile` % of
  // the magnitudes fall (kPercentile), never above the largest seen.
  double Magnitude(CalibrationMethod method, double percentile) const;

 private:
  static constexpr int kBins = 2048;
  std::mutex mu_;
  int64_t count_ = 0;
  double min_ = 0, max_ = 0;
  bool finite_ = true;
  double width_ = 0;  // bins_ cover [0, kBins * width_)
  std::vector<int64_t> bins_;
};

// Fills the range of `a` from what `seen` observed (or says why it stays float).
void ChooseRange(const RangeObserver& seen, const QuantizeOptions& options, QuantizedActivation* a);

// Writes to `dir` a bundle whose saved_model.pb is `proto` and whose other files are links to
// those of `input` (its variables and assets; not its fingerprint or serving plan).
Status WriteLinkedBundle(const std::filesystem::path& input, const std::filesystem::path& dir,
                         const tensorflow::SavedModel& proto);

}  // namespace kiln::exec::quantize
