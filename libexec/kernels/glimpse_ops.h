// The prepared state of ExtractGlimpse(V2) (its noise and the node's random stream), shared by
// their definitions (kernels/glimpse_ops.cc) and CPU kernels (kernels/cpu/glimpse_ops.cc).
#pragma once

#include <cstdint>
#include <mutex>

#include "kernels/kernel_util.h"
#include "kernels/philox.h"

namespace kiln::exec::glimpse {

enum class Noise { kUniform, kGaussian, kZero };

struct GlimpseState : OpState {
  int version = 2;
  bool normalized = true, centered = true;
  Noise noise = Noise::kUniform;
  mutable std::mutex mu;
  mutable random::Philox generator;  // guarded by mu

  // A stream of `blocks` Philox blocks; the node's own moves past them.
  random::Philox Reserve(int64_t blocks) const {
    std::lock_guard<std::mutex> lock(mu);
    random::Philox local = generator;
    generator.Skip(static_cast<uint64_t>(blocks));
    return local;
  }
};

}  // namespace kiln::exec::glimpse
