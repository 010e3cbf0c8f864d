// Gradient and optimizer kernels of training graphs: the optimizer updates added with them
// against their update rules (plain loops in double), and the errors of the other gradients
// (values: the op tester's cases in tests/ops/cases_grad*.cc).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "exec/kernel_test_util.h"

namespace kiln::exec {
namespace {

using testing::CheckClose;
using testing::CheckError;
using testing::Make;
using testing::OpRunner;
using testing::Random;

struct Var {
  std::shared_ptr<VariableResource> var;
  Tensor handle;
};

Var MakeVar(const std::string& name, const Tensor& value) {
  Var v;
  v.var = std::make_shared<VariableResource>(name, value.dtype(), PartialShape(value.shape()));
  REQUIRE(v.var->Assign(value).ok());
  v.handle = Tensor(DType::kResource, Shape());
  v.handle.scalar<std::shared_ptr<ResourceBase>>() = v.var;
  return v;
}

Tensor Value(const Var& v) {
  auto t = v.var->Read();
  REQUIRE(t.ok());
  return *t;
}

// Element-wise reference update in double: f(x = {var, slots...}, grad) changes x.
template <typename F>
std::vector<Tensor> RefUpdate(std::vector<Tensor> vals, const Tensor& grad, F f) {
  for (Tensor& t : vals) t = t.DeepCopy();
  for (int64_t i = 0; i < grad.NumElements(); ++i) {
    std::vector<double> x;
    for (const Tensor& t : vals) x.push_back(t.data<float>()[i]);
    f(x, static_cast<double>(grad.data<float>()[i]));
    for (size_t k = 0; k < vals.size(); ++k) vals[k].data<float>()[i] = static_cast<float>(x[k]);
  }
  return vals;
}

TEST_CASE("Adagrad, AdaMax and AdamWithAmsgrad updates follow their rules") {
  const Shape s{3, 4};
  const Tensor var0 = Random<float>(s, 1, -1, 1);
  const Tensor slot0 = Random<float>(s, 2, 0.1, 1);
  const Tensor slot1 = Random<float>(s, 3, 0.1, 1);
  const Tensor slot2 = Random<float>(s, 5, 0.1, 1);
  const Tensor grad = Random<float>(s, 4, -1, 1);
  const double lr = 0.05, eps = 1e-7, b1 = 0.9, b2 = 0.999, b1p = 0.9 * 0.9, b2p = 0.999 * 0.999;
  auto f = [](double v) { return Tensor::Scalar(static_cast<float>(v)); };

  for (bool update_slots : {true, false}) {
    CAPTURE(update_slots);
    Var v = MakeVar("v", var0), a = MakeVar("accum", slot0);
    REQUIRE(OpRunner("ResourceApplyAdagrad")
                .T(DType::kFloat)
                .Bool("update_slots", update_slots)
                .Input(v.handle)
                .Input(a.handle)
                .Input(f(lr))
                .Input(grad)
                .Run()
                .ok());
    auto want = RefUpdate({var0, slot0}, grad, [&](std::vector<double>& x, double g) {
      if (update_slots) x[1] += g * g;
      x[0] -= lr * g / std::sqrt(x[1]);
    });
    CheckClose<float>(Value(v), want[0], 1e-5);
    CheckClose<float>(Value(a), want[1], 1e-5);
  }
  SUBCASE("AdaMax") {
    Var v = MakeVar("v", var0), m = MakeVar("m", slot0), u = MakeVar("u", slot1);
    REQUIRE(OpRunner("ResourceApplyAdaMax")
                .T(DType::kFloat)
                .Input(v.handle)
                .Input(m.handle)
                .Input(u.handle)
                .Input(f(b1p))
                .Input(f(lr))
                .Input(f(b1))
                .Input(f(b2))
                .Input(f(eps))
                .Input(grad)
                .Run()
                .ok());
    auto want = RefUpdate({var0, slot0, slot1}, grad, [&](std::vector<double>& x, double g) {
      x[1] += (g - x[1]) * (1 - b1);
      x[2] = std::max(b2 * x[2], std::abs(g));
      x[0] -= lr / (1 - b1p) * (x[1] / (x[2] + eps));
    });
    CheckClose<float>(Value(v), want[0], 1e-5);
    CheckClose<float>(Value(m), want[1], 1e-5);
    CheckClose<float>(Value(u), want[2], 1e-5);
  }
  SUBCASE("AdamWithAmsgrad") {
    Var v = MakeVar("v", var0), m = MakeVar("m", slot0), u = MakeVar("u", slot1),
        vhat = MakeVar("vhat", slot2);
    REQUIRE(OpRunner("ResourceApplyAdamWithAmsgrad")
                .T(DType::kFloat)
                .Input(v.handle)
                .Input(m.handle)
                .Input(u.handle)
                .Input(vhat.handle)
                .Input(f(b1p))
                .Input(f(b2p))
                .Input(f(lr))
                .Input(f(b1))
                .Input(f(b2))
                .Input(f(eps))
                .Input(grad)
                .Run()
                .ok());
    auto want = RefUpdate({var0, slot0, slot1, slot2}, grad, [&](std::vector<double>& x, double g) {
      const double alpha = lr * std::sqrt(1 - b2p) / (1 - b1p);
      x[1] += (g - x[1]) * (1 - b1);
      x[2] += (g * g - x[2]) * (1 - b2);
      x[3] = std::max(x[3], x[2]);
      x[0] -= x[1] * alpha / (std::sqrt(x[3]) + eps);
    });
    CheckClose<float>(Value(v), want[0], 1e-5);
    CheckClose<float>(Value(m), want[1], 1e-5);
    CheckClose<float>(Value(u), want[2], 1e-5);
    CheckClose<float>(Value(vhat), want[3], 1e-5);
  }
}

TEST_CASE("ResourceApplyAdaMax has no bfloat16 kernel, as TF") {
  OpRunner r("ResourceApplyAdaMax", "adamax");
  r.T(DType::kBFloat16).InputSpec({DType::kResource, Shape{}});
  r.InputSpec({DType::kResource, Shape{}}).InputSpec({DType::kResource, Shape{}});
  for (int i = 0; i < 6; ++i) r.InputSpec({DType::kBFloat16, Shape{}});
  CheckError(r.Prepare(), {"attr 'T'", "bfloat16"});
}

OpRunner SegmentGrad(const std::string& op, const Tensor& grad, const std::vector<int32_t>& rows,
                     const std::vector<int32_t>& ids, int32_t dim0) {
  OpRunner r(op, "g");
  r.T(DType::kFloat)
      .Input(grad)
      .Input(Make<int32_t>(rows, {static_cast<int64_t>(rows.size())}))
      .Input(Make<int32_t>(ids, {static_cast<int64_t>(ids.size())}))
      .Input(Tensor::Scalar<int32_t>(dim0));
  return r;
}

TEST_CASE("sparse segment gradients: bad indices, segment ids and sizes are errors") {
  const Tensor grad = Random<float>(Shape{3, 2}, 1);
  for (const char* op : {"SparseSegmentMeanGrad", "SparseSegmentSumGradV2"}) {
    CAPTURE(op);
    CheckError(SegmentGrad(op, grad, {0, 7}, {0, 1}, 5).Run().status(),
               {"node 'g'", "indices[1] = 7", "[0, 5)"});
    CheckError(SegmentGrad(op, grad, {0, 1}, {0, -1}, 5).Run().status(),
               {"segment_ids[1] = -1", "[0, 3)"});
    CheckError(SegmentGrad(op, grad, {0, 1}, {0, 3}, 5).Run().status(),
               {"number of segments", "3 rows"});
    CheckError(SegmentGrad(op, grad, {0, 1, 2}, {0, 1}, 5).Run().status(),
               {"'indices' and 'segment_ids'", "(3,)", "(2,)"});
    CheckError(SegmentGrad(op, grad, {0}, {0}, -1).Run().status(), {"non-negative", "-1"});
  }
  OpRunner ints("SparseSegmentSumGrad", "g");
  ints.T(DType::kInt32)
      .InputSpec({DType::kInt32, Shape{2}})
      .InputSpec({DType::kInt32, Shape{1}})
      .InputSpec({DType::kInt32, Shape{1}})
      .InputSpec({DType::kInt32, Shape{}});
  CheckError(ints.Prepare(), {"attr 'T'", "int32"});
}

TEST_CASE("sparse segment gradient V2 returns the sorted unique indices") {
  auto r = SegmentGrad("SparseSegmentSqrtNGradV2", Make<float>({1, 2, 3, 4}, {2, 2}), {5, 1, 5},
                       {0, 0, 1}, 9)
               .Run();
  REQUIRE(r.ok());
  CHECK(TensorsEqual((*r)[1], Make<int32_t>({1, 5}, {2})));
  const float s = 1.0f / std::sqrt(2.0f);
  // Row 1: grad row 0 / sqrt(2); row 5: grad row 0 / sqrt(2) + grad row 1.
  CheckClose<float>((*r)[0], Make<float>({s, 2 * s, s + 3, 2 * s + 4}, {2, 2}), 1e-6);
}

TEST_CASE("image resize gradients: shapes that do not match are errors") {
  const Tensor grads = Random<float>(Shape{2, 3, 3, 1}, 1);
  for (const char* op : {"ResizeBilinearGrad", "ResizeBicubicGrad"}) {
    CAPTURE(op);
    CheckError(OpRunner(op, "g")
                   .T(DType::kFloat)
                   .Input(grads)
                   .Input(Random<float>(Shape{1, 4, 4, 1}, 2))
                   .Run()
                   .status(),
               {"node 'g'", "'original_image'", "batch size"});
    CheckError(OpRunner(op, "g")
                   .T(DType::kFloat)
                   .Bool("align_corners", true)
                   .Bool("half_pixel_centers", true)
                   .Input(grads)
                   .Input(Random<float>(Shape{2, 4, 4, 1}, 2))
                   .Run()
                   .status(),
               {"half_pixel_centers", "align_corners"});
  }
  CheckError(
      OpRunner("ResizeBilinearGrad", "g")
          .T(DType::kFloat)
          .Input(Random<float>(Shape{3, 3, 1}, 1), {DType::kFloat, PartialShape::UnknownRank()})
          .Input(Random<float>(Shape{2, 4, 4, 1}, 2))
          .Run()
          .status(),
      {"'grads'", "4-dimensional"});
  CheckError(OpRunner("ResizeBicubicGrad", "g")
                 .T(DType::kHalf)
                 .InputSpec({DType::kFloat, Shape{1, 2, 2, 1}})
                 .InputSpec({DType::kHalf, Shape{1, 2, 2, 1}})
                 .Prepare(),
             {"attr 'T'", "float16"});
  CheckError(OpRunner("ResizeNearestNeighborGrad", "g")
                 .T(DType::kFloat)
                 .Input(grads)
                 .Input(Make<int32_t>({4, 4, 4}, {3}))
                 .Run()
                 .status(),
             {"'size'", "2 elements"});
  CheckError(OpRunner("ResizeNearestNeighborGrad", "g")
                 .T(DType::kFloat)
                 .Input(grads)
                 .Input(Make<int32_t>({-1, 4}, {2}))
                 .Run()
                 .status(),
             {"'size'", "non-negative"});
}

TEST_CASE("max-pool, dilation, mirror-pad and box-drawing gradients: bad inputs are errors") {
  const Tensor x = Random<float>(Shape{1, 4, 4, 1}, 1);
  auto with_argmax = [&](const std::vector<int64_t>& am) {
    return OpRunner("MaxPoolGradWithArgmax", "g")
        .T(DType::kFloat)
        .IntList("ksize", {1, 2, 2, 1})
        .IntList("strides", {1, 2, 2, 1})
        .String("padding", "VALID")
        .Input(x)
        .Input(Make<float>({1, 1, 1, 1}, {1, 2, 2, 1}))
        .Input(Make<int64_t>(am, {1, 2, 2, 1}))
        .Run();
  };
  CHECK(with_argmax({0, 3, 12, 15}).ok());
  CheckError(with_argmax({0, 3, 12, 16}).status(), {"node 'g'", "argmax[3] = 16", "[0, 16)"});
  CheckError(with_argmax({-1, 3, 12, 15}).status(), {"argmax[0] = -1"});
  CheckError(OpRunner("MaxPoolGradGrad", "g")
                 .T(DType::kFloat)
                 .IntList("ksize", {1, 2, 2, 1})
                 .IntList("strides", {1, 2, 2, 1})
                 .String("padding", "VALID")
                 .Input(x)
                 .Input(Make<float>({1, 1}, {1, 2, 1, 1}))
                 .Input(x)
                 .Run()
                 .status(),
             {"'orig_output'", "[1, 2, 2, 1]"});
  CheckError(OpRunner("Dilation2D", "g")
                 .T(DType::kFloat)
                 .IntList("strides", {1, 1, 1, 1})
                 .IntList("rates", {1, 1, 1, 1})
                 .String("padding", "VALID")
                 .Input(x)
                 .Input(Random<float>(Shape{2, 2, 3}, 2))
                 .Run()
                 .status(),
             {"'filter'", "same depth"});
  CheckError(OpRunner("Dilation2D", "g")
                 .T(DType::kFloat)
                 .IntList("strides", {2, 1, 1, 1})
                 .IntList("rates", {1, 1, 1, 1})
                 .String("padding", "VALID")
                 .Input(x)
                 .Input(Random<float>(Shape{2, 2, 1}, 2))
                 .Run()
                 .status(),
             {"attr 'strides'", "spatial"});
  CheckError(OpRunner("Dilation2DBackpropInput", "g")
                 .T(DType::kFloat)
                 .IntList("strides", {1, 1, 1, 1})
                 .IntList("rates", {1, 1, 1, 1})
                 .String("padding", "VALID")
                 .Input(x)
                 .Input(Random<float>(Shape{2, 2, 1}, 2))
                 .Input(Random<float>(Shape{1, 2, 2, 1}, 3))
                 .Run()
                 .status(),
             {"'out_backprop'", "(1, 3, 3, 1)"});
  CheckError(OpRunner("MirrorPadGrad", "g")
                 .T(DType::kFloat)
                 .String("mode", "REFLECT")
                 .Input(Random<float>(Shape{4, 5}, 1))
                 .Input(Make<int32_t>({2, 1, 0, 0}, {2, 2}))
                 .Run()
                 .status(),
             {"paddings (2, 1)", "REFLECT"});
  CheckError(OpRunner("DrawBoundingBoxes", "g")
                 .T(DType::kFloat)
                 .Input(Random<float>(Shape{1, 3, 3, 2}, 1))
                 .Input(Make<float>({0, 0, 1, 1}, {1, 1, 4}))
                 .Run()
                 .status(),
             {"'images'", "1 (gray), 3 (RGB) or 4 (RGBA)"});
  CheckError(OpRunner("DrawBoundingBoxesV2", "g")
                 .T(DType::kFloat)
                 .Input(Random<float>(Shape{1, 3, 3, 3}, 1))
                 .Input(Make<float>({0, 0, 1, 1}, {1, 1, 4}))
                 .Input(Make<float>({1, 0}, {1, 2}))
                 .Run()
                 .status(),
             {"'colors'", "at least 3 columns"});
  CheckError(OpRunner("CropAndResizeGradImage", "g")
                 .T(DType::kFloat)
                 .Input(Random<float>(Shape{1, 2, 2, 1}, 1))
                 .Input(Make<float>({0, 0, 1, 1}, {1, 4}))
                 .Input(Make<int32_t>({3}, {1}))
                 .Input(Make<int32_t>({2, 4, 4, 1}, {4}))
                 .Run()
                 .status(),
             {"box_ind", "[0, batch_size)", "= 3"});
}

}  // namespace
}  // namespace kiln::exec
