// What the gamma, Poisson, binomial and truncated normal ops' definitions
// (kernels/random_distribution_ops.cc) and CPU kernels (kernels/cpu/random_distribution_ops.cc)
// share: their dtypes and the state a definition builds.
#pragma once

#include <cstdint>
#include <mutex>

#include "kernels/philox.h"
#include "kernels/random_samplers.h"
#include "kernels/type_lists.h"
#include "kiln/core/dtype.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::random_distribution {

using random::Philox;

// What TF's OpDefs (and CPU kernels) accept.
using GammaTypes = TypeList<float, double, Half>;
using PoissonTypes = TypeList<float, double, Half, int32_t, int64_t>;
using BinomialParamTypes = TypeList<float, double, Half>;

struct DistState : OpState {
  DType out = DType::kInvalid;    // output dtype
  DType param = DType::kInvalid;  // alpha / rate / counts and probs dtype
  bool key_counter = false;       // V3: key, counter and alg inputs instead of a seed
  // Stateful ops only: the node's generator, moved on by every call.
  mutable std::mutex mu;
  mutable Philox generator;  // guarded by mu

  Philox Reserve(int64_t outputs) const {
    std::lock_guard<std::mutex> lock(mu);
    Philox local = generator;
    generator.Skip(static_cast<uint64_t>(outputs) * random::kBlocksPerSample);
    return local;
  }
};

}  // namespace kiln::exec::random_distribution
