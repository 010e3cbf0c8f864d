// The einsum-as-one-product plan (kernels/einsum_plan.h) the GPU's Einsum runs: executed here
// with plain loops (permute, batched product, permute) against a sum over every label
// assignment, for the contractions attention layers use; and what it must refuse.
#include "kernels/einsum_plan.h"

#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kiln::exec {
namespace {

std::vector<float> Permuted(const std::vector<float>& x, const std::vector<int64_t>& dims,
                            const std::vector<int>& perm) {
  const int rank = static_cast<int>(dims.size());
  std::vector<int64_t> strides(rank, 1), out_dims(rank);
  for (int d = rank - 2; d >= 0; --d) strides[d] = strides[d + 1] * dims[d + 1];
  for (int d = 0; d < rank; ++d) out_dims[d] = dims[perm[d]];
  std::vector<float> y(x.size());
  for (size_t i = 0; i < y.size(); ++i) {
    int64_t r = static_cast<int64_t>(i), off = 0;
    for (int d = rank - 1; d >= 0; --d) {
      off += (r % out_dims[d]) * strides[perm[d]];
      r /= out_dims[d];
    }
    y[i] = x[static_cast<size_t>(off)];
  }
  return y;
}

// Sum over every assignment of the labels.
std::vector<float> Reference(const std::string& sa, const std::string& sb, const std::string& so,
                             const std::vector<int64_t>& da, const std::vector<int64_t>& db,
                             const std::vector<float>& a, const std::vector<float>& b) {
  std::map<char, int64_t> size;
  for (size_t i = 0; i < sa.size(); ++i) size[sa[i]] = da[i];
  for (size_t i = 0; i < sb.size(); ++i) size[sb[i]] = db[i];
  int64_t n_out = 1;
  for (char c : so) n_out *= size[c];
  std::vector<float> out(static_cast<size_t>(n_out), 0.0f);
  std::map<char, int64_t> at;
  std::vector<char> labels;
  for (const auto& [c, s] : size) labels.push_back(c);
  auto off = [&](const std::string& s) {
    int64_t o = 0;
    for (char c : s) o = o * size[c] + at[c];
    return static_cast<size_t>(o);
  };
  std::function<void(size_t)> loop = [&](size_t i) {
    if (i == labels.size()) {
      out[off(so)] += a[off(sa)] * b[off(sb)];
      return;
    }
    for (at[labels[i]] = 0; at[labels[i]] < size[labels[i]]; ++at[labels[i]]) loop(i + 1);
  };
  loop(0);
  return out;
}

void CheckPlan(const std::string& eq, const std::vector<int64_t>& da,
               const std::vector<int64_t>& db) {
  CAPTURE(eq);
  const size_t comma = eq.find(','), arrow = eq.find("->");
  const std::string sa = eq.substr(0, comma), sb = eq.substr(comma + 1, arrow - comma - 1),
                    so = eq.substr(arrow + 2);
  auto sha = Shape::FromDims(da), shb = Shape::FromDims(db);
  auto plan = PlanEinsumProduct(eq, *sha, *shb);
  REQUIRE_MESSAGE(plan.ok(), plan.status().ToString());
  std::vector<float> a(static_cast<size_t>(sha->num_elements())),
      b(static_cast<size_t>(shb->num_elements()));
  for (size_t i = 0; i < a.size(); ++i) a[i] = 0.5f + static_cast<float>(i % 7) * 0.25f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = -1.0f + static_cast<float>(i % 5) * 0.5f;
  const std::vector<float> pa = Permuted(a, da, plan->perm_a), pb = Permuted(b, db, plan->perm_b);
  const int64_t bt = plan->batch, m = plan->m, n = plan->n, k = plan->k;
  std::vector<float> prod(static_cast<size_t>(bt * m * n), 0.0f);
  for (int64_t x = 0; x < bt; ++x)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t l = 0; l < k; ++l)
          prod[static_cast<size_t>((x * m + i) * n + j)] +=
              pa[static_cast<size_t>((x * m + i) * k + l)] *
              pb[static_cast<size_t>((x * k + l) * n + j)];
  const std::vector<float> got = Permuted(prod, plan->product_dims, plan->out_perm);
  const std::vector<float> want = Reference(sa, sb, so, da, db, a, b);
  REQUIRE(got.size() == want.size());
  CHECK(plan->out_shape.num_elements() == static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i)
    CHECK_MESSAGE(std::abs(got[i] - want[i]) <= 1e-4f * std::max(1.0f, std::abs(want[i])),
                  "element ", i, ": ", got[i], " vs ", want[i]);
}

TEST_CASE("einsum plan: attention's contractions as one batched product") {
  CheckPlan("abc,cde->abde", {2, 3, 4}, {4, 5, 6});          // query/key/value projection
  CheckPlan("aecd,abcd->acbe", {2, 5, 3, 4}, {2, 6, 3, 4});  // scores
  CheckPlan("acbe,aecd->abcd", {2, 3, 6, 5}, {2, 5, 3, 4});  // context
  CheckPlan("abcd,cde->abe", {2, 6, 3, 4}, {3, 4, 5});       // output projection
  CheckPlan("ij,jk->ik", {3, 4}, {4, 5});
  CheckPlan("bij,bkj->bik", {2, 3, 4}, {2, 5, 4});
  CheckPlan("ij,ij->ij", {3, 4}, {3, 4});  // all batch: an element-wise product
}

TEST_CASE("einsum plan: what one product cannot do is refused") {
  auto sums = PlanEinsumProduct("ij,jk->i", Shape{2, 3}, Shape{3, 4});
  CHECK(sums.status().code() == StatusCode::kUnimplemented);
  auto broadcast = PlanEinsumProduct("bij,bjk->bik", Shape{1, 2, 3}, Shape{4, 3, 5});
  CHECK(broadcast.status().code() == StatusCode::kUnimplemented);
  auto repeated = PlanEinsumProduct("ii,ij->ij", Shape{3, 3}, Shape{3, 4});
  CHECK(repeated.status().code() == StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace kiln::exec
