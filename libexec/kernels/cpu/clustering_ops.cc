// The CPU kernels of the ops in kernels/clustering_ops.cc: NearestNeighbors' distances as TF
// computes them, 2 * (|p|^2 / 2 + (|c|^2 / 2 - p.c)), nearest first, ties to the lower center
// index; the k-means seeding ops with TF's draws; IsotonicRegression.
#include "kernels/clustering_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <vector>

#include "kernels/kernel_util.h"
#include "kernels/philox.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using clustering::IsotonicTypes;

Status ComputeNearestNeighbors(const KernelContext& ctx) {
  const Tensor& points = ctx.input(0);
  const Tensor& centers = ctx.input(1);
  const Tensor& k_t = ctx.input(2);
  if (points.rank() != 2 || centers.rank() != 2 || k_t.rank() != 0) {
    return ctx.Error("inputs 'points' and 'centers' must be matrices and 'k' a scalar, got ",
                     points.shape().ToString(), ", ", centers.shape().ToString(), " and ",
                     k_t.shape().ToString());
  }
  const int64_t n = points.dim(0), m = centers.dim(0), d = points.dim(1);
  if (centers.dim(1) != d) {
    return ctx.Error("'points' and 'centers' must have the same number of columns, got ", d,
                     " and ", centers.dim(1));
  }
  const int64_t k_in = k_t.scalar<int64_t>();
  if (k_in < 0) return ctx.Error("input 'k' must be >= 0, got ", k_in);
  const int64_t k = std::min(k_in, m);
  KILN_ASSIGN_OR_RETURN(Tensor * indices, ctx.AllocateOutput(0, Shape{n, k}));
  KILN_ASSIGN_OR_RETURN(Tensor * distances, ctx.AllocateOutput(1, Shape{n, k}));
  const float* p = points.data<float>();
  const float* c = centers.data<float>();
  std::vector<float> center_half(m);
  for (int64_t j = 0; j < m; ++j) {
    float s = 0;
    for (int64_t t = 0; t < d; ++t) s += c[j * d + t] * c[j * d + t];
    center_half[j] = 0.5f * s;
  }
  ctx.threads().ParallelFor(n, 1, [&](int64_t begin, int64_t end) {
    std::vector<std::pair<float, int64_t>> partial(m);
    for (int64_t i = begin; i < end; ++i) {
      const float* pi = p + i * d;
      float norm = 0;
      for (int64_t t = 0; t < d; ++t) norm += pi[t] * pi[t];
      for (int64_t j = 0; j < m; ++j) {
        float dot = 0;
        for (int64_t t = 0; t < d; ++t) dot += pi[t] * c[j * d + t];
        partial[j] = {center_half[j] - dot, j};
      }
      std::partial_sort(partial.begin(), partial.begin() + k, partial.end());
      for (int64_t j = 0; j < k; ++j) {
        distances->data<float>()[i * k + j] = 2.0f * (0.5f * norm + partial[j].first);
        indices->data<int64_t>()[i * k + j] = partial[j].second;
      }
    }
  });
  return OkStatus();
}

// ---- KMC2ChainInitialization, KmeansPlusPlusInitialization ------------------------------------

// One Markov chain of k-MC^2: from the first point, move to point i with probability
// min(1, distances[i] / current), drawing as TF's kernel does.
Status ComputeKmc2(const KernelContext& ctx) {
  const Tensor& d = ctx.input(0);
  if (d.rank() != 1 || d.NumElements() == 0)
    return ctx.Error("input 'distances' must be a non-empty vector, got ", d.shape().ToString());
  random::Philox gen(static_cast<uint64_t>(ctx.input(1).scalar<int64_t>()), 0);
  random::SimplePhilox rng(&gen);  // TF's PhiloxRandom(seed)
  const float* dist = d.data<float>();
  int64_t selected = 0;
  float selected_distance = dist[0];
  for (int64_t i = 1; i < d.NumElements(); ++i) {
    if (dist[i] > rng.RandFloat() * selected_distance) {
      selected = i;
      selected_distance = dist[i];
    }
  }
  ctx.SetOutput(0, Tensor::Scalar<int64_t>(selected));
  return OkStatus();
}

// k-means++ seeding: the first point uniformly, then points drawn in proportion to their half
// squared distance to the nearest chosen one; with retries, the draw (of 1 + retries) that
// leaves the least total distance. TF's draws, distances and order.
Status ComputeKmeansPlusPlus(const KernelContext& ctx) {
  const Tensor& pts = ctx.input(0);
  const int64_t n = pts.dim(0), dims = pts.dim(1);
  const int64_t k = ctx.input(1).scalar<int64_t>();
  const int64_t retries_in = ctx.input(3).scalar<int64_t>();
  const int64_t retries =
      retries_in >= 0 ? retries_in : 2 + static_cast<int64_t>(std::log(static_cast<double>(k)));
  if (n <= 0) return ctx.Error("Expected points.rows() > 0.");
  if (k <= 0) return ctx.Error("Expected num_to_sample > 0.");
  if (k > n) return ctx.Error("Expected num_to_sample <= points.rows(). ", k, " vs ", n, ".");
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{k, dims}));
  const float* p = pts.data<float>();
  std::vector<float> half_norm(n);
  for (int64_t i = 0; i < n; ++i) {
    float s = 0;
    for (int64_t t = 0; t < dims; ++t) s += p[i * dims + t] * p[i * dims + t];
    half_norm[i] = 0.5f * s;
  }
  // Half squared distances of every point to point y, min'ed into `into`.
  auto min_distances_to = [&](int64_t y, const std::vector<float>& from, std::vector<float>* into) {
    for (int64_t i = 0; i < n; ++i) {
      float dot = 0;
      for (int64_t t = 0; t < dims; ++t) dot += p[i * dims + t] * p[y * dims + t];
      (*into)[i] = std::min(from[i], half_norm[i] - dot + half_norm[y]);
    }
  };
  random::Philox gen(static_cast<uint64_t>(ctx.input(2).scalar<int64_t>()), 0);
  random::SimplePhilox rng(&gen);  // TF's PhiloxRandom(seed)
  std::unordered_set<int64_t> chosen;
  std::vector<float> min_dist(n, std::numeric_limits<float>::infinity()), cumsum(n);
  // A draw past the last point (at the total itself, or all distances 0) ends the search, as
  // TF's, and takes the last point. Redraws of chosen points are bounded: TF's would not end
  // when only chosen points keep weight (coinciding points, rounding).
  bool stuck = false;
  auto draw = [&]() -> int64_t {
    if (chosen.empty()) return static_cast<int64_t>(rng.Uniform64(static_cast<uint64_t>(n)));
    int64_t index = 0;
    int64_t tries = 0;
    do {
      index = std::upper_bound(cumsum.begin(), cumsum.end(), rng.RandFloat() * cumsum[n - 1]) -
              cumsum.begin();
      if (++tries > 1000 * n) {
        stuck = true;
        break;
      }
    } while (index < n && chosen.count(index) != 0);
    return std::min(index, n - 1);
  };
  std::vector<float> candidate(n), best(n);
  for (int64_t s = 0; s < k; ++s) {
    if (s > 0) std::partial_sum(min_dist.begin(), min_dist.end(), cumsum.begin());
    int64_t next = 0;
    if (retries == 0) {
      next = draw();
      min_distances_to(next, min_dist, &min_dist);
    } else {
      float best_potential = std::numeric_limits<float>::infinity();
      for (int64_t r = 0; r <= retries; ++r) {
        const int64_t index = draw();
        min_distances_to(index, min_dist, &candidate);
        float potential = 0;
        for (float v : candidate) potential += v;
        if (potential < best_potential) {
          best_potential = potential;
          next = index;
          best.swap(candidate);
        }
      }
      min_dist.swap(best);
    }
    if (stuck)
      return ctx.Error("could not draw a point not sampled yet after ", 1000 * n,
                       " draws: the points left have no distance to the ones sampled");
    std::copy_n(p + next * dims, dims, out->data<float>() + s * dims);
    chosen.insert(next);
  }
  return OkStatus();
}

// ---- IsotonicRegression ----------------------------------------------------------------------

// The non-increasing least-squares fit of each row (the last dim), by TF's pool-adjacent
// violators: blocks of equal value merged while a later block's mean exceeds the one before,
// means in the output type (float for 8/16-bit integers, double for 32/64-bit ones, the input's
// own float type otherwise); `segments` numbers each element's block.
template <typename T, typename O>
void IsotonicRows(const KernelContext& ctx, const T* in, O* out, int32_t* seg, int64_t rows,
                  int64_t n) {
  struct Pool {
    int64_t start, limit;
    O sum, mean;
  };
  ctx.threads().ParallelFor(
      rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(n, 1)), [&](int64_t begin, int64_t end) {
        std::vector<Pool> pools;
        for (int64_t r = begin; r < end; ++r) {
          pools.clear();
          for (int64_t c = 0; c < n; ++c) {
            const O y = static_cast<O>(in[r * n + c]);
            pools.push_back({c, c + 1, y, y});
            while (pools.size() > 1 && pools.back().mean > pools[pools.size() - 2].mean) {
              Pool& prev = pools[pools.size() - 2];
              prev.limit = pools.back().limit;
              prev.sum = prev.sum + pools.back().sum;
              const auto count = static_cast<double>(prev.limit - prev.start);
              if constexpr (std::is_floating_point_v<O>) {
                prev.mean = prev.sum / static_cast<O>(count);
              } else {  // Eigen's half types: TF divides by the count in the type itself
                prev.mean = prev.sum / static_cast<O>(static_cast<float>(count));
              }
              pools.pop_back();
            }
          }
          for (size_t id = 0; id < pools.size(); ++id)
            for (int64_t c = pools[id].start; c < pools[id].limit; ++c) {
              out[r * n + c] = pools[id].mean;
              seg[r * n + c] = static_cast<int32_t>(id);
            }
        }
      });
}

Status ComputeIsotonic(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 1) return ctx.Error("input must have rank >= 1, got ", x.shape().ToString());
  if (x.NumElements() > std::numeric_limits<int32_t>::max()) return ctx.Error("Tensor too large");
  const int64_t n = x.dim(x.rank() - 1);
  const int64_t rows = n == 0 ? 0 : x.NumElements() / n;
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x.shape()));
  KILN_ASSIGN_OR_RETURN(Tensor * seg, ctx.AllocateOutput(1, x.shape()));
  return Dispatch<IsotonicTypes>(x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using CT = ComputeType<T>;
    int32_t* s = seg->data<int32_t>();
    if constexpr (std::is_integral_v<T>) {
      using O = std::conditional_t<(sizeof(T) <= 2), float, double>;
      IsotonicRows<T, O>(ctx, x.data<T>(), out->data<O>(), s, rows, n);
    } else {
      IsotonicRows<CT, CT>(ctx, ComputeData<T>(x), MutableComputeData<T>(out), s, rows, n);
    }
    return OkStatus();
  });
}

constexpr KernelEntry kCpu[] = {
    {"NearestNeighbors", ComputeNearestNeighbors},
    {"KMC2ChainInitialization", ComputeKmc2},
    {"KmeansPlusPlusInitialization", ComputeKmeansPlusPlus},
    {"IsotonicRegression", ComputeIsotonic},
};

}  // namespace

std::span<const KernelEntry> ClusteringCpuKernels() { return kCpu; }

}  // namespace kiln::exec
