// Error paths of the segment reductions, the softmax cross-entropy losses and the fake
// quantisation ops: ids out of order or range, indices out of range, shapes that do not match,
// labels outside the classes, bad quantisation attrs. Values are covered by the op tester.
#include <doctest/doctest.h>

#include "exec/kernel_test_util.h"

namespace kiln::exec {
namespace {

using testing::CheckError;
using testing::Make;
using testing::OpRunner;

Result<Tensor> Segment(const std::string& op, const Tensor& data, const Tensor& ids) {
  return OpRunner(op, "seg")
      .T(data.dtype())
      .Type("Tindices", ids.dtype())
      .Input(data)
      .Input(ids)
      .Run1();
}

TEST_CASE("Segment ops: sorted, non-negative ids, one per data row") {
  const Tensor data = Make<float>({1, 2, 3}, {3});
  CheckError(Segment("SegmentSum", data, Make<int32_t>({0, 2, 1}, {3})).status(),
             {"node 'seg'", "not increasing", "segment_ids[2] = 1"});
  CheckError(Segment("SegmentMax", data, Make<int64_t>({-1, 0, 1}, {3})).status(),
             {"segment_ids[0] = -1", "out of range [0, 2)"});
  CheckError(Segment("SegmentMean", data, Make<int32_t>({0, 0}, {2})).status(),
             {"'segment_ids' must be a vector of data's first dim 3", "(2,)"});
  OpRunner matrix("SegmentSum", "m");
  matrix.T(DType::kFloat)
      .Type("Tindices", DType::kInt32)
      .InputSpec({DType::kFloat, Shape{2, 2}})
      .InputSpec({DType::kInt32, Shape{2, 2}});
  CheckError(matrix.Prepare(), {"node 'm'", "input 'segment_ids'", "expected rank 1"});
  OpRunner no_attr("SegmentProd");
  no_attr.T(DType::kFloat)
      .InputSpec({DType::kFloat, Shape{2}})
      .InputSpec({DType::kInt32, Shape{2}});
  CheckError(no_attr.Prepare(), {"Tindices"});
}

TEST_CASE("UnsortedSegment ops: ids below num_segments, a prefix of data's shape") {
  auto run = [](const Tensor& data, const Tensor& ids, int32_t n) {
    return OpRunner("UnsortedSegmentSum", "useg")
        .T(data.dtype())
        .Type("Tindices", ids.dtype())
        .Input(data)
        .Input(ids)
        .Input(Tensor::Scalar<int32_t>(n))
        .Run1();
  };
  const Tensor data = Make<float>({1, 2, 3}, {3});
  CheckError(run(data, Make<int32_t>({0, 1, 4}, {3}), 4).status(),
             {"node 'useg'", "segment_ids[2] = 4", "out of range [0, 4)"});
  CheckError(run(data, Make<int32_t>({0, 1, 2}, {3}), -1).status(),
             {"'num_segments' must be non-negative, got -1"});
  CheckError(run(data, Make<int32_t>({0}, {1}), 2).status(), {"does not start with", "(1,)"});
  CHECK(run(data, Make<int32_t>({-1, -5, 0}, {3}), 1).ok());  // negative ids drop their rows
  OpRunner prefix("UnsortedSegmentMax", "p");
  prefix.T(DType::kFloat)
      .Type("Tindices", DType::kInt32)
      .InputSpec({DType::kFloat, Shape{2}})
      .InputSpec({DType::kInt32, Shape{2, 1}})
      .InputSpec({DType::kInt32, Shape{}});
  CheckError(prefix.Prepare(), {"node 'p'", "prefix of data's shape"});
}

TEST_CASE("SparseSegment ops: indices into data's rows, sorted ids below num_segments") {
  const Tensor data = Make<float>({1, 2, 3, 4}, {2, 2});
  auto run = [&](const Tensor& indices, const Tensor& ids) {
    return OpRunner("SparseSegmentMean", "sps")
        .T(DType::kFloat)
        .Input(data)
        .Input(indices)
        .Input(ids)
        .Run1();
  };
  CheckError(run(Make<int32_t>({0, 2}, {2}), Make<int32_t>({0, 0}, {2})).status(),
             {"node 'sps'", "indices[1] = 2", "out of range [0, 2)"});
  CheckError(run(Make<int32_t>({0, 1}, {2}), Make<int32_t>({1, 0}, {2})).status(),
             {"not increasing"});
  CheckError(run(Make<int32_t>({0, 1}, {2}), Make<int32_t>({0}, {1})).status(),
             {"'indices' and 'segment_ids'", "one length"});
  auto with_num = OpRunner("SparseSegmentSumWithNumSegments", "n")
                      .T(DType::kFloat)
                      .Input(data)
                      .Input(Make<int32_t>({0, 1}, {2}))
                      .Input(Make<int32_t>({0, 3}, {2}))
                      .Input(Tensor::Scalar<int32_t>(2))
                      .Run1();
  CheckError(with_num.status(), {"node 'n'", "segment_ids[1] = 3", "[0, 2)"});
  OpRunner type("SparseSegmentSqrtN");
  type.T(DType::kInt32)
      .InputSpec({DType::kInt32, Shape{2}})
      .InputSpec({DType::kInt32, Shape{2}})
      .InputSpec({DType::kInt32, Shape{2}});
  CheckError(type.Prepare(), {"attr 'T'", "int32", "not supported"});
}

TEST_CASE("Softmax cross-entropy: 2-D logits, labels that fit them") {
  OpRunner dense("SoftmaxCrossEntropyWithLogits", "x");
  dense.T(DType::kFloat)
      .InputSpec({DType::kFloat, Shape{1, 3}})
      .InputSpec({DType::kFloat, Shape{2, 2}});
  CheckError(dense.Prepare(), {"node 'x'", "(1, 3)", "(2, 2)", "[batch, classes]"});
  OpRunner vec("SoftmaxCrossEntropyWithLogits");
  vec.T(DType::kFloat).InputSpec({DType::kFloat, Shape{3}}).InputSpec({DType::kFloat, Shape{3}});
  CheckError(vec.Prepare(), {"2-D"});
  auto sparse = [](const Tensor& labels) {
    return OpRunner("SparseSoftmaxCrossEntropyWithLogits", "sx")
        .T(DType::kFloat)
        .Type("Tlabels", labels.dtype())
        .Input(Make<float>({1, 2, 3, 4, 5, 6}, {2, 3}))
        .Input(labels)
        .Run();
  };
  CheckError(sparse(Make<int32_t>({0, 3}, {2})).status(),
             {"node 'sx'", "labels[1] = 3", "valid range of [0, 3)"});
  CheckError(sparse(Make<int64_t>({-1, 0}, {2})).status(), {"labels[0] = -1"});
  OpRunner batch("SparseSoftmaxCrossEntropyWithLogits", "b");
  batch.T(DType::kFloat)
      .InputSpec({DType::kFloat, Shape{2, 3}})
      .InputSpec({DType::kInt64, Shape{3}});
  CheckError(batch.Prepare(), {"node 'b'", "same first dim", "(2, 3)", "(3,)"});
  OpRunner classes("SparseSoftmaxCrossEntropyWithLogits");
  classes.T(DType::kFloat)
      .InputSpec({DType::kFloat, Shape{2, 0}})
      .InputSpec({DType::kInt64, Shape{2}});
  CheckError(classes.Prepare(), {"at least one class"});
  OpRunner rank("SparseSoftmaxCrossEntropyWithLogits");
  rank.T(DType::kFloat)
      .InputSpec({DType::kFloat, Shape{2, 2, 3}})
      .InputSpec({DType::kInt64, Shape{2}});
  CheckError(rank.Prepare(), {"input 'features'", "expected rank 2"});
}

TEST_CASE("Fake quantisation: a range with min below max, 2 to 16 bits") {
  OpRunner order("FakeQuantWithMinMaxArgs", "fq");
  order.Float("min", 6).Float("max", -6).InputSpec({DType::kFloat, Shape{2}});
  CheckError(order.Prepare(), {"node 'fq'", "min must be below max", "6 >= -6"});
  for (int64_t bits : {1, 17}) {
    OpRunner r("FakeQuantWithMinMaxVars", "fv");
    r.Int("num_bits", bits)
        .InputSpec({DType::kFloat, Shape{2}})
        .InputSpec({DType::kFloat, Shape{}})
        .InputSpec({DType::kFloat, Shape{}});
    CheckError(r.Prepare(), {"node 'fv'", "attr 'num_bits'", std::to_string(bits), "[2, 16]"});
  }
  OpRunner vec("FakeQuantWithMinMaxVars");
  vec.InputSpec({DType::kFloat, Shape{2}})
      .InputSpec({DType::kFloat, Shape{2}})
      .InputSpec({DType::kFloat, Shape{}});
  CheckError(vec.Prepare(), {"input 'min'", "expected rank 0"});
  OpRunner type("FakeQuantWithMinMaxArgs");
  type.InputSpec({DType::kDouble, Shape{2}});
  CheckError(type.Prepare(), {"input 'inputs'", "expected dtype float32", "got float64"});
}

}  // namespace
}  // namespace kiln::exec
