// Sparse tensors as three inputs (indices [N, R] int64, values [N], dense_shape [R]), as the
// sparse kernel families read them (sparse_math_ops.cc, sparse_manip_ops.cc).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "kiln/exec/op_table.h"

namespace kiln::exec {

// A checked view of one sparse tensor's inputs.
struct SparseInput {
  const int64_t* idx = nullptr;  // N * R, row-major: the indices input's own elements
  const Tensor* values = nullptr;
  std::vector<int64_t> shape;
  int64_t n = 0;
  int64_t rank = 0;
  const int64_t* row(int64_t i) const { return idx + i * rank; }
};

// Inputs first .. first + 2 of a kernel: their shapes must agree, and every index must lie
// inside the dense shape. `what` names the tensor in errors.
Result<SparseInput> ReadSparseInput(const KernelContext& ctx, int first, std::string_view what);

// Prepare's checks of the same three inputs: int64 indices and shape, values of dtype t, ranks
// 2, 1 and 1. Input names take `prefix` ("a_indices", "sp_values", ...).
Status ExpectSparseInputs(PrepareContext& ctx, int first, DType t, std::string_view prefix);

}  // namespace kiln::exec
