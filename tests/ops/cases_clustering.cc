// Op-tester cases of NearestNeighbors. The reference sums squared coordinate differences in
// double and sorts the centers by (distance, index); one case carries TensorFlow 2.21's values.
#include <algorithm>
#include <utility>
#include <vector>

#include "ops/array_ref.h"
#include "ops/op_cases.h"
#include "ops/ref_util.h"

namespace kiln::testing {
namespace {

std::vector<Tensor> RefNearest(const Tensor& points, const Tensor& centers, int64_t k_in) {
  const int64_t n = points.dim(0), m = centers.dim(0), d = points.dim(1);
  const int64_t k = std::min(k_in, m);
  Tensor idx(DType::kInt64, Shape{n, k});
  Tensor dist(DType::kFloat, Shape{n, k});
  for (int64_t i = 0; i < n; ++i) {
    std::vector<std::pair<double, int64_t>> all;
    for (int64_t j = 0; j < m; ++j) {
      double s = 0;
      for (int64_t t = 0; t < d; ++t) {
        const double diff =
            double(points.data<float>()[i * d + t]) - centers.data<float>()[j * d + t];
        s += diff * diff;
      }
      all.emplace_back(s, j);
    }
    std::sort(all.begin(), all.end());
    for (int64_t j = 0; j < k; ++j) {
      idx.data<int64_t>()[i * k + j] = all[j].second;
      dist.data<float>()[i * k + j] = static_cast<float>(all[j].first);
    }
  }
  return {idx, dist};
}

OpCase NearestCase(const std::string& name, const Tensor& points, const Tensor& centers,
                   int64_t k) {
  return OpCaseBuilder("NearestNeighbors", "NearestNeighbors " + name + " k=" + std::to_string(k))
      .Input(points)
      .Input(centers)
      .ConstInput(Tensor::Scalar<int64_t>(k))
      .Reference([k](const std::vector<Tensor>& in) { return RefNearest(in[0], in[1], k); })
      .Tolerance(1e-4)
      .Build();
}

}  // namespace

std::vector<OpCase> ClusteringCases() {
  std::vector<OpCase> cases;
  const Tensor p = Make<float>({0, 0, 1, 1, 3, 0.5f, -2, 4}, Shape{4, 2});
  const Tensor c = Make<float>({0, 0.5f, 2, 1, -1, 3}, Shape{3, 2});
  for (int64_t k : {0, 1, 2, 5}) cases.push_back(NearestCase("small", p, c, k));
  // TF: nearest_neighbors(p, c, 2).
  OpCase tf = NearestCase("small (TF values)", p, c, 2);
  tf.reference = [](const std::vector<Tensor>&) {
    return std::vector<Tensor>{
        Make<int64_t>({0, 1, 1, 0, 1, 0, 2, 0}, Shape{4, 2}),
        Make<float>({0.25f, 5.0f, 1.0f, 1.25f, 1.25f, 9.0f, 2.0f, 16.25f}, Shape{4, 2})};
  };
  cases.push_back(tf);
  const Tensor rp = RandomOf(DType::kFloat, Shape{37, 5}, 3);
  const Tensor rc = RandomOf(DType::kFloat, Shape{11, 5}, 4);
  for (int64_t k : {1, 3, 11}) cases.push_back(NearestCase("random", rp, rc, k));
  return cases;
}

}  // namespace kiln::testing
