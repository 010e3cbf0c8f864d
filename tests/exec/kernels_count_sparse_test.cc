// Error paths of SparseBincount, the *CountSparseOutput ops, EditDistance and NearestNeighbors:
// TF's run-time checks (negative values, mismatched weights, bad splits, mismatched ranks, group
// indices outside the output, negative k). Values are covered by the op tester (tests/ops).
#include <doctest/doctest.h>

#include "exec/kernel_test_util.h"

namespace kiln::exec {
namespace {

using testing::CheckError;
using testing::Make;
using testing::OpRunner;

Tensor NoWeights() { return Tensor(DType::kFloat, Shape{0}); }

TEST_CASE("SparseBincount: negative 1-D values, sizes and weights are errors") {
  auto run = [](const Tensor& values, int32_t size, const Tensor& w) {
    return OpRunner("SparseBincount", "sb")
        .T(DType::kFloat)
        .Type("Tidx", DType::kInt32)
        .Input(Make<int64_t>({0, 2}, {2, 1}))
        .Input(values)
        .Input(Make<int64_t>({4}, {1}))
        .Input(Tensor::Scalar<int32_t>(size))
        .Input(w)
        .Run1();
  };
  CheckError(run(Make<int32_t>({1, -2}, {2}), 3, NoWeights()).status(),
             {"node 'sb'", "non-negative", "-2"});
  CheckError(run(Make<int32_t>({1, 2}, {2}), -1, NoWeights()).status(),
             {"'size' must be non-negative, got -1"});
  CheckError(run(Make<int32_t>({1, 2}, {2}), 3, Make<float>({1}, {1})).status(),
             {"'weights'", "(1,)"});
  auto oob = OpRunner("SparseBincount", "oob")
                 .T(DType::kFloat)
                 .Type("Tidx", DType::kInt32)
                 .Input(Make<int64_t>({0, 4}, {2, 1}))
                 .Input(Make<int32_t>({1, 2}, {2}))
                 .Input(Make<int64_t>({4}, {1}))
                 .Input(Tensor::Scalar<int32_t>(3))
                 .Input(NoWeights())
                 .Run1();
  CheckError(oob.status(), {"node 'oob'", "out of bounds"});
}

TEST_CASE("DenseCountSparseOutput: rank, negative values and weights") {
  auto run = [](const Tensor& values, const Tensor& w) {
    return OpRunner("DenseCountSparseOutput", "dc")
        .T(DType::kInt32)
        .Type("output_type", DType::kFloat)
        .Bool("binary_output", false)
        .Input(values)
        .Input(w)
        .Run();
  };
  CheckError(run(Make<int32_t>({1}, {1, 1, 1}), NoWeights()).status(), {"rank 1 or 2"});
  CheckError(run(Make<int32_t>({1, -1}, {2}), NoWeights()).status(),
             {"node 'dc'", "non-negative", "-1"});
  CheckError(run(Make<int32_t>({1, 2, 3, 4}, {2, 2}), Make<float>({1, 2, 3, 4}, {4})).status(),
             {"'weights'", "(2, 2)", "(4,)"});
  CheckError(run(Tensor(DType::kInt32, Shape{0, 3}), NoWeights()).status(), {"0 rows"});
}

TEST_CASE("SparseCountSparseOutput, RaggedCountSparseOutput: bad shapes and splits") {
  auto sparse = OpRunner("SparseCountSparseOutput", "sc")
                    .T(DType::kInt64)
                    .Type("output_type", DType::kFloat)
                    .Bool("binary_output", false)
                    .Input(Tensor(DType::kInt64, Shape{0, 2}))
                    .Input(Tensor(DType::kInt64, Shape{0}))
                    .Input(Make<int64_t>({0, 4}, {2}))
                    .Input(NoWeights())
                    .Run();
  CheckError(sparse.status(), {"node 'sc'", "positive first dimension, got 0"});
  auto ragged = [](const std::vector<int64_t>& splits) {
    return OpRunner("RaggedCountSparseOutput", "rc")
        .T(DType::kInt64)
        .Type("output_type", DType::kFloat)
        .Bool("binary_output", false)
        .Input(Make<int64_t>(splits, {static_cast<int64_t>(splits.size())}))
        .Input(Make<int64_t>({1, 2, 3}, {3}))
        .Input(NoWeights())
        .Run();
  };
  CheckError(ragged({0}).status(), {"'splits'", "at least 2 elements"});
  CheckError(ragged({1, 3}).status(), {"start with 0, got 1"});
  CheckError(ragged({0, 2}).status(), {"end with the number of values 3, got 2"});
  CheckError(ragged({0, 3, 2, 3}).status(), {"non-decreasing"});
}

TEST_CASE("EditDistance: ranks must match and be at least 2, groups inside the output") {
  auto run = [](const std::vector<int64_t>& hi, const std::vector<int64_t>& hs,
                const std::vector<int64_t>& ti, const std::vector<int64_t>& ts) {
    const int64_t hr = static_cast<int64_t>(hs.size()), tr = static_cast<int64_t>(ts.size());
    return OpRunner("EditDistance", "ed")
        .T(DType::kInt32)
        .Input(Make<int64_t>(hi, {static_cast<int64_t>(hi.size()) / hr, hr}))
        .Input(Make<int32_t>(std::vector<int32_t>(hi.size() / hr, 1),
                             {static_cast<int64_t>(hi.size()) / hr}))
        .Input(Make<int64_t>(hs, {hr}))
        .Input(Make<int64_t>(ti, {static_cast<int64_t>(ti.size()) / tr, tr}))
        .Input(Make<int32_t>(std::vector<int32_t>(ti.size() / tr, 1),
                             {static_cast<int64_t>(ti.size()) / tr}))
        .Input(Make<int64_t>(ts, {tr}))
        .Run1();
  };
  CheckError(run({0}, {2}, {0}, {2}).status(), {"node 'ed'", "rank at least 2"});
  CheckError(run({0, 0}, {2, 2}, {0, 0, 0}, {2, 2, 2}).status(), {"matching ranks"});
  CheckError(run({3, 0}, {1, 2}, {0, 0}, {1, 2}).status(), {"outside the output's 1 elements"});
  CheckError(run({0, 0}, {-1, 2}, {0, 0}, {1, 2}).status(), {"non-negative", "-1"});
  // An out-of-range last index is no error (TF uses only the group indices).
  auto last = run({0, 5}, {1, 2}, {0, 0}, {1, 2});
  REQUIRE(last.ok());
  CHECK(last->data<float>()[0] == 0.0f);
}

TEST_CASE("NearestNeighbors: k must be non-negative, the dimensions must match") {
  auto run = [](const Tensor& centers, int64_t k) {
    return OpRunner("NearestNeighbors", "nn")
        .Input(Make<float>({0, 0, 1, 1}, {2, 2}))
        .Input(centers)
        .Input(Tensor::Scalar<int64_t>(k))
        .Run();
  };
  CheckError(run(Make<float>({0, 0}, {1, 2}), -1).status(), {"node 'nn'", "'k'", "-1"});
  CheckError(run(Make<float>({0, 0}, {2, 1}), 1).status(), {"same number of columns", "2 and 1"});
}

}  // namespace
}  // namespace kiln::exec
