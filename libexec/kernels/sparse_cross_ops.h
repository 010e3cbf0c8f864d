// The state the feature-cross ops' definitions and CPU kernels (sparse_cross_ops.cc) share.
#pragma once

#include <cstdint>

#include "kernels/kernel_util.h"

namespace kiln::exec::sparse_cross {

enum class Cross { kString, kHash, kStringV2, kKeyedHash };

struct CrossState : OpState {
  Cross kind = Cross::kString;
  int n_sparse = 0, n_dense = 0;
  int64_t num_buckets = 0;
  uint64_t hash_key = 0;
};

}  // namespace kiln::exec::sparse_cross
