// The fused recurrent loop's form (recurrent_loop.h): which loop variables play which part,
// found by full/recurrent_loop_match.cc and run by cpu/full/recurrent_loop.cc.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "kiln/core/dtype.h"

namespace kiln::exec {

// Columns [begin, end) of dim 1 that a StridedSlice takes (Python's x[:, begin:end]); a
// negative bound counts from the end, `*_full` is the mask bit (the bound left out).
struct ColumnSlice {
  int64_t begin = 0, end = 0;
  bool begin_full = false, end_full = false;
  // Whether it is [first, last) of a row of `width` columns.
  bool Is(int64_t first, int64_t last, int64_t width) const {
    auto at = [&](int64_t v, bool full, int64_t dflt) {
      if (full) return dflt;
      return std::clamp<int64_t>(v < 0 ? v + width : v, 0, width);
    };
    return at(begin, begin_full, 0) == first && at(end, end_full, width) == last;
  }
};

// How a weight variable becomes the float32 the cell computes with, where `savedmodel-cli
// quantize` stored it otherwise (Cast, then Mul by its scales, in the loop's body): int8 levels
// times per-column scales (or one), or half precision cast up. Empty: read as it is.
struct WeightDequant {
  DType stored = DType::kInvalid;  // kInvalid: the variable is the weight
  std::vector<float> scales;       // int8: one, or one per column
};

// Loop-variable indices of the parts of the form.
struct RecurrentLoop {
  enum class Cell { kLstm, kGru, kSimple };
  Cell cell = Cell::kLstm;
  // The loop's element type: float32, or float16/bfloat16 (a mixed-precision layer), which the
  // kernel computes in float32 and rounds where the graph's loop variables would.
  DType dtype = DType::kFloat;
  // `limit`: the counter's bound in the cond, or -1 when the cond tests the time alone (tf.keras
  // 2's loops, made without maximum_iterations).
  int counter = -1, limit = -1, time = -1, out = -1, h = -1, c = -1;
  // The weights are resource variables (ReadVariableOp in the body: Keras 3), or tensors read
  // before the loop (tf.keras 2); the kernel takes either.
  int xs = -1, kernel = -1, recurrent = -1, bias = -1;
  WeightDequant kernel_dq, recurrent_dq, bias_dq, bias_recurrent_dq;
  int64_t max_time = 0;       // the cond's bound on `time`: a constant,
  int max_time_arg = -1;      // or this unchanged variable (a sequence length known at run time)
  bool write_at_time = true;  // out[time] = h' (return_sequences); else out[write_index] = h'
  int64_t write_index = 0;
  ColumnSlice gru_slices[3];  // the GRU's z, r and h columns of h recurrent
  // tf.keras 2's GRU: h recurrent + b1 is split into the three gates by a Split (no column
  // slices), and its two biases are separate loop variables: `bias` (the input's) and this one.
  bool gru_split = false;
  int bias_recurrent = -1;
  bool simple_relu = false;  // SimpleRNN's activation: relu, else tanh
  // A masked layer (Keras's mask, e.g. from Embedding(mask_zero=True)): a step where a row's
  // mask is false keeps that row's states and repeats its previous output (`prev_out`).
  int mask = -1;      // the list of [batch, 1] bool masks
  int prev_out = -1;  // the output of the last step (what the list gets)
  // What a masked row outputs: prev_out (the previous output, repeated) or an unchanged
  // variable (Keras's zeros when it returns sequences).
  int masked_output = -1;
  int64_t mask_tile = 0;  // the Tile's width: the units, or 1 (SelectV2 broadcasts it)
};

// KILN_RECURRENT_FUSION: unset or 1 fuses, 0 does not, "log" fuses and says so on stderr.
enum class FusionMode { kOn, kOff, kLog };
inline FusionMode RecurrentFusionMode() {
  static const FusionMode mode = [] {
    const char* e = std::getenv("KILN_RECURRENT_FUSION");
    if (e == nullptr) return FusionMode::kOn;
    if (std::string_view(e) == "0") return FusionMode::kOff;
    return std::string_view(e) == "log" ? FusionMode::kLog : FusionMode::kOn;
  }();
  return mode;
}

}  // namespace kiln::exec
