// What the stateful (random_ops.cc), stateless (stateless_random_ops.cc) and distribution
// (random_distribution_ops.cc) random ops share: the "shape" input, where a stream starts, and
// Multinomial's sampling from a given Philox stream.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "kernels/philox.h"
#include "kernels/type_lists.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec {

// The dtypes of shape, seed and index arguments.
inline constexpr std::initializer_list<DType> kRandomIndexDTypes = {DType::kInt32, DType::kInt64};

// The output spec from a 1-D int32/int64 "shape" input (input i): exact when the input is a
// constant, else its length gives the rank when known.
Status PrepareShapeInput(PrepareContext& ctx, int i, DType index_type, PartialShape* out);
// The run-time value of a "shape" input.
Result<Shape> ShapeFromInput(const KernelContext& ctx, const Tensor& t);

// The RNG algorithms of the V2/V3 stateless ops' "alg" input that run on CPUs.
inline constexpr int kRngAlgPhilox = 1;
inline constexpr int kRngAlgAuto = 3;

// A stateful seeded node's generator from its seed and seed2 attrs, as TF's GuardedPhiloxRandom
// starts it (both 0: a random seed, so every node and every run differ). Defined in
// random_ops.cc.
Result<random::Philox> SeededGenerator(const PrepareContext& ctx);
// A stateless op's stream from its "seed" input (int32 or int64, shape (2,)); from a V2 op's
// key (uint64 (1,)), counter (uint64, at least 2) and alg inputs. Defined in
// stateless_random_ops.cc; errors name the input and what TF expects.
Result<random::Philox> GeneratorFromSeed(const KernelContext& ctx, const Tensor& seed);
Result<random::Philox> GeneratorFromKeyCounter(const KernelContext& ctx, const Tensor& key,
                                               const Tensor& counter, const Tensor& alg);

// What the uniform / normal / integer ops draw, stateless and stateful alike.
enum class RandomDraw { kUniform, kNormal, kTruncatedNormal, kUniformInt, kFullInt };

// Fills a floating-point output (float, double, half, bfloat16: computed in their ComputeType)
// with a uniform, normal or truncated-normal draw from `gen`, in TF's sample layout.
template <typename T>
void FillFloatDraw(RandomDraw draw, random::Philox gen, Tensor* out) {
  using C = ComputeType<T>;
  C* o = MutableComputeData<T>(out);
  const int64_t n = out->NumElements();
  if (draw == RandomDraw::kUniform) {
    random::FillPhilox(gen, random::UniformDist<C>(), o, n);
  } else if (draw == RandomDraw::kNormal) {
    random::FillPhilox(gen, random::NormalDist<C>(), o, n);
  } else {
    random::FillPhiloxVariable(gen, random::TruncatedNormalDist<C>(), o, n);
  }
}

// Multinomial's attrs and inputs (logits [batch, classes], num_samples); sets ctx.outputs and
// returns the output dtype.
Result<DType> PrepareMultinomialSpecs(PrepareContext& ctx);
// Draws output 0 from inputs 0 (logits) and 1 (num_samples). `generator(blocks)` gives the
// Philox stream to draw from, `blocks` being how many blocks TF reserves for the call.
Status SampleMultinomial(const KernelContext& ctx, DType out_type,
                         FunctionRef<random::Philox(int64_t blocks)> generator);

// StatelessRandomBinomial's and StatefulRandomBinomial's draws: output 0 of `out_type` from the
// shape (input shape_input), counts and probs (counts_input, counts_input + 1, of `param_type`)
// as TF's RandomBinomialFunctor draws them. `generator(batches, per_batch)` gives the stream,
// once the inputs are checked and the output allocated. Defined in random_distribution_ops.cc.
Status SampleBinomial(
    const KernelContext& ctx, DType param_type, DType out_type, int shape_input, int counts_input,
    FunctionRef<Result<random::Philox>(int64_t batches, int64_t per_batch)> generator);

}  // namespace kiln::exec
