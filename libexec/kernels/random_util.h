// What the stateful (random_ops.cc), stateless (stateless_random_ops.cc) and distribution
// (random_distribution_ops.cc) random ops' definitions share: the "shape" input, the algorithm
// ids, where a stateful stream starts, and Multinomial's specs. What their CPU kernels share is in
// kernels/cpu/random_util.h.
#pragma once

#include <initializer_list>

#include "kernels/philox.h"
#include "kiln/core/dtype.h"
#include "kiln/core/shape.h"
#include "kiln/core/status.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec {

// The dtypes of shape, seed and index arguments.
inline constexpr std::initializer_list<DType> kRandomIndexDTypes = {DType::kInt32, DType::kInt64};

// The output spec from a 1-D int32/int64 "shape" input (input i): exact when the input is a
// constant, else its length gives the rank when known.
Status PrepareShapeInput(PrepareContext& ctx, int i, DType index_type, PartialShape* out);

// The RNG algorithms of the V2/V3 stateless ops' "alg" input that run on CPUs.
inline constexpr int kRngAlgPhilox = 1;
inline constexpr int kRngAlgAuto = 3;

// A stateful seeded node's generator from its seed and seed2 attrs, as TF's GuardedPhiloxRandom
// starts it (both 0: a random seed, so every node and every run differ). Defined in
// random_ops.cc.
Result<random::Philox> SeededGenerator(const PrepareContext& ctx);

// What the uniform / normal / integer ops draw, stateless and stateful alike.
enum class RandomDraw { kUniform, kNormal, kTruncatedNormal, kUniformInt, kFullInt };

// Multinomial's attrs and inputs (logits [batch, classes], num_samples); sets ctx.outputs and
// returns the output dtype.
Result<DType> PrepareMultinomialSpecs(PrepareContext& ctx);

}  // namespace kiln::exec
