// Arithmetic views of the 8-bit float storage types (Float8E5M2, Float8E4M3FN): conversions to
// and from wider types as TensorFlow (ml_dtypes) makes them. Narrowing rounds to nearest, ties
// to even, from the exact value of the source (a double holds every float, half and bfloat16);
// a value past the largest finite one becomes infinity in e5m2 and NaN in e4m3fn, which has no
// infinity; NaN stays NaN. These types are Cast's and data movement's: TF computes nothing in
// them.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kiln/core/dtype.h"

namespace kiln {

// kExp exponent bits and kMan mantissa bits after the sign; kIeee: an all-ones exponent means
// infinity (mantissa 0) or NaN, else only S.1111.111 is NaN (e4m3fn).
template <int kExp, int kMan, bool kIeee>
class Float8 {
 public:
  Float8() = default;
  template <typename T>
  requires std::is_arithmetic_v<T>
  explicit Float8(T v) : bits_(Encode(static_cast<double>(v))) {}

  explicit operator double() const { return Decode(bits_); }
  explicit operator float() const { return static_cast<float>(Decode(bits_)); }
  template <typename T>
  requires(std::is_arithmetic_v<T> && !std::is_floating_point_v<T>) explicit operator T() const {
    return static_cast<T>(static_cast<float>(*this));
  }
  // Values compare (+0 equals -0, NaN equals nothing), as in TF.
  bool operator==(const Float8& o) const {
    return static_cast<double>(*this) == static_cast<double>(o);
  }
  uint8_t bits() const { return bits_; }

  static double Decode(uint8_t b) {
    const double sign = (b & 0x80) != 0 ? -1.0 : 1.0;
    const int e = (b >> kMan) & kExpMask;
    const int m = b & kManMask;
    if (kIeee && e == kExpMask) return m == 0 ? sign * HUGE_VAL : std::nan("");
    if (!kIeee && e == kExpMask && m == kManMask) return std::nan("");
    if (e == 0) return sign * std::ldexp(m, 1 - kBias - kMan);
    return sign * std::ldexp(m + (1 << kMan), e - kBias - kMan);
  }

  static uint8_t Encode(double v) {
    const uint8_t sign = std::signbit(v) ? 0x80 : 0;
    if (std::isnan(v)) return sign | kNaN;
    const double a = std::fabs(v);
    if (std::isinf(a)) return sign | kOverflow;
    if (a == 0) return sign;
    int e = std::ilogb(a);  // a = 1.f * 2^e
    if (e < 1 - kBias) {
      // Subnormal: a multiple of 2^(1 - bias - kMan); 2^kMan units round up to the least normal.
      const auto q = static_cast<int>(std::nearbyint(std::ldexp(a, kBias - 1 + kMan)));
      return sign | static_cast<uint8_t>(q);
    }
    auto q = static_cast<int>(std::nearbyint(std::ldexp(a, kMan - e))) - (1 << kMan);
    if (q == 1 << kMan) {
      q = 0;
      ++e;
    }
    const int biased = e + kBias;
    const bool too_big =
        kIeee ? biased >= kExpMask : biased > kExpMask || (biased == kExpMask && q == kManMask);
    if (too_big) return sign | kOverflow;
    return sign | static_cast<uint8_t>((biased << kMan) | q);
  }

 private:
  static constexpr int kExpMask = (1 << kExp) - 1;
  static constexpr int kManMask = (1 << kMan) - 1;
  static constexpr int kBias = (1 << (kExp - 1)) - 1;
  // TF's NaN patterns (positive): e5m2 0x7e, e4m3fn 0x7f; what an overflow becomes.
  static constexpr uint8_t kNaN = kIeee ? static_cast<uint8_t>((kExpMask << kMan) | 2) : 0x7f;
  static constexpr uint8_t kOverflow = kIeee ? static_cast<uint8_t>(kExpMask << kMan) : kNaN;

  uint8_t bits_ = 0;
};

using F8E5M2 = Float8<5, 2, true>;
using F8E4M3FN = Float8<4, 3, false>;
static_assert(sizeof(F8E5M2) == sizeof(Float8E5M2) && sizeof(F8E4M3FN) == sizeof(Float8E4M3FN));

}  // namespace kiln
