// What the sparse arithmetic ops' definitions and CPU kernels (sparse_math_ops.cc) share.
#pragma once

#include <complex>
#include <cstdint>

#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec::sparse_math {

// SparseTensorDenseMatMul.
using MatMulTypes = TypeList<float, double, Half, BFloat16, int32_t, int64_t, std::complex<float>,
                             std::complex<double>>;

struct MatMulState : OpState {
  bool adjoint_a = false, adjoint_b = false;
};

// SparseReduceMax, SparseSparseMaximum/Minimum (and SparseAdd's thresh).
using RealNumberTypes = TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t,
                                 uint8_t, uint16_t, uint32_t, uint64_t>;

// SparseDenseCwiseAdd, SparseDenseCwiseMul, SparseDenseCwiseDiv.
enum class Cwise { kAdd, kMul, kDiv };

// SparseReduceSum, SparseReduceMax (and their Sparse forms).
struct ReduceState : OpState {
  bool keep_dims = false;
  bool sparse_out = false;
  bool max = false;
};

}  // namespace kiln::exec::sparse_math
