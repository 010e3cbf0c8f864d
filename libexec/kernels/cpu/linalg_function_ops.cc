// The CPU kernels of MatrixSquareRoot and MatrixLogarithm (Eigen's MatrixFunctions, as TF),
// MatrixSolveLs (TF's normal equations, or a complete orthogonal decomposition) and the
// tridiagonal TridiagonalMatMul and TridiagonalSolve (Gaussian elimination with partial
// pivoting), defined in kernels/linalg_function_ops.cc; the table is in linalg_ops.cc.
// Op families: Linalg
#include <cmath>
#include <type_traits>
#include <unsupported/Eigen/MatrixFunctions>
#include <vector>

#include "kernels/cpu/linalg_util.h"
#include "kernels/kernel_util.h"
#include "kernels/linalg_util.h"

namespace kiln::exec::linalg {

// ---- MatrixSquareRoot, MatrixLogarithm ----------------------------------------------------------

// The principal square root (real Schur for real matrices: NaN where it has no real root, as
// TF's) or the principal logarithm of each matrix.
template <bool kLog>
Status ComputeMatrixFunction(const KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  KILN_RETURN_IF_ERROR(CheckSquare(ctx, in, "input"));
  const int64_t n = in.dim(in.rank() - 1);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, in.shape()));
  // The logarithm only for the types prepare accepts: a real matrix logarithm is Eigen's most
  // expensive instantiation here, minutes of compile time for code nothing can call.
  using Types = std::conditional_t<kLog, ComplexTypes, LinalgTypes>;
  return Dispatch<Types>(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ForEachMatrix(ctx, BatchCount(in.shape()), n, [&](int64_t b) {
      if (n == 0) return;
      using ColMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
      const ColMat a = ConstMap<T>(in.data<T>() + b * n * n, n, n);
      MutMap<T> o(out->data<T>() + b * n * n, n, n);
      if constexpr (kLog) {
        o = a.log();
      } else {
        o = a.sqrt();
      }
    });
    return OkStatus();
  });
}

// ---- MatrixSolveLs -----------------------------------------------------------------------------

// TF's fast path: the normal equations (A^H A + l2 I) X = A^H B when rows >= cols, else
// X = A^H (A A^H + l2 I)^-1 B, by Cholesky; fast=false: a complete orthogonal decomposition
// (the minimum-norm solution, l2 unused).
Status ComputeSolveLs(const KernelContext& ctx) {
  const Tensor& a_t = ctx.input(0);
  const Tensor& b_t = ctx.input(1);
  if (a_t.rank() < 2 || b_t.rank() != a_t.rank() ||
      b_t.dim(b_t.rank() - 2) != a_t.dim(a_t.rank() - 2) ||
      BatchCount(a_t.shape()) != BatchCount(b_t.shape())) {
    return ctx.Error("input 'rhs' ", b_t.shape().ToString(), " does not fit 'matrix' ",
                     a_t.shape().ToString(), ": same batch and rows expected");
  }
  const double l2 = ctx.input(2).scalar<double>();
  if (l2 < 0) return ctx.Error("l2_regularizer must be >= 0, got ", l2);
  const bool fast = ctx.state<LinalgState>().flag_a;
  const int64_t m = a_t.dim(a_t.rank() - 2), n = a_t.dim(a_t.rank() - 1);
  const int64_t k = b_t.dim(b_t.rank() - 1);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, BatchShape(a_t.shape(), {n, k})));
  FirstError err;
  KILN_RETURN_IF_ERROR(Dispatch<LinalgTypes>(a_t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ForEachMatrix(ctx, BatchCount(a_t.shape()), std::max(m, n), [&](int64_t b) {
      const ConstMap<T> a(a_t.data<T>() + b * m * n, m, n);
      const ConstMap<T> rhs(b_t.data<T>() + b * m * k, m, k);
      MutMap<T> x(out->data<T>() + b * n * k, n, k);
      if (n == 0 || k == 0) return;
      if (m == 0) {
        x.setZero();
        return;
      }
      if (!fast) {
        x = Mat<T>(a).completeOrthogonalDecomposition().solve(Mat<T>(rhs));
        return;
      }
      const bool over = m >= n;
      Mat<T> gram = over ? Mat<T>(a.adjoint() * a) : Mat<T>(a * a.adjoint());
      if (l2 > 0) gram.diagonal().array() += T(static_cast<Real<T>>(l2));
      Eigen::LLT<Mat<T>, Eigen::Lower> llt(gram);
      if (llt.info() != Eigen::Success) {
        err.Set(
            ctx.Error("Input matrix was rank deficient or ill-conditioned. Try setting "
                      "fast=False or provide a larger l2_regularizer > 0. (matrix ",
                      b, " of the batch)"));
        return;
      }
      x = over ? Mat<T>(llt.solve(Mat<T>(a.adjoint() * rhs)))
               : Mat<T>(a.adjoint() * llt.solve(Mat<T>(rhs)));
    });
    return OkStatus();
  }));
  return err.Take();
}

// ---- TridiagonalMatMul, TridiagonalSolve
// ---------------------------------------------------------

// out[i] = sub[i] rhs[i - 1] + main[i] rhs[i] + super[i] rhs[i + 1]; the diagonals are
// [..., 1, m] (sub[0] and super[m - 1] unused).
Status ComputeTridiagonalMatMul(const KernelContext& ctx) {
  const Tensor& rhs = ctx.input(3);
  if (rhs.rank() < 2) return ctx.Error("rhs must have rank >= 2, got ", rhs.shape().ToString());
  const int64_t m = rhs.dim(rhs.rank() - 2), k = rhs.dim(rhs.rank() - 1);
  const int64_t batch = BatchCount(rhs.shape());
  for (int i = 0; i < 3; ++i) {
    const Tensor& d = ctx.input(i);
    if (d.rank() != rhs.rank() || d.dim(d.rank() - 2) != 1 || d.dim(d.rank() - 1) != m ||
        BatchCount(d.shape()) != batch) {
      return ctx.Error("diagonal input ", i, " must have shape [..., 1, ", m,
                       "] with rhs's batch, ", "got ", d.shape().ToString());
    }
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, rhs.shape()));
  return Dispatch<LinalgTypes>(rhs.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* sup = ctx.input(0).data<T>();
    const T* mid = ctx.input(1).data<T>();
    const T* sub = ctx.input(2).data<T>();
    const T* r = rhs.data<T>();
    T* o = out->data<T>();
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < k; ++j) {
          const int64_t at = (b * m + i) * k + j;
          T v = mid[b * m + i] * r[at];
          if (i > 0) v += sub[b * m + i] * r[at - k];
          if (i + 1 < m) v += sup[b * m + i] * r[at + k];
          o[at] = v;
        }
    return OkStatus();
  });
}

// diagonals [..., 3, m] (super, main, sub; super[m - 1] and sub[0] unused), rhs [..., m, k]:
// Gaussian elimination with partial pivoting (LAPACK's gtsv), or the Thomas algorithm.
Status ComputeTridiagonalSolve(const KernelContext& ctx) {
  const auto& st = ctx.state<LinalgState>();
  const Tensor& diags = ctx.input(0);
  const Tensor& rhs = ctx.input(1);
  if (rhs.rank() < 2 || diags.rank() != rhs.rank() || diags.dim(diags.rank() - 2) != 3 ||
      diags.dim(diags.rank() - 1) != rhs.dim(rhs.rank() - 2) ||
      BatchCount(diags.shape()) != BatchCount(rhs.shape())) {
    return ctx.Error("Expected diagonals [..., 3, M] and rhs [..., M, K] of one batch, got ",
                     diags.shape().ToString(), " and ", rhs.shape().ToString());
  }
  const int64_t m = rhs.dim(rhs.rank() - 2), k = rhs.dim(rhs.rank() - 1);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, rhs.shape()));
  FirstError err;
  KILN_RETURN_IF_ERROR(Dispatch<LinalgTypes>(rhs.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ForEachMatrix(ctx, BatchCount(rhs.shape()), m, [&](int64_t b) {
      const T* dg = diags.data<T>() + b * 3 * m;
      std::vector<T> du(dg, dg + m), d(dg + m, dg + 2 * m), dl(dg + 2 * m, dg + 3 * m);
      std::vector<T> du2(m, T(0));
      Mat<T> x = ConstMap<T>(rhs.data<T>() + b * m * k, m, k);
      auto singular = [&] {
        err.Set(ctx.Error("The matrix is not invertible (matrix ", b, " of the batch)"));
      };
      // Forward elimination on rows i and i + 1; dl[i + 1] is the subdiagonal of row i + 1.
      for (int64_t i = 0; i + 1 < m; ++i) {
        const T sub = dl[i + 1];
        if (!st.flag_a || std::abs(d[i]) >= std::abs(sub)) {
          if (d[i] == T(0)) return singular();
          const T f = sub / d[i];
          d[i + 1] -= f * du[i];
          x.row(i + 1) -= f * x.row(i);
        } else {  // swap rows i and i + 1
          const T f = d[i] / sub;
          d[i] = sub;
          const T tmp = d[i + 1];
          d[i + 1] = du[i] - f * tmp;
          if (i + 2 < m) {
            du2[i] = du[i + 1];
            du[i + 1] = -f * du2[i];
          }
          du[i] = tmp;
          x.row(i).swap(x.row(i + 1));
          x.row(i + 1) -= f * x.row(i);
        }
      }
      if (m > 0 && d[m - 1] == T(0)) return singular();
      // Back substitution with up to two superdiagonals.
      for (int64_t i = m - 1; i >= 0; --i) {
        auto row = x.row(i);
        if (i + 1 < m) row -= du[i] * x.row(i + 1);
        if (i + 2 < m) row -= du2[i] * x.row(i + 2);
        row /= d[i];
      }
      MutMap<T>(out->data<T>() + b * m * k, m, k) = x;
    });
    return OkStatus();
  }));
  return err.Take();
}

Status ComputeMatrixSquareRoot(const KernelContext& ctx) {
  return ComputeMatrixFunction<false>(ctx);
}
Status ComputeMatrixLogarithm(const KernelContext& ctx) { return ComputeMatrixFunction<true>(ctx); }

}  // namespace kiln::exec::linalg
