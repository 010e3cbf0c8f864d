// Op-tester cases of Einsum: the contractions of attention layers and EinsumDense, batch
// broadcasting through ellipses, sums over labels one operand has alone, transposes.
#include <map>

#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

// Every assignment of label values, accumulated into the output: slow and obviously right.
Tensor RefEinsum(const std::string& lhs0, const std::string& lhs1, const std::string& out,
                 const std::vector<Tensor>& in) {
  std::map<char, int64_t> sizes;
  const std::vector<std::string> subs =
      in.size() == 2 ? std::vector<std::string>{lhs0, lhs1} : std::vector<std::string>{lhs0};
  for (size_t i = 0; i < subs.size(); ++i)
    for (size_t d = 0; d < subs[i].size(); ++d)
      sizes[subs[i][d]] = std::max<int64_t>(sizes[subs[i][d]], in[i].dim(static_cast<int>(d)));
  std::vector<char> labels;
  for (const auto& [l, s] : sizes) labels.push_back(l);
  Shape out_shape;
  for (char l : out) out_shape.AddDim(sizes[l]);
  Tensor r(DType::kDouble, out_shape);
  std::map<char, int64_t> idx;
  auto offset = [&](const std::string& sub, const Shape& shape) {
    int64_t o = 0;
    for (size_t d = 0; d < sub.size(); ++d) {
      const int64_t dim = shape.dim(static_cast<int>(d));
      o = o * dim + (dim == 1 ? 0 : idx[sub[d]]);
    }
    return o;
  };
  std::function<void(size_t)> loop = [&](size_t i) {
    if (i == labels.size()) {
      double v = 1;
      for (size_t k = 0; k < subs.size(); ++k)
        v *= in[k].data<float>()[offset(subs[k], in[k].shape())];
      r.data<double>()[offset(out, out_shape)] += v;
      return;
    }
    for (idx[labels[i]] = 0; idx[labels[i]] < sizes[labels[i]]; ++idx[labels[i]]) loop(i + 1);
  };
  loop(0);
  return RefUnaryDouble(
      r, [](double x) { return x; }, DType::kFloat);
}

}  // namespace

std::vector<OpCase> EinsumCases() {
  std::vector<OpCase> c;
  struct Spec {
    std::string eq, a, b, out;  // the equation and its parts for the reference (no ellipsis)
    Shape sa, sb;
  };
  const std::vector<Spec> specs = {
      {"ab,bc->ac", "ab", "bc", "ac", Shape{3, 4}, Shape{4, 5}},
      {"abc,cd->abd", "abc", "cd", "abd", Shape{2, 3, 4}, Shape{4, 6}},  // EinsumDense
      {"aecd,abcd->acbe", "aecd", "abcd", "acbe", Shape{2, 5, 3, 4},
       Shape{2, 6, 3, 4}},  // MHA scores
      {"acbe,aecd->abcd", "acbe", "aecd", "abcd", Shape{2, 3, 6, 5},
       Shape{2, 5, 3, 4}},                                                         // MHA values
      {"abcd,cde->abe", "abcd", "cde", "abe", Shape{2, 3, 4, 5}, Shape{4, 5, 6}},  // MHA output
      {"ij,jk", "ij", "jk", "ik", Shape{2, 3}, Shape{3, 2}},                  // implicit output
      {"bij,bjk->bik", "bij", "bjk", "bik", Shape{1, 2, 3}, Shape{4, 3, 2}},  // batch broadcast
      {"ab,cb->ac", "ab", "cb", "ac", Shape{3, 5}, Shape{4, 5}},
      {"abc,d->abd", "abc", "d", "abd", Shape{2, 3, 4}, Shape{5}},  // sums over c alone
  };
  uint32_t seed = 1;
  for (const Spec& s : specs) {
    const Spec spec = s;
    c.push_back(OpCaseBuilder("Einsum", "Einsum " + s.eq)
                    .T(DType::kFloat)
                    .Int("N", 2)
                    .String("equation", s.eq)
                    .Input(RandomOf(DType::kFloat, s.sa, NextSeed(seed)))
                    .Input(RandomOf(DType::kFloat, s.sb, NextSeed(seed)))
                    .Reference1([spec](const std::vector<Tensor>& in) {
                      return RefEinsum(spec.a, spec.b, spec.out, in);
                    })
                    .Tolerance(1e-5)
                    .Build());
  }
  c.push_back(OpCaseBuilder("Einsum", "Einsum ...ij,...jk->...ik")
                  .T(DType::kFloat)
                  .Int("N", 2)
                  .String("equation", "...ij,...jk->...ik")
                  .Input(RandomOf(DType::kFloat, Shape{2, 3, 4}, NextSeed(seed)))
                  .Input(RandomOf(DType::kFloat, Shape{1, 4, 2}, NextSeed(seed)))
                  .Reference1([](const std::vector<Tensor>& in) {
                    return RefEinsum("aij", "ajk", "aik", in);
                  })
                  .Tolerance(1e-5)
                  .Build());
  for (const auto& [eq, a, out] : std::vector<std::array<std::string, 3>>{
           {"ij->ji", "ij", "ji"}, {"ijk->ki", "ijk", "ki"}, {"ij->", "ij", ""}}) {
    const std::string sa = a, so = out;
    c.push_back(OpCaseBuilder("Einsum", "Einsum " + eq)
                    .T(DType::kFloat)
                    .Int("N", 1)
                    .String("equation", eq)
                    .Input(RandomOf(
                        DType::kFloat,
                        Shape{2, 3, 4}.rank() == 3 && a.size() == 3 ? Shape{2, 3, 4} : Shape{3, 4},
                        NextSeed(seed)))
                    .Reference1([sa, so](const std::vector<Tensor>& in) {
                      return RefEinsum(sa, "", so, in);
                    })
                    .Tolerance(1e-5)
                    .Build());
  }
  // A label repeated within one operand: its diagonal (tf.linalg's trace and diag_part as
  // einsum, "ii" implicit is the trace).
  struct Diag {
    std::string eq, a, b, out;
    Shape sa, sb;
  };
  for (const Diag& d : std::vector<Diag>{
           {"bii->bi", "bii", "", "bi", Shape{2, 3, 3}, Shape{}},
           {"ii", "ii", "", "", Shape{4, 4}, Shape{}},
           {"bii->b", "bii", "", "b", Shape{2, 3, 3}, Shape{}},
           {"iij,jk->ik", "iij", "jk", "ik", Shape{3, 3, 4}, Shape{4, 2}},
           {"ij,kjj->ik", "ij", "kjj", "ik", Shape{2, 3}, Shape{4, 3, 3}},
       }) {
    const Diag spec = d;
    const bool two = !d.b.empty();
    OpCaseBuilder b("Einsum", "Einsum " + d.eq);
    b.T(DType::kFloat)
        .Int("N", two ? 2 : 1)
        .String("equation", d.eq)
        .Input(RandomOf(DType::kFloat, d.sa, NextSeed(seed)));
    if (two) b.Input(RandomOf(DType::kFloat, d.sb, NextSeed(seed)));
    c.push_back(b.Reference1([spec](const std::vector<Tensor>& in) {
                   return RefEinsum(spec.a, spec.b, spec.out, in);
                 })
                    .Tolerance(1e-5)
                    .Build());
  }
  return c;
}

}  // namespace kiln::testing
