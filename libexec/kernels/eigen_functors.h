// The math of the kernels, as functors templated on the Eigen device and the element type
// (TensorFlow's functor split): the CPU kernels instantiate them with Eigen::DefaultDevice,
// and a CUDA build can instantiate the same expressions with Eigen::GpuDevice.
#pragma once

#include <cstdint>
#include <unsupported/Eigen/CXX11/Tensor>

#include "kernels/kernel_util.h"

namespace kiln::exec::functor {

using Index = Eigen::DenseIndex;

template <typename T>
using Flat = Eigen::TensorMap<Eigen::Tensor<T, 1, Eigen::RowMajor, Index>>;
template <typename T>
using ConstFlat = Eigen::TensorMap<Eigen::Tensor<const T, 1, Eigen::RowMajor, Index>>;
template <typename T>
using Matrix = Eigen::TensorMap<Eigen::Tensor<T, 2, Eigen::RowMajor, Index>>;
template <typename T>
using ConstMatrix = Eigen::TensorMap<Eigen::Tensor<const T, 2, Eigen::RowMajor, Index>>;
template <typename T>
using Tensor3 = Eigen::TensorMap<Eigen::Tensor<T, 3, Eigen::RowMajor, Index>>;
template <typename T>
using ConstTensor3 = Eigen::TensorMap<Eigen::Tensor<const T, 3, Eigen::RowMajor, Index>>;

// ---- element functors (usable on host and device) ----------------------------------------

template <typename T>
using AddFn = Eigen::internal::scalar_sum_op<T, T>;
template <typename T>
using SubFn = Eigen::internal::scalar_difference_op<T, T>;
template <typename T>
using MulFn = Eigen::internal::scalar_product_op<T, T>;
template <typename T>
using DivFn = Eigen::internal::scalar_quotient_op<T, T>;
// NaN in either operand gives NaN, as tf.maximum / tf.minimum do.
template <typename T>
using MaxFn = Eigen::internal::scalar_max_op<T, T, Eigen::PropagateNaN>;
template <typename T>
using MinFn = Eigen::internal::scalar_min_op<T, T, Eigen::PropagateNaN>;

// ---- unary ----------------------------------------------------------------------------------

// out = f(in) element-wise, for any Eigen unary functor.
template <typename Device, typename Functor, typename T>
struct UnaryFunctor {
  void operator()(const Device& d, ConstFlat<T> in, Flat<T> out) const {
    out.device(d) = in.unaryExpr(Functor());
  }
};

enum class Activation { kRelu, kRelu6, kElu };

template <typename Device, Activation A, typename T>
struct ActivationFunctor {
  void operator()(const Device& d, ConstFlat<T> in, Flat<T> out) const {
    if constexpr (A == Activation::kRelu) {
      out.device(d) = in.cwiseMax(T(0));
    } else if constexpr (A == Activation::kRelu6) {
      out.device(d) = in.cwiseMax(T(0)).cwiseMin(T(6));
    } else {
      out.device(d) = (in < T(0)).select(in.exp() - in.constant(T(1)), in);
    }
  }
};

// ---- binary ---------------------------------------------------------------------------------

// out = f(a, b) with numpy broadcasting described by `plan`. The CPU version is below; a
// device version specialises this template.
template <typename Device, typename Functor, typename T>
struct BinaryFunctor;

template <typename Functor, typename T>
struct BinaryFunctor<Eigen::DefaultDevice, Functor, T> {
  void operator()(const Eigen::DefaultDevice&, const BroadcastPlan& p, const T* a, const T* b,
                  T* out) const {
    using Vec = Eigen::Array<T, Eigen::Dynamic, 1>;
    using In = Eigen::Map<const Vec>;
    using Out = Eigen::Map<Vec>;
    if (p.num_elements == 0) return;
    if (p.rank == 0) {
      out[0] = Functor()(a[0], b[0]);
      return;
    }
    // Walk the outer dims with a counter; the innermost dim is one vectorised run.
    const int inner = p.rank - 1;
    const Index n = p.dims[inner];
    const bool a_run = p.a_strides[inner] != 0, b_run = p.b_strides[inner] != 0;
    std::array<int64_t, kMaxRank> idx{};
    int64_t ao = 0, bo = 0;
    for (int64_t o = 0; o < p.num_elements; o += n) {
      Out dst(out + o, n);
      if (a_run && b_run) {
        dst = In(a + ao, n).binaryExpr(In(b + bo, n), Functor());
      } else if (a_run) {
        dst = In(a + ao, n).binaryExpr(Vec::Constant(n, b[bo]), Functor());
      } else {
        dst = Vec::Constant(n, a[ao]).binaryExpr(In(b + bo, n), Functor());
      }
      for (int i = inner - 1; i >= 0; --i) {
        ao += p.a_strides[i];
        bo += p.b_strides[i];
        if (++idx[i] < p.dims[i]) break;
        ao -= p.a_strides[i] * p.dims[i];
        bo -= p.b_strides[i] * p.dims[i];
        idx[i] = 0;
      }
    }
  }
};

// Any element type and callable (strings): a plain loop over the same plan.
template <typename T, typename F>
void BroadcastLoop(const BroadcastPlan& p, const T* a, const T* b, T* out, F f) {
  if (p.num_elements == 0) return;
  if (p.rank == 0) {
    out[0] = f(a[0], b[0]);
    return;
  }
  const int inner = p.rank - 1;
  const int64_t n = p.dims[inner], as = p.a_strides[inner], bs = p.b_strides[inner];
  std::array<int64_t, kMaxRank> idx{};
  int64_t ao = 0, bo = 0;
  for (int64_t o = 0; o < p.num_elements; o += n) {
    for (int64_t j = 0; j < n; ++j) out[o + j] = f(a[ao + j * as], b[bo + j * bs]);
    for (int i = inner - 1; i >= 0; --i) {
      ao += p.a_strides[i];
      bo += p.b_strides[i];
      if (++idx[i] < p.dims[i]) break;
      ao -= p.a_strides[i] * p.dims[i];
      bo -= p.b_strides[i] * p.dims[i];
      idx[i] = 0;
    }
  }
}

// ---- MatMul, Cast ---------------------------------------------------------------------------

template <typename Device, typename T>
struct MatMulFunctor {
  void operator()(const Device& d, ConstMatrix<T> a, ConstMatrix<T> b, Matrix<T> out,
                  bool transpose_a, bool transpose_b) const {
    Eigen::array<Eigen::IndexPair<Index>, 1> contract = {
        Eigen::IndexPair<Index>(transpose_a ? 0 : 1, transpose_b ? 1 : 0)};
    out.device(d) = a.contract(b, contract);
  }
};

template <typename Device, typename Src, typename Dst>
struct CastFunctor {
  void operator()(const Device& d, ConstFlat<Src> in, Flat<Dst> out) const {
    if constexpr (std::is_same_v<Dst, bool>) {
      // Any non-zero value is true. (A unary functor: Clang finds Eigen's tensor-vs-constant
      // operator!= ambiguous.)
      out.device(d) = in.unaryExpr([](Src v) { return v != Src(0); });
    } else {
      out.device(d) = in.template cast<Dst>();
    }
  }
};

// ---- nn ----------------------------------------------------------------------------------

// value viewed as [outer, channels, inner]; bias has `channels` elements.
template <typename Device, typename T>
struct BiasAddFunctor {
  void operator()(const Device& d, ConstTensor3<T> value, ConstFlat<T> bias, Tensor3<T> out) const {
    const Index outer = value.dimension(0), c = value.dimension(1), inner = value.dimension(2);
    Eigen::array<Index, 3> bias_shape = {1, c, 1};
    Eigen::array<Index, 3> bcast = {outer, 1, inner};
    out.device(d) = value + bias.reshape(bias_shape).broadcast(bcast);
  }
};

// Softmax over the last dim of logits viewed as [batch, depth], shifted by the row maximum so
// exp never overflows.
template <typename Device, typename T>
struct SoftmaxFunctor {
  void operator()(const Device& d, ConstMatrix<T> logits, Matrix<T> out, bool log) const {
    const Index batch = logits.dimension(0), depth = logits.dimension(1);
    Eigen::array<Index, 1> along_depth = {1};
    Eigen::array<Index, 2> batch_by_one = {batch, 1};
    Eigen::array<Index, 2> one_by_depth = {1, depth};
    out.device(d) =
        logits - logits.maximum(along_depth).eval().reshape(batch_by_one).broadcast(one_by_depth);
    if (log) {
      out.device(d) =
          out -
          out.exp().sum(along_depth).log().eval().reshape(batch_by_one).broadcast(one_by_depth);
    } else {
      out.device(d) = out.exp();
      out.device(d) =
          out / out.sum(along_depth).eval().reshape(batch_by_one).broadcast(one_by_depth);
    }
  }
};

}  // namespace kiln::exec::functor

namespace kiln::exec {

// The one CPU device every CPU kernel runs its functors on.
using EigenCpuDevice = Eigen::DefaultDevice;
inline const EigenCpuDevice& Cpu() {
  static const EigenCpuDevice device;
  return device;
}

}  // namespace kiln::exec
