// What the definitions (kernels/matrix_ops.cc) and CPU kernels (kernels/cpu/matrix_ops.cc) of the
// matrix ops share: MatrixDeterminant's dtypes and the band of diagonals k = [k0, k1] of the
// diagonal ops, read from input k at prepare time when it is constant and at run time always.
#pragma once

#include <algorithm>
#include <complex>
#include <cstdint>

#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec::matrix {

using DeterminantTypes = TypeList<float, double, std::complex<float>, std::complex<double>>;

struct DiagBand {
  int64_t k0 = 0, k1 = 0;
  bool left_super = false, left_sub = true;  // RIGHT_LEFT
  int64_t num_diags() const { return k1 - k0 + 1; }
  // Length of diagonal d of an M x N matrix.
  static int64_t Length(int64_t d, int64_t rows, int64_t cols) {
    return std::min(rows + std::min<int64_t>(0, d), cols - std::max<int64_t>(0, d));
  }
  // Where diagonal d starts in a packed row of `max_len`.
  int64_t Offset(int64_t d, int64_t len, int64_t max_len) const {
    return (d >= 0 ? left_super : left_sub) ? 0 : max_len - len;
  }
};

struct DiagState : OpState {
  bool left_super = false, left_sub = true;
};

// The band from a k input (a scalar or a vector of one or two int32).
inline Result<DiagBand> BandFrom(const Tensor& k, const DiagState& st) {
  if (k.rank() > 1 || k.NumElements() < 1 || k.NumElements() > 2) {
    return InvalidArgument("input 'k' must be a scalar or a vector of 1 or 2 elements, got shape ",
                           k.shape().ToString());
  }
  DiagBand band;
  const int32_t* p = k.data<int32_t>();
  band.k0 = p[0];
  band.k1 = k.NumElements() == 2 ? p[1] : p[0];
  if (band.k0 > band.k1) {
    return InvalidArgument("input 'k': the lower diagonal ", band.k0,
                           " must not be above the upper ", band.k1);
  }
  band.left_super = st.left_super;
  band.left_sub = st.left_sub;
  return band;
}

// For ops reading diagonals of an M x N matrix: TF accepts -M < k < N (and k = 0).
inline Status CheckBandFits(const DiagBand& band, int64_t rows, int64_t cols) {
  for (int64_t k : {band.k0, band.k1}) {
    if (!((-rows < k && k < cols) || k == 0)) {
      return InvalidArgument("input 'k': diagonal ", k, " is out of bounds for a ", rows, " x ",
                             cols, " matrix, expected a value in (", -rows, ", ", cols, ")");
    }
  }
  return OkStatus();
}

inline int64_t MaxDiagLength(const DiagBand& band, int64_t rows, int64_t cols) {
  return std::max<int64_t>(
      0, std::min(rows + std::min<int64_t>(band.k1, 0), cols + std::min<int64_t>(-band.k0, 0)));
}

}  // namespace kiln::exec::matrix
