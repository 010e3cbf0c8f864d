// Error paths of the sparse and ragged op families: malformed indices, splits and shapes fail
// before any value is read or written, naming what is wrong. Values are covered by the op
// tester (tests/ops/cases_sparse.cc, cases_ragged.cc).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "exec/kernel_test_util.h"
#include "kernels/ragged_util.h"

namespace kiln::exec {
namespace {

using testing::CheckError;
using testing::Make;
using testing::OpRunner;

Tensor I64(const std::vector<int64_t>& v) {
  return Make<int64_t>(v, Shape{static_cast<int64_t>(v.size())});
}

TEST_CASE("sparse ops: SparseToDense validates order, repeats and bounds") {
  auto run = [](const std::vector<int64_t>& idx, bool validate) {
    return OpRunner("SparseToDense")
        .T(DType::kFloat)
        .Type("Tindices", DType::kInt64)
        .Bool("validate_indices", validate)
        .Input(Make<int64_t>(idx, Shape{2, 2}))
        .Input(I64({2, 3}))
        .Input(Make<float>({1, 2}, Shape{2}))
        .Input(Tensor::Scalar<float>(0))
        .Run()
        .status();
  };
  CheckError(run({0, 1, 0, 1}, true), {"indices[1] = [0,1] is repeated"});
  CheckError(run({1, 1, 0, 1}, true), {"indices[1] = [0,1] is out of order"});
  CheckError(run({1, 1, 0, 5}, true), {"indices[1] = [0,5] is out of bounds", "[2,3]"});
  CheckError(run({1, 1, 0, 5}, false), {"out of bounds", "[2,3]"});
  CHECK(run({1, 1, 0, 1}, false).ok());  // unordered is fine without validation
  CheckError(OpRunner("SparseToDense")
                 .T(DType::kFloat)
                 .Type("Tindices", DType::kInt64)
                 .Input(Make<int64_t>({0, 1}, Shape{1, 2}))
                 .Input(I64({2, 3}))
                 .Input(Make<float>({1, 2, 3}, Shape{3}))
                 .Input(Tensor::Scalar<float>(0))
                 .Run()
                 .status(),
             {"sparse_values has incorrect shape (3,)"});
}

TEST_CASE("sparse ops: SparseFillEmptyRows, SparseReshape and set operation errors") {
  CheckError(OpRunner("SparseFillEmptyRows")
                 .T(DType::kFloat)
                 .Input(Make<int64_t>({6, 1}, Shape{1, 2}))
                 .Input(Make<float>({1}, Shape{1}))
                 .Input(I64({5, 4}))
                 .Input(Tensor::Scalar<float>(0))
                 .Run()
                 .status(),
             {"indices(0, 0) is invalid: 6 >= 5"});
  CheckError(OpRunner("SparseFillEmptyRows")
                 .T(DType::kFloat)
                 .Input(Make<int64_t>({1, 1}, Shape{1, 2}))
                 .Input(Make<float>({1, 2}, Shape{2}))
                 .Input(I64({5, 4}))
                 .Input(Tensor::Scalar<float>(0))
                 .Run()
                 .status(),
             {"number of values (2)", "(1)"});
  auto reshape = [](const std::vector<int64_t>& to) {
    return OpRunner("SparseReshape")
        .Input(Make<int64_t>({0, 1, 1, 2}, Shape{2, 2}))
        .Input(I64({2, 3}))
        .Input(I64(to))
        .Run()
        .status();
  };
  CheckError(reshape({4, -1}), {"SparseTensor with 6 dense values", "multiple of 4"});
  CheckError(reshape({4, 2}), {"6 dense values, but the requested shape has 8"});
  CheckError(reshape({-1, -1}), {"only one output dimension may be -1, not both 0 and 1"});
  CheckError(OpRunner("SparseReshape")
                 .Input(Make<int64_t>({0, 7}, Shape{1, 2}))
                 .Input(I64({2, 3}))
                 .Input(I64({6}))
                 .Run()
                 .status(),
             {"input_indices[0] = [0,7] is out of bounds"});
  auto set_op = [](const std::string& op, const Shape& a, const Shape& b) {
    return OpRunner("DenseToDenseSetOperation")
        .T(DType::kInt32)
        .String("set_operation", op)
        .Input(Tensor(DType::kInt32, a))
        .Input(Tensor(DType::kInt32, b))
        .Run()
        .status();
  };
  CheckError(set_op("xor", {1, 2}, {1, 2}), {"invalid set_operation \"xor\"", "union"});
  CheckError(set_op("a-b", {2}, {2}), {"has rank 1 < 2"});
  CheckError(set_op("a-b", {2, 3}, {1, 3}), {"mismatched shapes [2,3] vs [1,3]"});
  CheckError(OpRunner("DenseToDenseSetOperation")
                 .T(DType::kFloat)
                 .String("set_operation", "union")
                 .Input(Tensor(DType::kFloat, Shape{1, 2}))
                 .Input(Tensor(DType::kFloat, Shape{1, 2}))
                 .Prepare(),
             {"attr 'T'", "float32", "string"});
}

TEST_CASE("ragged ops: malformed splits never reach the values") {
  // Splits that point past the values (TF's own kernel reads garbage there).
  CheckError(OpRunner("RaggedTensorToTensor")
                 .T(DType::kFloat)
                 .Type("Tindex", DType::kInt64)
                 .Type("Tshape", DType::kInt64)
                 .Int("num_row_partition_tensors", 1)
                 .StringList("row_partition_types", {"ROW_SPLITS"})
                 .Input(Tensor::Scalar<int64_t>(-1))
                 .Input(Make<float>({1, 2, 3}, Shape{3}))
                 .Input(Tensor::Scalar<float>(0))
                 .Input(I64({0, 2, 9}))
                 .Run()
                 .status(),
             {"row_partition_tensors[0] ends at 9", "3 values"});
  CheckError(OpRunner("RaggedTensorToSparse")
                 .T(DType::kFloat)
                 .Int("RAGGED_RANK", 1)
                 .Input(I64({0, 2, 1, 3}))
                 .Input(Make<float>({1, 2, 3}, Shape{3}))
                 .Run()
                 .status(),
             {"rt_nested_splits[0] must be sorted", "entry 2 (1) < entry 1 (2)"});
  CheckError(OpRunner("RaggedGather")
                 .Type("Tvalues", DType::kFloat)
                 .Type("Tindices", DType::kInt32)
                 .Int("PARAMS_RAGGED_RANK", 1)
                 .Int("OUTPUT_RAGGED_RANK", 1)
                 .Input(I64({1, 3}))
                 .Input(Make<float>({1, 2, 3}, Shape{3}))
                 .Input(Make<int32_t>({0}, Shape{1}))
                 .Run()
                 .status(),
             {"params_nested_splits[0] must start with 0, got 1"});
  CheckError(OpRunner("RaggedGather")
                 .Type("Tvalues", DType::kFloat)
                 .Type("Tindices", DType::kInt32)
                 .Int("PARAMS_RAGGED_RANK", 1)
                 .Int("OUTPUT_RAGGED_RANK", 1)
                 .Input(I64({0, 1, 3}))
                 .Input(Make<float>({1, 2, 3}, Shape{3}))
                 .Input(Make<int32_t>({0, 2}, Shape{2}))
                 .Run()
                 .status(),
             {"indices[1] = 2 is not in [0, 2)"});
  CheckError(OpRunner("RaggedGather")
                 .Type("Tvalues", DType::kFloat)
                 .Type("Tindices", DType::kInt32)
                 .Int("PARAMS_RAGGED_RANK", 1)
                 .Int("OUTPUT_RAGGED_RANK", 2)
                 .Input(I64({0, 1, 3}))
                 .Input(Make<float>({1, 2, 3}, Shape{3}))
                 .Input(Make<int32_t>({0}, Shape{1}))
                 .Prepare(),
             {"attr 'OUTPUT_RAGGED_RANK' is 2", "= 1"});
}

TEST_CASE("ragged ops: RaggedRange and RaggedTensorToTensor attr and input errors") {
  CheckError(OpRunner("RaggedRange")
                 .T(DType::kInt32)
                 .Input(Make<int32_t>({0, 5}, Shape{2}))
                 .Input(Make<int32_t>({1, 2, 3}, Shape{3}))
                 .Input(Tensor::Scalar<int32_t>(1))
                 .Run()
                 .status(),
             {"starts, limits, and deltas must have the same shape"});
  CheckError(OpRunner("RaggedRange")
                 .T(DType::kInt32)
                 .Input(Tensor::Scalar<int32_t>(0))
                 .Input(Tensor::Scalar<int32_t>(3))
                 .Input(Tensor::Scalar<int32_t>(0))
                 .Run()
                 .status(),
             {"requires delta != 0"});
  CheckError(OpRunner("RaggedRange")
                 .T(DType::kBFloat16)
                 .Input(Tensor(DType::kBFloat16, Shape{}))
                 .Input(Tensor(DType::kBFloat16, Shape{}))
                 .Input(Tensor(DType::kBFloat16, Shape{}))
                 .Prepare(),
             {"attr 'T'", "bfloat16"});
  auto to_tensor = [](const std::vector<std::string>& types) {
    OpRunner r("RaggedTensorToTensor");
    r.T(DType::kFloat)
        .Type("Tindex", DType::kInt64)
        .Type("Tshape", DType::kInt64)
        .Int("num_row_partition_tensors", static_cast<int64_t>(types.size()))
        .StringList("row_partition_types", types)
        .Input(Tensor::Scalar<int64_t>(-1))
        .Input(Make<float>({1, 2}, Shape{2}))
        .Input(Tensor::Scalar<float>(0));
    for (size_t i = 0; i < types.size(); ++i) r.Input(I64({0, 2}));
    return r.Prepare();
  };
  CheckError(to_tensor({"VALUE_ROWIDS"}), {"VALUE_ROWIDS cannot be the first"});
  CheckError(to_tensor({"FIRST_DIM_SIZE", "ROW_SPLITS"}), {"must be followed by VALUE_ROWIDS"});
  CheckError(to_tensor({"ROW_SPLITS", "FIRST_DIM_SIZE"}), {"FIRST_DIM_SIZE must be the first"});
  CheckError(to_tensor({"ROW_LENGTHS"}), {"attr 'row_partition_types'[0]", "ROW_LENGTHS"});
  CheckError(OpRunner("RaggedTensorToTensor")
                 .T(DType::kFloat)
                 .Type("Tindex", DType::kInt64)
                 .Type("Tshape", DType::kInt64)
                 .Int("num_row_partition_tensors", 1)
                 .StringList("row_partition_types", {"ROW_SPLITS"})
                 .Input(I64({2, 2, 1}))
                 .Input(Make<float>({1, 2, 3, 4}, Shape{2, 2}))
                 .Input(Tensor::Scalar<float>(0))
                 .Input(I64({0, 1, 2}))
                 .Run()
                 .status(),
             {"rt_input.shape[2] = 2 but shape[2] = 1"});
  CheckError(OpRunner("RaggedTensorToTensor")
                 .T(DType::kFloat)
                 .Type("Tindex", DType::kInt64)
                 .Type("Tshape", DType::kInt64)
                 .Int("num_row_partition_tensors", 1)
                 .StringList("row_partition_types", {"ROW_SPLITS"})
                 .Input(Tensor::Scalar<int64_t>(-1))
                 .Input(Make<float>({1, 2, 3, 4}, Shape{2, 2}))
                 .Input(Make<float>({1, 2, 3}, Shape{3}))
                 .Input(I64({0, 1, 2}))
                 .Run()
                 .status(),
             {"default_value must broadcast"});
}

TEST_CASE("ragged ops: variants decode only what they were encoded as") {
  auto encoded = OpRunner("RaggedTensorToVariant")
                     .Type("Tvalues", DType::kFloat)
                     .Int("RAGGED_RANK", 1)
                     .Bool("batched_input", false)
                     .Input(I64({0, 1, 3}))
                     .Input(Make<float>({1, 2, 3}, Shape{3}))
                     .Run1();
  REQUIRE(encoded.ok());
  CheckError(OpRunner("RaggedTensorFromVariant")
                 .Type("Tvalues", DType::kInt32)
                 .Int("input_ragged_rank", 1)
                 .Int("output_ragged_rank", 1)
                 .Input(*encoded)
                 .Run()
                 .status(),
             {"holds float32 values, expected int32"});
  CheckError(OpRunner("RaggedTensorFromVariant")
                 .Type("Tvalues", DType::kFloat)
                 .Int("input_ragged_rank", 2)
                 .Int("output_ragged_rank", 2)
                 .Input(*encoded)
                 .Run()
                 .status(),
             {"ragged rank 1, expected 2"});
  CheckError(OpRunner("RaggedTensorFromVariant")
                 .Type("Tvalues", DType::kFloat)
                 .Int("input_ragged_rank", 0)
                 .Int("output_ragged_rank", 2)
                 .Input(*encoded, TensorSpec{DType::kVariant, PartialShape::Scalar()})
                 .Prepare(),
             {"must have rank output_ragged_rank - input_ragged_rank = 2"});
  CheckError(OpRunner("RaggedTensorToVariant")
                 .Type("Tvalues", DType::kFloat)
                 .Int("RAGGED_RANK", 0)
                 .Bool("batched_input", true)
                 .Input(Make<float>({1}, Shape{1}))
                 .Prepare(),
             {"ragged_rank=0 is not supported when batched_input=true"});
}

}  // namespace
}  // namespace kiln::exec

namespace kiln::exec {
namespace {

TEST_CASE("ragged ops: list outputs sized by an attr resolve through the node's attrs") {
  const OpDefinition* def = FindOp("RaggedGather");
  REQUIRE(def != nullptr);
  ProtoAttrMap attrs;
  attrs["OUTPUT_RAGGED_RANK"].set_i(2);
  // output_nested_splits:0,1 then output_dense_values:0, as TF numbers them.
  CHECK(*FlatOutputIndex(*def, "output_nested_splits", 1, &attrs) == 1);
  CHECK(*FlatOutputIndex(*def, "output_dense_values", 0, &attrs) == 2);
  CHECK(OutputArgOf(*def, 2, &attrs) == std::pair<std::string_view, int>("output_dense_values", 0));
  CHECK(OutputArgOf(*def, 1, &attrs) ==
        std::pair<std::string_view, int>("output_nested_splits", 1));
  testing::CheckError(FlatOutputIndex(*def, "output_nested_splits", 2, &attrs).status(),
                      {"holds 2 tensors", "OUTPUT_RAGGED_RANK", "index 2"});
  testing::CheckError(FlatOutputIndex(*def, "output_dense_values", 0).status(),
                      {"needs the node's attrs"});
  testing::CheckError(FlatOutputIndex(*def, "values", 0, &attrs).status(),
                      {"no output arg 'values'", "output_nested_splits,output_dense_values"});
}

}  // namespace
}  // namespace kiln::exec
