// Element functors of the math families (math_unary_ops.cc, math_binary_ops.cc), in the style of
// elementwise_functors.h: plain structs over the compute type C. Kept apart from that shared
// header so the op families can grow in parallel. Semantics follow TensorFlow's CPU kernels;
// half and bfloat16 compute in float and round once, as Eigen's half arithmetic does.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>
#include <unsupported/Eigen/SpecialFunctions>

#include "kernels/elementwise_functors.h"

namespace kiln::exec::fn {

// The type a functor does its math in: float for half and bfloat16, else C itself.
template <typename C>
using Wide =
    std::conditional_t<std::is_same_v<C, Eigen::half> || std::is_same_v<C, Eigen::bfloat16>, float,
                       C>;

// The conjugate of a complex value (TF's complex gradients are dy * conj(f'(x))); reals as they
// are.
template <typename W>
KILN_HD W Conj(W x) {
  if constexpr (kIsComplex<W>) {
    return std::conj(x);
  } else {
    return x;
  }
}

// exp(x) - 1 and log(1 + x) without cancellation near 0; complex as Eigen's (TF's) forms.
// Host and device: the CUDA kernels' Expm1/Log1p functors call them.
template <typename W>
KILN_HD W Expm1Of(W v) {
  if constexpr (kIsComplex<W>) {
    using R = typename W::value_type;
    const R x = v.real(), y = v.imag();
    const R half_sin = std::sin(y / R(2));
    return W(std::expm1(x) * std::cos(y) - R(2) * half_sin * half_sin, std::exp(x) * std::sin(y));
  } else {
    return std::expm1(v);
  }
}
template <typename W>
KILN_HD W Log1pOf(W v) {
  if constexpr (kIsComplex<W>) {
    using R = typename W::value_type;
    const R x = v.real(), y = v.imag();
    return W(R(0.5) * std::log1p(x * (R(2) + x) + y * y), std::atan2(y, R(1) + x));
  } else {
    return std::log1p(v);
  }
}

// A float attr (LeakyRelu's alpha) as C: TF's static_cast<T>(alpha), saturated for integers
// (an out-of-range float-to-integer conversion is undefined; NaN becomes 0).
template <typename C>
C AttrAs(float v) {
  if constexpr (kIsInteger<C>) {
    if (std::isnan(v)) return C(0);
    const double t = std::trunc(static_cast<double>(v));
    return static_cast<C>(std::clamp(t, static_cast<double>(std::numeric_limits<C>::lowest()),
                                     static_cast<double>(std::numeric_limits<C>::max())));
  } else {
    return static_cast<C>(v);
  }
}

// x * a where x <= 0 (LeakyRelu and its gradient): integers wrap, as TF's.
template <typename C>
KILN_HD C LeakyScale(C x, C a) {
  if constexpr (kIsInteger<C>) {
    return Mul<C>()(x, a);
  } else {
    return C(x * a);
  }
}

// Defines a floating-point unary functor from an expression of `v` (a Wide<C>).
#define KILN_FLOAT_UNARY_BODY(cost, expr) \
  static constexpr int kCost = cost;      \
  KILN_HD C operator()(C x) const {       \
    [[maybe_unused]] const Wide<C> v(x);  \
    return static_cast<C>(expr);          \
  }
#define KILN_FLOAT_UNARY(Name, cost, expr) \
  template <typename C>                    \
  struct Name {                            \
    KILN_FLOAT_UNARY_BODY(cost, expr)      \
  };
// The same, with float32 arrays through vmath's vector loop `vec` (x, y, n).
#define KILN_FLOAT_UNARY_VECTOR(Name, cost, expr, vec)                           \
  template <typename C>                                                          \
  struct Name {                                                                  \
    static void VectorF32(const float* x, float* y, int64_t n) { vec(x, y, n); } \
    KILN_FLOAT_UNARY_BODY(cost, expr)                                            \
  };

// ---- trigonometric and hyperbolic ------------------------------------------------------------

KILN_FLOAT_UNARY(Sin, 8, std::sin(v))
KILN_FLOAT_UNARY(Cos, 8, std::cos(v))
KILN_FLOAT_UNARY(Tan, 8, std::tan(v))
KILN_FLOAT_UNARY(Asin, 8, std::asin(v))
KILN_FLOAT_UNARY(Acos, 8, std::acos(v))
KILN_FLOAT_UNARY(Atan, 8, std::atan(v))
KILN_FLOAT_UNARY(Sinh, 8, std::sinh(v))
KILN_FLOAT_UNARY(Cosh, 8, std::cosh(v))
KILN_FLOAT_UNARY(Asinh, 8, std::asinh(v))
KILN_FLOAT_UNARY(Acosh, 8, std::acosh(v))
KILN_FLOAT_UNARY(Atanh, 8, std::atanh(v))

// ---- exponentials, special functions --------------------------------------------------------

KILN_FLOAT_UNARY(Expm1, 8, Expm1Of(v))
KILN_FLOAT_UNARY(Log1p, 8, Log1pOf(v))
// float32 arrays take vmath's vectorised forms (GELU's erf/erfc runs on every element of a
// transformer's feed-forward layer); other types and single values the library's.
KILN_FLOAT_UNARY_VECTOR(Erf, 8, std::erf(v), vmath::Erf)
KILN_FLOAT_UNARY_VECTOR(Erfc, 8, std::erfc(v), vmath::Erfc)
// Eigen's (what TF uses): lgamma without the global signgam, digamma NaN at poles.
KILN_FLOAT_UNARY(Lgamma, 16, Eigen::numext::lgamma(v))
KILN_FLOAT_UNARY(Digamma, 16, Eigen::numext::digamma(v))
// The inverse of the standard normal CDF, and of erf: TF's (Eigen's) own forms. Outside the
// domain ([0, 1], [-1, 1]) NaN, as TF's newer Eigen gives (Debian's Eigen 3.4 gives +-inf).
KILN_FLOAT_UNARY(Ndtri, 16,
                 v<Wide<C>(0) || v> Wide<C>(1) ? std::numeric_limits<Wide<C>>::quiet_NaN()
                                               : Eigen::numext::ndtri(v))
KILN_FLOAT_UNARY(Erfinv, 16,
                 v<Wide<C>(-1) || v> Wide<C>(1)
                     ? std::numeric_limits<Wide<C>>::quiet_NaN()
                     : Eigen::numext::ndtri((v + Wide<C>(1)) / Wide<C>(2)) / std::sqrt(Wide<C>(2)))

// ---- Bessel functions (tf.math.special), Eigen's as TF's kernels -----------------------------

KILN_FLOAT_UNARY(BesselI0, 24, Eigen::numext::bessel_i0(v))
KILN_FLOAT_UNARY(BesselI0e, 24, Eigen::numext::bessel_i0e(v))
KILN_FLOAT_UNARY(BesselI1, 24, Eigen::numext::bessel_i1(v))
KILN_FLOAT_UNARY(BesselI1e, 24, Eigen::numext::bessel_i1e(v))
KILN_FLOAT_UNARY(BesselJ0, 24, Eigen::numext::bessel_j0(v))
KILN_FLOAT_UNARY(BesselJ1, 24, Eigen::numext::bessel_j1(v))
KILN_FLOAT_UNARY(BesselK0, 24, Eigen::numext::bessel_k0(v))
KILN_FLOAT_UNARY(BesselK0e, 24, Eigen::numext::bessel_k0e(v))
KILN_FLOAT_UNARY(BesselK1, 24, Eigen::numext::bessel_k1(v))
KILN_FLOAT_UNARY(BesselK1e, 24, Eigen::numext::bessel_k1e(v))
KILN_FLOAT_UNARY(BesselY0, 24, Eigen::numext::bessel_y0(v))
KILN_FLOAT_UNARY(BesselY1, 24, Eigen::numext::bessel_y1(v))

// ---- rounding -------------------------------------------------------------------------------

KILN_FLOAT_UNARY(Floor, 1, std::floor(v))
KILN_FLOAT_UNARY(Ceil, 1, std::ceil(v))
// Half to even (the default rounding mode), as tf.math.rint.
KILN_FLOAT_UNARY(Rint, 1, std::nearbyint(v))

#undef KILN_FLOAT_UNARY
#undef KILN_FLOAT_UNARY_VECTOR
#undef KILN_FLOAT_UNARY_BODY

// Half to even, as tf.round. Integers are already round: they pass through (TF 2.21's integer
// kernel returns 0 for every element, a bug we do not copy).
template <typename C>
struct Round {
  KILN_HD C operator()(C x) const {
    if constexpr (kIsInteger<C>) {
      return x;
    } else {
      return static_cast<C>(std::nearbyint(static_cast<Wide<C>>(x)));
    }
  }
};

// -1, 0 or 1; NaN stays NaN; a complex x / |x| (0 at 0).
template <typename C>
struct Sign {
  KILN_HD C operator()(C x) const {
    if constexpr (kIsComplex<C>) {
      return x == C(0) ? C(0) : x / std::abs(x);
    } else {
      if constexpr (kIsFloating<C>) {
        if (Eigen::numext::isnan(x)) return x;
      }
      return x > C(0) ? C(1) : (x < C(0) ? C(-1) : C(0));
    }
  }
};

// ---- predicates -----------------------------------------------------------------------------

template <typename C>
struct IsNan {
  KILN_HD bool operator()(C x) const { return Eigen::numext::isnan(x); }
};
template <typename C>
struct IsInf {
  KILN_HD bool operator()(C x) const { return Eigen::numext::isinf(x); }
};
template <typename C>
struct IsFinite {
  KILN_HD bool operator()(C x) const { return Eigen::numext::isfinite(x); }
};

// ---- bits -----------------------------------------------------------------------------------

// The number of set bits, as uint8 (tf.math.bitwise.population_count).
template <typename C>
struct PopulationCount {
  KILN_HD uint8_t operator()(C x) const {
    using U = std::make_unsigned_t<C>;
    U u = static_cast<U>(x);
    uint8_t n = 0;
    for (; u != 0; u &= static_cast<U>(u - 1)) ++n;
    return n;
  }
};
template <typename C>
struct Invert {
  KILN_HD C operator()(C x) const { return static_cast<C>(~x); }
};
template <typename C>
struct BitwiseAnd {
  KILN_HD C operator()(C a, C b) const { return static_cast<C>(a & b); }
};
template <typename C>
struct BitwiseOr {
  KILN_HD C operator()(C a, C b) const { return static_cast<C>(a | b); }
};
template <typename C>
struct BitwiseXor {
  KILN_HD C operator()(C a, C b) const { return static_cast<C>(a ^ b); }
};
// Shift amounts are clamped to [0, bits - 1], as TF does; the left shift runs on the unsigned
// type (no overflow UB), the right shift is arithmetic for signed types.
template <typename C>
int ClampShift(C y) {
  constexpr C kMax = static_cast<C>(sizeof(C) * 8 - 1);
  if constexpr (std::is_signed_v<C>) {
    if (y < 0) return 0;
  }
  return static_cast<int>(y > kMax ? kMax : y);
}
template <typename C>
struct LeftShift {
  KILN_HD C operator()(C x, C y) const {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(static_cast<U>(x) << ClampShift(y)));
  }
};
template <typename C>
struct RightShift {
  KILN_HD C operator()(C x, C y) const { return static_cast<C>(x >> ClampShift(y)); }
};

// ---- activations ----------------------------------------------------------------------------

// TF's thresholds: softplus(x) is x above -log(eps) - 2 and exp(x) below log(eps) + 2 (both
// within machine epsilon there); log1p(exp(x)) in between (log(exp(x) + 1) loses exp(x)'s low
// bits to the rounding of the sum: 6% off at x = -13.8).
template <typename C>
struct Softplus {
  static constexpr int kCost = 8;
  KILN_HD C operator()(C x) const {
    using W = Wide<C>;
    const W threshold =
        std::log(static_cast<W>(Eigen::NumTraits<C>::epsilon())) + static_cast<W>(2);
    const W v(x);
    if (v > -threshold) return x;
    if (v < threshold) return static_cast<C>(std::exp(v));
    return static_cast<C>(std::log1p(std::exp(v)));
  }
};
template <typename C>
struct Softsign {
  static constexpr int kCost = 4;
  KILN_HD C operator()(C x) const {
    const Wide<C> v(x);
    return static_cast<C>(v / (std::abs(v) + Wide<C>(1)));
  }
};
// Self-normalising ELU with the constants of Klambauer et al. (TF's).
template <typename C>
struct Selu {
  static constexpr int kCost = 8;
  KILN_HD C operator()(C x) const {
    using W = Wide<C>;
    const W scale = static_cast<W>(1.0507009873554804934193349852946);
    const W scale_alpha = static_cast<W>(1.7580993408473768599402175208123);
    const W v(x);
    return static_cast<C>(v < W(0) ? scale_alpha * (std::exp(v) - W(1)) : scale * v);
  }
};

// ---- binary arithmetic ----------------------------------------------------------------------

template <typename C>
struct Atan2 {
  static constexpr int kCost = 8;
  KILN_HD C operator()(C y, C x) const {
    using W = Wide<C>;
    // Subnormal operands as the zeros of their sign, as kiln reads subnormals everywhere
    // (design.md): glibc's atan2 tests for zero by the bits and then divides, which the
    // flush-to-zero mode turns into 0/0, a NaN, for two subnormals.
    auto flushed = [](W v) {
      return std::abs(v) < std::numeric_limits<W>::min() ? std::copysign(W(0), v) : v;
    };
    return static_cast<C>(std::atan2(flushed(static_cast<W>(y)), flushed(static_cast<W>(x))));
  }
};

// Truncating division: integers as Div (checked for zero), floats rounded toward zero.
template <typename C>
struct TruncateDiv {
  static constexpr int kCost = 4;
  static Status Check(const KernelContext& ctx, const C* y, int64_t n) {
    return CheckNoIntegerZero(ctx, y, n);
  }
  KILN_HD C operator()(C a, C b) const {
    if constexpr (kIsInteger<C>) {
      return Div<C>()(a, b);
    } else {
      return static_cast<C>(std::trunc(static_cast<Wide<C>>(a) / static_cast<Wide<C>>(b)));
    }
  }
};

// C's remainder (the sign of the dividend): integers checked for zero, floats fmod. Mod and
// TruncateMod are the same op in TF.
template <typename C>
struct TruncateMod {
  static constexpr int kCost = 4;
  static Status Check(const KernelContext& ctx, const C* y, int64_t n) {
    return CheckNoIntegerZero(ctx, y, n);
  }
  KILN_HD C operator()(C a, C b) const {
    if constexpr (kIsInteger<C>) {
      if constexpr (std::is_signed_v<C>) {
        if (b == C(-1)) return C(0);  // the lowest value % -1 overflows
      }
      return static_cast<C>(a % b);
    } else {
      return static_cast<C>(std::fmod(static_cast<Wide<C>>(a), static_cast<Wide<C>>(b)));
    }
  }
};

// 0 where the divisor is 0, whatever the dividend (NaN and Inf included).
template <typename C>
struct DivNoNan {
  static constexpr int kCost = 4;
  KILN_HD C operator()(C a, C b) const { return b == C(0) ? C(0) : static_cast<C>(a / b); }
};
// 0 where y is 0, whatever x is.
template <typename C>
struct MulNoNan {
  KILN_HD C operator()(C a, C b) const { return b == C(0) ? C(0) : static_cast<C>(a * b); }
};
// 0 where x is 0, whatever y is.
template <typename C>
struct Xdivy {
  static constexpr int kCost = 4;
  KILN_HD C operator()(C x, C y) const { return x == C(0) ? C(0) : static_cast<C>(x / y); }
};
// x * log1p(y), 0 where x is 0 (tf.math.xlog1py).
template <typename C>
struct Xlog1py {
  static constexpr int kCost = 8;
  KILN_HD C operator()(C x, C y) const {
    if (x == C(0)) return C(0);
    return static_cast<C>(static_cast<Wide<C>>(x) * Log1pOf(static_cast<Wide<C>>(y)));
  }
};
// The regularized incomplete gamma functions P(a, x) and Q(a, x), Hurwitz zeta(x, q) and
// polygamma(n, x): Eigen's, which TF's kernels call.
template <typename C>
struct Igamma {
  static constexpr int kCost = 64;
  KILN_HD C operator()(C a, C x) const {
    return static_cast<C>(Eigen::numext::igamma(Wide<C>(a), Wide<C>(x)));
  }
};
template <typename C>
struct Igammac {
  static constexpr int kCost = 64;
  KILN_HD C operator()(C a, C x) const {
    return static_cast<C>(Eigen::numext::igammac(Wide<C>(a), Wide<C>(x)));
  }
};
// Their derivatives in a: d/da P(a, x) (IgammaGradA), and d sample / d alpha of a Gamma(alpha, 1)
// sample at fixed CDF (RandomGammaGrad, the implicit reparameterization gradient): Eigen's.
template <typename C>
struct IgammaGradA {
  static constexpr int kCost = 256;
  KILN_HD C operator()(C a, C x) const {
    return static_cast<C>(Eigen::numext::igamma_der_a(Wide<C>(a), Wide<C>(x)));
  }
};
template <typename C>
struct RandomGammaGrad {
  static constexpr int kCost = 256;
  KILN_HD C operator()(C alpha, C sample) const {
    return static_cast<C>(Eigen::numext::gamma_sample_der_alpha(Wide<C>(alpha), Wide<C>(sample)));
  }
};
template <typename C>
struct Zeta {
  static constexpr int kCost = 64;
  KILN_HD C operator()(C x, C q) const {
    using W = Wide<C>;
    const W wx(x), wq(q);
    // x or q = +Inf: the limits TF's (newer) Eigen gives; Debian's gives NaN.
    const W inf = std::numeric_limits<W>::infinity();
    if (wx == inf && wq > W(0)) return static_cast<C>(wq < W(1) ? wx : (wq == W(1) ? W(1) : W(0)));
    if (wq == inf && wx > W(1)) return C(0);  // every term is 0
    // The first term q^-x, the largest, underflows: so does every term, and the sum is 0 (as
    // TF's Eigen returns; the bundled one goes on to its tail, where x's huge powers make
    // inf * 0 = NaN).
    if (wx > W(1) && wq > W(0) && std::pow(wq, -wx) == W(0)) return C(0);
    return static_cast<C>(Eigen::numext::zeta(wx, wq));
  }
};
// polygamma(n, x) as Eigen writes it, (-1)^(n+1) n! zeta(n + 1, x), over the Zeta above (so
// x = +Inf gives TF's signed 0).
template <typename C>
struct Polygamma {
  static constexpr int kCost = 64;
  KILN_HD C operator()(C n, C x) const {
    using W = Wide<C>;
    const W wn(n), wx(x);
    if (!(std::floor(wn) == wn) || wn < W(0))
      return static_cast<C>(std::numeric_limits<W>::quiet_NaN());
    if (wn == W(0)) return static_cast<C>(Eigen::numext::digamma(wx));
    const W np1 = wn + W(1);
    return static_cast<C>(std::pow(W(-1), np1) * std::exp(std::lgamma(np1)) * Zeta<W>()(np1, wx));
  }
};
// The next representable value after x towards y (std::nextafter; TF has float and double).
template <typename C>
struct NextAfter {
  KILN_HD C operator()(C x, C y) const { return std::nextafter(x, y); }
};
template <typename C>
struct Xlogy {
  static constexpr int kCost = 8;
  KILN_HD C operator()(C x, C y) const {
    if (x == C(0)) return C(0);
    return static_cast<C>(static_cast<Wide<C>>(x) * std::log(static_cast<Wide<C>>(y)));
  }
};

// ClipByValue's element: min(v, hi), then max with lo, as TF computes it (lo wins when lo > hi).
template <typename C>
struct Clip {
  KILN_HD C operator()(C v, C lo, C hi) const {
    const C m = hi < v ? hi : v;
    return m < lo ? lo : m;
  }
};

template <typename C>
struct SquaredDifference {
  KILN_HD C operator()(C a, C b) const {
    if constexpr (kIsInteger<C>) {
      const C d = Sub<C>()(a, b);
      return Mul<C>()(d, d);  // wraps, as TF
    } else {
      const Wide<C> d = Wide<C>(a) - Wide<C>(b);
      return static_cast<C>(d * Conj(d));
    }
  }
};

// ---- gradients of activations ---------------------------------------------------------------

// (gradients, features) -> backprops.
template <typename C>
struct ReluGrad {
  KILN_HD C operator()(C g, C f) const { return f > C(0) ? g : C(0); }
};
template <typename C>
struct Relu6Grad {
  KILN_HD C operator()(C g, C f) const { return (f > C(0) && f < C(6)) ? g : C(0); }
};
// (gradients, outputs) of Elu and Selu; (gradients, features) of Softplus and Softsign.
template <typename C>
struct EluGrad {
  KILN_HD C operator()(C g, C y) const {
    using W = Wide<C>;
    return y < C(0) ? static_cast<C>(W(g) * (W(y) + W(1))) : g;
  }
};
template <typename C>
struct SeluGrad {
  KILN_HD C operator()(C g, C y) const {
    using W = Wide<C>;
    const W scale = W(1.0507009873554804934193349852946);
    const W scale_alpha = W(1.7580993408473768599402175208123);
    return static_cast<C>(y < C(0) ? W(g) * (W(y) + scale_alpha) : W(g) * scale);
  }
};
template <typename C>
struct SoftplusGrad {
  KILN_HD C operator()(C g, C f) const {
    using W = Wide<C>;
    return static_cast<C>(W(g) / (W(1) + std::exp(-W(f))));
  }
};
template <typename C>
struct SoftsignGrad {
  KILN_HD C operator()(C g, C f) const {
    using W = Wide<C>;
    const W d = W(1) + std::abs(W(f));
    return static_cast<C>(W(g) / (d * d));
  }
};
// (y, dy) -> dy * y * (1 - y), dy * (1 - y^2).
template <typename C>
struct SigmoidGrad {
  KILN_HD C operator()(C y, C dy) const {
    using W = Wide<C>;
    return static_cast<C>(W(dy) * Conj(W(y) * (W(1) - W(y))));
  }
};
// The gradients of 1/x, sqrt and rsqrt from their output y: -dy y^2, dy / (2y), -dy y^3 / 2;
// 0 where dy is 0 whatever y is (TF's, so an Inf or 0 output does not make 0 x Inf = NaN).
template <typename C>
struct ReciprocalGrad {
  KILN_HD C operator()(C y, C dy) const {
    using W = Wide<C>;
    if (W(dy) == W(0)) return C(0);
    return static_cast<C>(-Conj(W(y) * W(y)) * W(dy));
  }
};
template <typename C>
struct SqrtGrad {
  KILN_HD C operator()(C y, C dy) const {
    using W = Wide<C>;
    if (W(dy) == W(0)) return C(0);
    return static_cast<C>(W(0.5) * W(dy) / Conj(W(y)));
  }
};
template <typename C>
struct RsqrtGrad {
  KILN_HD C operator()(C y, C dy) const {
    using W = Wide<C>;
    if (W(dy) == W(0)) return C(0);
    return static_cast<C>(W(-0.5) * W(dy) * Conj(W(y) * (W(y) * W(y))));
  }
};
template <typename C>
struct TanhGrad {
  KILN_HD C operator()(C y, C dy) const {
    using W = Wide<C>;
    return static_cast<C>(W(dy) * Conj(W(1) - W(y) * W(y)));
  }
};

}  // namespace kiln::exec::fn
