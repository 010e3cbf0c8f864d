// Gradient kernels of training graphs: their errors (values: the op tester's cases in
// tests/ops/cases_grad*.cc). The optimizer updates are in kernels_training_test.cc.
#include <doctest/doctest.h>

#include <cmath>

#include "exec/kernel_test_util.h"

namespace kiln::exec {
namespace {

using testing::CheckClose;
using testing::CheckError;
using testing::Make;
using testing::OpRunner;
using testing::Random;

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
