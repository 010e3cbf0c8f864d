// The CPU kernels of the linear-algebra ops (kernels/linalg_ops.cc), with Eigen's decompositions
// as TensorFlow's CPU kernels use them (so results agree to rounding): Cholesky (and
// CholeskyGrad), MatrixInverse, MatrixSolve, MatrixTriangularSolve (batch dims broadcast),
// LogMatrixDeterminant and Lu here; Qr, Svd and SelfAdjointEigV2 in linalg_decomposition_ops.cc;
// MatrixSquareRoot, MatrixLogarithm, MatrixSolveLs and the tridiagonal ops in
// linalg_function_ops.cc; this file holds the family's kernel table. Singular or
// non-positive-definite inputs are TF's errors, naming the node.
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/linalg_util.h"
#include "kernels/kernel_util.h"
#include "kernels/linalg_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using namespace linalg;  // NOLINT(google-build-using-namespace): the family's own helpers

// ---- Cholesky --------------------------------------------------------------------------------

Status ComputeCholesky(const KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  KILN_RETURN_IF_ERROR(CheckSquare(ctx, in, "input"));
  const int64_t n = in.dim(in.rank() - 1);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, in.shape()));
  FirstError err;
  KILN_RETURN_IF_ERROR(Dispatch<LinalgTypes>(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ForEachMatrix(ctx, BatchCount(in.shape()), n, [&](int64_t b) {
      const ConstMap<T> a(in.data<T>() + b * n * n, n, n);
      MutMap<T> l(out->data<T>() + b * n * n, n, n);
      // TF reads the lower triangle only.
      Eigen::LLT<Mat<T>, Eigen::Lower> llt(a);
      if (llt.info() != Eigen::Success) {
        err.Set(
            ctx.Error("Cholesky decomposition was not successful: the input is not "
                      "symmetric positive definite (matrix ",
                      b, " of the batch)"));
        return;
      }
      l = llt.matrixL();
    });
    return OkStatus();
  }));
  return err.Take();
}

// ---- CholeskyGrad ----------------------------------------------------------------------------

template <typename T>
void HalveLower(Mat<T>* m) {
  *m = m->template triangularView<Eigen::Lower>();
  m->diagonal() *= T(0.5);
}

// The gradient of A = L L^T given dL, from the lower triangles of l and grad (float32 and
// float64, as TF): S = L^-T Phi(L^T dL) L^-1 (Murray, "Differentiation of the Cholesky
// decomposition", 2016, where Phi keeps the lower triangle and halves the diagonal), returned
// symmetrized, (S + S^T) / 2, as TF's blocked kernel returns it.
Status ComputeCholeskyGrad(const KernelContext& ctx) {
  const Tensor& l_in = ctx.input(0);
  const Tensor& g_in = ctx.input(1);
  KILN_RETURN_IF_ERROR(CheckSquare(ctx, l_in, "l"));
  if (l_in.shape() != g_in.shape())
    return ctx.Error("inputs 'l' ", l_in.shape().ToString(), " and 'grad' ",
                     g_in.shape().ToString(), " must have the same shape");
  const int64_t n = l_in.dim(l_in.rank() - 1);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, l_in.shape()));
  return Dispatch<TypeList<float, double>>(l_in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ForEachMatrix(ctx, BatchCount(l_in.shape()), n, [&](int64_t b) {
      const Mat<T> l =
          ConstMap<T>(l_in.data<T>() + b * n * n, n, n).template triangularView<Eigen::Lower>();
      const Mat<T> g =
          ConstMap<T>(g_in.data<T>() + b * n * n, n, n).template triangularView<Eigen::Lower>();
      Mat<T> p = l.transpose() * g;
      HalveLower(&p);
      const auto lt = l.transpose().template triangularView<Eigen::Upper>();
      const Mat<T> x = lt.solve(p);                                  // L^-T P
      const Mat<T> s = lt.solve(Mat<T>(x.transpose())).transpose();  // (L^-T P) L^-1
      MutMap<T>(out->data<T>() + b * n * n, n, n) = (s + s.transpose()) * T(0.5);
    });
    return OkStatus();
  });
}

// ---- MatrixInverse, MatrixSolve --------------------------------------------------------------

// Invertible by TF's test: the LU's smallest |pivot| relative to its largest is not below
// machine epsilon... TF checks rcond() > eps; PartialPivLU gives the same estimate.
template <typename T>
bool Invertible(const Eigen::PartialPivLU<Mat<T>>& lu) {
  using R = Real<T>;
  const auto d = lu.matrixLU().diagonal().cwiseAbs();
  if (d.size() == 0) return true;
  const R max = d.maxCoeff(), min = d.minCoeff();
  return max > R(0) && min > R(0) && std::isfinite(static_cast<double>(min / max)) &&
         lu.rcond() > std::numeric_limits<R>::epsilon();
}

Status ComputeInverse(const KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  KILN_RETURN_IF_ERROR(CheckSquare(ctx, in, "input"));
  const bool adjoint = ctx.state<LinalgState>().flag_a;
  const int64_t n = in.dim(in.rank() - 1);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, in.shape()));
  FirstError err;
  KILN_RETURN_IF_ERROR(Dispatch<LinalgTypes>(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ForEachMatrix(ctx, BatchCount(in.shape()), n, [&](int64_t b) {
      const ConstMap<T> a(in.data<T>() + b * n * n, n, n);
      MutMap<T> inv(out->data<T>() + b * n * n, n, n);
      if (n == 0) return;
      Eigen::PartialPivLU<Mat<T>> lu(adjoint ? Mat<T>(a.adjoint()) : Mat<T>(a));
      if (!Invertible(lu)) {
        err.Set(ctx.Error("Input is not invertible (matrix ", b, " of the batch)"));
        return;
      }
      inv = lu.inverse();
    });
    return OkStatus();
  }));
  return err.Take();
}

Status ComputeSolve(const KernelContext& ctx) {
  const Tensor& a_t = ctx.input(0);
  const Tensor& b_t = ctx.input(1);
  KILN_RETURN_IF_ERROR(CheckSquare(ctx, a_t, "matrix"));
  const int64_t n = a_t.dim(a_t.rank() - 1);
  if (b_t.rank() != a_t.rank() || b_t.dim(b_t.rank() - 2) != n ||
      BatchCount(a_t.shape()) != BatchCount(b_t.shape()))
    return ctx.Error("input 'rhs' ", b_t.shape().ToString(), " does not fit 'matrix' ",
                     a_t.shape().ToString(), ": same batch, ", n, " rows expected");
  const int64_t k = b_t.dim(b_t.rank() - 1);
  const bool adjoint = ctx.state<LinalgState>().flag_a;
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, b_t.shape()));
  FirstError err;
  KILN_RETURN_IF_ERROR(Dispatch<LinalgTypes>(a_t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ForEachMatrix(ctx, BatchCount(a_t.shape()), n, [&](int64_t b) {
      const ConstMap<T> a(a_t.data<T>() + b * n * n, n, n);
      const ConstMap<T> rhs(b_t.data<T>() + b * n * k, n, k);
      MutMap<T> x(out->data<T>() + b * n * k, n, k);
      if (n == 0 || k == 0) return;
      Eigen::PartialPivLU<Mat<T>> lu(adjoint ? Mat<T>(a.adjoint()) : Mat<T>(a));
      if (!Invertible(lu)) {
        err.Set(ctx.Error("Input matrix is not invertible (matrix ", b, " of the batch)"));
        return;
      }
      x = lu.solve(Mat<T>(rhs));
    });
    return OkStatus();
  }));
  return err.Take();
}

// ---- MatrixTriangularSolve, BandedTriangularSolve (batch dims broadcast, as TF 2) -------------

// BandedTriangularSolve's matrix holds K bands of an M x M triangle as [..., K, M], TF's
// LEFT_RIGHT alignment: lower, row j is the j-th subdiagonal, right-aligned (A[i][i-j] at
// column i); upper, row K-1-j is the j-th superdiagonal, left-aligned (A[i][i+j] at column i).
Status ComputeTriangularSolve(const KernelContext& ctx) {
  const auto& st = ctx.state<TriangularSolveState>();
  const Tensor& a_t = ctx.input(0);
  const Tensor& b_t = ctx.input(1);
  if (!st.banded) KILN_RETURN_IF_ERROR(CheckSquare(ctx, a_t, "matrix"));
  if (a_t.rank() < 2) return ctx.Error("input 'matrix' must have rank >= 2");
  if (b_t.rank() < 2) return ctx.Error("input 'rhs' must have rank >= 2");
  const int64_t n = a_t.dim(a_t.rank() - 1), k = b_t.dim(b_t.rank() - 1);
  const int64_t bands = a_t.dim(a_t.rank() - 2);  // n when not banded
  if (st.banded && (bands > n || (bands == 0 && n > 0)))
    return ctx.Error("input 'matrix' ", a_t.shape().ToString(), " must hold 1 to ", n,
                     " bands of an ", n, " x ", n, " matrix");
  if (b_t.dim(b_t.rank() - 2) != n)
    return ctx.Error("input 'rhs' ", b_t.shape().ToString(), " must have ", n,
                     " rows to match 'matrix' ", a_t.shape().ToString());
  const Shape a_batch = BatchShape(a_t.shape(), {}), b_batch = BatchShape(b_t.shape(), {});
  KILN_ASSIGN_OR_RETURN(Shape batch, BroadcastShapes(a_batch, b_batch));
  Shape out_shape = batch;
  out_shape.AddDim(n);
  out_shape.AddDim(k);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, out_shape));
  const int64_t count = batch.num_elements();
  // Each output matrix's matrix and rhs, by the broadcast's strides.
  std::vector<int64_t> ai(count), bi(count);
  {
    const int r = batch.rank();
    std::vector<int64_t> as(r, 0), bs(r, 0);
    int64_t sa = 1, sb = 1;
    for (int d = r - 1; d >= 0; --d) {
      const int da = d - (r - a_batch.rank()), db = d - (r - b_batch.rank());
      if (da >= 0 && a_batch.dim(da) != 1) as[d] = sa;
      if (db >= 0 && b_batch.dim(db) != 1) bs[d] = sb;
      if (da >= 0) sa *= a_batch.dim(da);
      if (db >= 0) sb *= b_batch.dim(db);
    }
    for (int64_t i = 0; i < count; ++i) {
      int64_t rem = i, x = 0, y = 0;
      for (int d = r - 1; d >= 0; --d) {
        const int64_t idx = rem % batch.dim(d);
        rem /= batch.dim(d);
        x += idx * as[d];
        y += idx * bs[d];
      }
      ai[i] = x;
      bi[i] = y;
    }
  }
  return Dispatch<LinalgTypes>(a_t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ForEachMatrix(ctx, count, n, [&](int64_t i) {
      Mat<T> dense;
      if (st.banded) {
        dense = Mat<T>::Zero(n, n);
        const T* band = a_t.data<T>() + ai[i] * bands * n;
        for (int64_t j = 0; j < bands; ++j)
          for (int64_t r = 0; r < n - j; ++r) {
            if (st.flag_a) {
              dense(r + j, r) = band[j * n + r + j];
            } else {
              dense(r, r + j) = band[(bands - 1 - j) * n + r];
            }
          }
      }
      const ConstMap<T> a(st.banded ? dense.data() : a_t.data<T>() + ai[i] * n * n, n, n);
      MutMap<T> x(out->data<T>() + i * n * k, n, k);
      x = ConstMap<T>(b_t.data<T>() + bi[i] * n * k, n, k);
      if (n == 0 || k == 0) return;
      // A singular triangle gives inf/nan, as TF's (which does not check).
      if (st.flag_a && !st.flag_b) a.template triangularView<Eigen::Lower>().solveInPlace(x);
      if (st.flag_a && st.flag_b)
        a.adjoint().template triangularView<Eigen::Upper>().solveInPlace(x);
      if (!st.flag_a && !st.flag_b) a.template triangularView<Eigen::Upper>().solveInPlace(x);
      if (!st.flag_a && st.flag_b)
        a.adjoint().template triangularView<Eigen::Lower>().solveInPlace(x);
    });
    return OkStatus();
  });
}

// ---- LogMatrixDeterminant, Lu ----------------------------------------------------------------

// sign * exp(log_abs) is the determinant: from the LU's pivots and the permutation's parity.
Status ComputeLogDet(const KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  KILN_RETURN_IF_ERROR(CheckSquare(ctx, in, "input"));
  const int64_t n = in.dim(in.rank() - 1);
  const Shape batch = BatchShape(in.shape(), {});
  KILN_ASSIGN_OR_RETURN(Tensor * sign_t, ctx.AllocateOutput(0, batch));
  KILN_ASSIGN_OR_RETURN(Tensor * log_t, ctx.AllocateOutput(1, batch));
  return Dispatch<LinalgTypes>(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using R = Real<T>;
    ForEachMatrix(ctx, batch.num_elements(), n, [&](int64_t b) {
      T sign(1);
      R log_abs(0);
      if (n > 0) {
        const ConstMap<T> a(in.data<T>() + b * n * n, n, n);
        Eigen::PartialPivLU<Mat<T>> lu{Mat<T>(a)};
        sign = T(lu.permutationP().determinant());
        for (int64_t i = 0; i < n; ++i) {
          const T d = lu.matrixLU()(i, i);
          const R mag = std::abs(d);
          if (mag == R(0)) {
            sign = T(0);
            log_abs = -std::numeric_limits<R>::infinity();
            break;
          }
          sign *= d / mag;
          log_abs += std::log(mag);
        }
      }
      sign_t->data<T>()[b] = sign;
      log_t->data<T>()[b] = T(log_abs);
    });
    return OkStatus();
  });
}

// Packed L (unit diagonal, below) and U; p[i] is the input row that row i of L*U came from.
Status ComputeLu(const KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  KILN_RETURN_IF_ERROR(CheckSquare(ctx, in, "input"));
  const int64_t n = in.dim(in.rank() - 1);
  KILN_ASSIGN_OR_RETURN(Tensor * lu_t, ctx.AllocateOutput(0, in.shape()));
  KILN_ASSIGN_OR_RETURN(Tensor * p_t, ctx.AllocateOutput(1, BatchShape(in.shape(), {n})));
  FirstError err;
  KILN_RETURN_IF_ERROR(Dispatch<LinalgTypes>(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ForEachMatrix(ctx, BatchCount(in.shape()), n, [&](int64_t b) {
      if (n == 0) return;
      const ConstMap<T> a(in.data<T>() + b * n * n, n, n);
      Eigen::PartialPivLU<Mat<T>> lu{Mat<T>(a)};
      if (lu.matrixLU().diagonal().cwiseAbs().minCoeff() == Real<T>(0)) {
        err.Set(ctx.Error("Input is not invertible (matrix ", b, " of the batch)"));
        return;
      }
      MutMap<T>(lu_t->data<T>() + b * n * n, n, n) = lu.matrixLU();
      const Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, int> rows =
          lu.permutationP().inverse();
      const auto& perm = rows.indices();
      for (int64_t i = 0; i < n; ++i) {
        if (p_t->dtype() == DType::kInt32)
          p_t->data<int32_t>()[b * n + i] = perm[i];
        else
          p_t->data<int64_t>()[b * n + i] = perm[i];
      }
    });
    return OkStatus();
  }));
  return err.Take();
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"Cholesky", ComputeCholesky},
    {"CholeskyGrad", ComputeCholeskyGrad},
    {"MatrixInverse", ComputeInverse},
    {"MatrixSolve", ComputeSolve},
    {"MatrixTriangularSolve", ComputeTriangularSolve},
    {"BandedTriangularSolve", ComputeTriangularSolve},
    {"LogMatrixDeterminant", ComputeLogDet},
    {"Lu", ComputeLu},
    {"Qr", ComputeQr},
    {"Svd", ComputeSvd},
    {"SelfAdjointEigV2", ComputeEig},
    {"Eig", ComputeGeneralEig},
    {"MatrixSquareRoot", ComputeMatrixSquareRoot},
    {"MatrixLogarithm", ComputeMatrixLogarithm},
    {"MatrixSolveLs", ComputeSolveLs},
    {"TridiagonalMatMul", ComputeTridiagonalMatMul},
    {"TridiagonalSolve", ComputeTridiagonalSolve},
};

}  // namespace

std::span<const KernelEntry> LinalgCpuKernels() { return kCpu; }

}  // namespace kiln::exec
