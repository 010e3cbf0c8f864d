// TensorFlow's FakeQuant range nudging, shared by the FakeQuant kernels (quantize_ops.cc) and
// the integer products that take a FakeQuant's range (int8_product_ops.cc).
#pragma once

#include <cmath>
#include <cstdint>

namespace kiln::exec {

// The levels of a FakeQuant: [0, 2^bits - 1], or [1, 2^bits - 1] with narrow_range.
struct QuantRange {
  int quant_min = 0;
  int quant_max = 255;
};

// TF's Nudge: the zero point rounded to a level, the range moved to keep the step.
struct Nudged {
  float min, max, scale, inv_scale;
};
inline Nudged Nudge(float min, float max, QuantRange q) {
  const float qmin = static_cast<float>(q.quant_min), qmax = static_cast<float>(q.quant_max);
  Nudged n;
  n.scale = (max - min) / (qmax - qmin);
  n.inv_scale = (qmax - qmin) / (max - min);
  const float zero_from_min = qmin - min / n.scale;
  uint16_t zero;
  if (zero_from_min < qmin) {
    zero = static_cast<uint16_t>(q.quant_min);
  } else if (zero_from_min > qmax) {
    zero = static_cast<uint16_t>(q.quant_max);
  } else {
    zero = static_cast<uint16_t>(std::round(zero_from_min));
  }
  n.min = (qmin - zero) * n.scale;
  n.max = (qmax - zero) * n.scale;
  return n;
}

// The level offset the kernels subtract: x rounds to the integer floor((clamp(x) - min) *
// inv_scale - zero + 0.5), in [-zero, quant_max - quant_min - zero], times scale.
inline float NudgedZero(const Nudged& q) { return std::floor(-q.min * q.inv_scale + 0.5f); }

}  // namespace kiln::exec
