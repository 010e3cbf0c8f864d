// The CPU kernels of Qr, Svd, SelfAdjointEigV2 and Eig (kernels/linalg_decomposition_ops.cc):
// Eigen's HouseholderQR, JacobiSVD, SelfAdjointEigenSolver and ComplexSchur; the table is in
// linalg_ops.cc. TensorFlow's
// Svd runs Eigen's BDCSVD, which hands matrices of fewer than 16 columns to JacobiSVD, so small
// matrices get TF's exact algorithm; larger ones get the slower but equally accurate one-sided
// Jacobi. BDCSVD took GCC 12 about three minutes of compile time per dtype (template
// instantiation): this file took ten minutes of a cold build.
// Op families: Linalg
#include <algorithm>
#include <complex>
#include <limits>

#include "kernels/cpu/linalg_util.h"
#include "kernels/kernel_util.h"
#include "kernels/linalg_util.h"

namespace kiln::exec::linalg {

// ---- Qr, Svd, SelfAdjointEigV2 ---------------------------------------------------------------

Status ComputeQr(const KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  if (in.rank() < 2) return ctx.Error("input 'input' must have rank >= 2");
  const int64_t m = in.dim(in.rank() - 2), n = in.dim(in.rank() - 1), p = std::min(m, n);
  const bool full = ctx.state<LinalgState>().flag_a;
  const int64_t qc = full ? m : p, rr = full ? m : p;
  KILN_ASSIGN_OR_RETURN(Tensor * q_t, ctx.AllocateOutput(0, BatchShape(in.shape(), {m, qc})));
  KILN_ASSIGN_OR_RETURN(Tensor * r_t, ctx.AllocateOutput(1, BatchShape(in.shape(), {rr, n})));
  return Dispatch<LinalgTypes>(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ForEachMatrix(ctx, BatchCount(in.shape()), std::max(m, n), [&](int64_t b) {
      const ConstMap<T> a(in.data<T>() + b * m * n, m, n);
      MutMap<T> q(q_t->data<T>() + b * m * qc, m, qc);
      MutMap<T> r(r_t->data<T>() + b * rr * n, rr, n);
      if (m == 0 || n == 0) {
        q.setIdentity();
        r.setZero();
        return;
      }
      Eigen::HouseholderQR<Mat<T>> qr{Mat<T>(a)};
      r = qr.matrixQR().topRows(rr).template triangularView<Eigen::Upper>();
      q = qr.householderQ() * Mat<T>::Identity(m, qc);
    });
    return OkStatus();
  });
}

// s descending (real values in T), u and v as TF: input = u diag(s) v^H.
Status ComputeSvd(const KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  if (in.rank() < 2) return ctx.Error("input 'input' must have rank >= 2");
  const auto& st = ctx.state<LinalgState>();
  const int64_t m = in.dim(in.rank() - 2), n = in.dim(in.rank() - 1), p = std::min(m, n);
  const bool uv = st.flag_a, full = st.flag_b;
  const int64_t uc = full ? m : p, vc = full ? n : p;
  KILN_ASSIGN_OR_RETURN(Tensor * s_t, ctx.AllocateOutput(0, BatchShape(in.shape(), {p})));
  KILN_ASSIGN_OR_RETURN(Tensor * u_t,
                        ctx.AllocateOutput(1, uv ? BatchShape(in.shape(), {m, uc}) : Shape{0}));
  KILN_ASSIGN_OR_RETURN(Tensor * v_t,
                        ctx.AllocateOutput(2, uv ? BatchShape(in.shape(), {n, vc}) : Shape{0}));
  return Dispatch<LinalgTypes>(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ForEachMatrix(ctx, BatchCount(in.shape()), std::max(m, n), [&](int64_t b) {
      const ConstMap<T> a(in.data<T>() + b * m * n, m, n);
      T* s = s_t->data<T>() + b * p;
      if (m == 0 || n == 0) {
        if (uv) {
          MutMap<T>(u_t->data<T>() + b * m * uc, m, uc).setIdentity();
          MutMap<T>(v_t->data<T>() + b * n * vc, n, vc).setIdentity();
        }
        return;
      }
      const unsigned options = !uv    ? 0u
                               : full ? unsigned(Eigen::ComputeFullU | Eigen::ComputeFullV)
                                      : unsigned(Eigen::ComputeThinU | Eigen::ComputeThinV);
      Eigen::JacobiSVD<Mat<T>> svd(Mat<T>(a), options);
      for (int64_t i = 0; i < p; ++i) s[i] = T(svd.singularValues()(i));
      if (uv) {
        MutMap<T>(u_t->data<T>() + b * m * uc, m, uc) = svd.matrixU();
        MutMap<T>(v_t->data<T>() + b * n * vc, n, vc) = svd.matrixV();
      }
    });
    return OkStatus();
  });
}

// Eigenvalues ascending; eigenvectors in the columns of v. TF reads the lower triangle.
Status ComputeEig(const KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  KILN_RETURN_IF_ERROR(CheckSquare(ctx, in, "input"));
  const bool compute_v = ctx.state<LinalgState>().flag_a;
  const int64_t n = in.dim(in.rank() - 1);
  KILN_ASSIGN_OR_RETURN(Tensor * e_t, ctx.AllocateOutput(0, BatchShape(in.shape(), {n})));
  KILN_ASSIGN_OR_RETURN(Tensor * v_t, ctx.AllocateOutput(1, compute_v ? in.shape() : Shape{0}));
  FirstError err;
  KILN_RETURN_IF_ERROR(Dispatch<LinalgTypes>(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ForEachMatrix(ctx, BatchCount(in.shape()), n, [&](int64_t b) {
      if (n == 0) return;
      const ConstMap<T> a(in.data<T>() + b * n * n, n, n);
      Eigen::SelfAdjointEigenSolver<Mat<T>> eig(
          Mat<T>(a), compute_v ? Eigen::ComputeEigenvectors : Eigen::EigenvaluesOnly);
      if (eig.info() != Eigen::Success) {
        err.Set(ctx.Error("self-adjoint eigen decomposition was not successful (matrix ", b,
                          " of the batch)"));
        return;
      }
      for (int64_t i = 0; i < n; ++i) e_t->data<T>()[b * n + i] = T(eig.eigenvalues()(i));
      if (compute_v) MutMap<T>(v_t->data<T>() + b * n * n, n, n) = eig.eigenvectors();
    });
    return OkStatus();
  }));
  return err.Take();
}

// What Eigen's ComplexEigenSolver computes for TF, from the complex Schur form A = U T U^*:
// eigenvalues in T's diagonal order (TF's Eigen does not sort them) and unit eigenvectors
// V = U X, X unit upper triangular with X T = D X.
template <typename C>
void SchurEigenvectors(const Mat<C>& t, const Mat<C>& u, MutMap<C> v) {
  using R = Real<C>;
  const Eigen::Index n = t.rows();
  const R norm = std::max<R>(t.norm(), std::numeric_limits<R>::min());
  Mat<C> x = Mat<C>::Zero(n, n);
  for (Eigen::Index k = n - 1; k >= 0; --k) {
    x(k, k) = C(1);
    for (Eigen::Index i = k - 1; i >= 0; --i) {
      x(i, k) = -t(i, k);
      if (k - i - 1 > 0)
        x(i, k) -=
            (t.row(i).segment(i + 1, k - i - 1) * x.col(k).segment(i + 1, k - i - 1)).value();
      C z = t(i, i) - t(k, k);
      // Equal eigenvalues: a small real divisor instead of 0, as Eigen.
      if (z == C(0)) z = C(std::numeric_limits<R>::epsilon() * norm, R(0));
      x(i, k) = x(i, k) / z;
    }
  }
  v = u * x;
  for (Eigen::Index k = 0; k < n; ++k) v.col(k).stableNormalize();
}

// Eig: the input cast to complex, decomposed as TF's EigOp (which always asks for U).
Status ComputeGeneralEig(const KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  KILN_RETURN_IF_ERROR(CheckSquare(ctx, in, "input"));
  const bool compute_v = ctx.state<LinalgState>().flag_a;
  const int64_t n = in.dim(in.rank() - 1);
  KILN_ASSIGN_OR_RETURN(Tensor * e_t, ctx.AllocateOutput(0, BatchShape(in.shape(), {n})));
  KILN_ASSIGN_OR_RETURN(Tensor * v_t, ctx.AllocateOutput(1, compute_v ? in.shape() : Shape{0}));
  FirstError err;
  KILN_RETURN_IF_ERROR(Dispatch<LinalgTypes>(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = std::complex<Real<T>>;
    ForEachMatrix(ctx, BatchCount(in.shape()), n, [&](int64_t b) {
      if (n == 0) return;
      const ConstMap<T> a(in.data<T>() + b * n * n, n, n);
      Eigen::ComplexSchur<Mat<C>> schur(Mat<C>(a.template cast<C>()), true);
      if (schur.info() != Eigen::Success) {
        err.Set(ctx.Error("eigen decomposition was not successful (matrix ", b, " of the batch)"));
        return;
      }
      const Mat<C>& t = schur.matrixT();
      for (int64_t i = 0; i < n; ++i) e_t->data<C>()[b * n + i] = t(i, i);
      if (compute_v)
        SchurEigenvectors<C>(t, schur.matrixU(), MutMap<C>(v_t->data<C>() + b * n * n, n, n));
    });
    return OkStatus();
  }));
  return err.Take();
}

}  // namespace kiln::exec::linalg
