// The matrix products' type list, op state and batch broadcasting, shared by the definitions and
// the CPU kernels of kernels/matmul_ops.cc.
#pragma once

#include <algorithm>
#include <complex>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/epilogue.h"
#include "kernels/type_lists.h"
#include "kiln/core/dtype.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::matmul {

// TF's CPU MatMul and BatchMatMul types (int8 and uint8 are BatchMatMulV3's).
using MatMulTypes = TypeList<float, double, Half, BFloat16, int8_t, uint8_t, int16_t, int32_t,
                             int64_t, std::complex<float>, std::complex<double>>;

struct MatMulState : OpState {
  bool adj_a = false, adj_b = false;
  bool batched = false;
  DType dtype = DType::kFloat;  // the output's (BatchMatMulV3's Tout)
  // The operands' dtypes: dtype's, except in BatchMatMulV3's mixed forms.
  DType a_dtype = DType::kFloat, b_dtype = DType::kFloat;
  Epilogue epilogue;
};

inline std::string BoolName(bool b) { return b ? "true" : "false"; }

// Broadcast batch dims of a [..., rows, cols] and b; false when they do not broadcast.
inline bool BatchShape(std::span<const int64_t> a, std::span<const int64_t> b,
                       std::vector<int64_t>* out) {
  const size_t na = a.size() - 2, nb = b.size() - 2, n = std::max(na, nb);
  out->assign(n, 1);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i + na >= n ? a[i + na - n] : 1;
    const int64_t db = i + nb >= n ? b[i + nb - n] : 1;
    if (da != db && da != 1 && db != 1 && da >= 0 && db >= 0) return false;
    (*out)[i] = da == 1 ? db : (db == 1 ? da : (da < 0 ? db : da));
  }
  return true;
}

}  // namespace kiln::exec::matmul
