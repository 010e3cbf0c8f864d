// What the definitions (kernels/matrix_ops.cc) and CPU kernels (kernels/cpu/matrix_ops.cc) of the
// matrix ops share: MatrixDeterminant's dtypes and the band of diagonals k = [k0, k1] of the
// diagonal ops, read from input k at prepare time when it is constant and at run time always;
// MatrixBandPart's checks and band test (its GPU kernel, kernels/cuda/array.cu, shares them).
#pragma once

#include <algorithm>
#include <complex>
#include <cstdint>

#include "kernels/host_device.h"
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

// ---- MatrixBandPart --------------------------------------------------------------------------

// The input as `batch` matrices of rows x cols, and the band's bounds (negative: no limit).
struct BandPartGeom {
  int64_t batch = 1, rows = 0, cols = 0, lower = 0, upper = 0;
};

// Whether (i, j) is in the band: i - j <= lower and j - i <= upper.
KILN_HD inline bool InBand(int64_t i, int64_t j, int64_t lower, int64_t upper) {
  return (lower < 0 || i - j <= lower) && (upper < 0 || j - i <= upper);
}

// The input and its num_lower and num_upper (host scalars, int32 or int64), checked as TF does.
inline Result<BandPartGeom> BandPartGeomOf(const Tensor& in, const Tensor& lower_t,
                                           const Tensor& upper_t) {
  if (in.rank() < 2)
    return InvalidArgument("input 'input' must have rank >= 2, got shape ", in.shape().ToString());
  if (lower_t.rank() != 0 || upper_t.rank() != 0)
    return InvalidArgument("inputs 'num_lower' and 'num_upper' must be scalars, got shapes ",
                           lower_t.shape().ToString(), " and ", upper_t.shape().ToString());
  BandPartGeom g;
  for (int i = 0; i < in.rank() - 2; ++i) g.batch *= in.dim(i);
  g.rows = in.dim(in.rank() - 2);
  g.cols = in.dim(in.rank() - 1);
  auto scalar = [](const Tensor& t) {
    return t.dtype() == DType::kInt32 ? int64_t{t.scalar<int32_t>()} : t.scalar<int64_t>();
  };
  g.lower = scalar(lower_t);
  g.upper = scalar(upper_t);
  if (g.lower > g.rows)
    return InvalidArgument("input 'num_lower' must be negative or at most the number of rows (",
                           g.rows, "), got ", g.lower);
  if (g.upper > g.cols)
    return InvalidArgument("input 'num_upper' must be negative or at most the number of columns (",
                           g.cols, "), got ", g.upper);
  return g;
}

}  // namespace kiln::exec::matrix
