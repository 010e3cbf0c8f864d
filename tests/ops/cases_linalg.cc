// Op-tester cases of the dense linear algebra ops, against textbook algorithms in double:
// Cholesky-Banachiewicz, Gauss-Jordan inversion, forward/back substitution, LU with partial
// pivoting (largest magnitude, as LAPACK and Eigen pick), Householder QR with Eigen's sign
// convention (R's diagonal opposite in sign to the column's leading element), and cyclic Jacobi
// for symmetric eigenvalues (singular values are the square roots of A^T A's). Eigenvectors and
// singular vectors are unique only up to sign: they are checked against TensorFlow in tests/tf.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <numeric>

#include "ops/op_cases.h"

namespace kiln::testing {
namespace {

using Matrix = std::vector<std::vector<double>>;

Matrix At(const Tensor& t, int64_t b, int64_t rows, int64_t cols) {
  Matrix m(rows, std::vector<double>(cols));
  const Tensor d = RefUnaryDouble(
      t, [](double v) { return v; }, DType::kDouble);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) m[i][j] = d.data<double>()[(b * rows + i) * cols + j];
  return m;
}
void Put(Tensor* t, int64_t b, const Matrix& m) {
  const int64_t rows = static_cast<int64_t>(m.size()), cols = rows ? m[0].size() : 0;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      const int64_t e = (b * rows + i) * cols + j;
      if (t->dtype() == DType::kFloat)
        t->data<float>()[e] = static_cast<float>(m[i][j]);
      else
        t->data<double>()[e] = m[i][j];
    }
}

// Symmetric positive definite: a a^T + n I, batched.
Tensor Spd(DType t, int64_t batch, int64_t n, uint32_t seed) {
  const Tensor a = RandomOf(DType::kDouble, Shape{batch, n, n}, seed, -1, 1);
  Tensor out(t, Shape{batch, n, n});
  for (int64_t b = 0; b < batch; ++b) {
    const Matrix m = At(a, b, n, n);
    Matrix s(n, std::vector<double>(n));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t k = 0; k < n; ++k) s[i][j] += m[i][k] * m[j][k];
        if (i == j) s[i][j] += static_cast<double>(n);
      }
    Put(&out, b, s);
  }
  return out;
}

// Lower triangular with a dominant diagonal.
Tensor Lower(DType t, int64_t batch, int64_t n, uint32_t seed) {
  Tensor a = RandomOf(t, Shape{batch, n, n}, seed, -1, 1);
  for (int64_t b = 0; b < batch; ++b) {
    Matrix m = At(a, b, n, n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) m[i][j] = j > i ? 0 : (i == j ? 3 + m[i][j] : m[i][j]);
    Put(&a, b, m);
  }
  return a;
}

struct Lu {
  Matrix lu;
  std::vector<int64_t> perm;  // row i of L U is input row perm[i]
  int swaps = 0;
};
Lu Decompose(Matrix a) {
  const int64_t n = static_cast<int64_t>(a.size());
  Lu r;
  r.perm.resize(n);
  std::iota(r.perm.begin(), r.perm.end(), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t p = k;
    for (int64_t i = k + 1; i < n; ++i)
      if (std::abs(a[i][k]) > std::abs(a[p][k])) p = i;
    if (p != k) {
      std::swap(a[p], a[k]);
      std::swap(r.perm[p], r.perm[k]);
      ++r.swaps;
    }
    for (int64_t i = k + 1; i < n; ++i) {
      a[i][k] /= a[k][k];
      for (int64_t j = k + 1; j < n; ++j) a[i][j] -= a[i][k] * a[k][j];
    }
  }
  r.lu = a;
  return r;
}

Matrix Inverse(const Matrix& a) {
  const int64_t n = static_cast<int64_t>(a.size());
  Matrix m = a, inv(n, std::vector<double>(n));
  for (int64_t i = 0; i < n; ++i) inv[i][i] = 1;
  for (int64_t k = 0; k < n; ++k) {
    int64_t p = k;
    for (int64_t i = k + 1; i < n; ++i)
      if (std::abs(m[i][k]) > std::abs(m[p][k])) p = i;
    std::swap(m[p], m[k]);
    std::swap(inv[p], inv[k]);
    const double d = m[k][k];
    for (int64_t j = 0; j < n; ++j) {
      m[k][j] /= d;
      inv[k][j] /= d;
    }
    for (int64_t i = 0; i < n; ++i) {
      if (i == k) continue;
      const double f = m[i][k];
      for (int64_t j = 0; j < n; ++j) {
        m[i][j] -= f * m[k][j];
        inv[i][j] -= f * inv[k][j];
      }
    }
  }
  return inv;
}

Matrix Mul(const Matrix& a, const Matrix& b) {
  Matrix c(a.size(), std::vector<double>(b[0].size()));
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = 0; j < b[0].size(); ++j)
      for (size_t k = 0; k < b.size(); ++k) c[i][j] += a[i][k] * b[k][j];
  return c;
}
Matrix Transpose(const Matrix& a) {
  Matrix t(a[0].size(), std::vector<double>(a.size()));
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = 0; j < a[0].size(); ++j) t[j][i] = a[i][j];
  return t;
}

// Eigenvalues of a symmetric matrix, ascending (cyclic Jacobi).
std::vector<double> SymmetricEigenvalues(Matrix a) {
  const int64_t n = static_cast<int64_t>(a.size());
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i + 1; j < n; ++j) off += a[i][j] * a[i][j];
    if (off < 1e-30) break;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        if (std::abs(a[p][q]) < 1e-300) continue;
        const double theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
        const double t = (theta >= 0 ? 1 : -1) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int64_t k = 0; k < n; ++k) {
          const double akp = a[k][p], akq = a[k][q];
          a[k][p] = c * akp - s * akq;
          a[k][q] = s * akp + c * akq;
        }
        for (int64_t k = 0; k < n; ++k) {
          const double apk = a[p][k], aqk = a[q][k];
          a[p][k] = c * apk - s * aqk;
          a[q][k] = s * apk + c * aqk;
        }
      }
  }
  std::vector<double> e(n);
  for (int64_t i = 0; i < n; ++i) e[i] = a[i][i];
  std::sort(e.begin(), e.end());
  return e;
}

// Householder QR, R's diagonal of the opposite sign to the column's leading element (Eigen).
void HouseholderQr(const Matrix& a, Matrix* q, Matrix* r) {
  const int64_t m = static_cast<int64_t>(a.size()), n = static_cast<int64_t>(a[0].size());
  Matrix R = a, Q(m, std::vector<double>(m));
  for (int64_t i = 0; i < m; ++i) Q[i][i] = 1;
  for (int64_t k = 0; k < std::min(m - 1, n); ++k) {
    double norm = 0;
    for (int64_t i = k; i < m; ++i) norm += R[i][k] * R[i][k];
    norm = std::sqrt(norm);
    double tail = norm * norm - R[k][k] * R[k][k];
    if (tail <= 1e-300) continue;  // already zero below: Eigen applies no reflection
    const double beta = R[k][k] >= 0 ? -norm : norm;
    std::vector<double> v(m, 0);
    v[k] = R[k][k] - beta;
    for (int64_t i = k + 1; i < m; ++i) v[i] = R[i][k];
    double vv = 0;
    for (double x : v) vv += x * x;
    for (int64_t j = 0; j < n; ++j) {
      double dot = 0;
      for (int64_t i = k; i < m; ++i) dot += v[i] * R[i][j];
      for (int64_t i = k; i < m; ++i) R[i][j] -= 2 * v[i] * dot / vv;
    }
    for (int64_t i = 0; i < m; ++i) {
      double dot = 0;
      for (int64_t j = k; j < m; ++j) dot += Q[i][j] * v[j];
      for (int64_t j = k; j < m; ++j) Q[i][j] -= 2 * dot * v[j] / vv;
    }
  }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < std::min(i, n); ++j) R[i][j] = 0;
  *q = Q;
  *r = R;
}

}  // namespace

namespace {

// Copies element i of src to element j of dst (one POD dtype).
void CopyElementBytes(const Tensor& src, int64_t i, Tensor* dst, int64_t j) {
  const size_t n = DTypeSize(src.dtype());
  std::memcpy(static_cast<char*>(dst->raw_data()) + j * n,
              static_cast<const char*>(src.raw_data()) + i * n, n);
}

// MatrixSquareRoot (Denman-Beavers iteration), MatrixLogarithm (inverse scaling and squaring),
// MatrixSolveLs (the regularized normal equations by Gauss-Jordan) and the tridiagonal ops (the
// dense matrix), all in double.
Matrix Identity(int64_t n) {
  Matrix m(n, std::vector<double>(n, 0.0));
  for (int64_t i = 0; i < n; ++i) m[i][i] = 1;
  return m;
}
Matrix Combine(const Matrix& a, double x, const Matrix& b, double y) {
  Matrix m = a;
  for (size_t i = 0; i < m.size(); ++i)
    for (size_t j = 0; j < m[i].size(); ++j) m[i][j] = x * a[i][j] + y * b[i][j];
  return m;
}
Matrix SqrtDb(const Matrix& a) {
  Matrix y = a, z = Identity(static_cast<int64_t>(a.size()));
  for (int it = 0; it < 60; ++it) {
    const Matrix yi = Inverse(y), zi = Inverse(z);
    y = Combine(y, 0.5, zi, 0.5);
    z = Combine(z, 0.5, yi, 0.5);
  }
  return y;
}
Matrix LogIss(Matrix a) {
  const int64_t n = static_cast<int64_t>(a.size());
  int k = 0;
  for (; k < 30; ++k) {  // square roots until a is near I
    double off = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) off = std::max(off, std::abs(a[i][j] - (i == j ? 1 : 0)));
    if (off < 1e-5) break;
    a = SqrtDb(a);
  }
  const Matrix x = Combine(a, 1, Identity(n), -1);  // log(I + X) = X - X^2/2 + X^3/3 ...
  Matrix term = x, sum = x;
  for (int p = 2; p < 12; ++p) {
    term = Mul(term, x);
    sum = Combine(sum, 1, term, (p % 2 ? 1.0 : -1.0) / p);
  }
  return Combine(sum, std::ldexp(1.0, k), sum, 0);
}

void AddMatrixFunctionsAndSolvers(std::vector<OpCase>* c) {
  uint32_t seed = 5100;
  for (DType t : {DType::kFloat, DType::kDouble}) {
    c->push_back(OpCaseBuilder("MatrixSquareRoot", "MatrixSquareRoot SPD " + DTypeShortName(t))
                     .T(t)
                     .Input(Spd(t, 2, 4, NextSeed(seed)))
                     .Reference1([](const std::vector<Tensor>& in) {
                       Tensor out(in[0].dtype(), in[0].shape());
                       for (int64_t b = 0; b < 2; ++b) Put(&out, b, SqrtDb(At(in[0], b, 4, 4)));
                       return out;
                     })
                     .Tolerance(t == DType::kFloat ? 1e-4 : 1e-9)
                     .Build());
  }
  {
    const Tensor spd = Spd(DType::kDouble, 1, 3, NextSeed(seed));
    Tensor z(DType::kComplex128, spd.shape());
    for (int64_t i = 0; i < spd.NumElements(); ++i)
      z.data<std::complex<double>>()[i] = {spd.data<double>()[i], 0.0};
    c->push_back(OpCaseBuilder("MatrixLogarithm", "MatrixLogarithm SPD complex128")
                     .T(DType::kComplex128)
                     .Input(z)
                     .Reference1([spd](const std::vector<Tensor>&) {
                       const Matrix l = LogIss(At(spd, 0, 3, 3));
                       Tensor out(DType::kComplex128, spd.shape());
                       for (int64_t i = 0; i < 9; ++i)
                         out.data<std::complex<double>>()[i] = {l[i / 3][i % 3], 0.0};
                       return out;
                     })
                     .Tolerance(1e-8)
                     .Build());
  }
  struct Ls {
    int64_t m, n;
    double l2;
  };
  for (const Ls& ls : {Ls{5, 3, 0.0}, Ls{5, 3, 0.5}, Ls{2, 4, 0.1}}) {
    for (DType t : {DType::kFloat, DType::kDouble}) {
      c->push_back(OpCaseBuilder("MatrixSolveLs",
                                 "MatrixSolveLs " + DTypeShortName(t) + " " + std::to_string(ls.m) +
                                     "x" + std::to_string(ls.n) + " l2 " + std::to_string(ls.l2))
                       .T(t)
                       .Input(RandomOf(t, Shape{2, ls.m, ls.n}, NextSeed(seed)))
                       .Input(RandomOf(t, Shape{2, ls.m, 2}, NextSeed(seed)))
                       .Input(Tensor::Scalar<double>(ls.l2))
                       .Reference1([ls](const std::vector<Tensor>& in) {
                         Tensor out(in[0].dtype(), Shape{2, ls.n, 2});
                         for (int64_t b = 0; b < 2; ++b) {
                           const Matrix a = At(in[0], b, ls.m, ls.n), r = At(in[1], b, ls.m, 2);
                           const Matrix at = Transpose(a);
                           if (ls.m >= ls.n) {
                             const Matrix g = Combine(Mul(at, a), 1, Identity(ls.n), ls.l2);
                             Put(&out, b, Mul(Inverse(g), Mul(at, r)));
                           } else {
                             const Matrix g = Combine(Mul(a, at), 1, Identity(ls.m), ls.l2);
                             Put(&out, b, Mul(at, Mul(Inverse(g), r)));
                           }
                         }
                         return out;
                       })
                       .Tolerance(t == DType::kFloat ? 1e-3 : 1e-9)
                       .Build());
    }
  }
  // Tridiagonal: m = 5, two right-hand sides; a zero leading pivot makes pivoting matter.
  for (DType t : {DType::kFloat, DType::kDouble}) {
    Tensor diags = RandomOf(t, Shape{2, 3, 5}, NextSeed(seed), -2, 2);
    if (t == DType::kDouble) diags.data<double>()[5] = 0;  // main[0] of matrix 0
    const Tensor rhs = RandomOf(t, Shape{2, 5, 2}, NextSeed(seed));
    auto dense = [](const Tensor& d, int64_t b) {
      const Matrix dm = At(d, b, 3, 5);
      Matrix a(5, std::vector<double>(5, 0.0));
      for (int64_t i = 0; i < 5; ++i) {
        a[i][i] = dm[1][i];
        if (i + 1 < 5) a[i][i + 1] = dm[0][i];
        if (i > 0) a[i][i - 1] = dm[2][i];
      }
      return a;
    };
    c->push_back(OpCaseBuilder("TridiagonalSolve", "TridiagonalSolve " + DTypeShortName(t))
                     .T(t)
                     .Input(diags)
                     .Input(rhs)
                     .Reference1([dense](const std::vector<Tensor>& in) {
                       Tensor out(in[1].dtype(), in[1].shape());
                       for (int64_t b = 0; b < 2; ++b)
                         Put(&out, b, Mul(Inverse(dense(in[0], b)), At(in[1], b, 5, 2)));
                       return out;
                     })
                     .Tolerance(t == DType::kFloat ? 1e-3 : 1e-9)
                     .Build());
    // TridiagonalMatMul takes the three diagonals as [..., 1, m] each.
    Tensor sup(t, Shape{2, 1, 5}), mid(t, Shape{2, 1, 5}), sub(t, Shape{2, 1, 5});
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t i = 0; i < 5; ++i) {
        CopyElementBytes(diags, (b * 3 + 0) * 5 + i, &sup, b * 5 + i);
        CopyElementBytes(diags, (b * 3 + 1) * 5 + i, &mid, b * 5 + i);
        CopyElementBytes(diags, (b * 3 + 2) * 5 + i, &sub, b * 5 + i);
      }
    c->push_back(OpCaseBuilder("TridiagonalMatMul", "TridiagonalMatMul " + DTypeShortName(t))
                     .T(t)
                     .Input(sup)
                     .Input(mid)
                     .Input(sub)
                     .Input(rhs)
                     .Reference1([dense, diags](const std::vector<Tensor>& in) {
                       Tensor out(in[3].dtype(), in[3].shape());
                       for (int64_t b = 0; b < 2; ++b)
                         Put(&out, b, Mul(dense(diags, b), At(in[3], b, 5, 2)));
                       return out;
                     })
                     .Tolerance(t == DType::kFloat ? 1e-5 : 1e-12)
                     .Build());
  }
}

}  // namespace

std::vector<OpCase> LinalgCases() {
  std::vector<OpCase> c;
  uint32_t seed = 1;
  for (DType t : {DType::kFloat, DType::kDouble}) {
    const double tol = t == DType::kFloat ? 1e-4 : 1e-10;
    for (int64_t n : {1, 3, 6}) {
      const Tensor spd = Spd(t, 2, n, seed++);
      c.push_back(OpCaseBuilder("Cholesky")
                      .T(t)
                      .Input(spd)
                      .Reference1([n, t](const std::vector<Tensor>& in) {
                        Tensor out(t, in[0].shape());
                        for (int64_t b = 0; b < 2; ++b) {
                          const Matrix a = At(in[0], b, n, n);
                          Matrix l(n, std::vector<double>(n));
                          for (int64_t i = 0; i < n; ++i)
                            for (int64_t j = 0; j <= i; ++j) {
                              double s = a[i][j];
                              for (int64_t k = 0; k < j; ++k) s -= l[i][k] * l[j][k];
                              l[i][j] = i == j ? std::sqrt(s) : s / l[j][j];
                            }
                          Put(&out, b, l);
                        }
                        return out;
                      })
                      .Tolerance(tol)
                      .Build());
      for (bool adjoint : {false, true}) {
        const Tensor a = Lower(t, 2, n, seed++);
        c.push_back(OpCaseBuilder("MatrixInverse")
                        .T(t)
                        .Bool("adjoint", adjoint)
                        .Input(a)
                        .Reference1([n, t, adjoint](const std::vector<Tensor>& in) {
                          Tensor out(t, in[0].shape());
                          for (int64_t b = 0; b < 2; ++b) {
                            Matrix m = At(in[0], b, n, n);
                            if (adjoint) m = Transpose(m);
                            Put(&out, b, Inverse(m));
                          }
                          return out;
                        })
                        .Tolerance(tol)
                        .Build());
        const Tensor rhs = RandomOf(t, Shape{2, n, 2}, seed++, -1, 1);
        c.push_back(OpCaseBuilder("MatrixSolve")
                        .T(t)
                        .Bool("adjoint", adjoint)
                        .Input(spd)
                        .Input(rhs)
                        .Reference1([n, t, adjoint](const std::vector<Tensor>& in) {
                          Tensor out(t, in[1].shape());
                          for (int64_t b = 0; b < 2; ++b) {
                            Matrix m = At(in[0], b, n, n);
                            if (adjoint) m = Transpose(m);
                            Put(&out, b, Mul(Inverse(m), At(in[1], b, n, 2)));
                          }
                          return out;
                        })
                        .Tolerance(tol)
                        .Build());
        for (bool lower : {true, false}) {
          // matrix [n, n] broadcast against rhs [2, n, 2]; the op reads only its triangle.
          const Tensor full = RandomOf(t, Shape{n, n}, seed++, -1, 1);
          Tensor tri = full;
          {
            Matrix m = At(full, 0, n, n);
            for (int64_t i = 0; i < n; ++i) m[i][i] += 3;
            Put(&tri, 0, m);
          }
          c.push_back(OpCaseBuilder("MatrixTriangularSolve")
                          .T(t)
                          .Bool("lower", lower)
                          .Bool("adjoint", adjoint)
                          .Input(tri)
                          .Input(rhs)
                          .Reference1([n, t, lower, adjoint](const std::vector<Tensor>& in) {
                            Matrix m = At(in[0], 0, n, n);
                            for (int64_t i = 0; i < n; ++i)
                              for (int64_t j = 0; j < n; ++j)
                                if (lower ? j > i : j < i) m[i][j] = 0;
                            if (adjoint) m = Transpose(m);
                            Tensor out(t, in[1].shape());
                            for (int64_t b = 0; b < 2; ++b)
                              Put(&out, b, Mul(Inverse(m), At(in[1], b, n, 2)));
                            return out;
                          })
                          .Tolerance(tol)
                          .Build());
        }
      }
      // A general matrix: a negative determinant is likely somewhere in the batch.
      const Tensor g = RandomOf(t, Shape{3, n, n}, seed++, -2, 2);
      c.push_back(OpCaseBuilder("LogMatrixDeterminant")
                      .T(t)
                      .Input(g)
                      .Reference([n, t](const std::vector<Tensor>& in) {
                        Tensor sign(t, Shape{3}), logabs(t, Shape{3});
                        for (int64_t b = 0; b < 3; ++b) {
                          const Lu lu = Decompose(At(in[0], b, n, n));
                          double s = lu.swaps % 2 ? -1 : 1, l = 0;
                          for (int64_t i = 0; i < n; ++i) {
                            s *= lu.lu[i][i] < 0 ? -1 : 1;
                            l += std::log(std::abs(lu.lu[i][i]));
                          }
                          if (t == DType::kFloat) {
                            sign.data<float>()[b] = static_cast<float>(s);
                            logabs.data<float>()[b] = static_cast<float>(l);
                          } else {
                            sign.data<double>()[b] = s;
                            logabs.data<double>()[b] = l;
                          }
                        }
                        return std::vector<Tensor>{sign, logabs};
                      })
                      .Tolerance(tol)
                      .Build());
      c.push_back(OpCaseBuilder("Lu")
                      .T(t)
                      .Input(g)
                      .Reference([n, t](const std::vector<Tensor>& in) {
                        Tensor lu_t(t, in[0].shape()), p(DType::kInt32, Shape{3, n});
                        for (int64_t b = 0; b < 3; ++b) {
                          const Lu lu = Decompose(At(in[0], b, n, n));
                          Put(&lu_t, b, lu.lu);
                          for (int64_t i = 0; i < n; ++i)
                            p.data<int32_t>()[b * n + i] = static_cast<int32_t>(lu.perm[i]);
                        }
                        return std::vector<Tensor>{lu_t, p};
                      })
                      .Tolerance(tol)
                      .Build());
      c.push_back(OpCaseBuilder("SelfAdjointEigV2")
                      .T(t)
                      .Bool("compute_v", false)
                      .Input(spd)
                      .Reference([n, t](const std::vector<Tensor>& in) {
                        Tensor e(t, Shape{2, n});
                        for (int64_t b = 0; b < 2; ++b) {
                          const std::vector<double> ev = SymmetricEigenvalues(At(in[0], b, n, n));
                          for (int64_t i = 0; i < n; ++i) {
                            if (t == DType::kFloat)
                              e.data<float>()[b * n + i] = float(ev[i]);
                            else
                              e.data<double>()[b * n + i] = ev[i];
                          }
                        }
                        return std::vector<Tensor>{e, Tensor(t, Shape{0})};
                      })
                      .Tolerance(tol)
                      .Build());
    }
    // Eig of upper-triangular matrices: the eigenvalues are the diagonal's, in its order (TF
    // leaves the complex Schur form's order), as complex numbers.
    {
      const DType tout = t == DType::kFloat ? DType::kComplex64 : DType::kComplex128;
      const std::vector<double> diag = {3.0, -1.0, 2.0, -0.5};
      const int64_t n = static_cast<int64_t>(diag.size());
      Tensor a(t, Shape{2, n, n});
      for (int64_t b = 0; b < 2; ++b) {
        Matrix m(n, std::vector<double>(n));
        for (int64_t i = 0; i < n; ++i) {
          m[i][i] = diag[i] * (b + 1);
          for (int64_t j = i + 1; j < n; ++j) m[i][j] = 0.25 * (i + 2 * j) - b;
        }
        Put(&a, b, m);
      }
      c.push_back(OpCaseBuilder("Eig")
                      .T(t)
                      .Type("Tout", tout)
                      .Bool("compute_v", false)
                      .Input(a)
                      .Reference([=](const std::vector<Tensor>&) {
                        Tensor e(tout, Shape{2, n});
                        for (int64_t b = 0; b < 2; ++b)
                          for (int64_t i = 0; i < n; ++i) {
                            const double v = diag[i] * (b + 1);
                            if (tout == DType::kComplex64)
                              e.data<std::complex<float>>()[b * n + i] = {float(v), 0.0f};
                            else
                              e.data<std::complex<double>>()[b * n + i] = {v, 0.0};
                          }
                        return std::vector<Tensor>{e, Tensor(tout, Shape{0})};
                      })
                      .Tolerance(tol)
                      .Build());
    }
    // Rectangular: QR (thin and full) and singular values.
    for (const auto& mn : std::vector<std::pair<int64_t, int64_t>>{{4, 3}, {3, 5}, {6, 6}}) {
      const int64_t m = mn.first, n = mn.second;  // named: lambdas capture them
      const Tensor a = RandomOf(t, Shape{2, m, n}, seed++, -1, 1);
      for (bool full : {false, true}) {
        const int64_t p = std::min(m, n), qc = full ? m : p;
        c.push_back(OpCaseBuilder("Qr")
                        .T(t)
                        .Bool("full_matrices", full)
                        .Input(a)
                        .Reference([=](const std::vector<Tensor>& in) {
                          Tensor q_t(t, Shape{2, m, qc}), r_t(t, Shape{2, qc, n});
                          for (int64_t b = 0; b < 2; ++b) {
                            Matrix q, r;
                            HouseholderQr(At(in[0], b, m, n), &q, &r);
                            for (auto& row : q) row.resize(qc);
                            r.resize(qc);
                            Put(&q_t, b, q);
                            Put(&r_t, b, r);
                          }
                          return std::vector<Tensor>{q_t, r_t};
                        })
                        .Tolerance(tol)
                        .Build());
      }
      c.push_back(OpCaseBuilder("Svd")
                      .T(t)
                      .Bool("compute_uv", false)
                      .Input(a)
                      .Reference([=](const std::vector<Tensor>& in) {
                        const int64_t p = std::min(m, n);
                        Tensor s(t, Shape{2, p});
                        for (int64_t b = 0; b < 2; ++b) {
                          const Matrix x = At(in[0], b, m, n);
                          const Matrix g = m >= n ? Mul(Transpose(x), x) : Mul(x, Transpose(x));
                          std::vector<double> ev = SymmetricEigenvalues(g);
                          std::sort(ev.rbegin(), ev.rend());
                          for (int64_t i = 0; i < p; ++i) {
                            const double v = std::sqrt(std::max(0.0, ev[i]));
                            if (t == DType::kFloat)
                              s.data<float>()[b * p + i] = float(v);
                            else
                              s.data<double>()[b * p + i] = v;
                          }
                        }
                        return std::vector<Tensor>{s, Tensor(t, Shape{0}), Tensor(t, Shape{0})};
                      })
                      .Tolerance(tol)
                      .Build());
    }
  }
  AddMatrixFunctionsAndSolvers(&c);
  return c;
}

}  // namespace kiln::testing
