// Samples of a normal(mean, stddev) truncated to [minval, maxval], as TensorFlow's CPU
// TruncatedNormalFunctor draws them (parameterized_truncated_normal_op.cc): normal rejection
// when the bounds are wide, uniform rejection when narrow, exponential rejection in a tail;
// every step in T (float, double or Eigen::half, so half rounds where TF's does).
//
// TF draws a batch's samples one after another from one stream and, in a work shard, moves on
// to the next batch where the previous one stopped; a shard starts at a skip that depends on
// where TF's thread pool split the work. Callers here run everything as TF's single shard,
// which is TF's own result whenever it does not split (small outputs, or one thread).
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <utility>

#include "kernels/philox.h"

namespace kiln::exec::random {

inline constexpr int kTruncatedNormalMaxIterations = 1000;

template <typename T>
struct TruncatedNormalParams {
  T mean, stddev, minval, maxval;
};

// Draws `count` samples of one batch from `gen` (moved on past what was used), passing each to
// write(j, value) for j = 0, 1, ...; returns nullptr, or TF's error message.
template <typename T, typename Write>
const char* SampleTruncatedNormal(Philox& gen, TruncatedNormalParams<T> p, int64_t count,
                                  const Write& write) {
  using Eigen::numext::exp;
  using Eigen::numext::isfinite;
  using Eigen::numext::isinf;
  using Eigen::numext::log;
  using Eigen::numext::sqrt;
  T mean = p.mean, stddev = p.stddev, minval = p.minval, maxval = p.maxval;
  if (!(stddev > T(0) && minval < maxval && (isfinite(minval) || isfinite(maxval))))
    return "Invalid parameters";
  if (count <= 0) return nullptr;
  const T kStdDevsInsideBoundsToUseRandnSampler = T(1.3);
  int num_iterations = 0;
  // Make a one-sided bound the lower one, or both bounds positive.
  if ((isinf(minval) && minval < T(0)) || maxval < mean) {
    std::swap(minval, maxval);
    stddev = -stddev;
  }
  const T norm_min = (minval - mean) / stddev;
  const T norm_max = (maxval - mean) / stddev;
  const T sqrt_factor = sqrt((norm_min * norm_min) + T(4));
  const T cutoff =
      T(2) * exp(T(0.5) + (norm_min * (norm_min - sqrt_factor)) / T(4)) / (norm_min + sqrt_factor);
  const T diff = norm_max - norm_min;
  int64_t j = 0;
  if (((norm_min < -kStdDevsInsideBoundsToUseRandnSampler) && (norm_max >= T(0.))) ||
      ((norm_max > kStdDevsInsideBoundsToUseRandnSampler) && (norm_min <= T(0.)))) {
    // Normal samples, rejected outside the bounds.
    while (j < count) {
      const auto randn = NormalDist<T>()(gen);
      for (const T x : randn) {
        if (x >= norm_min && x <= norm_max) {
          write(j, x * stddev + mean);
          if (++j >= count) break;
          num_iterations = 0;
        } else if (++num_iterations > kTruncatedNormalMaxIterations) {
          return "TruncatedNormal randn rejection sampler failed to accept a sample.";
        }
      }
    }
  } else if (diff < cutoff) {
    // Uniform samples on [norm_min, norm_max], accepted with the normal's relative density.
    const T plus_factor = (norm_min < T(0)) ? T(0) : norm_min * norm_min;
    constexpr int kCount = UniformDist<T>::kCount;
    while (j < count) {
      const auto rand = UniformDist<T>()(gen);
      T z[kCount], g[kCount];
      for (int i = 0; i < kCount; ++i) {
        z[i] = rand[i] * diff + norm_min;
        g[i] = (plus_factor - z[i] * z[i]) / T(2.0);
      }
      const auto u = UniformDist<T>()(gen);
      for (int i = 0; i < kCount; ++i) {
        const bool accept = u[i] <= exp(g[i]);
        if (accept || num_iterations + 1 >= kTruncatedNormalMaxIterations) {
          if (!accept)
            return "TruncatedNormal uniform rejection sampler failed to  accept a sample.";
          write(j, z[i] * stddev + mean);
          if (++j >= count) break;
          num_iterations = 0;
        } else {
          num_iterations++;
        }
      }
    }
  } else {
    // Exponential samples offset by norm_min, rate chosen to maximise acceptance.
    const T alpha = (norm_min + sqrt((norm_min * norm_min) + T(4))) / T(2);
    constexpr int kCount = UniformDist<T>::kCount;
    while (j < count) {
      const auto rand = UniformDist<T>()(gen);
      for (int i = 0; i < kCount; i += 2) {
        const T z = -log(rand[i]) / alpha + norm_min;
        const T x = norm_min < alpha ? alpha - z : norm_min - alpha;
        const T g = exp(-x * x / T(2.0));
        const T u = rand[i + 1];
        const bool accept = (u <= g && z < norm_max);
        if (accept || num_iterations + 1 >= kTruncatedNormalMaxIterations) {
          if (!accept)
            return "TruncatedNormal exponential distribution rejection sampler failed to accept "
                   "a sample.";
          write(j, z * stddev + mean);
          if (++j >= count) break;
          num_iterations = 0;
        } else {
          num_iterations++;
        }
      }
    }
  }
  return nullptr;
}

}  // namespace kiln::exec::random
