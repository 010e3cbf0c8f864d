// What the CPU kernels of the stateful (random_ops.cc), stateless (stateless_random_ops.cc) and
// distribution (random_distribution_ops.cc) random ops share: the "shape" input's value, where a
// stateless stream starts, the uniform / normal draws, and Multinomial's and the binomial's
// sampling from a given Philox stream.
#pragma once

#include <cstdint>

#include "kernels/philox.h"
#include "kernels/random_util.h"
#include "kernels/type_lists.h"
#include "kiln/core/dtype.h"
#include "kiln/core/shape.h"
#include "kiln/core/status.h"
#include "kiln/core/tensor.h"
#include "kiln/exec/op_table.h"
#include "kiln/exec/thread_pool.h"

namespace kiln::exec {

// The run-time value of a "shape" input.
Result<Shape> ShapeFromInput(const KernelContext& ctx, const Tensor& t);

// A stateless op's stream from its "seed" input (int32 or int64, shape (2,)); from a V2 op's
// key (uint64 (1,)), counter (uint64, at least 2) and alg inputs. Defined in
// cpu/stateless_random_ops.cc; errors name the input and what TF expects.
Result<random::Philox> GeneratorFromSeed(const KernelContext& ctx, const Tensor& seed);
Result<random::Philox> GeneratorFromKeyCounter(const KernelContext& ctx, const Tensor& key,
                                               const Tensor& counter, const Tensor& alg);

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

// Draws output 0 from inputs 0 (logits) and 1 (num_samples). `generator(blocks)` gives the
// Philox stream to draw from, `blocks` being how many blocks TF reserves for the call.
Status SampleMultinomial(const KernelContext& ctx, DType out_type,
                         FunctionRef<random::Philox(int64_t blocks)> generator);

// StatelessRandomBinomial's and StatefulRandomBinomial's draws: output 0 of `out_type` from the
// shape (input shape_input), counts and probs (counts_input, counts_input + 1, of `param_type`)
// as TF's RandomBinomialFunctor draws them. `generator(batches, per_batch)` gives the stream,
// once the inputs are checked and the output allocated. Defined in cpu/random_distribution_ops.cc.
Status SampleBinomial(
    const KernelContext& ctx, DType param_type, DType out_type, int shape_input, int counts_input,
    FunctionRef<Result<random::Philox>(int64_t batches, int64_t per_batch)> generator);

}  // namespace kiln::exec
