// The dtypes, input names and prepared state of the fused recurrent cells, shared by their
// definitions (kernels/rnn_ops.cc) and CPU kernels (kernels/cpu/rnn_ops.cc).
#pragma once

#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec::rnn {

struct LstmState : OpState {
  DType t = DType::kFloat;
  float forget_bias = 1, cell_clip = 3;
  bool peephole = false;
  bool block = false;  // BlockLSTM(V2): a seq_len_max input first and x [time, batch, input]
  bool ifco = false;   // BlockLSTMV2: gates i, f, ci, o along w's columns instead of i, ci, f, o
};

using LstmTypes = TypeList<float, Half>;

inline constexpr const char* kInputNames[] = {"x",   "cs_prev", "h_prev", "w",
                                              "wci", "wcf",     "wco",    "b"};

// GRUBlockCell's inputs.
inline constexpr const char* kGruInputNames[] = {"x", "h_prev", "w_ru", "w_c", "b_ru", "b_c"};

}  // namespace kiln::exec::rnn
