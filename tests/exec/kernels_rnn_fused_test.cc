// Error paths of TF 1's fused recurrent ops and CTCLoss (rnn_ops, ctc_ops): bad dtypes and ranks
// fail at prepare, run-time shapes, seq_len_max and label layouts fail in the kernel naming the
// input and what TensorFlow expects. Values are checked by the op tester (tests/ops).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "exec/kernel_test_util.h"

namespace kiln::exec {
namespace {

using testing::CheckError;
using testing::Make;
using testing::OpRunner;
using testing::Random;

// A BlockLSTM with x [3, 2, 3], cell 4 and the given seq_len_max.
OpRunner BlockLstm(const std::string& op, int64_t seq_len_max) {
  OpRunner r(op, "lstm");
  r.T(DType::kFloat)
      .Input(Make<int64_t>({seq_len_max}, Shape{}))
      .Input(Random<float>(Shape{3, 2, 3}, 1))
      .Input(Random<float>(Shape{2, 4}, 2))
      .Input(Random<float>(Shape{2, 4}, 3))
      .Input(Random<float>(Shape{7, 16}, 4));
  for (uint32_t i = 0; i < 3; ++i) r.Input(Random<float>(Shape{4}, 5 + i));
  r.Input(Random<float>(Shape{16}, 8));
  return r;
}

TEST_CASE("BlockLSTM, BlockLSTMV2: errors") {
  {
    OpRunner r = BlockLstm("BlockLSTM", 4);
    CheckError(r.Run().status(), {"node 'lstm'", "seq_len_max", "between 0 and 3", "4"});
  }
  {
    OpRunner r = BlockLstm("BlockLSTMV2", -1);
    CheckError(r.Run().status(), {"seq_len_max", "between 0 and 3"});
  }
  {
    OpRunner r("BlockLSTM", "lstm");
    r.T(DType::kFloat).InputSpec({DType::kInt64, Shape{}}).InputSpec({DType::kFloat, Shape{2, 3}});
    for (int i = 0; i < 7; ++i) r.InputSpec({DType::kFloat, PartialShape::UnknownRank()});
    CheckError(r.Prepare(), {"node 'lstm'", "input 'x'", "3"});
  }
  {
    OpRunner r("BlockLSTMV2", "lstm");
    r.T(DType::kDouble).InputSpec({DType::kInt64, Shape{}});
    for (int i = 0; i < 8; ++i) r.InputSpec({DType::kDouble, PartialShape::UnknownRank()});
    CheckError(r.Prepare(), {"attr 'T'", "float64"});
  }
}

TEST_CASE("GRUBlockCell: errors") {
  {
    OpRunner r("GRUBlockCell", "gru");
    r.T(DType::kFloat)
        .Input(Random<float>(Shape{2, 3}, 1))
        .Input(Random<float>(Shape{2, 4}, 2))
        .Input(Random<float>(Shape{7, 8}, 3))
        .Input(Random<float>(Shape{6, 4}, 4))  // needs 3 + 4 = 7 rows
        .Input(Random<float>(Shape{8}, 5))
        .Input(Random<float>(Shape{4}, 6));
    CheckError(r.Run().status(), {"node 'gru'", "input 'w_c'", "(7, 4)", "(6, 4)"});
  }
  {
    OpRunner r("GRUBlockCell", "gru");
    r.T(DType::kHalf);
    for (int i = 0; i < 6; ++i) r.InputSpec({DType::kHalf, PartialShape::UnknownRank()});
    CheckError(r.Prepare(), {"attr 'T'", "float16"});
  }
}

// CTCLoss on logits [2, 2, 3] with the given sparse labels and sequence lengths.
Status RunCtcLoss(const std::vector<int64_t>& indices, const std::vector<int32_t>& values,
                  const std::vector<int32_t>& seq_len) {
  OpRunner r("CTCLoss", "ctc");
  r.T(DType::kFloat)
      .Input(Random<float>(Shape{2, 2, 3}, 1))
      .Input(Make<int64_t>(indices, Shape{static_cast<int64_t>(indices.size() / 2), 2}))
      .Input(Make<int32_t>(values, Shape{static_cast<int64_t>(values.size())}))
      .Input(Make<int32_t>(seq_len, Shape{static_cast<int64_t>(seq_len.size())}));
  return r.Run().status();
}

TEST_CASE("CTCLoss: errors") {
  CHECK(RunCtcLoss({0, 0, 1, 0}, {0, 1}, {2, 2}).ok());
  CheckError(RunCtcLoss({0, 0, 0, 1, 0, 2, 1, 0}, {0, 1, 0, 1}, {2, 2}),
             {"node 'ctc'", "not enough time", "required: 3", "available: 2"});
  CheckError(RunCtcLoss({0, 0}, {0}, {2, 2}), {"labels length is zero in batch 1"});
  CheckError(RunCtcLoss({1, 0, 0, 0}, {0, 1}, {2, 2}), {"labels_indices[1]", "out of order"});
  CheckError(RunCtcLoss({0, 0, 2, 0}, {0, 1}, {2, 2}), {"labels_indices[1]", "out of bounds"});
  CheckError(RunCtcLoss({0, 0, 1, 0}, {0, 1}, {3, 2}), {"sequence_length[0] = 3", "[0, 2]"});
  CheckError(RunCtcLoss({0, 0, 0, 1, 1, 0}, {2, 0, 1}, {2, 2}), {"non-null label", "batch 0"});
  CheckError(RunCtcLoss({0, 0, 1, 0}, {0, -1}, {2, 2}), {"nonnegative", "batch 1"});
  CheckError(RunCtcLoss({0, 0, 1, 0}, {0, 1}, {2}), {"sequence_length has 1 entries", "(2, 2, 3)"});
}

}  // namespace
}  // namespace kiln::exec
