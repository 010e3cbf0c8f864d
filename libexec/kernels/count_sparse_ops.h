// What the sparse counting ops' definitions and CPU kernels (count_sparse_ops.cc) share.
#pragma once

#include <cstdint>

#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec::count_sparse {

// TF registers the counts/weights as int32, int64, float32 and float64.
using CountTypes = TypeList<int32_t, int64_t, float, double>;

// SparseBincount.
struct SparseBincountState : OpState {
  bool binary_output = false;
};

// {Dense,Sparse,Ragged}CountSparseOutput.
struct CountSparseState : OpState {
  int64_t minlength = -1;
  int64_t maxlength = -1;
  bool binary_output = false;
  DType out_type = DType::kInt64;
};

enum class CountInput { kDense, kSparse, kRagged };

}  // namespace kiln::exec::count_sparse
