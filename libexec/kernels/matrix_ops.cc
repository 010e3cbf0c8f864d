// Batched matrices: MatrixBandPart, MatrixDeterminant, and the diagonal ops MatrixDiag,
// MatrixDiagPart and MatrixSetDiag (v1, v2, v3) with TF's band of diagonals k = [k0, k1] and
// its alignment of the packed diagonals; and the tensor diagonals Diag and DiagPart (rank k to
// rank 2k and back); Cross (3-vectors).
//
// Packed diagonals: for a band k0 <= d <= k1 of an M x N matrix, row k1 - d of the packing
// holds diagonal d, whose length is min(M + min(0, d), N - max(0, d)), in a row of the longest
// length in the band; a shorter diagonal sits at the left or the right of its row as `align`
// says ("<superdiagonals>_<subdiagonals>", v3's default RIGHT_LEFT; v2 packs LEFT_LEFT).
#include <Eigen/Dense>
#include <algorithm>
#include <complex>
#include <cstring>
#include <string>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

// Element types the data-movement ops here take: every POD dtype and strings.
constexpr DType kMatrixDTypes[] = {
    DType::kFloat, DType::kDouble, DType::kHalf,      DType::kBFloat16,
    DType::kInt8,  DType::kInt16,  DType::kInt32,     DType::kInt64,
    DType::kUInt8, DType::kUInt16, DType::kUInt32,    DType::kUInt64,
    DType::kBool,  DType::kString, DType::kComplex64, DType::kComplex128};

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

Status ExpectMatrixInput(const PrepareContext& ctx, int i, std::string_view name) {
  const PartialShape& s = ctx.inputs[i].shape;
  if (!s.unknown_rank() && s.rank() < 2) {
    return ctx.Error("input '", name, "' must have rank >= 2, got shape ", s.ToPythonString());
  }
  return OkStatus();
}

// ---- MatrixBandPart --------------------------------------------------------------------------

Status PrepareBandPart(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, kMatrixDTypes));
  KILN_PREPARE_ASSIGN(ctx, DType tindex, ctx.attrs.GetType("Tindex", DType::kInt64));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "Tindex", tindex, {DType::kInt32, DType::kInt64}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "num_lower", tindex));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "num_upper", tindex));
  KILN_RETURN_IF_ERROR(ExpectMatrixInput(ctx, 0, "input"));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "num_lower", 0));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "num_upper", 0));
  ctx.outputs = {TensorSpec{t, ctx.inputs[0].shape}};
  return OkStatus();
}

int64_t ScalarIndex(const Tensor& t) {
  return t.dtype() == DType::kInt32 ? t.scalar<int32_t>() : t.scalar<int64_t>();
}

// Keeps (i, j) with i - j <= num_lower and j - i <= num_upper (a negative bound: no limit).
Status ComputeBandPart(const KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& lower_t = ctx.input(1);
  const Tensor& upper_t = ctx.input(2);
  if (in.rank() < 2) {
    return ctx.Error("input 'input' must have rank >= 2, got shape ", in.shape().ToString());
  }
  if (lower_t.rank() != 0 || upper_t.rank() != 0) {
    return ctx.Error("inputs 'num_lower' and 'num_upper' must be scalars, got shapes ",
                     lower_t.shape().ToString(), " and ", upper_t.shape().ToString());
  }
  const MatrixDims m = DimsOf(in.shape());
  const int64_t lower = ScalarIndex(lower_t), upper = ScalarIndex(upper_t);
  if (lower > m.rows) {
    return ctx.Error("input 'num_lower' must be negative or at most the number of rows (", m.rows,
                     "), got ", lower);
  }
  if (upper > m.cols) {
    return ctx.Error("input 'num_upper' must be negative or at most the number of columns (",
                     m.cols, "), got ", upper);
  }
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
              const bool keep = (lower < 0 || i - j <= lower) && (upper < 0 || j - i <= upper);
              dst[r * m.cols + j] = keep ? src[r * m.cols + j] : U{};
            }
          }
        });
    return OkStatus();
  });
}

// ---- MatrixDeterminant -----------------------------------------------------------------------

using DeterminantTypes = TypeList<float, double, std::complex<float>, std::complex<double>>;

Status PrepareDeterminant(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, DeterminantTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  KILN_RETURN_IF_ERROR(ExpectMatrixInput(ctx, 0, "input"));
  const PartialShape& s = ctx.inputs[0].shape;
  PartialShape out = PartialShape::UnknownRank();
  if (!s.unknown_rank()) {
    const int64_t r = s.dim(s.rank() - 2), c = s.dim(s.rank() - 1);
    if (r >= 0 && c >= 0 && r != c) {
      return ctx.Error("input 'input' must hold square matrices, got shape ", s.ToPythonString());
    }
    KILN_PREPARE_ASSIGN(ctx, out, PartialShape::FromDims(s.dims().first(s.rank() - 2)));
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

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

// ---- the band of diagonals -------------------------------------------------------------------

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

// "RIGHT_LEFT" and friends; v2 ops (no attr) pack LEFT_LEFT.
Status ReadAlign(PrepareContext& ctx, bool has_attr, DiagState* st) {
  std::string align = "LEFT_LEFT";
  if (has_attr) {
    KILN_PREPARE_ASSIGN(ctx, align, ctx.attrs.GetString("align", "RIGHT_LEFT"));
  }
  if (align != "LEFT_LEFT" && align != "LEFT_RIGHT" && align != "RIGHT_LEFT" &&
      align != "RIGHT_RIGHT") {
    return ctx.Error("attr 'align' is '", align,
                     "', expected one of LEFT_RIGHT, RIGHT_LEFT, LEFT_LEFT, RIGHT_RIGHT");
  }
  st->left_super = align.starts_with("LEFT");
  st->left_sub = align.ends_with("LEFT");
  return OkStatus();
}

// The band from a k input (a scalar or a vector of one or two int32).
Result<DiagBand> BandFrom(const Tensor& k, const DiagState& st) {
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
Status CheckBandFits(const DiagBand& band, int64_t rows, int64_t cols) {
  for (int64_t k : {band.k0, band.k1}) {
    if (!((-rows < k && k < cols) || k == 0)) {
      return InvalidArgument("input 'k': diagonal ", k, " is out of bounds for a ", rows, " x ",
                             cols, " matrix, expected a value in (", -rows, ", ", cols, ")");
    }
  }
  return OkStatus();
}

int64_t MaxDiagLength(const DiagBand& band, int64_t rows, int64_t cols) {
  return std::max<int64_t>(
      0, std::min(rows + std::min<int64_t>(band.k1, 0), cols + std::min<int64_t>(-band.k0, 0)));
}

// The band when input `i` (k) is known at prepare time.
Result<DiagBand> ConstantBand(const PrepareContext& ctx, int i, const DiagState& st, bool* known) {
  *known = false;
  const Tensor* k = ConstantInput(ctx, i);
  if (k == nullptr) return DiagBand{};
  *known = true;
  return BandFrom(*k, st);
}

Status PrepareDiagCommon(PrepareContext& ctx, int n_inputs, DiagState* st, bool has_align,
                         DType* t) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(n_inputs));
  KILN_PREPARE_ASSIGN(ctx, *t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", *t, kMatrixDTypes));
  return ReadAlign(ctx, has_align, st);
}

// ---- MatrixDiagPart (v1: k = 0, zero padding; v2, v3) ----------------------------------------

template <int kVersion>
Status PrepareDiagPart(PrepareContext& ctx) {
  auto st = std::make_shared<DiagState>();
  DType t;
  KILN_RETURN_IF_ERROR(PrepareDiagCommon(ctx, kVersion == 1 ? 1 : 3, st.get(), kVersion == 3, &t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  KILN_RETURN_IF_ERROR(ExpectMatrixInput(ctx, 0, "input"));
  DiagBand band;
  bool known = kVersion == 1;
  if (kVersion != 1) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "k", DType::kInt32));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "padding_value", t));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "padding_value", 0));
    KILN_PREPARE_ASSIGN(ctx, band, ConstantBand(ctx, 1, *st, &known));
  }
  // The output's rank depends on the number of diagonals: unknown until k is.
  const PartialShape& s = ctx.inputs[0].shape;
  PartialShape out = PartialShape::UnknownRank();
  if (!s.unknown_rank() && known) {
    const int64_t rows = s.dim(s.rank() - 2), cols = s.dim(s.rank() - 1);
    std::vector<int64_t> dims(s.dims().begin(), s.dims().end() - 2);
    if (band.num_diags() > 1) dims.push_back(band.num_diags());
    if (rows >= 0 && cols >= 0) {
      KILN_PREPARE_CHECK(ctx, CheckBandFits(band, rows, cols));
      dims.push_back(MaxDiagLength(band, rows, cols));
    } else {
      dims.push_back(-1);
    }
    KILN_PREPARE_ASSIGN(ctx, out, PartialShape::FromDims(dims));
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::move(st);
  return OkStatus();
}

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
Status PrepareDiag(PrepareContext& ctx) {
  auto st = std::make_shared<DiagState>();
  DType t;
  KILN_RETURN_IF_ERROR(PrepareDiagCommon(ctx, kVersion == 1 ? 1 : 5, st.get(), kVersion == 3, &t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "diagonal", t));
  const PartialShape& s = ctx.inputs[0].shape;
  if (s.rank() == 0) return ctx.Error("input 'diagonal' must have rank >= 1, got a scalar");
  if (kVersion != 1) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "k", DType::kInt32));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "num_rows", DType::kInt32));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 3, "num_cols", DType::kInt32));
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 4, "padding_value", t));
    for (int i = 2; i <= 4; ++i) {
      KILN_RETURN_IF_ERROR(ExpectInputRank(
          ctx, i, i == 2 ? "num_rows" : (i == 3 ? "num_cols" : "padding_value"), 0));
    }
  }
  PartialShape out = PartialShape::UnknownRank();
  if (kVersion == 1 && !s.unknown_rank()) {
    std::vector<int64_t> dims(s.dims().begin(), s.dims().end());
    dims.push_back(dims.back());
    KILN_PREPARE_ASSIGN(ctx, out, PartialShape::FromDims(dims));
  }
  ctx.outputs = {TensorSpec{t, out}};
  ctx.state = std::move(st);
  return OkStatus();
}

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

// MatrixSetDiag (v1: the main diagonal), V2 (k, diagonals aligned LEFT_LEFT) and V3 (k, align).
template <int kVersion>
Status PrepareSetDiag(PrepareContext& ctx) {
  auto st = std::make_shared<DiagState>();
  DType t;
  KILN_RETURN_IF_ERROR(PrepareDiagCommon(ctx, kVersion == 1 ? 2 : 3, st.get(), kVersion == 3, &t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "input", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "diagonal", t));
  if (kVersion != 1) KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "k", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectMatrixInput(ctx, 0, "input"));
  ctx.outputs = {TensorSpec{t, ctx.inputs[0].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

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
Status PrepareTensorDiag(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "diagonal"));
  if (!DTypeIsPod(t)) return ctx.Error("takes numbers, got ", DTypeShortName(t));
  const PartialShape& in = ctx.inputs[0].shape;
  if (in.unknown_rank()) {
    ctx.outputs = {TensorSpec{t, PartialShape::UnknownRank()}};
    return OkStatus();
  }
  if (in.rank() < 1 || in.rank() > kMaxRank / 2)
    return ctx.Error("input 'diagonal' must have rank 1 to ", kMaxRank / 2, ", got ",
                     in.ToPythonString());
  std::vector<int64_t> dims;
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < in.rank(); ++i) dims.push_back(in.dim(i));
  KILN_PREPARE_ASSIGN(ctx, PartialShape out, PartialShape::FromDims(dims));
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

Status PrepareTensorDiagPart(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_ASSIGN_OR_RETURN(DType t, ValueDType(ctx, 0, "input"));
  if (!DTypeIsPod(t)) return ctx.Error("takes numbers, got ", DTypeShortName(t));
  const PartialShape& in = ctx.inputs[0].shape;
  if (in.unknown_rank()) {
    ctx.outputs = {TensorSpec{t, PartialShape::UnknownRank()}};
    return OkStatus();
  }
  if (in.rank() < 2 || in.rank() % 2 != 0)
    return ctx.Error("input 'input' must have an even rank of at least 2, got ",
                     in.ToPythonString());
  const int k = in.rank() / 2;
  std::vector<int64_t> dims;
  for (int i = 0; i < k; ++i) {
    const int64_t a = in.dim(i), b = in.dim(i + k);
    if (a >= 0 && b >= 0 && a != b)
      return ctx.Error("input 'input' dims ", i, " and ", i + k, " must be equal, got ",
                       in.ToPythonString());
    dims.push_back(a >= 0 ? a : b);
  }
  KILN_PREPARE_ASSIGN(ctx, PartialShape out, PartialShape::FromDims(dims));
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

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

// ---- tables ----------------------------------------------------------------------------------

// ---- Cross -----------------------------------------------------------------------------------

// The cross product of 3-vectors along the innermost dim (a and b of one shape [..., 3]).
Status PrepareCross(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, RealTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "a", t));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "b", t));
  const PartialShape& a = ctx.inputs[0].shape;
  const PartialShape& b = ctx.inputs[1].shape;
  for (const PartialShape* s : {&a, &b}) {
    if (!s->unknown_rank() &&
        (s->rank() < 1 || (s->dim(s->rank() - 1) >= 0 && s->dim(s->rank() - 1) != 3))) {
      return ctx.Error("inputs must be [..., 3] vectors, got shape ", s->ToPythonString());
    }
  }
  PartialShape out = a.unknown_rank() ? b : a;
  if (!a.unknown_rank() && !b.unknown_rank()) {
    if (a.rank() != b.rank()) {
      return ctx.Error("a and b must be the same shape, got ", a.ToPythonString(), " and ",
                       b.ToPythonString());
    }
    KILN_PREPARE_ASSIGN(ctx, out, a.MergeWith(b));
  }
  ctx.outputs = {TensorSpec{t, out}};
  return OkStatus();
}

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

constexpr OpDefinition kDefs[] = {
    {"MatrixBandPart", "band", kOpFreshOutputs, PrepareBandPart},
    {"MatrixDeterminant", "output", kOpFreshOutputs, PrepareDeterminant},
    {"MatrixDiag", "output", kOpFreshOutputs, PrepareDiag<1>},
    {"MatrixDiagV2", "output", kOpFreshOutputs, PrepareDiag<2>},
    {"MatrixDiagV3", "output", kOpFreshOutputs, PrepareDiag<3>},
    {"MatrixDiagPart", "diagonal", kOpFreshOutputs, PrepareDiagPart<1>},
    {"MatrixDiagPartV2", "diagonal", kOpFreshOutputs, PrepareDiagPart<2>},
    {"MatrixDiagPartV3", "diagonal", kOpFreshOutputs, PrepareDiagPart<3>},
    {"MatrixSetDiag", "output", kOpFreshOutputs, PrepareSetDiag<1>},
    {"MatrixSetDiagV2", "output", kOpFreshOutputs, PrepareSetDiag<2>},
    {"MatrixSetDiagV3", "output", kOpFreshOutputs, PrepareSetDiag<3>},
    {"Diag", "output", kOpFreshOutputs, PrepareTensorDiag},
    {"Cross", "product", kOpFreshOutputs, PrepareCross},
    {"DiagPart", "diagonal", kOpFreshOutputs, PrepareTensorDiagPart},
};

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

std::span<const OpDefinition> MatrixOpDefs() { return kDefs; }
std::span<const KernelEntry> MatrixCpuKernels() { return kCpu; }

}  // namespace kiln::exec
