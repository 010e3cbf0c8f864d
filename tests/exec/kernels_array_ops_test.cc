// Error paths of the array op families (split, pad, reverse, gather, scatter, partition, index,
// space, broadcast-args, passthrough ops): bad attrs and input types fail at prepare time naming
// the node and the attr or input; bad shapes and indices fail at run time naming the index and
// the valid range. Values are covered by the op tester (tests/ops).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "exec/kernel_test_util.h"

namespace kiln::exec {
namespace {

using testing::CheckError;
using testing::Make;
using testing::OpRunner;

Tensor I32(const std::vector<int32_t>& v) {
  return Make<int32_t>(v, Shape{static_cast<int64_t>(v.size())});
}
Tensor I64(const std::vector<int64_t>& v) {
  return Make<int64_t>(v, Shape{static_cast<int64_t>(v.size())});
}
Tensor F(const Shape& s) { return Tensor(DType::kFloat, s); }

TEST_CASE("array ops: Slice, Split, SplitV and Concat errors") {
  CheckError(OpRunner("Slice")
                 .T(DType::kFloat)
                 .Type("Index", DType::kInt32)
                 .Input(F({2, 3}))
                 .Input(I32({0, 1}))
                 .Input(I32({1, 3}))
                 .Run()
                 .status(),
             {"node", "size[1] in [0, 2], but got 3"});
  CheckError(OpRunner("Slice")
                 .T(DType::kFloat)
                 .Type("Index", DType::kInt32)
                 .Input(F({2, 3}))
                 .ConstantInput(I32({3, 1}))
                 .ConstantInput(I32({-1, 1}))
                 .Prepare(),
             {"node 'node' (Slice)", "out of range", "(2, 3)"});
  CheckError(OpRunner("Slice")
                 .T(DType::kFloat)
                 .Type("Index", DType::kFloat)
                 .Input(F({2}))
                 .Input(F({1}))
                 .Input(F({1}))
                 .Prepare(),
             {"attr 'Index'", "int32, int64"});
  CheckError(OpRunner("Split")
                 .T(DType::kFloat)
                 .Int("num_split", 2)
                 .ConstantInput(Tensor::Scalar<int32_t>(0))
                 .Input(F({5, 2}))
                 .Prepare(),
             {"evenly divide", "size = 5", "num_split 2"});
  CheckError(OpRunner("Split")
                 .T(DType::kFloat)
                 .Int("num_split", 0)
                 .Input(Tensor::Scalar<int32_t>(0))
                 .Input(F({4}))
                 .Prepare(),
             {"attr 'num_split'", "at least 1"});
  CheckError(OpRunner("Split")
                 .T(DType::kFloat)
                 .Int("num_split", 2)
                 .Input(Tensor::Scalar<int32_t>(3))
                 .Input(F({4, 2}))
                 .Run()
                 .status(),
             {"split_dim 3 is out of range for rank 2"});
  CheckError(OpRunner("SplitV")
                 .T(DType::kFloat)
                 .Type("Tlen", DType::kInt64)
                 .Int("num_split", 2)
                 .Input(F({5}))
                 .Input(I64({-1, -1}))
                 .Input(Tensor::Scalar<int32_t>(0))
                 .Run()
                 .status(),
             {"more than one -1"});
  CheckError(OpRunner("SplitV")
                 .T(DType::kFloat)
                 .Type("Tlen", DType::kInt64)
                 .Int("num_split", 2)
                 .Input(F({5}))
                 .Input(I64({2, 2}))
                 .Input(Tensor::Scalar<int32_t>(0))
                 .Run()
                 .status(),
             {"sum to", "5, got 4"});
  CheckError(OpRunner("Concat")
                 .T(DType::kFloat)
                 .Int("N", 2)
                 .Input(Tensor::Scalar<int32_t>(0))
                 .Input(F({2, 3}))
                 .Input(F({2, 4}))
                 .Run()
                 .status(),
             {"all dimensions but concat_dim 0", "(2, 4)"});
  CheckError(OpRunner("Concat")
                 .T(DType::kFloat)
                 .Int("N", 2)
                 .Input(Tensor::Scalar<int32_t>(0))
                 .Input(F({}))
                 .Input(F({}))
                 .Prepare(),
             {"cannot concatenate scalars"});
}

TEST_CASE("array ops: Pad and MirrorPad errors") {
  CheckError(OpRunner("Pad")
                 .T(DType::kFloat)
                 .Type("Tpaddings", DType::kInt32)
                 .Input(F({2, 3}))
                 .Input(Make<int32_t>({-1, 0, 1, 1}, Shape{2, 2}))
                 .Run()
                 .status(),
             {"non-negative", "dim 0", "(-1, 0)"});
  CheckError(OpRunner("Pad")
                 .T(DType::kFloat)
                 .Type("Tpaddings", DType::kInt32)
                 .Input(F({2, 3}))
                 .Input(Make<int32_t>({0, 0, 1, 1, 0, 0}, Shape{3, 2}))
                 .Prepare(),
             {"paddings", "(3, 2)", "(2, 3)"});
  CheckError(OpRunner("MirrorPad")
                 .T(DType::kFloat)
                 .Type("Tpaddings", DType::kInt32)
                 .String("mode", "WRAP")
                 .Input(F({2, 3}))
                 .Input(Make<int32_t>({0, 0, 1, 1}, Shape{2, 2}))
                 .Prepare(),
             {"attr 'mode'", "REFLECT", "SYMMETRIC", "WRAP"});
  CheckError(OpRunner("MirrorPad")
                 .T(DType::kFloat)
                 .Type("Tpaddings", DType::kInt32)
                 .String("mode", "REFLECT")
                 .Input(F({2, 3}))
                 .Input(Make<int32_t>({2, 0, 1, 1}, Shape{2, 2}))
                 .Run()
                 .status(),
             {"dim 0", "less than the dimension size"});
  CheckError(OpRunner("MirrorPad")
                 .T(DType::kFloat)
                 .Type("Tpaddings", DType::kInt32)
                 .String("mode", "SYMMETRIC")
                 .Input(F({2, 3}))
                 .ConstantInput(Make<int32_t>({0, 0, 4, 0}, Shape{2, 2}))
                 .Prepare(),
             {"node 'node' (MirrorPad)", "dim 1", "no greater than"});
}

TEST_CASE("array ops: ReverseV2, ReverseSequence and Roll errors") {
  CheckError(OpRunner("ReverseV2")
                 .T(DType::kFloat)
                 .Type("Tidx", DType::kInt32)
                 .Input(F({2, 3}))
                 .Input(I32({0, -2}))
                 .Run()
                 .status(),
             {"axis 0 specified more than once"});
  CheckError(OpRunner("ReverseV2")
                 .T(DType::kFloat)
                 .Type("Tidx", DType::kInt32)
                 .Input(F({2, 3}))
                 .ConstantInput(I32({2}))
                 .Prepare(),
             {"'axis'[0] = 2", "[-2, 2)"});
  CheckError(OpRunner("ReverseSequence")
                 .T(DType::kFloat)
                 .Type("Tlen", DType::kInt64)
                 .Int("seq_dim", 1)
                 .Input(F({2, 3}))
                 .Input(I64({1, 5}))
                 .Run()
                 .status(),
             {"seq_lens(1) = 5 > input.dims(1) = 3"});
  CheckError(OpRunner("ReverseSequence")
                 .T(DType::kFloat)
                 .Type("Tlen", DType::kInt64)
                 .Int("seq_dim", 1)
                 .Input(F({2, 3}))
                 .Input(I64({1, -1}))
                 .Run()
                 .status(),
             {"seq_lens(1) = -1 < 0"});
  CheckError(OpRunner("ReverseSequence")
                 .T(DType::kFloat)
                 .Type("Tlen", DType::kInt64)
                 .Int("seq_dim", 1)
                 .Int("batch_dim", 1)
                 .Input(F({2, 3}))
                 .Input(I64({1, 1}))
                 .Prepare(),
             {"attrs 'batch_dim' and 'seq_dim' are both 1", "must differ"});
  CheckError(OpRunner("ReverseSequence")
                 .T(DType::kFloat)
                 .Type("Tlen", DType::kInt64)
                 .Int("seq_dim", 1)
                 .Input(F({2, 3}))
                 .Input(I64({1, 1, 1}))
                 .Prepare(),
             {"seq_lengths", "(3 vs. 2)"});
  CheckError(OpRunner("Roll")
                 .T(DType::kFloat)
                 .Type("Tshift", DType::kInt32)
                 .Type("Taxis", DType::kInt32)
                 .Input(F({5}))
                 .Input(I32({2, 1}))
                 .Input(I32({0}))
                 .Run()
                 .status(),
             {"shift and axis must have the same size"});
  CheckError(OpRunner("Roll")
                 .T(DType::kFloat)
                 .Type("Tshift", DType::kInt32)
                 .Type("Taxis", DType::kInt32)
                 .Input(F({5}))
                 .Input(I32({2}))
                 .Input(I32({1}))
                 .Run()
                 .status(),
             {"axis 1 is out of range for rank 1"});
}

TEST_CASE("array ops: Gather and GatherNd name the bad index and the valid range") {
  const Tensor params = Make<float>({0, 1, 2, 3, 4, 5}, Shape{3, 2});
  CheckError(OpRunner("Gather")
                 .Type("Tparams", DType::kFloat)
                 .Type("Tindices", DType::kInt32)
                 .Input(params)
                 .Input(Make<int32_t>({1, 3}, Shape{1, 2}))
                 .Run()
                 .status(),
             {"indices[0,1] = 3 is not in [0, 3)"});
  CheckError(OpRunner("Gather")
                 .Type("Tparams", DType::kFloat)
                 .Type("Tindices", DType::kInt32)
                 .Input(Tensor::Scalar<float>(1))
                 .Input(I32({0}))
                 .Prepare(),
             {"params must be at least 1 dimensional"});
  CheckError(OpRunner("GatherNd")
                 .Type("Tparams", DType::kFloat)
                 .Type("Tindices", DType::kInt64)
                 .Input(params)
                 .Input(Make<int64_t>({1, 1, 5, 0}, Shape{2, 2}))
                 .Run()
                 .status(),
             {"indices[1] = [5, 0] does not index into param shape [3,2]"});
  CheckError(OpRunner("GatherNd")
                 .Type("Tparams", DType::kFloat)
                 .Type("Tindices", DType::kInt32)
                 .Input(params)
                 .Input(Make<int32_t>({1, 2, 3}, Shape{1, 3}))
                 .Prepare(),
             {"innermost dimension length must be <= params rank; saw: 3 vs. 2"});
  CheckError(OpRunner("GatherNd")
                 .Type("Tparams", DType::kFloat)
                 .Type("Tindices", DType::kInt32)
                 .String("bad_indices_policy", "CLAMP")
                 .Input(params)
                 .Input(Make<int32_t>({1}, Shape{1, 1}))
                 .Prepare(),
             {"attr 'bad_indices_policy'", "IGNORE", "CLAMP"});
  CheckError(OpRunner("GatherNd")
                 .Type("Tparams", DType::kFloat)
                 .Type("Tindices", DType::kUInt8)
                 .Input(params)
                 .Input(Make<uint8_t>({1}, Shape{1, 1}))
                 .Prepare(),
             {"attr 'Tindices'", "int16, int32, int64"});
}

TEST_CASE("array ops: scatter and partition errors") {
  CheckError(OpRunner("ScatterNd")
                 .T(DType::kFloat)
                 .Type("Tindices", DType::kInt32)
                 .Input(Make<int32_t>({5, 1}, Shape{2, 1}))
                 .Input(Make<float>({1, 2}, Shape{2}))
                 .Input(I32({4}))
                 .Run()
                 .status(),
             {"indices[0] = [5] does not index into shape [4]"});
  CheckError(OpRunner("ScatterNd")
                 .T(DType::kFloat)
                 .Type("Tindices", DType::kInt32)
                 .Input(Make<int32_t>({1, 1}, Shape{2, 1}))
                 .Input(Make<float>({1, 2, 3}, Shape{3}))
                 .ConstantInput(I32({4}))
                 .Prepare(),
             {"updates of shape [3]", "indices of shape [2,1]"});
  CheckError(OpRunner("ScatterNd")
                 .T(DType::kFloat)
                 .Type("Tindices", DType::kInt32)
                 .Input(Make<int32_t>({1, 1}, Shape{2, 1}))
                 .Input(Make<float>({1, 2}, Shape{2}))
                 .Input(I32({0}))
                 .Run()
                 .status(),
             {"empty output"});
  CheckError(OpRunner("TensorScatterUpdate")
                 .T(DType::kFloat)
                 .Type("Tindices", DType::kInt32)
                 .Input(F({4}))
                 .Input(Make<int32_t>({1, -1}, Shape{2, 1}))
                 .Input(Make<float>({1, 2}, Shape{2}))
                 .Run()
                 .status(),
             {"indices[1] = [-1] does not index into shape [4]"});
  CheckError(OpRunner("TensorScatterMax")
                 .T(DType::kString)
                 .Type("Tindices", DType::kInt32)
                 .Input(Tensor(DType::kString, Shape{4}))
                 .Input(Make<int32_t>({1}, Shape{1, 1}))
                 .Input(Tensor(DType::kString, Shape{1}))
                 .Prepare(),
             {"attr 'T'", "string"});
  CheckError(OpRunner("TensorScatterAdd")
                 .T(DType::kFloat)
                 .Type("Tindices", DType::kInt16)
                 .Input(F({4}))
                 .Input(Make<int16_t>({1}, Shape{1, 1}))
                 .Input(F({1}))
                 .Prepare(),
             {"attr 'Tindices'", "int32, int64"});
  CheckError(OpRunner("DynamicPartition")
                 .T(DType::kFloat)
                 .Int("num_partitions", 2)
                 .Input(F({3}))
                 .Input(I32({0, 2, 1}))
                 .Run()
                 .status(),
             {"partitions[1] = 2 is not in [0, 2)"});
  CheckError(OpRunner("DynamicPartition")
                 .T(DType::kFloat)
                 .Int("num_partitions", 2)
                 .Input(F({3}))
                 .Input(I32({0, 1}))
                 .Prepare(),
             {"data.shape must start with partitions.shape"});
  CheckError(OpRunner("DynamicStitch")
                 .T(DType::kFloat)
                 .Int("N", 2)
                 .Input(I32({0, -1}))
                 .Input(I32({4}))
                 .Input(F({2}))
                 .Input(F({1}))
                 .Run()
                 .status(),
             {"indices[0][1] = -1 is out of range"});
  CheckError(OpRunner("ParallelDynamicStitch")
                 .T(DType::kFloat)
                 .Int("N", 1)
                 .Input(I32({0, 1}))
                 .Input(F({3}))
                 .Prepare(),
             {"data[0].shape = (3,) does not start with indices[0].shape = (2,)"});
}

TEST_CASE("array ops: OneHot, TopKV2, ApproxTopK, Where and InvertPermutation errors") {
  CheckError(OpRunner("OneHot")
                 .T(DType::kFloat)
                 .Type("TI", DType::kInt32)
                 .Int("axis", 2)
                 .Input(I32({0, 2}))
                 .Input(Tensor::Scalar<int32_t>(3))
                 .Input(Tensor::Scalar<float>(1))
                 .Input(Tensor::Scalar<float>(0))
                 .Prepare(),
             {"expected axis to be -1 or between [0, 2), but received: 2"});
  CheckError(OpRunner("OneHot")
                 .T(DType::kFloat)
                 .Type("TI", DType::kInt32)
                 .Input(I32({0, 2}))
                 .Input(Tensor::Scalar<int32_t>(-1))
                 .Input(Tensor::Scalar<float>(1))
                 .Input(Tensor::Scalar<float>(0))
                 .Run()
                 .status(),
             {"depth must be non-negative, got: -1"});
  CheckError(OpRunner("OneHot")
                 .T(DType::kFloat)
                 .Type("TI", DType::kInt16)
                 .Input(Make<int16_t>({0}, Shape{1}))
                 .Input(Tensor::Scalar<int32_t>(2))
                 .Input(Tensor::Scalar<float>(1))
                 .Input(Tensor::Scalar<float>(0))
                 .Prepare(),
             {"attr 'TI'", "uint8, int8, int32, int64"});
  CheckError(OpRunner("TopKV2")
                 .T(DType::kFloat)
                 .Input(Make<float>({1, 2, 3}, Shape{3}))
                 .Input(Tensor::Scalar<int32_t>(5))
                 .Run()
                 .status(),
             {"at least k columns. Had 3, needed 5"});
  CheckError(OpRunner("TopKV2")
                 .T(DType::kFloat)
                 .Input(Make<float>({1, 2, 3}, Shape{3}))
                 .ConstantInput(Tensor::Scalar<int32_t>(-1))
                 .Prepare(),
             {"need k >= 0, got -1"});
  CheckError(OpRunner("TopKV2")
                 .T(DType::kBool)
                 .Input(Make<bool>({true}, Shape{1}))
                 .Input(Tensor::Scalar<int32_t>(1))
                 .Prepare(),
             {"attr 'T'", "bool"});
  CheckError(OpRunner("TopKV2")
                 .T(DType::kFloat)
                 .Input(Tensor::Scalar<float>(1))
                 .Input(Tensor::Scalar<int32_t>(0))
                 .Prepare(),
             {"input must be >= 1-D"});
  CheckError(OpRunner("ApproxTopK")
                 .T(DType::kFloat)
                 .Int("k", 2)
                 .Bool("is_max_k", false)
                 .Input(Make<float>({1, 2, 3}, Shape{3}))
                 .Prepare(),
             {"approx_min_k", "no CPU kernel"});
  CheckError(OpRunner("ApproxTopK")
                 .T(DType::kFloat)
                 .Int("k", 1)
                 .Int("reduction_dimension", 0)
                 .Input(Make<float>({1, 2, 3, 4}, Shape{2, 2}))
                 .Prepare(),
             {"attr 'reduction_dimension'", "last dimension"});
  CheckError(OpRunner("ApproxTopK")
                 .T(DType::kFloat)
                 .Int("k", 4)
                 .Input(Make<float>({1, 2, 3}, Shape{3}))
                 .Prepare(),
             {"at least k columns. Had 3, needed 4"});
  CheckError(OpRunner("Where").T(DType::kString).Input(Tensor(DType::kString, Shape{2})).Prepare(),
             {"attr 'T'", "string"});
  CheckError(OpRunner("InvertPermutation").T(DType::kInt32).Input(I32({0, 3})).Run().status(),
             {"3 is not between 0 and 2"});
  CheckError(OpRunner("InvertPermutation").T(DType::kInt32).Input(I32({1, 1})).Run().status(),
             {"1 is duplicated in the input"});
}

TEST_CASE("array ops: space/batch/depth and patch errors") {
  const Tensor x = F({2, 4, 4, 3});
  CheckError(OpRunner("SpaceToBatchND")
                 .T(DType::kFloat)
                 .Input(x)
                 .Input(I32({3, 2}))
                 .Input(Make<int32_t>({0, 0, 0, 0}, Shape{2, 2}))
                 .Run()
                 .status(),
             {"padded_shape[0]=4 is not divisible by block_shape[0]=3"});
  CheckError(OpRunner("SpaceToBatchND")
                 .T(DType::kFloat)
                 .Input(x)
                 .ConstantInput(I32({2, -2}))
                 .ConstantInput(Make<int32_t>({0, 0, 0, 0}, Shape{2, 2}))
                 .Prepare(),
             {"block_shape must be positive", "-2 at index 1"});
  CheckError(OpRunner("BatchToSpaceND")
                 .T(DType::kFloat)
                 .Input(x)
                 .Input(I32({3, 1}))
                 .Input(Make<int32_t>({0, 0, 0, 0}, Shape{2, 2}))
                 .Run()
                 .status(),
             {"batch dimension (2) is not divisible by product of block sizes (3)"});
  CheckError(OpRunner("BatchToSpaceND")
                 .T(DType::kFloat)
                 .Input(x)
                 .Input(I32({1, 1}))
                 .Input(Make<int32_t>({3, 3, 0, 0}, Shape{2, 2}))
                 .Run()
                 .status(),
             {"cropped size", "non-negative"});
  CheckError(OpRunner("SpaceToBatchND")
                 .T(DType::kBool)
                 .Input(Tensor(DType::kBool, Shape{1, 2}))
                 .Input(I32({1}))
                 .Input(Make<int32_t>({0, 0}, Shape{1, 2}))
                 .Prepare(),
             {"attr 'T'", "bool"});
  CheckError(OpRunner("SpaceToDepth").T(DType::kFloat).Int("block_size", 3).Input(x).Prepare(),
             {"divisible by block_size: 3"});
  CheckError(OpRunner("SpaceToDepth").T(DType::kFloat).Int("block_size", 1).Input(x).Prepare(),
             {"attr 'block_size'", "at least 2"});
  CheckError(OpRunner("DepthToSpace").T(DType::kFloat).Int("block_size", 2).Input(x).Run().status(),
             {"input depth dimension 3 should be divisible by: 4"});
  CheckError(OpRunner("DepthToSpace")
                 .T(DType::kFloat)
                 .Int("block_size", 2)
                 .String("data_format", "NCHW")
                 .Input(x)
                 .Prepare(),
             {"attr 'data_format'", "NHWC"});
  CheckError(OpRunner("ExtractImagePatches")
                 .T(DType::kFloat)
                 .IntList("ksizes", {1, 2, 2, 2})
                 .IntList("strides", {1, 1, 1, 1})
                 .IntList("rates", {1, 1, 1, 1})
                 .String("padding", "SAME")
                 .Input(x)
                 .Prepare(),
             {"attr 'ksizes'", "[1, rows, cols, 1]"});
  CheckError(OpRunner("ExtractImagePatches")
                 .T(DType::kFloat)
                 .IntList("ksizes", {1, 2, 2, 1})
                 .IntList("strides", {1, 1, 1, 1})
                 .IntList("rates", {1, 1, 1, 1})
                 .String("padding", "FULL")
                 .Input(x)
                 .Prepare(),
             {"attr 'padding'", "SAME", "VALID"});
}

TEST_CASE("array ops: BroadcastArgs, EnsureShape and placeholder errors") {
  CheckError(
      OpRunner("BroadcastArgs").T(DType::kInt32).Input(I32({2, 3})).Input(I32({4})).Run().status(),
      {"Incompatible shapes: [2,3] vs. [4]"});
  CheckError(OpRunner("BroadcastGradientArgs")
                 .T(DType::kInt32)
                 .ConstantInput(I32({2, 3}))
                 .ConstantInput(I32({4}))
                 .Prepare(),
             {"node 'node' (BroadcastGradientArgs)", "Incompatible shapes"});
  CheckError(OpRunner("BroadcastArgs").T(DType::kFloat).Input(F({1})).Input(F({1})).Prepare(),
             {"attr 'T'", "int32, int64"});
  CheckError(OpRunner("EnsureShape")
                 .T(DType::kFloat)
                 .ShapeAttr("shape", PartialShape{3, -1, 1})
                 .Input(F({3, 3}), TensorSpec{DType::kFloat, PartialShape::UnknownRank()})
                 .Run()
                 .status(),
             {"shape of tensor [3,3] is not compatible with expected shape [3,?,1]"});
  CheckError(OpRunner("EnsureShape")
                 .T(DType::kFloat)
                 .ShapeAttr("shape", PartialShape{4})
                 .Input(F({3}))
                 .Prepare(),
             {"node 'node' (EnsureShape)", "[3]", "[4]"});
  CheckError(OpRunner("PlaceholderWithDefault")
                 .Type("dtype", DType::kFloat)
                 .ShapeAttr("shape", PartialShape{2})
                 .Input(F({3}))
                 .Prepare(),
             {"attr 'shape'", "(2,)", "(3,)"});
  CheckError(OpRunner("PlaceholderV2")
                 .Type("dtype", DType::kFloat)
                 .ShapeAttr("shape", PartialShape{2})
                 .Run()
                 .status(),
             {"placeholder 'node' was not fed"});
}

TEST_CASE("array ops: PlaceholderWithDefault takes the fed shape when given, the input's else") {
  OpRunner r("PlaceholderWithDefault");
  r.Type("dtype", DType::kInt32)
      .ShapeAttr("shape", PartialShape{-1, 2})
      .Input(Make<int32_t>({1, 2, 3, 4}, Shape{2, 2}));
  auto out = r.Run1();
  REQUIRE(out.ok());
  CHECK(r.output_specs()[0].shape == PartialShape{2, 2});
  CHECK(TensorsEqual(*out, Make<int32_t>({1, 2, 3, 4}, Shape{2, 2})));
}

TEST_CASE("batching ops: an id outside the batch, a batch of several callers") {
  CheckError(OpRunner("Unbatch")
                 .T(DType::kFloat)
                 .Input(Make<float>({1, 2}, Shape{2}))
                 .Input(Make<int64_t>({3, 0, 2}, Shape{1, 3}))
                 .Input(Tensor::Scalar<int64_t>(4))
                 .Run()
                 .status(),
             {"id 4 is not in batch_index"});
  CheckError(OpRunner("Unbatch")
                 .T(DType::kFloat)
                 .Input(Make<float>({1, 2}, Shape{2}))
                 .Input(Make<int64_t>({3, 1, 5}, Shape{1, 3}))
                 .Input(Tensor::Scalar<int64_t>(3))
                 .Run()
                 .status(),
             {"rows [1, 5) of a batch of 2"});
  CheckError(OpRunner("UnbatchGrad")
                 .T(DType::kFloat)
                 .Input(Make<float>({1, 2}, Shape{2}))
                 .Input(Make<int64_t>({3, 0, 1, 4, 1, 2}, Shape{2, 3}))
                 .Input(Make<float>({1, 2}, Shape{2}))
                 .Input(Tensor::Scalar<int64_t>(3))
                 .Run()
                 .status(),
             {"other callers' rows", "2 entries"});
  CheckError(OpRunner("Batch")
                 .TypeList("T", {DType::kFloat, DType::kFloat})
                 .Input(Make<float>({1, 2}, Shape{2}))
                 .Input(Make<float>({1, 2, 3}, Shape{3}))
                 .Run()
                 .status(),
             {"same first dimension"});
}

}  // namespace
}  // namespace kiln::exec
