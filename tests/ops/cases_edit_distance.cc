// Op-tester cases of EditDistance. The reference gathers each sparse tensor's sequences into a
// dense table keyed by the group position and computes the Levenshtein distance by full
// recursion over prefixes (memoised); a few cases carry values recorded from TensorFlow 2.21.
#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "ops/array_ref.h"
#include "ops/op_cases.h"
#include "ops/ref_util.h"

namespace kiln::testing {
namespace {

int64_t Distance(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::map<std::pair<size_t, size_t>, int64_t> memo;
  std::function<int64_t(size_t, size_t)> d = [&](size_t i, size_t j) -> int64_t {
    if (i == 0) return static_cast<int64_t>(j);
    if (j == 0) return static_cast<int64_t>(i);
    auto it = memo.find({i, j});
    if (it != memo.end()) return it->second;
    const int64_t r = std::min(
        {d(i - 1, j) + 1, d(i, j - 1) + 1, d(i - 1, j - 1) + (a[i - 1] == b[j - 1] ? 0 : 1)});
    memo[{i, j}] = r;
    return r;
  };
  return d(a.size(), b.size());
}

// Sequences by group index (row-major position in the output), values as strings.
std::map<int64_t, std::vector<std::string>> Sequences(const Tensor& ind, const Tensor& val,
                                                      const std::vector<int64_t>& out_dims) {
  std::map<int64_t, std::vector<std::string>> seqs;
  const int64_t r = ind.dim(1);
  for (int64_t i = 0; i < ind.dim(0); ++i) {
    int64_t loc = 0;
    for (int64_t d = 0; d + 1 < r; ++d) loc = loc * out_dims[d] + ind.data<int64_t>()[i * r + d];
    std::string v;
    if (val.dtype() == DType::kString) {
      v = val.data<std::string>()[i];
    } else {
      v = std::to_string(ValueAt(val, i));
    }
    seqs[loc].push_back(v);
  }
  return seqs;
}

// Entries sorted in row-major order (the reference assumes what TF assumes).
OpCase EditCase(const std::string& name, const Tensor& hi, const Tensor& hv,
                const std::vector<int64_t>& hs, const Tensor& ti, const Tensor& tv,
                const std::vector<int64_t>& ts, bool normalize) {
  return OpCaseBuilder("EditDistance", "EditDistance " + name + " " + DTypeShortName(hv.dtype()) +
                                           (normalize ? " normalized" : ""))
      .T(hv.dtype())
      .Bool("normalize", normalize)
      .Input(hi)
      .Input(hv)
      .ConstInput(Vec<int64_t>(hs))
      .Input(ti)
      .Input(tv)
      .ConstInput(Vec<int64_t>(ts))
      .Reference1([hs, ts, normalize](const std::vector<Tensor>& in) {
        std::vector<int64_t> dims;
        for (size_t d = 0; d + 1 < ts.size(); ++d) dims.push_back(std::max(hs[d], ts[d]));
        Tensor out(DType::kFloat, Shape::FromDims(dims).value());
        std::fill_n(out.data<float>(), out.NumElements(), 0.0f);
        const auto hyp = Sequences(in[0], in[1], dims);
        const auto truth = Sequences(in[3], in[4], dims);
        for (const auto& [loc, t] : truth) {
          auto h = hyp.find(loc);
          const float dist =
              h == hyp.end() ? static_cast<float>(t.size()) : float(Distance(t, h->second));
          out.data<float>()[loc] = normalize ? dist / static_cast<float>(t.size()) : dist;
        }
        for (const auto& [loc, h] : hyp) {
          if (truth.count(loc)) continue;
          out.data<float>()[loc] =
              normalize ? std::numeric_limits<float>::infinity() : static_cast<float>(h.size());
        }
        return out;
      })
      .Build();
}

Tensor Strings(const std::vector<std::string>& v) { return Vec<std::string>(v); }

}  // namespace

std::vector<OpCase> EditDistanceCases() {
  std::vector<OpCase> cases;
  // tf.edit_distance's documented example: hypothesis [2, 1, 2], truth [2, 2, 3].
  const Tensor hi = Make<int64_t>({0, 0, 0, 1, 0, 0, 1, 0, 1}, Shape{3, 3});
  const Tensor ti = Make<int64_t>({0, 1, 0, 1, 0, 0, 1, 0, 1, 1, 0, 2}, Shape{4, 3});
  for (bool normalize : {false, true}) {
    cases.push_back(EditCase("doc", hi, Strings({"a", "b", "c"}), {2, 1, 2}, ti,
                             Strings({"a", "b", "c", "a"}), {2, 2, 3}, normalize));
  }
  // TF: the same example, normalized, gives [[inf, 1], [1/3, 0]].
  OpCase doc = EditCase("doc recorded", hi, Strings({"a", "b", "c"}), {2, 1, 2}, ti,
                        Strings({"a", "b", "c", "a"}), {2, 2, 3}, true);
  doc.reference = [](const std::vector<Tensor>&) {
    return std::vector<Tensor>{Make<float>(
        {std::numeric_limits<float>::infinity(), 1.0f, 0.3333333432674408f, 0.0f}, Shape{2, 2})};
  };
  cases.push_back(doc);
  // Longer integer sequences: kitten -> sitting style edits in 3 rows of a rank-2 batch.
  const Tensor hi2 = Make<int64_t>({0, 0, 0, 1, 0, 2, 0, 3, 1, 0, 1, 1, 2, 0}, Shape{7, 2});
  const Tensor ti2 = Make<int64_t>({0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 1, 0, 3, 0}, Shape{7, 2});
  for (bool normalize : {false, true}) {
    cases.push_back(EditCase("int", hi2, Vec<int32_t>({1, 2, 3, 4, 5, 6, 7}), {3, 4}, ti2,
                             Vec<int32_t>({2, 2, 3, 5, 4, 5, 9}), {4, 5}, normalize));
    cases.push_back(EditCase("float", hi2, Vec<float>({1, 2, 3, 4, 5, 6, 7}), {3, 4}, ti2,
                             Vec<float>({1, 2, 4, 4, 9, 5, 7}), {4, 6}, normalize));
  }
  cases.push_back(EditCase(
      "rank 4", Make<int64_t>({0, 1, 0, 0, 0, 1, 0, 1, 1, 0, 2, 0}, Shape{3, 4}),
      Vec<int64_t>({3, 4, 5}), {2, 2, 3, 2}, Make<int64_t>({0, 1, 0, 0, 1, 0, 1, 0}, Shape{2, 4}),
      Vec<int64_t>({3, 5}), {2, 2, 2, 2}, true));
  cases.push_back(EditCase("empty", Tensor(DType::kInt64, Shape{0, 2}), Vec<int32_t>({}), {2, 3},
                           Tensor(DType::kInt64, Shape{0, 2}), Vec<int32_t>({}), {3, 1}, true));
  return cases;
}

}  // namespace kiln::testing
