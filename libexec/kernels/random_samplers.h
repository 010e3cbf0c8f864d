// One draw of the gamma, Poisson and binomial distributions from a Philox stream, written as
// TensorFlow's CPU kernels compute them (stateless_random_gamma_op.cc, random_op.cc's
// RandomGamma, random_poisson_op.cc, random_binomial_op.cc), so that the same stream gives the
// same value: every intermediate in double, the same expression order, and buffered draws
// handed out last-first as TF's RandomSampleBuffer and UNIFORM macros do.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "kernels/philox.h"

namespace kiln::exec::random {

// Blocks TF reserves per output element of these samplers: output i draws from the stream
// skipped by i * kBlocksPerSample (kInversionBlocks for the binomial inversion).
inline constexpr uint64_t kBlocksPerSample = 256;
inline constexpr uint64_t kInversionBlocks = 42;

// A distribution's values one at a time, from the end of each group (TF's RandomSampleBuffer).
template <typename Dist>
class LastFirst {
 public:
  explicit LastFirst(Philox* gen) : gen_(gen) {}
  double operator()() {
    if (left_ == 0) {
      group_ = Dist()(*gen_);
      left_ = Dist::kCount;
    }
    return group_[--left_];
  }

 private:
  Philox* gen_;
  decltype(Dist()(std::declval<Philox&>())) group_{};
  int left_ = 0;
};

using DoubleUniforms = LastFirst<UniformDist<double>>;
using DoubleNormals = LastFirst<NormalDist<double>>;

// Marsaglia and Tsang's gamma(alpha) sampler. `log1p_exponential`: for alpha == 1 the stateless
// kernel takes -log1p(-u), the stateful RandomGamma -log(1 - u) (one uniform either way).
struct GammaSampler {
  GammaSampler(double alpha, bool log1p_exponential)
      : alpha(alpha),
        below_one(alpha < 1.0),
        d(alpha + (alpha < 1.0 ? 2.0 / 3 : -1.0 / 3)),
        c(1.0 / 3 / std::sqrt(d)),
        log1p_exponential(log1p_exponential) {}

  double operator()(Philox gen) const {
    if (alpha == 1.0) {
      const double u = UniformDist<double>()(gen)[1];
      return log1p_exponential ? -std::log1p(-u) : -std::log(1.0 - u);
    }
    DoubleNormals normal(&gen);
    DoubleUniforms uniform(&gen);
    while (true) {
      const double x = normal();
      double v = 1 + c * x;
      if (v <= 0) continue;
      v = v * v * v;
      const double u = uniform();
      if ((u < 1 - 0.0331 * (x * x) * (x * x)) ||
          (std::log(u) < 0.5 * x * x + d * (1 - v + std::log(v)))) {
        double res = d * v;
        if (below_one) {
          const double b = uniform();
          res *= std::pow(b, 1 / alpha);
        }
        return res;
      }
    }
  }

  double alpha;
  bool below_one;
  double d, c;
  bool log1p_exponential;
};

// Poisson(rate): Knuth's product of uniforms below 10, Hormann's transformed rejection above.
// `highest` is the output type's largest value (a draw above it is redrawn).
struct PoissonSampler {
  PoissonSampler(double rate, double highest)
      : rate(rate),
        highest(highest),
        exp_neg_rate(std::exp(-rate)),
        log_rate(std::log(rate)),
        b(0.931 + 2.53 * std::sqrt(rate)),
        a(-0.059 + 0.02483 * b),
        inv_alpha(1.1239 + 1.1328 / (b - 3.4)) {}

  double operator()(Philox gen) const {
    DoubleUniforms uniform(&gen);
    if (rate < 10) {
      double prod = 1, x = 0;
      while (true) {
        prod = prod * uniform();
        if (prod <= exp_neg_rate && x <= highest) return x;
        x += 1;
      }
    }
    while (true) {
      const double u = uniform() - 0.5;
      const double v = uniform();
      const double u_shifted = 0.5 - std::abs(u);
      const double k = std::floor((2 * a / u_shifted + b) * u + rate + 0.43);
      if (k > highest) continue;
      if (u_shifted >= 0.07 && v <= 0.9277 - 3.6224 / (b - 2)) return k;
      if (k < 0 || (u_shifted < 0.013 && v > u_shifted)) continue;
      const double s = std::log(v * inv_alpha / (a / (u_shifted * u_shifted) + b));
      const double t = -rate + k * log_rate - std::lgamma(k + 1);
      if (s <= t) return k;
    }
  }

  double rate, highest, exp_neg_rate, log_rate, b, a, inv_alpha;
};

// Binomial(count, prob) by inversion: geometric gaps until they pass count.
inline double BinomialInversion(double count, double prob, Philox gen) {
  DoubleUniforms uniform(&gen);
  double geom_sum = 0;
  int num_geom = 0;
  while (true) {
    const double u = uniform();
    geom_sum += std::ceil(std::log(u) / std::log1p(-prob));
    if (geom_sum > count) break;
    ++num_geom;
  }
  return num_geom;
}

inline double StirlingApproxTail(double k) {
  static constexpr double kTailValues[] = {
      0.0810614667953272,  0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
      0.0166446911898211,  0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
      0.00925546218271273, 0.00833056343336287};
  if (k <= 9) return kTailValues[static_cast<int>(k)];
  const double kp1sq = (k + 1) * (k + 1);
  return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1);
}

// Binomial(count, prob) by Hormann's BTRS transformed rejection (count * prob >= 10).
inline double BinomialBtrs(double count, double prob, Philox gen) {
  const double stddev = std::sqrt(count * prob * (1 - prob));
  const double b = 1.15 + 2.53 * stddev;
  const double a = -0.0873 + 0.0248 * b + 0.01 * prob;
  const double c = count * prob + 0.5;
  const double v_r = 0.92 - 4.2 / b;
  const double r = prob / (1 - prob);
  const double alpha = (2.83 + 5.1 / b) * stddev;
  const double m = std::floor((count + 1) * prob);
  DoubleUniforms uniform(&gen);
  while (true) {
    double u = uniform();
    double v = uniform();
    u = u - 0.5;
    const double us = 0.5 - std::abs(u);
    const double k = std::floor((2 * a / us + b) * u + c);
    if (us >= 0.07 && v <= v_r) return k;
    if (k < 0 || k > count) continue;
    v = std::log(v * alpha / (a / (us * us) + b));
    const double upperbound =
        ((m + 0.5) * std::log((m + 1) / (r * (count - m + 1))) +
         (count + 1) * std::log((count - m + 1) / (count - k + 1)) +
         (k + 0.5) * std::log(r * (count - k + 1) / (k + 1)) + StirlingApproxTail(m) +
         StirlingApproxTail(count - m) - StirlingApproxTail(k) - StirlingApproxTail(count - k));
    if (v <= upperbound) return k;
  }
}

// double -> U as x86 converts: out-of-range and NaN give the integer type's lowest value
// (what TF's static_cast does on its CPUs) instead of undefined behaviour.
template <typename U>
U CastSample(double v) {
  if constexpr (std::numeric_limits<U>::is_integer) {
    constexpr double kLimit = -static_cast<double>(std::numeric_limits<U>::min());  // 2^(bits-1)
    if (!(v > -kLimit - 1 && v < kLimit)) return std::numeric_limits<U>::min();
    return static_cast<U>(v);
  } else {
    return static_cast<U>(v);
  }
}

}  // namespace kiln::exec::random
