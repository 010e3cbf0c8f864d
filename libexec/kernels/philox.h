// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3") and the ways
// TensorFlow turns its output into floats, doubles, normals and bounded integers
// (tensorflow/core/lib/random/philox_random.h, random_distributions.h), so that the same key
// and counter give TF's values (checked against the Random123 known answers and TF 2.21).
#pragma once

#include <Eigen/Core>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace kiln::exec::random {

class Philox {
 public:
  using Result = std::array<uint32_t, 4>;
  using Key = std::array<uint32_t, 2>;

  Philox() = default;
  Philox(Result counter, Key key) : counter_(counter), key_(key) {}
  // TF's PhiloxRandom(seed_lo, seed_hi): the key from the first seed, the counter's high half
  // from the second.
  Philox(uint64_t seed_lo, uint64_t seed_hi) {
    key_ = {static_cast<uint32_t>(seed_lo), static_cast<uint32_t>(seed_lo >> 32)};
    counter_ = {0, 0, static_cast<uint32_t>(seed_hi), static_cast<uint32_t>(seed_hi >> 32)};
  }

  const Result& counter() const { return counter_; }
  const Key& key() const { return key_; }

  // Moves the 128-bit counter on by `count` blocks of four outputs.
  void Skip(uint64_t count) {
    const uint32_t lo = static_cast<uint32_t>(count);
    uint32_t hi = static_cast<uint32_t>(count >> 32);
    counter_[0] += lo;
    if (counter_[0] < lo) ++hi;
    counter_[1] += hi;
    if (counter_[1] < hi) {
      if (++counter_[2] == 0) ++counter_[3];
    }
  }

  // Ten rounds on the current counter, then the counter moves on by one.
  Result operator()() {
    Result c = counter_;
    Key k = key_;
    for (int round = 0; round < 10; ++round) {
      if (round > 0) {
        k[0] += kW32A;
        k[1] += kW32B;
      }
      const uint64_t p0 = static_cast<uint64_t>(kM4x32A) * c[0];
      const uint64_t p1 = static_cast<uint64_t>(kM4x32B) * c[2];
      c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p1),
           static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(p0)};
    }
    if (++counter_[0] == 0 && ++counter_[1] == 0 && ++counter_[2] == 0) ++counter_[3];
    return c;
  }

 private:
  static constexpr uint32_t kW32A = 0x9E3779B9;
  static constexpr uint32_t kW32B = 0xBB67AE85;
  static constexpr uint32_t kM4x32A = 0xD2511F53;
  static constexpr uint32_t kM4x32B = 0xCD9E8D57;

  Result counter_{};
  Key key_{};
};

// [0, 1) from the low 23 bits.
inline float Uint32ToFloat(uint32_t x) {
  const uint32_t bits = (127u << 23) | (x & 0x7fffffu);
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f - 1.0f;
}

// [0, 1) from 52 bits: the low 20 bits of x0 and all of x1.
inline double Uint64ToDouble(uint32_t x0, uint32_t x1) {
  const uint64_t bits = (uint64_t{1023} << 52) | (static_cast<uint64_t>(x0 & 0xfffffu) << 32) | x1;
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d - 1.0;
}

// [0, 1) in half precision from the low 10 (float16) or 7 (bfloat16) bits, TF's Uint16ToHalf
// and Uint16ToGfloat16: the mantissa of a value in [1, 2), minus one.
inline Eigen::half Uint16ToHalf(uint32_t x) {
  const uint16_t bits = static_cast<uint16_t>((15u << 10) | (x & 0x3ffu));
  return Eigen::numext::bit_cast<Eigen::half>(bits) - Eigen::half(1.0f);
}
inline Eigen::bfloat16 Uint16ToBFloat16(uint32_t x) {
  const uint16_t bits = static_cast<uint16_t>((127u << 7) | (x & 0x7fu));
  return Eigen::numext::bit_cast<Eigen::bfloat16>(bits) - Eigen::bfloat16(1.0f);
}

template <typename T>
inline constexpr bool kIsHalfType =
    std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>;

// Box-Muller, as TF writes it (u1 clamped away from 0 so log stays finite).
inline void BoxMullerFloat(uint32_t x0, uint32_t x1, float* f0, float* f1) {
  float u1 = Uint32ToFloat(x0);
  if (u1 < 1.0e-7f) u1 = 1.0e-7f;
  const float v1 = static_cast<float>(2.0 * M_PI * static_cast<double>(Uint32ToFloat(x1)));
  const float u2 = std::sqrt(-2.0f * std::log(u1));
  *f0 = std::sin(v1) * u2;
  *f1 = std::cos(v1) * u2;
}

inline void BoxMullerDouble(uint32_t x0, uint32_t x1, uint32_t x2, uint32_t x3, double* d0,
                            double* d1) {
  double u1 = Uint64ToDouble(x0, x1);
  if (u1 < 1.0e-7) u1 = 1.0e-7;
  const double v1 = 2 * M_PI * Uint64ToDouble(x2, x3);
  const double u2 = std::sqrt(-2.0 * std::log(u1));
  *d0 = std::sin(v1) * u2;
  *d1 = std::cos(v1) * u2;
}

// Each distribution turns one Philox block into kCount values. T is float, double, or
// Eigen::half / Eigen::bfloat16 (drawn as TF does: four per block, normals through float).
template <typename T>
struct UniformDist {
  static constexpr int kCount = std::is_same_v<T, double> ? 2 : 4;
  std::array<T, kCount> operator()(Philox& gen) const {
    const Philox::Result s = gen();
    std::array<T, kCount> r;
    if constexpr (std::is_same_v<T, float>) {
      for (int i = 0; i < 4; ++i) r[i] = Uint32ToFloat(s[i]);
    } else if constexpr (std::is_same_v<T, Eigen::half>) {
      for (int i = 0; i < 4; ++i) r[i] = Uint16ToHalf(s[i]);
    } else if constexpr (std::is_same_v<T, Eigen::bfloat16>) {
      for (int i = 0; i < 4; ++i) r[i] = Uint16ToBFloat16(s[i]);
    } else {
      for (int i = 0; i < 2; ++i) r[i] = Uint64ToDouble(s[2 * size_t(i)], s[2 * size_t(i) + 1]);
    }
    return r;
  }
};

template <typename T>
struct NormalDist {
  static constexpr int kCount = std::is_same_v<T, double> ? 2 : 4;
  std::array<T, kCount> operator()(Philox& gen) const {
    const Philox::Result s = gen();
    std::array<T, kCount> r;
    if constexpr (std::is_same_v<T, double>) {
      BoxMullerDouble(s[0], s[1], s[2], s[3], &r[0], &r[1]);
    } else {
      float f[4];
      BoxMullerFloat(s[0], s[1], &f[0], &f[1]);
      BoxMullerFloat(s[2], s[3], &f[2], &f[3]);
      for (int i = 0; i < 4; ++i) r[i] = static_cast<T>(f[i]);
    }
    return r;
  }
};

// The 32-bit outputs of a stream one at a time (TF's SingleSampleAdapter).
class SingleSamples {
 public:
  explicit SingleSamples(Philox* gen) : gen_(gen) {}
  uint32_t operator()() {
    if (used_ == 4) {
      block_ = (*gen_)();
      used_ = 0;
    }
    return block_[used_++];
  }

 private:
  Philox* gen_;
  Philox::Result block_{};
  int used_ = 4;
};

// TF's SimplePhilox: draws of one stream in order (its SingleSampleAdapter's 32-bit outputs):
// RandFloat and RandDouble in [0, 1), Uniform(n) and Uniform64(n) as a draw modulo n (the 64-bit
// draw's low word first).
class SimplePhilox {
 public:
  explicit SimplePhilox(Philox* gen) : single_(gen) {}
  float RandFloat() { return Uint32ToFloat(single_()); }
  double RandDouble() {
    const uint32_t x0 = single_();
    const uint32_t x1 = single_();
    return Uint64ToDouble(x0, x1);
  }
  uint32_t Uniform(uint32_t n) { return single_() % n; }
  uint64_t Uniform64(uint64_t n) {
    const uint64_t lo = single_();
    const uint64_t hi = single_();
    return ((hi << 32) | lo) % n;
  }

 private:
  SingleSamples single_;
};

// Normals with |x| < 2, redrawn until kCount fall inside (TF's TruncatedNormalDistribution).
// A variable number of blocks per group: see FillPhiloxVariable.
template <typename T>
struct TruncatedNormalDist {
  static constexpr int kCount = std::is_same_v<T, double> ? 2 : 4;
  std::array<T, kCount> operator()(SingleSamples& samples) const {
    std::array<T, kCount> r;
    int n = 0;
    while (true) {
      if constexpr (std::is_same_v<T, double>) {
        const uint32_t x0 = samples(), x1 = samples(), x2 = samples(), x3 = samples();
        double d[2];
        BoxMullerDouble(x0, x1, x2, x3, &d[0], &d[1]);
        for (double v : d)
          if (std::abs(v) < 2.0) {
            r[n++] = v;
            if (n == kCount) return r;
          }
      } else {
        const uint32_t x0 = samples(), x1 = samples();
        float f[2];
        BoxMullerFloat(x0, x1, &f[0], &f[1]);
        for (float v : f)
          if (std::abs(v) < 2.0f) {
            r[n++] = static_cast<T>(v);
            if (n == kCount) return r;
          }
      }
    }
  }
};

// Integers in [lo, hi) by a modulo of 32 (int32) or 64 (int64) random bits; lo < hi.
template <typename T>
struct UniformIntDist {
  using U = std::make_unsigned_t<T>;
  static constexpr int kCount = sizeof(T) == 4 ? 4 : 2;
  UniformIntDist(T lo, T hi) : lo(lo), range(static_cast<U>(hi) - static_cast<U>(lo)) {}
  std::array<T, kCount> operator()(Philox& gen) const {
    const Philox::Result s = gen();
    std::array<T, kCount> r;
    for (int i = 0; i < kCount; ++i) {
      U bits;
      if constexpr (kCount == 4) {
        bits = s[i];
      } else {
        bits = s[2 * size_t(i)] | (static_cast<uint64_t>(s[2 * size_t(i) + 1]) << 32);
      }
      // lo + bits % range without signed overflow.
      r[i] = static_cast<T>(static_cast<U>(lo) + bits % range);
    }
    return r;
  }
  T lo;
  U range;
};

// Fills out[0, n) with consecutive groups from `gen`; the last group is cut short. One Philox
// block per group, so group g always comes from counter + g whatever the split.
template <typename Dist, typename T>
void FillPhilox(Philox gen, const Dist& dist, T* out, int64_t n) {
  for (int64_t pos = 0; pos < n; pos += Dist::kCount) {
    const auto group = dist(gen);
    const int64_t m = n - pos < Dist::kCount ? n - pos : Dist::kCount;
    for (int64_t i = 0; i < m; ++i) out[pos + i] = group[i];
  }
}

// The same for distributions that use a variable number of samples per group (TF's
// FillPhiloxRandomTask<..., true>): group g starts kCount * 256 / 4 blocks after group g - 1.
template <typename Dist, typename T>
void FillPhiloxVariable(Philox base, const Dist& dist, T* out, int64_t n) {
  constexpr uint64_t kSkipPerGroup = uint64_t{Dist::kCount} * 256 / 4;
  for (int64_t pos = 0, g = 0; pos < n; pos += Dist::kCount, ++g) {
    Philox gen = base;
    gen.Skip(static_cast<uint64_t>(g) * kSkipPerGroup);
    SingleSamples samples(&gen);
    const auto group = dist(samples);
    const int64_t m = n - pos < Dist::kCount ? n - pos : Dist::kCount;
    for (int64_t i = 0; i < m; ++i) out[pos + i] = group[i];
  }
}

// Every bit pattern of an integer type (TF's UniformFullIntDistribution): four 32-bit values
// per block, or two 64-bit ones.
template <typename T>
struct FullIntDist {
  static constexpr int kCount = sizeof(T) == 4 ? 4 : 2;
  std::array<T, kCount> operator()(Philox& gen) const {
    const Philox::Result s = gen();
    std::array<T, kCount> r;
    for (int i = 0; i < kCount; ++i) {
      if constexpr (kCount == 4) {
        r[i] = static_cast<T>(s[i]);
      } else {
        r[i] =
            static_cast<T>(s[2 * size_t(i)] | (static_cast<uint64_t>(s[2 * size_t(i) + 1]) << 32));
      }
    }
    return r;
  }
};

// TF's key and counter for the stateless ops from a [2] seed: the seed is scrambled by one
// Philox block so that either half may be weak.
inline Philox StatelessGenerator(uint64_t seed0, uint64_t seed1) {
  Philox::Result counter = {static_cast<uint32_t>(seed0), static_cast<uint32_t>(seed0 >> 32),
                            static_cast<uint32_t>(seed1), static_cast<uint32_t>(seed1 >> 32)};
  const Philox::Result mix = Philox(counter, Philox::Key{0x3ec8f720, 0x02461e29})();
  return Philox(Philox::Result{0, 0, mix[2], mix[3]}, Philox::Key{mix[0], mix[1]});
}

}  // namespace kiln::exec::random
