// Op-tester cases of the matrix ops. Diagonal references find each diagonal's elements by
// scanning the whole matrix for j - i == d (in row order), then pack them at the left or the
// right of a row as long as the longest one; determinants expand by cofactors.
#include <cmath>

#include "ops/op_cases.h"
#include "ops/ref_util.h"

namespace kiln::testing {
namespace {

Tensor AsDouble(const Tensor& t) {
  return RefUnaryDouble(
      t, [](double v) { return v; }, DType::kDouble);
}

// Bytes of element e of t (any POD dtype).
const char* At(const Tensor& t, int64_t e) {
  return static_cast<const char*>(t.raw_data()) + e * DTypeSize(t.dtype());
}
void Put(Tensor* t, int64_t e, const char* src) {
  std::memcpy(static_cast<char*>(t->raw_data()) + e * DTypeSize(t->dtype()), src,
              DTypeSize(t->dtype()));
}

struct Align {
  bool left_super, left_sub;
};
Align ParseAlign(const std::string& a) {
  return {a.rfind("LEFT", 0) == 0, a.size() >= 4 && a.substr(a.size() - 4) == "LEFT"};
}

// Flat positions (within one rows x cols matrix) of diagonal d, in row order.
std::vector<int64_t> DiagonalPositions(int64_t d, int64_t rows, int64_t cols) {
  std::vector<int64_t> pos;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      if (j - i == d) pos.push_back(i * cols + j);
  return pos;
}

int64_t LongestDiagonal(int64_t k0, int64_t k1, int64_t rows, int64_t cols) {
  size_t longest = 0;
  for (int64_t d = k0; d <= k1; ++d)
    longest = std::max(longest, DiagonalPositions(d, rows, cols).size());
  return static_cast<int64_t>(longest);
}

// Where element q of diagonal d (of length len) sits in a packed row of max_len.
int64_t PackedIndex(int64_t d, int64_t q, int64_t len, int64_t max_len, Align a) {
  const bool left = d >= 0 ? a.left_super : a.left_sub;
  return left ? q : max_len - len + q;
}

Tensor RefDiagPart(const Tensor& x, int64_t k0, int64_t k1, Align a, const char* pad) {
  const int64_t rows = x.dim(x.rank() - 2), cols = x.dim(x.rank() - 1);
  const int64_t batch = x.NumElements() / std::max<int64_t>(1, rows * cols);
  const int64_t nd = k1 - k0 + 1, max_len = LongestDiagonal(k0, k1, rows, cols);
  Shape s;
  for (int i = 0; i < x.rank() - 2; ++i) s.AddDim(x.dim(i));
  if (nd > 1) s.AddDim(nd);
  s.AddDim(max_len);
  Tensor out(x.dtype(), s);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t d = k1; d >= k0; --d) {
      const int64_t row = b * nd + (k1 - d);
      for (int64_t p = 0; p < max_len; ++p) Put(&out, row * max_len + p, pad);
      const std::vector<int64_t> pos = DiagonalPositions(d, rows, cols);
      for (size_t q = 0; q < pos.size(); ++q)
        Put(&out, row * max_len + PackedIndex(d, q, pos.size(), max_len, a),
            At(x, b * rows * cols + pos[q]));
    }
  }
  return out;
}

// A batch of rows x cols matrices filled with `pad` (or `base`'s values), the band's diagonals
// taken from the packed `diag`.
Tensor RefSetDiagonals(const Tensor* base, const Tensor& diag, int64_t k0, int64_t k1, Align a,
                       int64_t rows, int64_t cols, const char* pad) {
  const int64_t nd = k1 - k0 + 1, max_len = diag.dim(diag.rank() - 1);
  const int64_t batch = diag.NumElements() / std::max<int64_t>(1, nd * max_len);
  Shape s;
  for (int i = 0; i < diag.rank() - (nd > 1 ? 2 : 1); ++i) s.AddDim(diag.dim(i));
  s.AddDim(rows);
  s.AddDim(cols);
  Tensor out = base != nullptr ? base->DeepCopy() : Tensor(diag.dtype(), s);
  for (int64_t b = 0; b < batch; ++b) {
    if (base == nullptr)
      for (int64_t e = 0; e < rows * cols; ++e) Put(&out, b * rows * cols + e, pad);
    for (int64_t d = k1; d >= k0; --d) {
      const std::vector<int64_t> pos = DiagonalPositions(d, rows, cols);
      for (size_t q = 0; q < pos.size(); ++q) {
        const int64_t p = PackedIndex(d, q, pos.size(), max_len, a);
        Put(&out, b * rows * cols + pos[q], At(diag, (b * nd + (k1 - d)) * max_len + p));
      }
    }
  }
  return out;
}

Tensor KTensor(int64_t k0, int64_t k1) {
  if (k0 == k1) return Tensor::Scalar<int32_t>(static_cast<int32_t>(k0));
  return Make<int32_t>({static_cast<int32_t>(k0), static_cast<int32_t>(k1)}, {2});
}

// det by cofactor expansion along the first row.
double Cofactor(const std::vector<double>& m, int64_t n) {
  if (n == 0) return 1;
  if (n == 1) return m[0];
  double det = 0;
  for (int64_t c = 0; c < n; ++c) {
    std::vector<double> minor;
    for (int64_t i = 1; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        if (j != c) minor.push_back(m[i * n + j]);
    det += (c % 2 ? -1 : 1) * m[c] * Cofactor(minor, n - 1);
  }
  return det;
}

}  // namespace

namespace {

// MatrixSetDiag (v1: the main diagonal) and Cross.
void AddSetDiagV1AndCross(std::vector<OpCase>* c) {
  for (const Shape& s : {Shape{2, 3, 4}, Shape{4, 2}, Shape{3, 3}}) {
    const int64_t rows = s.dim(s.rank() - 2), cols = s.dim(s.rank() - 1);
    Shape ds;
    for (int i = 0; i < s.rank() - 2; ++i) ds.AddDim(s.dim(i));
    ds.AddDim(std::min(rows, cols));
    c->push_back(OpCaseBuilder("MatrixSetDiag", "MatrixSetDiag " + s.ToString())
                     .T(DType::kFloat)
                     .Input(RandomOf(DType::kFloat, s, 71))
                     .Input(RandomOf(DType::kFloat, ds, 72, 10, 20))
                     .Reference1([rows, cols](const std::vector<Tensor>& in) {
                       Tensor out = in[0].DeepCopy();
                       const int64_t len = std::min(rows, cols);
                       for (int64_t b = 0; b < out.NumElements() / (rows * cols); ++b)
                         for (int64_t i = 0; i < len; ++i)
                           out.data<float>()[(b * rows + i) * cols + i] =
                               in[1].data<float>()[b * len + i];
                       return out;
                     })
                     .Build());
  }
  for (DType t : {DType::kFloat, DType::kDouble, DType::kInt32, DType::kHalf}) {
    for (const Shape& s : {Shape{3}, Shape{2, 4, 3}, Shape{0, 3}}) {
      c->push_back(OpCaseBuilder("Cross", "Cross " + DTypeShortName(t) + " " + s.ToString())
                       .T(t)
                       .Input(RandomOf(t, s, 73, -4, 4))
                       .Input(RandomOf(t, s, 74, -4, 4))
                       .Reference1([t](const std::vector<Tensor>& in) {
                         const std::vector<double> a = Doubles(in[0]), b = Doubles(in[1]);
                         std::vector<double> z(a.size());
                         for (size_t i = 0; i < a.size(); i += 3) {
                           z[i] = a[i + 1] * b[i + 2] - a[i + 2] * b[i + 1];
                           z[i + 1] = a[i + 2] * b[i] - a[i] * b[i + 2];
                           z[i + 2] = a[i] * b[i + 1] - a[i + 1] * b[i];
                         }
                         return FromDoubles(t, in[0].shape(), z);
                       })
                       .Tolerance(t == DType::kHalf ? 1e-2 : 1e-6)
                       .Build());
    }
  }
}

}  // namespace

std::vector<OpCase> MatrixCases() {
  std::vector<OpCase> c;
  uint32_t seed = 1;
  // MatrixBandPart.
  struct Band {
    int64_t lower, upper;
  };
  for (const Band& band : std::vector<Band>{{1, -1}, {0, 0}, {-1, 0}, {2, 1}, {-1, -1}, {3, 4}}) {
    for (DType t : {DType::kFloat, DType::kInt32, DType::kBool, DType::kHalf}) {
      const Band bd = band;
      c.push_back(OpCaseBuilder("MatrixBandPart")
                      .T(t)
                      .Input(RandomOf(t, Shape{2, 3, 4}, seed++))
                      .ConstInput(Tensor::Scalar<int64_t>(band.lower))
                      .ConstInput(Tensor::Scalar<int64_t>(band.upper))
                      .Reference1([bd](const std::vector<Tensor>& in) {
                        Tensor out = in[0].DeepCopy();
                        const std::vector<char> zero(DTypeSize(out.dtype()), 0);
                        for (int64_t e = 0; e < out.NumElements(); ++e) {
                          const int64_t i = (e / 4) % 3, j = e % 4;
                          const bool in_band = (bd.lower < 0 || i - j <= bd.lower) &&
                                               (bd.upper < 0 || j - i <= bd.upper);
                          if (!in_band) Put(&out, e, zero.data());
                        }
                        return out;
                      })
                      .Build());
    }
  }
  c.push_back(OpCaseBuilder("MatrixBandPart", "MatrixBandPart int32 bounds, big")
                  .T(DType::kDouble)
                  .Type("Tindex", DType::kInt32)
                  .Input(RandomOf(DType::kDouble, Shape{40, 100, 100}, seed++))
                  .Input(Tensor::Scalar<int32_t>(3))
                  .Input(Tensor::Scalar<int32_t>(-1))
                  .Reference1([](const std::vector<Tensor>& in) {
                    Tensor out = in[0].DeepCopy();
                    for (int64_t e = 0; e < out.NumElements(); ++e)
                      if ((e / 100) % 100 - e % 100 > 3) out.data<double>()[e] = 0;
                    return out;
                  })
                  .Build());

  // MatrixDeterminant.
  for (const Shape& s :
       {Shape{3, 4, 4}, Shape{2, 1, 1}, Shape{5, 5}, Shape{2, 0, 0}, Shape{3, 3}}) {
    for (DType t : {DType::kFloat, DType::kDouble}) {
      c.push_back(OpCaseBuilder("MatrixDeterminant")
                      .T(t)
                      .Input(RandomOf(t, s, seed++, -2, 2))
                      .Reference1([](const std::vector<Tensor>& in) {
                        const Tensor v = AsDouble(in[0]);
                        const int64_t n = in[0].dim(in[0].rank() - 1);
                        Shape os;
                        for (int i = 0; i < in[0].rank() - 2; ++i) os.AddDim(in[0].dim(i));
                        Tensor out(DType::kDouble, os);
                        for (int64_t b = 0; b < os.num_elements(); ++b) {
                          const double* p = v.data<double>() + b * n * n;
                          out.data<double>()[b] = Cofactor(std::vector<double>(p, p + n * n), n);
                        }
                        return RefUnaryDouble(
                            out, [](double d) { return d; }, in[0].dtype());
                      })
                      .Tolerance(t == DType::kFloat ? 1e-4 : 1e-10)
                      .Build());
    }
  }

  // Complex determinants (LU with pivoting over the complex field): det [[1+i, 2], [3, 4-i]] is
  // (1+i)(4-i) - 6 = -1+3i; a 3x3 with a row swap first.
  using C64 = std::complex<float>;
  c.push_back(OpCaseBuilder("MatrixDeterminant", "MatrixDeterminant complex64")
                  .T(DType::kComplex64)
                  .Input(Make<C64>(
                      {{1, 1}, {2, 0}, {3, 0}, {4, -1}, {0, 0}, {1, 0}, {1, 0}, {0, 0}}, {2, 2, 2}))
                  .Reference1([](const auto&) {
                    return Make<C64>({{-1, 3}, {-1, 0}}, {2});
                  })
                  .Tolerance(1e-6)
                  .Build());
  using C128 = std::complex<double>;
  c.push_back(
      OpCaseBuilder("MatrixDeterminant", "MatrixDeterminant complex128")
          .T(DType::kComplex128)
          .Input(Make<C128>(
              {{0, 0}, {1, 0}, {0, 0}, {0, 1}, {0, 0}, {2, 0}, {0, 0}, {0, 0}, {3, 0}}, {3, 3}))
          .Reference1([](const auto&) {
            // Rows (0,1,0), (i,0,2), (0,0,3): -(1 * (3i - 0)) = -3i.
            return Tensor::Scalar<C128>({0, -3});
          })
          .Tolerance(1e-12)
          .Build());

  // The diagonal ops: v1 (main diagonal, zero padding), v2 (LEFT_LEFT), v3 (each alignment).
  const float pad_f = 9.5f;
  const int32_t pad_i = -7;
  c.push_back(
      OpCaseBuilder("MatrixDiagPart")
          .T(DType::kFloat)
          .Input(RandomOf(DType::kFloat, Shape{2, 3, 4}, seed++))
          .Reference1([](const std::vector<Tensor>& in) {
            const float zero = 0;
            return RefDiagPart(in[0], 0, 0, {true, true}, reinterpret_cast<const char*>(&zero));
          })
          .Build());
  c.push_back(OpCaseBuilder("MatrixDiag")
                  .T(DType::kInt32)
                  .Input(RandomOf(DType::kInt32, Shape{2, 3}, seed++, 1, 9))
                  .Reference1([](const std::vector<Tensor>& in) {
                    const int32_t zero = 0;
                    return RefSetDiagonals(nullptr, in[0], 0, 0, {true, true}, 3, 3,
                                           reinterpret_cast<const char*>(&zero));
                  })
                  .Build());
  struct DiagPartCase {
    Shape shape;
    int64_t k0, k1;
  };
  for (const DiagPartCase& dp : std::vector<DiagPartCase>{{Shape{3, 4}, -1, 1},
                                                          {Shape{2, 4, 5}, -1, 2},
                                                          {Shape{4, 3}, 1, 1},
                                                          {Shape{2, 5, 3}, -2, -1},
                                                          {Shape{3, 3}, 0, 0},
                                                          {Shape{2, 6, 2}, -4, 1}}) {
    for (const std::string align : {"", "RIGHT_LEFT", "LEFT_RIGHT", "LEFT_LEFT", "RIGHT_RIGHT"}) {
      const int64_t k0 = dp.k0, k1 = dp.k1;
      const Align al = ParseAlign(align.empty() ? "LEFT_LEFT" : align);
      OpCaseBuilder b(align.empty() ? "MatrixDiagPartV2" : "MatrixDiagPartV3",
                      std::string(align.empty() ? "MatrixDiagPartV2" : "MatrixDiagPartV3") + " " +
                          dp.shape.ToString() + " k [" + std::to_string(k0) + ", " +
                          std::to_string(k1) + "] " + align);
      if (!align.empty() && align != "RIGHT_LEFT") b.String("align", align);
      c.push_back(b.T(DType::kFloat)
                      .Input(RandomOf(DType::kFloat, dp.shape, seed++))
                      .ConstInput(KTensor(k0, k1))
                      .Input(Tensor::Scalar<float>(pad_f))
                      .Reference1([k0, k1, al](const std::vector<Tensor>& in) {
                        return RefDiagPart(in[0], k0, k1, al, At(in[2], 0));
                      })
                      .Build());
      // MatrixDiagV2/V3 back from the packed diagonals; MatrixSetDiagV3 into a matrix.
      const int64_t rows = dp.shape.dim(dp.shape.rank() - 2);
      const int64_t cols = dp.shape.dim(dp.shape.rank() - 1);
      const int64_t nd = k1 - k0 + 1;
      Shape ds;
      for (int i = 0; i < dp.shape.rank() - 2; ++i) ds.AddDim(dp.shape.dim(i));
      if (nd > 1) ds.AddDim(nd);
      ds.AddDim(LongestDiagonal(k0, k1, rows, cols));
      OpCaseBuilder d(align.empty() ? "MatrixDiagV2" : "MatrixDiagV3",
                      std::string(align.empty() ? "MatrixDiagV2" : "MatrixDiagV3") + " " +
                          ds.ToString() + " into " + std::to_string(rows) + " x " +
                          std::to_string(cols) + " " + align);
      if (!align.empty() && align != "RIGHT_LEFT") d.String("align", align);
      c.push_back(d.T(DType::kInt32)
                      .Input(RandomOf(DType::kInt32, ds, seed++, 1, 99))
                      .ConstInput(KTensor(k0, k1))
                      .ConstInput(Tensor::Scalar<int32_t>(static_cast<int32_t>(rows)))
                      .ConstInput(Tensor::Scalar<int32_t>(static_cast<int32_t>(cols)))
                      .Input(Tensor::Scalar<int32_t>(pad_i))
                      .Reference1([k0, k1, al, rows, cols](const std::vector<Tensor>& in) {
                        return RefSetDiagonals(nullptr, in[0], k0, k1, al, rows, cols,
                                               At(in[4], 0));
                      })
                      .Build());
      // MatrixSetDiagV2 packs LEFT_LEFT and has no align attr.
      const std::string set_op = align.empty() ? "MatrixSetDiagV2" : "MatrixSetDiagV3";
      OpCaseBuilder sd(set_op, set_op + " " + dp.shape.ToString() + " k [" + std::to_string(k0) +
                                   ", " + std::to_string(k1) + "] " + align);
      if (!align.empty() && align != "RIGHT_LEFT") sd.String("align", align);
      const uint32_t s0 = seed++, s1 = seed++;
      c.push_back(sd.T(DType::kFloat)
                      .Input(RandomOf(DType::kFloat, dp.shape, s0))
                      .Input(RandomOf(DType::kFloat, ds, s1, 10, 20))
                      .ConstInput(KTensor(k0, k1))
                      .Reference1([k0, k1, al, rows, cols](const std::vector<Tensor>& in) {
                        return RefSetDiagonals(&in[0], in[1], k0, k1, al, rows, cols, nullptr);
                      })
                      .Build());
    }
  }
  // MatrixDiagV3 working out the size: square when neither is given, else the smallest.
  struct Sized {
    int64_t len, k0, k1, num_rows, num_cols, rows, cols;
  };
  for (const Sized& sz : std::vector<Sized>{{2, 1, 1, -1, 4, 2, 4},
                                            {3, 0, 0, 5, -1, 5, 3},
                                            {4, -1, 1, -1, -1, 4, 4},
                                            {2, -2, 0, -1, -1, 2, 2},
                                            {3, 2, 2, -1, -1, 5, 5}}) {
    const Sized z = sz;
    const int64_t nd = sz.k1 - sz.k0 + 1;
    c.push_back(OpCaseBuilder("MatrixDiagV3",
                              "MatrixDiagV3 size for " + std::to_string(sz.num_rows) + " x " +
                                  std::to_string(sz.num_cols) + " k [" + std::to_string(sz.k0) +
                                  ", " + std::to_string(sz.k1) + "]")
                    .T(DType::kBool)
                    .Input(nd > 1 ? RandomOf(DType::kBool, Shape{nd, sz.len}, seed++)
                                  : RandomOf(DType::kBool, Shape{sz.len}, seed++))
                    .ConstInput(KTensor(sz.k0, sz.k1))
                    .Input(Tensor::Scalar<int32_t>(static_cast<int32_t>(sz.num_rows)))
                    .Input(Tensor::Scalar<int32_t>(static_cast<int32_t>(sz.num_cols)))
                    .Input(Tensor::Scalar<bool>(true))
                    .Reference1([z](const std::vector<Tensor>& in) {
                      return RefSetDiagonals(nullptr, in[0], z.k0, z.k1, {false, true}, z.rows,
                                             z.cols, At(in[4], 0));
                    })
                    .Build());
  }
  // Diag and DiagPart (tensor diagonals): rank k to rank 2k and back.
  for (DType t : {DType::kFloat, DType::kInt64, DType::kDouble}) {
    for (const Shape& s : {Shape{4}, Shape{2, 3}}) {
      const Tensor d = RandomOf(t, s, 41);
      Shape big = s;
      for (int i = 0; i < s.rank(); ++i) big.AddDim(s.dim(i));
      const int64_t n = s.num_elements();
      c.push_back(OpCaseBuilder("Diag", "Diag " + DTypeShortName(t) + " " + s.ToString())
                      .T(t)
                      .Input(d)
                      .Reference1([n, big](const std::vector<Tensor>& in) {
                        const Tensor x = RefUnaryDouble(
                            in[0], [](double v) { return v; }, DType::kDouble);
                        Tensor out(DType::kDouble, big);
                        for (int64_t i = 0; i < n * n; ++i) out.data<double>()[i] = 0;
                        for (int64_t i = 0; i < n; ++i)
                          out.data<double>()[i * (n + 1)] = x.data<double>()[i];
                        return RefUnaryDouble(
                            out, [](double v) { return v; }, in[0].dtype());
                      })
                      .Build());
      c.push_back(OpCaseBuilder("DiagPart", "DiagPart " + DTypeShortName(t) + " " + big.ToString())
                      .T(t)
                      .Input(RandomOf(t, big, 42))
                      .Reference1([n](const std::vector<Tensor>& in) {
                        Shape half;
                        for (int i = 0; i < in[0].rank() / 2; ++i) half.AddDim(in[0].dim(i));
                        const Tensor x = RefUnaryDouble(
                            in[0], [](double v) { return v; }, DType::kDouble);
                        Tensor out(DType::kDouble, half);
                        for (int64_t i = 0; i < n; ++i)
                          out.data<double>()[i] = x.data<double>()[i * (n + 1)];
                        return RefUnaryDouble(
                            out, [](double v) { return v; }, in[0].dtype());
                      })
                      .Build());
    }
  }
  AddSetDiagV1AndCross(&c);
  return c;
}

}  // namespace kiln::testing
