// Sparse tensors as three inputs (indices [N, R] int64, values [N], dense_shape [R]), as the
// sparse kernel families read them (cpu/sparse_math_ops.cc, cpu/sparse_manip_ops.cc).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/array_util.h"
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

// Splits a batched sparse tensor (indices [N, R] sorted by their first dim) into its batch rows:
// fn(b, indices [m, R - 1], values [m]) for each row b with entries, in order. Rows without
// entries are not visited.
template <typename Fn>
Status ForEachSparseBatchRow(const int64_t* idx, int64_t nnz, int rank, const Tensor& values,
                             Fn&& fn) {
  for (int64_t i = 0; i < nnz;) {
    const int64_t b = idx[i * rank];
    int64_t end = i;
    while (end < nnz && idx[end * rank] == b) ++end;
    const int64_t m = end - i;
    Tensor sub_idx(DType::kInt64, Shape{m, rank - 1});
    for (int64_t k = 0; k < m; ++k)
      std::copy_n(idx + (i + k) * rank + 1, rank - 1, sub_idx.data<int64_t>() + k * (rank - 1));
    Tensor sub_val(values.dtype(), Shape{m});
    CopyElementRange(values, i, &sub_val, 0, m);
    KILN_RETURN_IF_ERROR(fn(b, std::move(sub_idx), std::move(sub_val)));
    i = end;
  }
  return OkStatus();
}

}  // namespace kiln::exec
