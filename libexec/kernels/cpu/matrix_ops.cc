// The CPU kernels of the matrix ops in kernels/matrix_ops.cc: data movement per element size
// (strings too), MatrixDeterminant by Eigen's LU with partial pivoting.
//
// Packed diagonals: for a band k0 <= d <= k1 of an M x N matrix, row k1 - d of the packing
// holds diagonal d, whose length is min(M + min(0, d), N - max(0, d)), in a row of the longest
// length in the band; a shorter diagonal sits at the left or the right of its row as `align`
// says ("<superdiagonals>_<subdiagonals>", v3's default RIGHT_LEFT; v2 packs LEFT_LEFT).
#include "kernels/matrix_ops.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using matrix::BandFrom;
using matrix::CheckBandFits;
using matrix::DeterminantTypes;
using matrix::DiagBand;
using matrix::DiagState;
using matrix::MaxDiagLength;

// Batch count and the last two dims of a matrix-shaped tensor (rank >= 2).
struct MatrixDims {
  int64_t batch = 1, rows = 0, cols = 0;
};
MatrixDims DimsOf(const Shape& s) {
  MatrixDims d;
  for (int i = 0; i < s.rank() - 2; ++i) d.batch *= s.dim(i);
  d.rows = s.dim(s.rank() - 2);
  d.cols = s.dim(s.rank() - 1);
  return d;
}

// ---- MatrixBandPart --------------------------------------------------------------------------

// Keeps (i, j) with i - j <= num_lower and j - i <= num_upper (a negative bound: no limit).
Status ComputeBandPart(const KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Result<matrix::BandPartGeom> g = matrix::BandPartGeomOf(in, ctx.input(1), ctx.input(2));
  if (!g.ok()) return ctx.Error(g.status().message());
  const MatrixDims m{g->batch, g->rows, g->cols};
  const int64_t lower = g->lower, upper = g->upper;
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, in.shape()));
  return DispatchStorage(in.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U* src = Elems<U>(in);
    U* dst = Elems<U>(*out);
    ctx.threads().ParallelFor(
        m.batch * m.rows, std::max<int64_t>(1, 65536 / std::max<int64_t>(1, m.cols)),
        [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            const int64_t i = r % m.rows;
            for (int64_t j = 0; j < m.cols; ++j) {
              dst[r * m.cols + j] = matrix::InBand(i, j, lower, upper) ? src[r * m.cols + j] : U{};
            }
          }
        });
    return OkStatus();
  });
}

// ---- MatrixDeterminant -----------------------------------------------------------------------

// LU with partial pivoting per matrix; an empty matrix has determinant 1.
Status ComputeDeterminant(const KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  if (in.rank() < 2 || in.dim(in.rank() - 1) != in.dim(in.rank() - 2)) {
    return ctx.Error("input 'input' must hold square matrices, got shape ", in.shape().ToString());
  }
  const MatrixDims m = DimsOf(in.shape());
  Shape out_shape;
  for (int i = 0; i < in.rank() - 2; ++i) out_shape.AddDim(in.dim(i));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  return Dispatch<DeterminantTypes>(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const T* src = in.data<T>();
    T* dst = out->data<T>();
    const int64_t n = m.rows;
    ctx.threads().ParallelFor(m.batch, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, n * n * n)),
                              [&](int64_t begin, int64_t end) {
                                for (int64_t b = begin; b < end; ++b) {
                                  if (n == 0) {
                                    dst[b] = T(1);
                                    continue;
                                  }
                                  const Eigen::Map<const Mat> a(src + b * n * n, n, n);
                                  dst[b] = Eigen::PartialPivLU<Mat>(a).determinant();
                                }
                              });
    return OkStatus();
  });
}

// ---- MatrixDiagPart (v1: k = 0, zero padding; v2, v3) ----------------------------------------

template <int kVersion>
Status ComputeDiagPart(const KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  if (in.rank() < 2) {
    return ctx.Error("input 'input' must have rank >= 2, got shape ", in.shape().ToString());
  }
  DiagBand band;
  if (kVersion != 1) {
    Result<DiagBand> b = BandFrom(ctx.input(1), ctx.state<DiagState>());
    if (!b.ok()) return Wrap(ctx, b.status());
    band = *b;
    if (ctx.input(2).rank() != 0) {
      return ctx.Error("input 'padding_value' must be a scalar, got shape ",
                       ctx.input(2).shape().ToString());
    }
  }
  const MatrixDims m = DimsOf(in.shape());
  if (Status s = CheckBandFits(band, m.rows, m.cols); !s.ok()) return Wrap(ctx, s);
  const int64_t max_len = MaxDiagLength(band, m.rows, m.cols);
  const int64_t nd = band.num_diags();
  Shape out_shape;
  for (int i = 0; i < in.rank() - 2; ++i) out_shape.AddDim(in.dim(i));
  if (nd > 1) out_shape.AddDim(nd);
  out_shape.AddDim(max_len);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  return DispatchStorage(in.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U pad = kVersion == 1 ? U{} : Elems<U>(ctx.input(2))[0];
    const U* src = Elems<U>(in);
    U* dst = Elems<U>(*out);
    for (int64_t b = 0; b < m.batch; ++b) {
      for (int64_t r = 0; r < nd; ++r) {
        const int64_t d = band.k1 - r;
        const int64_t len = DiagBand::Length(d, m.rows, m.cols);
        const int64_t offset = band.Offset(d, len, max_len);
        U* row = dst + (b * nd + r) * max_len;
        for (int64_t p = 0; p < max_len; ++p) {
          const int64_t q = p - offset;
          if (q < 0 || q >= len) {
            row[p] = pad;
          } else {
            const int64_t i = q + std::max<int64_t>(0, -d), j = q + std::max<int64_t>(0, d);
            row[p] = src[(b * m.rows + i) * m.cols + j];
          }
        }
      }
    }
    return OkStatus();
  });
}

// ---- MatrixDiag (v1: k = 0, square, zero padding; v2, v3) ------------------------------------

template <int kVersion>
Status ComputeDiag(const KernelContext& ctx) {
  const Tensor& diag = ctx.input(0);
  if (diag.rank() < 1) return ctx.Error("input 'diagonal' must have rank >= 1, got a scalar");
  DiagBand band;
  int64_t rows = -1, cols = -1;
  if (kVersion != 1) {
    Result<DiagBand> b = BandFrom(ctx.input(1), ctx.state<DiagState>());
    if (!b.ok()) return Wrap(ctx, b.status());
    band = *b;
    for (int i = 2; i <= 4; ++i) {
      if (ctx.input(i).rank() != 0) {
        return ctx.Error("inputs 'num_rows', 'num_cols' and 'padding_value' must be scalars, got ",
                         ctx.input(i).shape().ToString());
      }
    }
    rows = ctx.input(2).scalar<int32_t>();
    cols = ctx.input(3).scalar<int32_t>();
  }
  const int64_t nd = band.num_diags();
  const int64_t max_len = diag.dim(diag.rank() - 1);
  if (nd > 1 && (diag.rank() < 2 || diag.dim(diag.rank() - 2) != nd)) {
    return ctx.Error("input 'diagonal' of shape ", diag.shape().ToString(), " must hold ", nd,
                     " diagonals (k = [", band.k0, ", ", band.k1, "]) in its second-last dim");
  }
  // The smallest matrix that holds the band; TF makes it square when neither size is given.
  const int64_t min_rows = max_len - std::min<int64_t>(band.k1, 0);
  const int64_t min_cols = max_len + std::max<int64_t>(band.k0, 0);
  if (rows != -1 && rows < min_rows) {
    return ctx.Error("input 'num_rows' is ", rows, ", the diagonals need at least ", min_rows);
  }
  if (cols != -1 && cols < min_cols) {
    return ctx.Error("input 'num_cols' is ", cols, ", the diagonals need at least ", min_cols);
  }
  if (rows == -1 && cols == -1) {
    rows = cols = std::max(min_rows, min_cols);
  } else if (rows == -1) {
    rows = min_rows;
  } else if (cols == -1) {
    cols = min_cols;
  }
  if (rows != min_rows && cols != min_cols) {
    return ctx.Error("a ", rows, " x ", cols, " matrix does not fit diagonals of length ", max_len,
                     " in k = [", band.k0, ", ", band.k1, "]: one size must be the smallest");
  }
  const int batch_rank = diag.rank() - (nd > 1 ? 2 : 1);
  Shape out_shape;
  int64_t batch = 1;
  for (int i = 0; i < batch_rank; ++i) {
    out_shape.AddDim(diag.dim(i));
    batch *= diag.dim(i);
  }
  out_shape.AddDim(rows);
  out_shape.AddDim(cols);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  return DispatchStorage(diag.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U pad = kVersion == 1 ? U{} : Elems<U>(ctx.input(4))[0];
    const U* src = Elems<U>(diag);
    U* dst = Elems<U>(*out);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < cols; ++j) {
          const int64_t d = j - i;
          U v = pad;
          if (band.k0 <= d && d <= band.k1) {
            const int64_t len = DiagBand::Length(d, rows, cols);
            const int64_t p = std::min(i, j) + band.Offset(d, len, max_len);
            if (p >= 0 && p < max_len) v = src[(b * nd + band.k1 - d) * max_len + p];
          }
          dst[(b * rows + i) * cols + j] = v;
        }
      }
    }
    return OkStatus();
  });
}

// ---- MatrixSetDiagV3 -------------------------------------------------------------------------

template <int kVersion>
Status ComputeSetDiag(const KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& diag = ctx.input(1);
  if (in.rank() < 2) {
    return ctx.Error("input 'input' must have rank >= 2, got shape ", in.shape().ToString());
  }
  DiagBand band;
  if (kVersion != 1) {
    Result<DiagBand> b = BandFrom(ctx.input(2), ctx.state<DiagState>());
    if (!b.ok()) return Wrap(ctx, b.status());
    band = *b;
  }
  const MatrixDims m = DimsOf(in.shape());
  if (Status s = CheckBandFits(band, m.rows, m.cols); !s.ok()) return Wrap(ctx, s);
  const int64_t nd = band.num_diags();
  const int64_t max_len = MaxDiagLength(band, m.rows, m.cols);
  Shape want;
  for (int i = 0; i < in.rank() - 2; ++i) want.AddDim(in.dim(i));
  if (nd > 1) want.AddDim(nd);
  want.AddDim(max_len);
  if (diag.shape() != want) {
    return ctx.Error("input 'diagonal' has shape ", diag.shape().ToString(), ", expected ",
                     want.ToString(), " for input ", in.shape().ToString(), " and k = [", band.k0,
                     ", ", band.k1, "]");
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, in.shape()));
  return DispatchStorage(in.dtype(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U* src = Elems<U>(in);
    const U* dsrc = Elems<U>(diag);
    U* dst = Elems<U>(*out);
    std::copy_n(src, in.NumElements(), dst);
    for (int64_t bi = 0; bi < m.batch; ++bi) {
      for (int64_t r = 0; r < nd; ++r) {
        const int64_t d = band.k1 - r;
        const int64_t len = DiagBand::Length(d, m.rows, m.cols);
        const int64_t offset = band.Offset(d, len, max_len);
        for (int64_t q = 0; q < len; ++q) {
          const int64_t i = q + std::max<int64_t>(0, -d), j = q + std::max<int64_t>(0, d);
          dst[(bi * m.rows + i) * m.cols + j] = dsrc[(bi * nd + r) * max_len + q + offset];
        }
      }
    }
    return OkStatus();
  });
}

// ---- Diag, DiagPart (tf.linalg.tensor_diag and tensor_diag_part) ---------------------------

// Diag: a rank-k input gives a rank-2k output, x at [i..., i...] and 0 elsewhere. DiagPart is
// its inverse: a rank-2k input with dims[i] == dims[i + k] gives x[i..., i...].
Status ComputeTensorDiag(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 1 || x.rank() > kMaxRank / 2)
    return ctx.Error("input must have rank 1 to ", kMaxRank / 2, ", got ", x.shape().ToString());
  std::vector<int64_t> dims;
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < x.rank(); ++i) dims.push_back(x.dim(i));
  KILN_ASSIGN_OR_RETURN(Shape shape, Shape::FromDims(dims));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, shape));
  const int64_t n = x.NumElements();
  const size_t size = DTypeSize(x.dtype());
  char* o = static_cast<char*>(out->raw_data());
  std::memset(o, 0, out->ByteSize());
  const char* in = static_cast<const char*>(x.raw_data());
  // Element i of the flat input lands at flat position i * (n + 1) of the n x n output.
  for (int64_t i = 0; i < n; ++i) std::memcpy(o + i * (n + 1) * size, in + i * size, size);
  return OkStatus();
}

Status ComputeTensorDiagPart(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int k = x.rank() / 2;
  if (x.rank() < 2 || x.rank() % 2 != 0)
    return ctx.Error("input must have an even rank of at least 2, got ", x.shape().ToString());
  std::vector<int64_t> dims;
  for (int i = 0; i < k; ++i) {
    if (x.dim(i) != x.dim(i + k))
      return ctx.Error("input dims ", i, " and ", i + k, " must be equal, got ",
                       x.shape().ToString());
    dims.push_back(x.dim(i));
  }
  KILN_ASSIGN_OR_RETURN(Shape shape, Shape::FromDims(dims));
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, shape));
  const int64_t n = out->NumElements();
  const size_t size = DTypeSize(x.dtype());
  char* o = static_cast<char*>(out->raw_data());
  const char* in = static_cast<const char*>(x.raw_data());
  for (int64_t i = 0; i < n; ++i) std::memcpy(o + i * size, in + i * (n + 1) * size, size);
  return OkStatus();
}

// ---- Cross -----------------------------------------------------------------------------------

// The cross product of 3-vectors along the innermost dim (a and b of one shape [..., 3]).

Status ComputeCross(const KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.shape() != b.shape()) {
    return ctx.Error("a and b must be the same shape, got ", a.shape().ToString(), " and ",
                     b.shape().ToString());
  }
  if (a.rank() < 1 || a.dim(a.rank() - 1) != 3) {
    return ctx.Error("inputs must be [..., 3] vectors, got shape ", a.shape().ToString());
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, a.shape()));
  return Dispatch<RealTypes>(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C* x = ComputeData<T>(a);
    const C* y = ComputeData<T>(b);
    C* z = MutableComputeData<T>(out);
    for (int64_t i = 0; i < a.NumElements(); i += 3) {
      z[i] = x[i + 1] * y[i + 2] - x[i + 2] * y[i + 1];
      z[i + 1] = x[i + 2] * y[i] - x[i] * y[i + 2];
      z[i + 2] = x[i] * y[i + 1] - x[i + 1] * y[i];
    }
    return OkStatus();
  });
}

constexpr KernelEntry kCpu[] = {
    {"MatrixBandPart", ComputeBandPart},      {"MatrixDeterminant", ComputeDeterminant},
    {"MatrixDiag", ComputeDiag<1>},           {"MatrixDiagV2", ComputeDiag<2>},
    {"MatrixDiagV3", ComputeDiag<3>},         {"MatrixDiagPart", ComputeDiagPart<1>},
    {"MatrixDiagPartV2", ComputeDiagPart<2>}, {"MatrixDiagPartV3", ComputeDiagPart<3>},
    {"MatrixSetDiag", ComputeSetDiag<1>},     {"MatrixSetDiagV2", ComputeSetDiag<2>},
    {"MatrixSetDiagV3", ComputeSetDiag<3>},   {"Diag", ComputeTensorDiag},
    {"DiagPart", ComputeTensorDiagPart},      {"Cross", ComputeCross},
};

}  // namespace

std::span<const KernelEntry> MatrixCpuKernels() { return kCpu; }

}  // namespace kiln::exec
