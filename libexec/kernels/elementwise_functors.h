// Element functors of the element-wise ops (see elementwise.h): plain structs over the compute
// type C, usable on the host and, marked for it, on a device. Semantics follow TensorFlow's
// CPU kernels (NaN propagation in Maximum/Minimum, Python-style floor division, ...).
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "kernels/cpu/vector_math.h"
#include "kernels/host_device.h"
#include "kernels/type_lists.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::fn {

// The unsigned type integer arithmetic wraps in: at least unsigned int, so a narrow type does not
// promote to a signed int that overflows (uint16 65535 * 65535).
template <typename C>
using WrapType = std::make_unsigned_t<std::common_type_t<C, unsigned int>>;

// ---- binary arithmetic ----------------------------------------------------------------------

template <typename C>
struct Add {
  static constexpr vmath::BinOp kVecOp = vmath::BinOp::kAdd;
  KILN_HD C operator()(const C& a, const C& b) const {
    if constexpr (std::is_same_v<C, bool>) {
      return a || b;
    } else if constexpr (std::is_integral_v<C>) {
      using U = std::make_unsigned_t<C>;  // wraps like TF, no UB on overflow
      return static_cast<C>(static_cast<U>(a) + static_cast<U>(b));
    } else {
      return a + b;  // strings concatenate
    }
  }
};
template <typename C>
struct Sub {
  static constexpr vmath::BinOp kVecOp = vmath::BinOp::kSub;
  KILN_HD C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      using U = std::make_unsigned_t<C>;
      return static_cast<C>(static_cast<U>(a) - static_cast<U>(b));
    } else {
      return a - b;
    }
  }
};
template <typename C>
struct Mul {
  static constexpr vmath::BinOp kVecOp = vmath::BinOp::kMul;
  KILN_HD C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      using U = WrapType<C>;
      using N = std::make_unsigned_t<C>;  // zero-extended: the low bits are what count
      return static_cast<C>(static_cast<U>(static_cast<N>(a)) * static_cast<U>(static_cast<N>(b)));
    } else {
      return a * b;
    }
  }
};

// Integer division checks for zero first (TF fails the op, it never traps).
template <typename C>
Status CheckNoIntegerZero(const KernelContext& ctx, const C* y, int64_t n) {
  if constexpr (std::is_integral_v<C>) {
    for (int64_t i = 0; i < n; ++i)
      if (y[i] == 0) return ctx.Error("integer division by zero");
  }
  return OkStatus();
}

// Division; integers truncate (and the lowest value divided by -1 wraps, as TF's does).
template <typename C>
struct Div {
  static constexpr vmath::BinOp kVecOp = vmath::BinOp::kDiv;
  static constexpr int kCost = 4;
  static Status Check(const KernelContext& ctx, const C* y, int64_t n) {
    return CheckNoIntegerZero(ctx, y, n);
  }
  KILN_HD C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C> && std::is_signed_v<C>) {
      if (b == C(-1)) return Sub<C>()(C(0), a);
      return a / b;
    } else {
      return a / b;
    }
  }
};

// NaN in either operand gives NaN, as tf.maximum / tf.minimum do.
template <typename C>
struct Maximum {
  static constexpr vmath::BinOp kVecOp = vmath::BinOp::kMax;
  KILN_HD C operator()(C a, C b) const {
    if constexpr (kIsFloating<C>) {
      if (Eigen::numext::isnan(a)) return a;
      if (Eigen::numext::isnan(b)) return b;
    }
    return a < b ? b : a;
  }
};
template <typename C>
struct Minimum {
  static constexpr vmath::BinOp kVecOp = vmath::BinOp::kMin;
  KILN_HD C operator()(C a, C b) const {
    if constexpr (kIsFloating<C>) {
      if (Eigen::numext::isnan(a)) return a;
      if (Eigen::numext::isnan(b)) return b;
    }
    return b < a ? b : a;
  }
};

// Python's %: the result takes the sign of the divisor.
template <typename C>
struct FloorMod {
  static constexpr int kCost = 4;
  static Status Check(const KernelContext& ctx, const C* y, int64_t n) {
    return CheckNoIntegerZero(ctx, y, n);
  }
  KILN_HD C operator()(C x, C y) const {
    if constexpr (std::is_integral_v<C>) {
      if constexpr (std::is_signed_v<C>) {
        if (y == C(-1)) return C(0);  // x % -1 overflows for the lowest x
        C r = x % y;
        return (r != 0 && ((r < 0) != (y < 0))) ? C(r + y) : r;
      } else {
        return x % y;
      }
    } else {
      using F = std::conditional_t<std::is_same_v<C, double>, double, float>;
      F r = std::fmod(static_cast<F>(x), static_cast<F>(y));
      if (r != F(0) && ((r < F(0)) != (static_cast<F>(y) < F(0)))) r += static_cast<F>(y);
      return C(r);
    }
  }
};

// Python's //: rounds towards negative infinity.
template <typename C>
struct FloorDiv {
  static constexpr int kCost = 4;
  static Status Check(const KernelContext& ctx, const C* y, int64_t n) {
    return CheckNoIntegerZero(ctx, y, n);
  }
  KILN_HD C operator()(C x, C y) const {
    if constexpr (std::is_integral_v<C>) {
      if constexpr (std::is_signed_v<C>) {
        if (y == C(-1)) return Sub<C>()(C(0), x);  // wraps like TF
        C q = x / y;
        return (x % y != 0 && ((x < 0) != (y < 0))) ? C(q - 1) : q;
      } else {
        return x / y;
      }
    } else {
      using F = std::conditional_t<std::is_same_v<C, double>, double, float>;
      return C(std::floor(static_cast<F>(x) / static_cast<F>(y)));
    }
  }
};

// Integer powers by squaring (negative exponents are rejected first, as TF does).
template <typename C>
struct Pow {
  static constexpr int kCost = 8;
  static Status Check(const KernelContext& ctx, const C* y, int64_t n) {
    if constexpr (std::is_integral_v<C> && std::is_signed_v<C>) {
      for (int64_t i = 0; i < n; ++i)
        if (y[i] < 0) return ctx.Error("integers to negative integer powers are not allowed");
    }
    return OkStatus();
  }
  KILN_HD C operator()(C x, C y) const {
    if constexpr (std::is_integral_v<C>) {
      using U = WrapType<C>;
      // Unsigned: overflow wraps, no UB (x zero-extended: the low bits are what count).
      U result = 1, base = static_cast<U>(static_cast<std::make_unsigned_t<C>>(x));
      for (C e = y; e > 0; e >>= 1) {
        if (e & 1) result *= base;
        base *= base;
      }
      return static_cast<C>(result);
    } else {
      return Eigen::numext::pow(x, y);
    }
  }
};

// ---- comparisons and logic ------------------------------------------------------------------

template <typename C>
struct Less {
  KILN_HD bool operator()(const C& a, const C& b) const { return a < b; }
};
template <typename C>
struct LessEqual {
  KILN_HD bool operator()(const C& a, const C& b) const { return a <= b; }
};
template <typename C>
struct Greater {
  KILN_HD bool operator()(const C& a, const C& b) const { return a > b; }
};
template <typename C>
struct GreaterEqual {
  KILN_HD bool operator()(const C& a, const C& b) const { return a >= b; }
};
template <typename C>
struct Equal {
  KILN_HD bool operator()(const C& a, const C& b) const { return a == b; }
};
template <typename C>
struct NotEqual {
  KILN_HD bool operator()(const C& a, const C& b) const { return a != b; }
};
template <typename C>
struct LogicalAnd {
  KILN_HD bool operator()(bool a, bool b) const { return a && b; }
};
template <typename C>
struct LogicalOr {
  KILN_HD bool operator()(bool a, bool b) const { return a || b; }
};
template <typename C>
struct LogicalNot {
  KILN_HD bool operator()(bool a) const { return !a; }
};

// ---- unary math -----------------------------------------------------------------------------

template <typename C>
struct Neg {
  // -x, not 0 - x: TF's Neg of 0.0 is -0.0 (integers wrap, as Sub's).
  KILN_HD C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) {
      return Sub<C>()(C(0), x);
    } else {
      return -x;
    }
  }
};
template <typename C>
struct Abs {
  KILN_HD C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>) {
      return x;
    } else if constexpr (std::is_integral_v<C>) {
      return x < C(0) ? Neg<C>()(x) : x;
    } else {
      return Eigen::numext::abs(x);  // clears the sign of -0.0, as TF's
    }
  }
};
template <typename C>
struct Square {
  KILN_HD C operator()(C x) const { return Mul<C>()(x, x); }
};
template <typename C>
struct Sqrt {
  static constexpr int kCost = 4;
  KILN_HD C operator()(C x) const { return Eigen::numext::sqrt(x); }
};
template <typename C>
struct Rsqrt {
  static constexpr int kCost = 4;
  KILN_HD C operator()(C x) const { return C(1) / Eigen::numext::sqrt(x); }
};
template <typename C>
struct Exp {
  static void VectorF32(const float* x, float* y, int64_t n) { vmath::Exp(x, y, n); }
  static constexpr int kCost = 8;
  KILN_HD C operator()(C x) const { return Eigen::numext::exp(x); }
};
template <typename C>
struct Log {
  static constexpr int kCost = 8;
  KILN_HD C operator()(C x) const { return Eigen::numext::log(x); }
};
template <typename C>
struct Tanh {
  static void VectorF32(const float* x, float* y, int64_t n) { vmath::Tanh(x, y, n); }
  static constexpr int kCost = 8;
  KILN_HD C operator()(C x) const { return Eigen::numext::tanh(x); }
};
// 1 / (1 + exp(-x)), computed so that neither side overflows.
template <typename C>
struct Sigmoid {
  static void VectorF32(const float* x, float* y, int64_t n) { vmath::Sigmoid(x, y, n); }
  static constexpr int kCost = 8;
  KILN_HD C operator()(C x) const {
    if constexpr (kIsComplex<C>) {
      return C(1) / (C(1) + std::exp(-x));
    } else {
      if (x >= C(0)) return C(1) / (C(1) + Eigen::numext::exp(-x));
      const C e = Eigen::numext::exp(x);
      return e / (C(1) + e);
    }
  }
};
template <typename C>
struct Reciprocal {
  static constexpr int kCost = 4;
  static Status Check(const KernelContext& ctx, const C* x, int64_t n) {
    return CheckNoIntegerZero(ctx, x, n);
  }
  KILN_HD C operator()(C x) const { return Div<C>()(C(1), x); }
};

// ---- activations ----------------------------------------------------------------------------

// NaN stays NaN, as Eigen's cwiseMax (TF's kernel) gives.
template <typename C>
struct Relu {
  static void VectorF32(const float* x, float* y, int64_t n) { vmath::Relu(x, y, n); }
  KILN_HD C operator()(C x) const { return x < C(0) ? C(0) : x; }
};
template <typename C>
struct Relu6 {
  KILN_HD C operator()(C x) const { return x < C(0) ? C(0) : (C(6) < x ? C(6) : x); }
};
// exp(x) - 1 rather than expm1, as TF's kernel computes it.
template <typename C>
struct Elu {
  static constexpr int kCost = 8;
  KILN_HD C operator()(C x) const { return x < C(0) ? C(Eigen::numext::exp(x) - C(1)) : x; }
};

}  // namespace kiln::exec::fn
