// Op-tester cases of the gradient and optimizer kernels that training graphs hold: here the
// sparse segment gradients (a plain-loop scatter of the grad rows, in double) and the optimizer
// updates added with them (values checked in tests/exec/kernels_grad_test.cc); the image ones
// in cases_grad_image.cc, Dilation2D and MirrorPadGrad in cases_grad_window.cc.
#include "ops/cases_grad.h"

#include <algorithm>
#include <cmath>

#include "kiln/exec/resources.h"
#include "ops/op_cases.h"
#include "ops/ref_util.h"

namespace kiln::testing {
namespace {

enum class SegKind { kSum, kMean, kSqrtN };

Tensor IndexTensor(DType t, const std::vector<int64_t>& v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return t == DType::kInt32 ? Make<int32_t>(std::vector<int32_t>(v.begin(), v.end()), {n})
                            : Make<int64_t>(v, {n});
}

// Row rows[i] of the result gathers grad row ids[i], scaled by 1, 1/count or 1/sqrt(count) of
// that id; V2 keeps only the sorted unique rows and returns them as the second output.
std::vector<Tensor> RefSegmentGrad(const Tensor& grad, const std::vector<int64_t>& rows,
                                   const std::vector<int64_t>& ids, int64_t dim0, SegKind kind,
                                   bool v2, DType tidx) {
  std::vector<int64_t> unique = rows;
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  const int64_t out_rows = v2 ? static_cast<int64_t>(unique.size()) : dim0;
  Shape shape = grad.shape();
  shape.set_dim(0, out_rows);
  const int64_t inner = grad.NumElements() / std::max<int64_t>(1, grad.dim(0));
  std::vector<double> count(grad.dim(0), 0);
  for (int64_t id : ids) count[id] += 1;
  const std::vector<double> g = Doubles(grad);
  std::vector<double> out(shape.num_elements(), 0.0);
  for (size_t i = 0; i < rows.size(); ++i) {
    const double c = std::max(count[ids[i]], 1.0);
    const double s = kind == SegKind::kSum ? 1 : kind == SegKind::kMean ? 1 / c : 1 / std::sqrt(c);
    const int64_t r =
        v2 ? std::lower_bound(unique.begin(), unique.end(), rows[i]) - unique.begin() : rows[i];
    for (int64_t j = 0; j < inner; ++j) out[r * inner + j] += g[ids[i] * inner + j] * s;
  }
  std::vector<Tensor> result = {FromDoubles(grad.dtype(), shape, out)};
  if (v2) result.push_back(IndexTensor(tidx, unique));
  return result;
}

void AddSegmentGrads(std::vector<OpCase>* c) {
  uint32_t seed = 300;
  const std::vector<std::pair<std::string, SegKind>> ops = {
      {"SparseSegmentSumGrad", SegKind::kSum},
      {"SparseSegmentMeanGrad", SegKind::kMean},
      {"SparseSegmentSqrtNGrad", SegKind::kSqrtN}};
  // Repeated indices (rows added twice), repeated and skipped segment ids, unused output rows.
  const std::vector<int64_t> rows = {4, 0, 4, 2, 1, 1, 6};
  const std::vector<int64_t> ids = {0, 0, 0, 2, 2, 3, 3};
  for (const auto& [op, kind] : ops) {
    const SegKind k = kind;
    for (bool v2 : {false, true}) {
      const std::string name = v2 ? op + "V2" : op;
      for (DType t : {DType::kFloat, DType::kDouble, DType::kHalf, DType::kBFloat16}) {
        for (DType index : {DType::kInt32, DType::kInt64}) {
          if (index == DType::kInt64 && t != DType::kFloat) continue;
          const double tol = t == DType::kHalf ? 2e-3 : t == DType::kBFloat16 ? 2e-2 : 1e-6;
          c->push_back(OpCaseBuilder(name)
                           .T(t)
                           .Type("Tidx", index)
                           .Type("Tsegmentids", index)
                           .Input(RandomOf(t, Shape{4, 3}, NextSeed(seed)))
                           .Input(IndexTensor(index, rows))
                           .Input(IndexTensor(index, ids))
                           .ConstInput(Tensor::Scalar<int32_t>(8))
                           .Reference([k, v2, index, rows, ids](const std::vector<Tensor>& in) {
                             return RefSegmentGrad(in[0], rows, ids, 8, k, v2, index);
                           })
                           .Tolerance(tol)
                           .Build());
        }
      }
      // Rank-3 grad, wide rows (threads split the columns); no index at all.
      c->push_back(OpCaseBuilder(name, name + " rank 3, wide rows")
                       .T(DType::kFloat)
                       .Input(RandomOf(DType::kFloat, Shape{3, 40, 100}, NextSeed(seed)))
                       .Input(IndexTensor(DType::kInt32, {2, 2, 0, 5, 1}))
                       .Input(IndexTensor(DType::kInt32, {0, 1, 1, 1, 2}))
                       .Input(Tensor::Scalar<int32_t>(6))
                       .Reference([k, v2](const std::vector<Tensor>& in) {
                         return RefSegmentGrad(in[0], {2, 2, 0, 5, 1}, {0, 1, 1, 1, 2}, 6, k, v2,
                                               DType::kInt32);
                       })
                       .Tolerance(1e-6)
                       .Build());
      c->push_back(OpCaseBuilder(name, name + " no indices")
                       .T(DType::kFloat)
                       .Input(RandomOf(DType::kFloat, Shape{2, 3}, NextSeed(seed)))
                       .Input(Tensor(DType::kInt32, Shape{0}))
                       .Input(Tensor(DType::kInt32, Shape{0}))
                       .Input(Tensor::Scalar<int32_t>(4))
                       .Reference([k, v2](const std::vector<Tensor>& in) {
                         return RefSegmentGrad(in[0], {}, {}, 4, k, v2, DType::kInt32);
                       })
                       .Build());
    }
  }
}

Tensor VarHandle(const std::string& name, const Tensor& value) {
  auto var =
      std::make_shared<exec::VariableResource>(name, value.dtype(), PartialShape(value.shape()));
  REQUIRE(var->Assign(value).ok());
  Tensor h(DType::kResource, Shape());
  h.scalar<std::shared_ptr<ResourceBase>>() = var;
  return h;
}

// The optimizers change variables only: the tester runs them on every path; their values are
// checked against plain loops in tests/exec/kernels_grad_test.cc.
void AddOptimizers(std::vector<OpCase>* c) {
  const Shape s{4, 5};
  for (DType t : {DType::kFloat, DType::kDouble, DType::kHalf, DType::kBFloat16}) {
    const std::string tn = DTypeShortName(t);
    auto var = [&](const std::string& name, uint32_t seed, double lo = -1, double hi = 1) {
      return VarHandle(name + tn, RandomOf(t, s, seed, lo, hi));
    };
    auto scalar = [t](double v) { return FromDoubles(t, Shape{}, {v}); };
    const Tensor grad = RandomOf(t, s, 9);
    for (bool update_slots : {true, false}) {
      c->push_back(OpCaseBuilder("ResourceApplyAdagrad",
                                 "ResourceApplyAdagrad " + tn + (update_slots ? "" : " no slots"))
                       .T(t)
                       .Bool("update_slots", update_slots)
                       .Input(var("adagrad1_var", 1))
                       .Input(var("adagrad1_accum", 2, 0.1, 1))
                       .Input(scalar(0.1))
                       .Input(grad)
                       .Build());
    }
    if (t != DType::kBFloat16) {  // TF has no bfloat16 AdaMax kernel
      c->push_back(OpCaseBuilder("ResourceApplyAdaMax", "ResourceApplyAdaMax " + tn)
                       .T(t)
                       .Input(var("adamax_var", 1))
                       .Input(var("adamax_m", 2))
                       .Input(var("adamax_v", 3, 0, 1))
                       .Input(scalar(0.9))
                       .Input(scalar(0.001))
                       .Input(scalar(0.9))
                       .Input(scalar(0.999))
                       .Input(scalar(1e-7))
                       .Input(grad)
                       .Build());
    }
    c->push_back(OpCaseBuilder("ResourceApplyAdamWithAmsgrad", "ResourceApplyAdamWithAmsgrad " + tn)
                     .T(t)
                     .Input(var("amsgrad_var", 1))
                     .Input(var("amsgrad_m", 2))
                     .Input(var("amsgrad_v", 3, 0, 1))
                     .Input(var("amsgrad_vhat", 4, 0, 1))
                     .Input(scalar(0.9))
                     .Input(scalar(0.999))
                     .Input(scalar(0.001))
                     .Input(scalar(0.9))
                     .Input(scalar(0.999))
                     .Input(scalar(1e-7))
                     .Input(grad)
                     .Build());
  }
}

}  // namespace

std::vector<OpCase> GradCases() {
  std::vector<OpCase> c;
  AddSegmentGrads(&c);
  AddOptimizers(&c);
  AddImageGradCases(&c);
  AddWindowGradCases(&c);
  return c;
}

}  // namespace kiln::testing
