// What the stateless random ops' definitions (kernels/stateless_random_ops.cc) and CPU kernels
// (kernels/cpu/stateless_random_ops.cc) share: their dtypes and the state a definition builds.
#pragma once

#include <cstdint>

#include "kernels/random_util.h"
#include "kernels/type_lists.h"
#include "kiln/core/dtype.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::stateless_random {

using StatelessFloatTypes = TypeList<float, double, Half, BFloat16>;
using FullIntTypes = TypeList<int32_t, int64_t, uint32_t, uint64_t>;

using Draw = RandomDraw;

struct StatelessState : OpState {
  DType dtype = DType::kInvalid;
  Draw draw = Draw::kUniform;
  bool v2 = false;  // key/counter/alg inputs instead of a seed
};

// StochasticCastToInt's dtypes and state (kernels/cpu/stateless_random_ops.cc says how it rounds).
using CastInTypes = TypeList<float, double, Half, BFloat16>;
using CastOutTypes = TypeList<int8_t, int16_t, int32_t>;

struct CastState : OpState {
  DType in = DType::kInvalid;
  DType out = DType::kInvalid;
};

}  // namespace kiln::exec::stateless_random
