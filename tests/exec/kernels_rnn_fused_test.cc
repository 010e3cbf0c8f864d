// Error paths of TF 1's fused recurrent ops, their gradients and CTCLoss (rnn_ops,
// rnn_grad_ops, ctc_ops): bad dtypes, attrs and ranks fail at prepare, run-time shapes,
// seq_len_max and label layouts fail in the kernel naming the input and what TensorFlow expects.
// Values are checked by the op tester (tests/ops).
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

// A BlockLSTMGrad(V2) with x [3, 2, 3], cell `cell`, the given seq_len_max, w rows and time
// dim of the gate o; its inputs' shapes known at prepare time or not (run-time checks).
struct LstmGradArgs {
  int64_t seq_len_max = 3, cell = 4, w_rows = 7, o_time = 3;
  bool known_shapes = true;
};
OpRunner BlockLstmGrad(const std::string& op, const LstmGradArgs& a) {
  OpRunner r(op, "lstm_grad");
  r.T(DType::kFloat).Bool("use_peephole", true).Input(Make<int64_t>({a.seq_len_max}, Shape{}));
  auto in = [&](const Shape& s, uint32_t seed) {
    if (a.known_shapes) {
      r.Input(Random<float>(s, seed));
    } else {
      r.Input(Random<float>(s, seed), TensorSpec{DType::kFloat, PartialShape::UnknownRank()});
    }
  };
  const int64_t h = a.cell;
  in(Shape{3, 2, 3}, 1);
  in(Shape{2, h}, 2);
  in(Shape{2, h}, 3);
  in(Shape{a.w_rows, 4 * h}, 4);
  for (uint32_t i = 0; i < 3; ++i) in(Shape{h}, 5 + i);
  in(Shape{4 * h}, 8);
  for (uint32_t i = 0; i < 9; ++i) in(Shape{i == 3 ? a.o_time : 3, 2, h}, 9 + i);  // i == 3: o
  return r;
}

// GRUBlockCellGrad with x [2, 3], cell 4 and d_h of `d_h_shape`.
OpRunner GruGrad(const Shape& d_h_shape, bool known_shapes) {
  OpRunner r("GRUBlockCellGrad", "gru_grad");
  r.T(DType::kFloat);
  const Shape shapes[10] = {Shape{2, 3}, Shape{2, 4}, Shape{7, 8}, Shape{7, 4}, Shape{8},
                            Shape{4},    Shape{2, 4}, Shape{2, 4}, Shape{2, 4}, d_h_shape};
  for (uint32_t i = 0; i < 10; ++i) {
    if (known_shapes) {
      r.Input(Random<float>(shapes[i], 1 + i));
    } else {
      r.Input(Random<float>(shapes[i], 1 + i),
              TensorSpec{DType::kFloat, PartialShape::UnknownRank()});
    }
  }
  return r;
}

TEST_CASE("LSTMBlockCellGrad, BlockLSTMGrad(V2), GRUBlockCellGrad: errors") {
  CHECK(BlockLstmGrad("BlockLSTMGrad", {}).Run().ok());
  CHECK(BlockLstmGrad("BlockLSTMGradV2", {.known_shapes = false}).Run().ok());
  CheckError(BlockLstmGrad("BlockLSTMGrad", {.seq_len_max = 4}).Run().status(),
             {"node 'lstm_grad'", "seq_len_max", "between 0 and 3", "4"});
  CheckError(BlockLstmGrad("BlockLSTMGradV2", {.seq_len_max = -1}).Run().status(),
             {"seq_len_max", "between 0"});
  // TF's BlockLSTMGrad needs a positive cell size (w's columns a positive multiple of 4).
  for (bool known : {true, false}) {
    CheckError(BlockLstmGrad("BlockLSTMGrad", {.cell = 0, .w_rows = 3, .known_shapes = known})
                   .Run()
                   .status(),
               {"input 'w'", "positive multiple of 4"});
  }
  CheckError(BlockLstmGrad("BlockLSTMGradV2", {.w_rows = 6}).Run().status(),
             {"input 'w'", "input_size + cell_size = 7 rows", "(6, 16)"});
  CheckError(BlockLstmGrad("BlockLSTMGradV2", {.w_rows = 6, .known_shapes = false}).Run().status(),
             {"input 'w'", "(input_size + cell_size, 4 * cell_size) = (7, 16)", "(6, 16)"});
  // A gate whose time dim disagrees with x's.
  CheckError(BlockLstmGrad("BlockLSTMGrad", {.o_time = 2}).Run().status(),
             {"input 'o'", "(2, 2, 4)", "disagrees on the time (3)"});
  CheckError(BlockLstmGrad("BlockLSTMGrad", {.o_time = 2, .known_shapes = false}).Run().status(),
             {"input 'o'", "(time, batch_size, cell_size) = (3, 2, 4)", "got (2, 2, 4)"});
  {
    OpRunner r("LSTMBlockCellGrad", "cell_grad");
    r.T(DType::kFloat);
    for (int i = 0; i < 16; ++i) r.InputSpec({DType::kFloat, PartialShape::UnknownRank()});
    CheckError(r.Prepare(), {"node 'cell_grad'", "use_peephole", "required"});
  }
  {
    OpRunner r("LSTMBlockCellGrad", "cell_grad");
    r.T(DType::kDouble).Bool("use_peephole", false);
    for (int i = 0; i < 16; ++i) r.InputSpec({DType::kDouble, PartialShape::UnknownRank()});
    CheckError(r.Prepare(), {"attr 'T'", "float64"});
  }
  {
    // cs_prev says cell 4, the gates 5.
    OpRunner r("LSTMBlockCellGrad", "cell_grad");
    r.T(DType::kFloat).Bool("use_peephole", false);
    r.InputSpec({DType::kFloat, PartialShape{2, 3}}).InputSpec({DType::kFloat, PartialShape{2, 4}});
    for (int i = 2; i < 8; ++i) r.InputSpec({DType::kFloat, PartialShape::UnknownRank()});
    r.InputSpec({DType::kFloat, PartialShape{-1, 5}});
    for (int i = 9; i < 16; ++i) r.InputSpec({DType::kFloat, PartialShape::UnknownRank()});
    CheckError(r.Prepare(), {"input 'i'", "(None, 5)", "cell_size (4)"});
  }
  {
    OpRunner r("GRUBlockCellGrad", "gru_grad");
    r.T(DType::kHalf);
    for (int i = 0; i < 10; ++i) r.InputSpec({DType::kHalf, PartialShape::UnknownRank()});
    CheckError(r.Prepare(), {"attr 'T'", "float16"});
  }
  CHECK(GruGrad(Shape{2, 4}, false).Run().ok());
  CheckError(GruGrad(Shape{2, 3}, true).Run().status(),
             {"node 'gru_grad'", "input 'd_h'", "(2, 3)", "cell_size (4)"});
  CheckError(GruGrad(Shape{2, 3}, false).Run().status(),
             {"node 'gru_grad'", "input 'd_h'", "(batch_size, cell_size) = (2, 4)", "got (2, 3)"});
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
