// Dense linear algebra on batches of matrices, with Eigen's decompositions as TensorFlow's CPU
// kernels use them (so results agree to rounding): Cholesky, MatrixInverse, MatrixSolve,
// MatrixTriangularSolve (batch dims broadcast), LogMatrixDeterminant, Lu, Qr, Svd,
// SelfAdjointEigV2, MatrixSquareRoot and MatrixLogarithm (Eigen's MatrixFunctions, as TF),
// MatrixSolveLs (TF's normal equations, or a complete orthogonal decomposition), and the
// tridiagonal TridiagonalMatMul and TridiagonalSolve (Gaussian elimination with partial
// pivoting). float32, float64, complex64, complex128; half-precision graphs run them in
// float32 (executor/half_precision.h). Singular or non-positive-definite inputs are TF's
// errors, naming the node.
#include <Eigen/Dense>
#include <algorithm>
#include <complex>
#include <limits>
#include <mutex>
#include <string>
#include <unsupported/Eigen/MatrixFunctions>
#include <vector>

#include "kernels/array_util.h"
#include "kernels/kernel_util.h"
#include "kernels/op_families.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using LinalgTypes = TypeList<float, double, std::complex<float>, std::complex<double>>;

template <typename T>
using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using ConstMap = Eigen::Map<const Mat<T>>;
template <typename T>
using MutMap = Eigen::Map<Mat<T>>;
template <typename T>
using Real = typename Eigen::NumTraits<T>::Real;

// ---- shapes ----------------------------------------------------------------------------------

struct LinalgState : OpState {
  DType dtype = DType::kFloat;
  bool flag_a = false;  // adjoint / lower / full_matrices / compute_v / compute_uv
  bool flag_b = false;  // MatrixTriangularSolve: adjoint; Svd: full_matrices
};

// input `i` holds matrices: rank >= 2, square when `square`.
Status ExpectMatrices(const PrepareContext& ctx, int i, std::string_view name, bool square) {
  const PartialShape& s = ctx.inputs[i].shape;
  if (s.unknown_rank()) return OkStatus();
  if (s.rank() < 2)
    return ctx.Error("input '", name, "' must have rank >= 2, got shape ", s.ToPythonString());
  const int64_t r = s.dim(s.rank() - 2), c = s.dim(s.rank() - 1);
  if (square && r >= 0 && c >= 0 && r != c)
    return ctx.Error("input '", name, "' must hold square matrices, got shape ",
                     s.ToPythonString());
  return OkStatus();
}

Status CheckSquare(const KernelContext& ctx, const Tensor& t, std::string_view name) {
  if (t.rank() < 2 || t.dim(t.rank() - 1) != t.dim(t.rank() - 2))
    return ctx.Error("input '", name, "' must hold square matrices, got shape ",
                     t.shape().ToString());
  return OkStatus();
}

// The batch dims of `s` (all but the last two), followed by `tail`.
PartialShape BatchOf(const PartialShape& s, const std::vector<int64_t>& tail) {
  if (s.unknown_rank()) return PartialShape::UnknownRank();
  std::vector<int64_t> dims(s.dims().begin(), s.dims().end() - 2);
  dims.insert(dims.end(), tail.begin(), tail.end());
  auto r = PartialShape::FromDims(dims);
  return r.ok() ? *r : PartialShape::UnknownRank();
}
Shape BatchShape(const Shape& s, const std::vector<int64_t>& tail) {
  Shape out;
  for (int i = 0; i < s.rank() - 2; ++i) out.AddDim(s.dim(i));
  for (int64_t d : tail) out.AddDim(d);
  return out;
}
int64_t BatchCount(const Shape& s) {
  int64_t b = 1;
  for (int i = 0; i < s.rank() - 2; ++i) b *= s.dim(i);
  return b;
}

Result<std::shared_ptr<LinalgState>> ReadType(PrepareContext& ctx, int inputs) {
  auto st = std::make_shared<LinalgState>();
  KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->dtype, LinalgTypes::kDTypes));
  for (int i = 0; i < inputs; ++i)
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, i == 0 ? "input" : "rhs", st->dtype));
  return st;
}

// Runs fn(b) for each matrix of the batch on the pool; cost ~ n^3 per matrix.
template <typename F>
void ForEachMatrix(const KernelContext& ctx, int64_t batch, int64_t n, F&& fn) {
  const int64_t cost = std::max<int64_t>(1, n * n * n);
  ctx.threads().ParallelFor(batch, std::max<int64_t>(1, 32768 / cost), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) fn(i);
  });
}

// Collects the first failure of a parallel loop.
class FirstError {
 public:
  void Set(Status s) {
    std::lock_guard<std::mutex> lock(mu_);
    if (status_.ok()) status_ = std::move(s);
  }
  Status Take() { return std::move(status_); }

 private:
  std::mutex mu_;
  Status status_;
};

// ---- Cholesky --------------------------------------------------------------------------------

Status PrepareCholesky(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, auto st, ReadType(ctx, 1));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 0, "input", true));
  ctx.outputs = {TensorSpec{st->dtype, ctx.inputs[0].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

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

Status PrepareInverse(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, auto st, ReadType(ctx, 1));
  KILN_PREPARE_ASSIGN(ctx, st->flag_a, ctx.attrs.GetBool("adjoint", false));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 0, "input", true));
  ctx.outputs = {TensorSpec{st->dtype, ctx.inputs[0].shape}};
  ctx.state = std::move(st);
  return OkStatus();
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

Status PrepareSolve(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, auto st, ReadType(ctx, 2));
  KILN_PREPARE_ASSIGN(ctx, st->flag_a, ctx.attrs.GetBool("adjoint", false));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 0, "matrix", true));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 1, "rhs", false));
  ctx.outputs = {TensorSpec{st->dtype, ctx.inputs[1].shape}};
  ctx.state = std::move(st);
  return OkStatus();
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

// ---- MatrixTriangularSolve (batch dims broadcast, as TF 2) -----------------------------------

Status PrepareTriangularSolve(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  KILN_PREPARE_ASSIGN(ctx, auto st, ReadType(ctx, 2));
  KILN_PREPARE_ASSIGN(ctx, st->flag_a, ctx.attrs.GetBool("lower", true));
  KILN_PREPARE_ASSIGN(ctx, st->flag_b, ctx.attrs.GetBool("adjoint", false));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 0, "matrix", true));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 1, "rhs", false));
  const PartialShape &a = ctx.inputs[0].shape, &b = ctx.inputs[1].shape;
  PartialShape out = PartialShape::UnknownRank();
  if (!a.unknown_rank() && !b.unknown_rank()) {
    KILN_PREPARE_ASSIGN(ctx, PartialShape batch,
                        BroadcastPartialShapes(BatchOf(a, {}), BatchOf(b, {})));
    std::vector<int64_t> dims(batch.dims().begin(), batch.dims().end());
    dims.push_back(b.dim(b.rank() - 2));
    dims.push_back(b.dim(b.rank() - 1));
    KILN_PREPARE_ASSIGN(ctx, out, PartialShape::FromDims(dims));
  }
  ctx.outputs = {TensorSpec{st->dtype, out}};
  ctx.state = std::move(st);
  return OkStatus();
}

Status ComputeTriangularSolve(const KernelContext& ctx) {
  const Tensor& a_t = ctx.input(0);
  const Tensor& b_t = ctx.input(1);
  KILN_RETURN_IF_ERROR(CheckSquare(ctx, a_t, "matrix"));
  if (b_t.rank() < 2) return ctx.Error("input 'rhs' must have rank >= 2");
  const int64_t n = a_t.dim(a_t.rank() - 1), k = b_t.dim(b_t.rank() - 1);
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
  const auto& st = ctx.state<LinalgState>();
  return Dispatch<LinalgTypes>(a_t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ForEachMatrix(ctx, count, n, [&](int64_t i) {
      const ConstMap<T> a(a_t.data<T>() + ai[i] * n * n, n, n);
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

Status PrepareLogDet(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, auto st, ReadType(ctx, 1));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 0, "input", true));
  const PartialShape batch = BatchOf(ctx.inputs[0].shape, {});
  ctx.outputs = {TensorSpec{st->dtype, batch}, TensorSpec{st->dtype, batch}};
  ctx.state = std::move(st);
  return OkStatus();
}

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

Status PrepareLu(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, auto st, ReadType(ctx, 1));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 0, "input", true));
  KILN_PREPARE_ASSIGN(ctx, DType idx, ctx.attrs.GetType("output_idx_type", DType::kInt32));
  KILN_RETURN_IF_ERROR(
      ExpectAttrDTypeIn(ctx, "output_idx_type", idx, {DType::kInt32, DType::kInt64}));
  const PartialShape& s = ctx.inputs[0].shape;
  ctx.outputs = {TensorSpec{st->dtype, s},
                 TensorSpec{idx, s.unknown_rank() ? s : BatchOf(s, {s.dim(s.rank() - 1)})}};
  ctx.state = std::move(st);
  return OkStatus();
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

// ---- Qr, Svd, SelfAdjointEigV2 ---------------------------------------------------------------

Status PrepareQr(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, auto st, ReadType(ctx, 1));
  KILN_PREPARE_ASSIGN(ctx, st->flag_a, ctx.attrs.GetBool("full_matrices", false));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 0, "input", false));
  const PartialShape& s = ctx.inputs[0].shape;
  if (s.unknown_rank()) {
    ctx.outputs = {TensorSpec{st->dtype, s}, TensorSpec{st->dtype, s}};
  } else {
    const int64_t m = s.dim(s.rank() - 2), n = s.dim(s.rank() - 1);
    const int64_t p = m < 0 || n < 0 ? -1 : std::min(m, n);
    const int64_t qc = st->flag_a ? m : p, rr = st->flag_a ? m : p;
    ctx.outputs = {TensorSpec{st->dtype, BatchOf(s, {m, qc})},
                   TensorSpec{st->dtype, BatchOf(s, {rr, n})}};
  }
  ctx.state = std::move(st);
  return OkStatus();
}

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

Status PrepareSvd(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, auto st, ReadType(ctx, 1));
  KILN_PREPARE_ASSIGN(ctx, st->flag_a, ctx.attrs.GetBool("compute_uv", true));
  KILN_PREPARE_ASSIGN(ctx, st->flag_b, ctx.attrs.GetBool("full_matrices", false));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 0, "input", false));
  const PartialShape& s = ctx.inputs[0].shape;
  const int64_t m = s.unknown_rank() ? -1 : s.dim(s.rank() - 2);
  const int64_t n = s.unknown_rank() ? -1 : s.dim(s.rank() - 1);
  const int64_t p = m < 0 || n < 0 ? -1 : std::min(m, n);
  const bool uv = st->flag_a, full = st->flag_b;
  ctx.outputs = {TensorSpec{st->dtype, BatchOf(s, {p})},
                 TensorSpec{st->dtype, uv ? BatchOf(s, {m, full ? m : p}) : PartialShape{0}},
                 TensorSpec{st->dtype, uv ? BatchOf(s, {n, full ? n : p}) : PartialShape{0}}};
  if (s.unknown_rank()) ctx.outputs[0].shape = ctx.outputs[1].shape = ctx.outputs[2].shape = s;
  ctx.state = std::move(st);
  return OkStatus();
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
      Eigen::BDCSVD<Mat<T>> svd(Mat<T>(a), options);
      for (int64_t i = 0; i < p; ++i) s[i] = T(svd.singularValues()(i));
      if (uv) {
        MutMap<T>(u_t->data<T>() + b * m * uc, m, uc) = svd.matrixU();
        MutMap<T>(v_t->data<T>() + b * n * vc, n, vc) = svd.matrixV();
      }
    });
    return OkStatus();
  });
}

Status PrepareEig(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, auto st, ReadType(ctx, 1));
  KILN_PREPARE_ASSIGN(ctx, st->flag_a, ctx.attrs.GetBool("compute_v", true));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 0, "input", true));
  const PartialShape& s = ctx.inputs[0].shape;
  const int64_t n = s.unknown_rank() ? -1 : s.dim(s.rank() - 1);
  ctx.outputs = {TensorSpec{st->dtype, s.unknown_rank() ? s : BatchOf(s, {n})},
                 TensorSpec{st->dtype, st->flag_a ? s : PartialShape{0}}};
  ctx.state = std::move(st);
  return OkStatus();
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

// ---- MatrixSquareRoot, MatrixLogarithm ----------------------------------------------------------

using ComplexTypes = TypeList<std::complex<float>, std::complex<double>>;

template <bool kLog>
Status PrepareMatrixFunction(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, auto st, ReadType(ctx, 1));
  if (kLog) {  // TF registers the logarithm for complex types only
    KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->dtype, ComplexTypes::kDTypes));
  }
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 0, "input", true));
  ctx.outputs = {TensorSpec{st->dtype, ctx.inputs[0].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

// The principal square root (real Schur for real matrices: NaN where it has no real root, as
// TF's) or the principal logarithm of each matrix.
template <bool kLog>
Status ComputeMatrixFunction(const KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  KILN_RETURN_IF_ERROR(CheckSquare(ctx, in, "input"));
  const int64_t n = in.dim(in.rank() - 1);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, in.shape()));
  return Dispatch<LinalgTypes>(in.dtype(), [&](auto tag) {
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

Status PrepareSolveLs(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(3));
  KILN_PREPARE_ASSIGN(ctx, auto st, ReadType(ctx, 2));
  KILN_PREPARE_ASSIGN(ctx, st->flag_a, ctx.attrs.GetBool("fast", true));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 2, "l2_regularizer", DType::kDouble));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 2, "l2_regularizer", 0));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 0, "matrix", false));
  KILN_RETURN_IF_ERROR(ExpectMatrices(ctx, 1, "rhs", false));
  const PartialShape& a = ctx.inputs[0].shape;
  const PartialShape& r = ctx.inputs[1].shape;
  ctx.outputs = {TensorSpec{st->dtype, BatchOf(a, {a.unknown_rank() ? -1 : a.dim(a.rank() - 1),
                                                   r.unknown_rank() ? -1 : r.dim(r.rank() - 1)})}};
  ctx.state = std::move(st);
  return OkStatus();
}

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

Status PrepareTridiagonalMatMul(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(4));
  auto st = std::make_shared<LinalgState>();
  KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->dtype, LinalgTypes::kDTypes));
  static constexpr const char* kNames[] = {"superdiag", "maindiag", "subdiag", "rhs"};
  for (int i = 0; i < 4; ++i) KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, i, kNames[i], st->dtype));
  ctx.outputs = {TensorSpec{st->dtype, ctx.inputs[3].shape}};
  ctx.state = std::move(st);
  return OkStatus();
}

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

Status PrepareTridiagonalSolve(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(2));
  auto st = std::make_shared<LinalgState>();
  KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("T"));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", st->dtype, LinalgTypes::kDTypes));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "diagonals", st->dtype));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "rhs", st->dtype));
  KILN_PREPARE_ASSIGN(ctx, st->flag_a, ctx.attrs.GetBool("partial_pivoting", true));
  KILN_PREPARE_ASSIGN(ctx, st->flag_b, ctx.attrs.GetBool("perturb_singular", false));
  if (st->flag_b) {
    return PrepareUnimplemented(ctx, "attr 'perturb_singular' = true is not supported");
  }
  ctx.outputs = {TensorSpec{st->dtype, ctx.inputs[1].shape}};
  ctx.state = std::move(st);
  return OkStatus();
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

// ---- tables ----------------------------------------------------------------------------------

constexpr OpDefinition kDefs[] = {
    {"Cholesky", "output", kOpFreshOutputs, PrepareCholesky},
    {"MatrixInverse", "output", kOpFreshOutputs, PrepareInverse},
    {"MatrixSolve", "output", kOpFreshOutputs, PrepareSolve},
    {"MatrixTriangularSolve", "output", kOpFreshOutputs, PrepareTriangularSolve},
    {"LogMatrixDeterminant", "sign,log_abs_determinant", kOpFreshOutputs, PrepareLogDet},
    {"Lu", "lu,p", kOpFreshOutputs, PrepareLu},
    {"Qr", "q,r", kOpFreshOutputs, PrepareQr},
    {"Svd", "s,u,v", kOpFreshOutputs, PrepareSvd},
    {"SelfAdjointEigV2", "e,v", kOpFreshOutputs, PrepareEig},
    {"MatrixSquareRoot", "output", kOpFreshOutputs, PrepareMatrixFunction<false>},
    {"MatrixLogarithm", "output", kOpFreshOutputs, PrepareMatrixFunction<true>},
    {"MatrixSolveLs", "output", kOpFreshOutputs, PrepareSolveLs},
    {"TridiagonalMatMul", "output", kOpFreshOutputs, PrepareTridiagonalMatMul},
    {"TridiagonalSolve", "output", kOpFreshOutputs, PrepareTridiagonalSolve},
};

constexpr KernelEntry kCpu[] = {
    {"Cholesky", ComputeCholesky},
    {"MatrixInverse", ComputeInverse},
    {"MatrixSolve", ComputeSolve},
    {"MatrixTriangularSolve", ComputeTriangularSolve},
    {"LogMatrixDeterminant", ComputeLogDet},
    {"Lu", ComputeLu},
    {"Qr", ComputeQr},
    {"Svd", ComputeSvd},
    {"SelfAdjointEigV2", ComputeEig},
    {"MatrixSquareRoot", ComputeMatrixFunction<false>},
    {"MatrixLogarithm", ComputeMatrixFunction<true>},
    {"MatrixSolveLs", ComputeSolveLs},
    {"TridiagonalMatMul", ComputeTridiagonalMatMul},
    {"TridiagonalSolve", ComputeTridiagonalSolve},
};

}  // namespace

std::span<const OpDefinition> LinalgOpDefs() { return kDefs; }
std::span<const KernelEntry> LinalgCpuKernels() { return kCpu; }

}  // namespace kiln::exec
