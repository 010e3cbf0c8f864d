// What tf.random.Generator's ops' definitions (kernels/stateful_random_ops.cc) and CPU kernels
// (kernels/cpu/stateful_random_ops.cc) share: their dtypes, the state a definition builds and the
// size of the RNG state.
#pragma once

#include <cstdint>

#include "kernels/random_util.h"
#include "kernels/type_lists.h"
#include "kiln/core/dtype.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::stateful_random {

using FloatTypes = TypeList<float, double, Half, BFloat16>;
using IntTypes = TypeList<int32_t, int64_t>;
using FullIntTypes = TypeList<int32_t, int64_t, uint32_t, uint64_t>;

using Draw = RandomDraw;

struct StatefulState : OpState {
  DType dtype = DType::kInvalid;
  Draw draw = Draw::kUniform;
  DType param = DType::kInvalid;  // StatefulRandomBinomial's counts and probs
};

// TF's counter and key after the algorithm tag: int64 [counter_lo, counter_hi, key].
inline constexpr int64_t kPhiloxStateSize = 3;

}  // namespace kiln::exec::stateful_random
