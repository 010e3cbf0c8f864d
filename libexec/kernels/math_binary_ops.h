// MathBinary's type lists and op state, shared by its definitions and its CPU kernels.
#pragma once

#include <complex>
#include <cstdint>

#include "kernels/type_lists.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::math_binary {

// TF's CPU registrations: Mod/TruncateMod take float32/64 and int32/64 (half and bfloat16, which
// the OpDef allows, compute in float); SquaredDifference adds int32/64 to the floats.
using ModTypes = TypeList<float, double, Half, BFloat16, int32_t, int64_t>;
using SquaredDifferenceTypes = TypeList<float, double, Half, BFloat16, int32_t, int64_t,
                                        std::complex<float>, std::complex<double>>;
// Igamma, Igammac (and their gradients), Zeta, Polygamma and NextAfter: TF registers float and
// double only.
using SpecialTypes = TypeList<float, double>;

struct AlphaState : OpState {
  float alpha = 0.2f;
};

}  // namespace kiln::exec::math_binary
