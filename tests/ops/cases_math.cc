// Op-tester cases of the element-wise math families (math_unary_ops.cc, math_binary_ops.cc,
// math_arith_ops.cc's Bucketize, complex_ops.cc): references are the C library's double-precision
// functions (or plain expressions) applied element by element, with numpy broadcasting for binary
// ops.
#include <cmath>
#include <complex>
#include <limits>

#include "kernels/tensor_list.h"
#include "ops/op_cases.h"
#include "ops/ref_util.h"

namespace kiln::testing {
namespace {

using Fn1 = std::function<double(double)>;
using Fn2 = std::function<double(double, double)>;

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

Tensor AsDouble(const Tensor& t) {
  return RefUnaryDouble(
      t, [](double v) { return v; }, DType::kDouble);
}
Tensor AsType(const Tensor& d, DType t) {
  return RefUnaryDouble(
      d, [](double v) { return v; }, t);
}

// Relative tolerance of a float dtype's result against a double reference.
double TolFor(DType t) {
  switch (t) {
    case DType::kDouble:
      return 1e-12;
    case DType::kFloat:
      return 2e-6;
    default:
      return 0;  // half / bfloat16: CompareTensors allows one rounding step
  }
}

// Unary cases over a few shapes (one big enough to be split across threads) for `dtypes`.
void AddUnary(std::vector<OpCase>* cases, const std::string& op, const std::vector<DType>& dtypes,
              const Fn1& f, double lo, double hi, double tol_scale = 1) {
  uint32_t seed = 1;
  for (DType t : dtypes) {
    const bool big = t == DType::kFloat;
    for (const Shape& s : big ? std::vector<Shape>{Shape{}, Shape{7}, Shape{3, 4}, Shape{96, 1024}}
                              : std::vector<Shape>{Shape{5}, Shape{2, 9}}) {
      cases->push_back(
          OpCaseBuilder(op)
              .T(t)
              .Input(RandomOf(t, s, seed++, lo, hi))
              .Reference1([f](const std::vector<Tensor>& in) { return RefUnaryDouble(in[0], f); })
              .Tolerance(TolFor(t) * tol_scale)
              .Build());
    }
  }
}

// One case of a unary op from dtype `t` to `out` over values in [-100, 100] (0 up when unsigned).
void AddUnaryTo(std::vector<OpCase>* cases, const std::string& op, DType t, DType out,
                const Fn1& f) {
  const bool u = t == DType::kUInt8 || t == DType::kUInt16 || t == DType::kUInt32;
  cases->push_back(OpCaseBuilder(op, op + " " + DTypeShortName(t))
                       .T(t)
                       .Input(RandomOf(t, Shape{3, 40}, 21, u ? 0 : -100, 100))
                       .Reference1([f, out](const std::vector<Tensor>& in) {
                         return RefUnaryDouble(in[0], f, out);
                       })
                       .Build());
}

// Shapes that broadcast, from equal shapes to one big enough to be split across threads.
const std::vector<std::pair<Shape, Shape>>& Pairs() {
  static const std::vector<std::pair<Shape, Shape>> pairs = {
      {Shape{2, 3}, Shape{2, 3}},    {Shape{2, 3}, Shape{3}}, {Shape{}, Shape{2, 2}},
      {Shape{4, 1, 5}, Shape{3, 1}}, {Shape{0, 3}, Shape{3}}, {Shape{64, 1000}, Shape{1000}},
  };
  return pairs;
}

void AddBinary(std::vector<OpCase>* cases, const std::string& op, DType t, const Fn2& f, double lo,
               double hi, double rhs_lo, double rhs_hi, double tol = -1) {
  uint32_t seed = 11;
  for (const auto& p : Pairs()) {
    const uint32_t sa = seed++, sb = seed++;
    cases->push_back(OpCaseBuilder(op)
                         .T(t)
                         .Input(RandomOf(t, p.first, sa, lo, hi))
                         .Input(RandomOf(t, p.second, sb, rhs_lo, rhs_hi))
                         .Reference1([f](const std::vector<Tensor>& in) {
                           return RefBinaryDouble(in[0], in[1], f);
                         })
                         .Tolerance(tol >= 0 ? tol : TolFor(t))
                         .Build());
  }
}

// One case with given values, the reference applied element-wise.
template <typename T>
OpCase Values(const std::string& op, const std::string& name, const std::vector<T>& a,
              const std::vector<T>& b, const Fn2& f, DType out = DType::kInvalid) {
  const Shape s{static_cast<int64_t>(a.size())};
  return OpCaseBuilder(op, name)
      .T(kDTypeOf<T>)
      .Input(Make<T>(a, s))
      .Input(Make<T>(b, s))
      .Reference1(
          [f, out](const std::vector<Tensor>& in) { return RefBinaryDouble(in[0], in[1], f, out); })
      .Build();
}

// Banker's rounding written out: the nearer integer, the even one on a tie.
double RoundHalfEven(double x) {
  const double r = std::floor(x), diff = x - r;
  if (diff > 0.5) return r + 1;
  if (diff < 0.5) return r;
  return std::fmod(r, 2) == 0 ? r : r + 1;
}

// digamma by the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then the asymptotic
// series (its next term is below 1e-12 there).
double Digamma(double x) {
  // TF (Eigen): NaN at -Inf and at the poles 0, -1, -2, ...; +Inf at +Inf.
  if (std::isnan(x) || x == -std::numeric_limits<double>::infinity() ||
      (x <= 0 && x == std::floor(x)))
    return std::numeric_limits<double>::quiet_NaN();
  if (std::isinf(x)) return x;
  double acc = 0;
  while (x < 10) {
    acc -= 1 / x;
    x += 1;
  }
  const double inv = 1 / x, inv2 = inv * inv;
  return acc + std::log(x) - 0.5 * inv -
         inv2 *
             (1.0 / 12 - inv2 * (1.0 / 120 - inv2 * (1.0 / 252 - inv2 * (1.0 / 240 - inv2 / 132))));
}

// The regularized lower incomplete gamma P(a, x): its series below x = a + 1, one minus the
// continued fraction of Q above (Numerical Recipes' gser and gcf, to 1e-15).
double RegularizedGammaP(double a, double x) {
  if (x <= 0) return 0;
  const double log_front = a * std::log(x) - x - std::lgamma(a);
  if (x < a + 1) {
    double term = 1 / a, sum = term;
    for (int n = 1; n < 1000 && std::abs(term) > 1e-17 * std::abs(sum); ++n) {
      term *= x / (a + n);
      sum += term;
    }
    return sum * std::exp(log_front);
  }
  const double tiny = 1e-300;
  double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int i = 1; i < 1000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    d = std::abs(d) < tiny ? tiny : d;
    c = b + an / c;
    c = std::abs(c) < tiny ? tiny : c;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::abs(delta - 1) < 1e-16) break;
  }
  return 1 - std::exp(log_front) * h;
}

int ClampShift(double y, int bits) { return static_cast<int>(std::clamp(y, 0.0, bits - 1.0)); }

const std::vector<DType> kFloats = {DType::kFloat, DType::kDouble, DType::kHalf, DType::kBFloat16};

void UnaryCases(std::vector<OpCase>* c) {
  struct U {
    std::string op;
    Fn1 f;
    double lo, hi;
  };
  const std::vector<U> unary = {
      {"Sin", [](double x) { return std::sin(x); }, -3, 3},
      {"Cos", [](double x) { return std::cos(x); }, -3, 3},
      {"Tan", [](double x) { return std::tan(x); }, -1.2, 1.2},
      {"Asin", [](double x) { return std::asin(x); }, -0.95, 0.95},
      {"Acos", [](double x) { return std::acos(x); }, -0.95, 0.95},
      {"Atan", [](double x) { return std::atan(x); }, -4, 4},
      {"Sinh", [](double x) { return std::sinh(x); }, -3, 3},
      {"Cosh", [](double x) { return std::cosh(x); }, -3, 3},
      {"Asinh", [](double x) { return std::asinh(x); }, -4, 4},
      {"Acosh", [](double x) { return std::acosh(x); }, 1.05, 6},
      {"Atanh", [](double x) { return std::atanh(x); }, -0.9, 0.9},
      {"Expm1", [](double x) { return std::expm1(x); }, -3, 3},
      {"Log1p", [](double x) { return std::log1p(x); }, -0.9, 5},
      {"Erf", [](double x) { return std::erf(x); }, -2.5, 2.5},
      {"Erfc", [](double x) { return std::erfc(x); }, -2.5, 2.5},
      {"Lgamma", [](double x) { return std::lgamma(x); }, 0.2, 8},
      {"Digamma", Digamma, 0.2, 8},
      {"Floor", [](double x) { return std::floor(x); }, -5, 5},
      {"Ceil", [](double x) { return std::ceil(x); }, -5, 5},
      {"Rint", RoundHalfEven, -5, 5},
      {"Round", RoundHalfEven, -5, 5},
      {"Sign", [](double x) { return std::isnan(x) ? x
                                     : x > 0       ? 1.0
                                                   : (x < 0 ? -1.0 : 0.0); }, -3,
       3},
      {"Softsign", [](double x) { return x / (1 + std::abs(x)); }, -5, 5},
      {"Softplus", [](double x) { return std::log1p(std::exp(x)); }, -25, 25},
      {"Selu",
       [](double x) {
         const double scale = 1.0507009873554804934193349852946;
         const double alpha = 1.6732632423543772848170429916717;
         return x < 0 ? scale * alpha * (std::exp(x) - 1) : scale * x;
       },
       -3, 3},
  };
  // Bessel functions (C++17's, for x >= 0; TF's I are even/odd and J0 even, J1 odd), the
  // inverse error function and ndtri (Newton's method on std::erf / erfc).
  const auto inverse_erf = [](double y) {
    if (y <= -1 || y >= 1) return y == 0 ? 0.0 : std::copysign(HUGE_VAL, y);
    double x = 0;
    for (int i = 0; i < 100; ++i) {
      const double step = (std::erf(x) - y) / (2 / std::sqrt(M_PI) * std::exp(-x * x));
      x -= step;
      if (std::abs(step) < 1e-16 * std::max(1.0, std::abs(x))) break;
    }
    return x;
  };
  const std::vector<U> special = {
      {"BesselI0", [](double x) { return std::cyl_bessel_i(0.0, std::abs(x)); }, -4, 4},
      {"BesselI0e",
       [](double x) { return std::exp(-std::abs(x)) * std::cyl_bessel_i(0.0, std::abs(x)); }, -4,
       4},
      {"BesselI1", [](double x) { return std::copysign(std::cyl_bessel_i(1.0, std::abs(x)), x); },
       -4, 4},
      {"BesselI1e",
       [](double x) {
         return std::exp(-std::abs(x)) * std::copysign(std::cyl_bessel_i(1.0, std::abs(x)), x);
       },
       -4, 4},
      {"BesselJ0", [](double x) { return std::cyl_bessel_j(0.0, std::abs(x)); }, -6, 6},
      {"BesselJ1",
       [](double x) {
         const double j = std::cyl_bessel_j(1.0, std::abs(x));
         return x < 0 ? -j : j;
       },
       -6, 6},
      {"BesselK0", [](double x) { return std::cyl_bessel_k(0.0, x); }, 0.1, 5},
      {"BesselK0e", [](double x) { return std::exp(x) * std::cyl_bessel_k(0.0, x); }, 0.1, 5},
      {"BesselK1", [](double x) { return std::cyl_bessel_k(1.0, x); }, 0.1, 5},
      {"BesselK1e", [](double x) { return std::exp(x) * std::cyl_bessel_k(1.0, x); }, 0.1, 5},
      {"BesselY0", [](double x) { return std::cyl_neumann(0.0, x); }, 0.1, 6},
      {"BesselY1", [](double x) { return std::cyl_neumann(1.0, x); }, 0.1, 6},
      {"Erfinv", inverse_erf, -0.95, 0.95},
      {"Ndtri", [inverse_erf](double p) { return std::sqrt(2.0) * inverse_erf(2 * p - 1); }, 0.05,
       0.95},
  };
  for (const U& u : special) AddUnary(c, u.op, kFloats, u.f, u.lo, u.hi, 8);
  for (const U& u : unary) {
    // Float rounding of the argument is amplified by the slope: a wider bound where it is steep.
    const bool steep = u.op == "Tan" || u.op == "Lgamma" || u.op == "Digamma" || u.op == "Erfc" ||
                       u.op == "Expm1" || u.op == "Log1p" || u.op == "Acosh" || u.op == "Atanh";
    AddUnary(c, u.op, kFloats, u.f, u.lo, u.hi, steep ? 5 : 1);
  }
  // Erfinv and Ndtri outside their domains are NaN (TF's); at its edges infinite.
  {
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    c->push_back(OpCaseBuilder("Erfinv", "Erfinv out of domain")
                     .T(DType::kFloat)
                     .Input(Make<float>({1.5f, -1.5f, 1, -1}, {4}))
                     .Reference1([=](const auto&) {
                       return Make<float>({nan, nan, inf, -inf}, {4});
                     })
                     .Build());
    c->push_back(OpCaseBuilder("Ndtri", "Ndtri out of domain")
                     .T(DType::kFloat)
                     .Input(Make<float>({-0.5f, 1.25f, 0, 1}, {4}))
                     .Reference1([=](const auto&) {
                       return Make<float>({nan, nan, -inf, inf}, {4});
                     })
                     .Build());
  }
  // Exact halves: rounding ties go to the even neighbour.
  for (const std::string op : {"Round", "Rint"}) {
    c->push_back(OpCaseBuilder(op, op + " ties")
                     .T(DType::kFloat)
                     .Input(Make<float>({-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 3.5f}, {7}))
                     .Reference1([](const std::vector<Tensor>& in) {
                       return RefUnaryDouble(in[0], RoundHalfEven);
                     })
                     .Build());
  }
  // Integer Round and Sign.
  for (DType t : {DType::kInt32, DType::kInt64, DType::kInt8}) {
    AddUnary(
        c, "Round", {t}, [](double x) { return x; }, -50, 50);
    AddUnary(
        c, "Sign", {t},
        [](double x) { return std::isnan(x) ? x
                              : x > 0       ? 1.0
                                            : (x < 0 ? -1.0 : 0.0); }, -5, 5);
  }
  // Predicates, with the special values.
  const std::vector<float> specials = {kNan, kInf, -kInf, 0.0f, -1.5f, 3e38f, 1e-40f};
  for (auto [op, f] : std::vector<std::pair<std::string, Fn1>>{
           {"IsNan", [](double x) { return std::isnan(x) ? 1.0 : 0.0; }},
           {"IsInf", [](double x) { return std::isinf(x) ? 1.0 : 0.0; }},
           {"IsFinite", [](double x) { return std::isfinite(x) ? 1.0 : 0.0; }}}) {
    const Fn1 fn = f;
    c->push_back(OpCaseBuilder(op)
                     .T(DType::kFloat)
                     .Input(Make<float>(specials, {7}))
                     .Reference1([fn](const std::vector<Tensor>& in) {
                       return RefUnaryDouble(in[0], fn, DType::kBool);
                     })
                     .Build());
    for (DType t : {DType::kDouble, DType::kHalf, DType::kBFloat16}) {
      Tensor x = RandomOf(t, Shape{4, 5}, 3);
      c->push_back(OpCaseBuilder(op)
                       .T(t)
                       .Input(x)
                       .Reference1([fn](const std::vector<Tensor>& in) {
                         return RefUnaryDouble(in[0], fn, DType::kBool);
                       })
                       .Build());
    }
  }
  // Invert: ~x, written per type as the arithmetic it is (-x - 1, or max - x unsigned).
  for (DType t : {DType::kInt32, DType::kInt8, DType::kInt64, DType::kUInt8, DType::kUInt16,
                  DType::kUInt32}) {
    const bool is_unsigned = t == DType::kUInt8 || t == DType::kUInt16 || t == DType::kUInt32;
    const double max = t == DType::kUInt8 ? 255 : (t == DType::kUInt16 ? 65535 : 4294967295.0);
    AddUnary(
        c, "Invert", {t}, [is_unsigned, max](double x) { return is_unsigned ? max - x : -x - 1; },
        is_unsigned ? 0 : -100, 100);
  }
  // PopulationCount: the set bits of the two's-complement pattern, as uint8.
  for (DType t : {DType::kInt32, DType::kInt8, DType::kInt64, DType::kUInt16}) {
    const int bits = static_cast<int>(DTypeSize(t)) * 8;
    AddUnaryTo(c, "PopulationCount", t, DType::kUInt8, [bits](double x) {
      uint64_t u = static_cast<uint64_t>(static_cast<int64_t>(x));
      if (bits < 64) u &= (uint64_t{1} << bits) - 1;
      return static_cast<double>(__builtin_popcountll(u));
    });
  }
  // Inv: Reciprocal's old name.
  for (DType t : {DType::kFloat, DType::kDouble})
    AddUnary(
        c, "Inv", {t}, [](double x) { return 1 / x; }, 0.5, 4);
  // LeakyRelu: the default alpha, a slope above 1 and a negative one.
  for (float alpha : {0.2f, 2.0f, -0.5f}) {
    for (DType t : {DType::kFloat, DType::kHalf}) {
      OpCaseBuilder b("LeakyRelu",
                      "LeakyRelu alpha " + std::to_string(alpha) + " " + DTypeShortName(t));
      if (alpha != 0.2f) b.Float("alpha", alpha);
      if (t != DType::kFloat) b.T(t);  // T defaults to float32
      c->push_back(b.Input(RandomOf(t, Shape{6, 50}, 4))
                       .Reference1([alpha](const std::vector<Tensor>& in) {
                         return RefUnaryDouble(in[0], [alpha](double x) {
                           return x > 0 ? x : x * static_cast<double>(alpha);
                         });
                       })
                       .Tolerance(1e-6)
                       .Build());
    }
  }
  // Integers take alpha truncated (TF's static_cast<T>(alpha)): 2.0 doubles, -0.5 and 0.2 zero.
  for (float alpha : {2.0f, -0.5f}) {
    for (DType t : {DType::kInt32, DType::kInt8}) {
      OpCaseBuilder b("LeakyRelu",
                      "LeakyRelu alpha " + std::to_string(alpha) + " " + DTypeShortName(t));
      c->push_back(b.T(t)
                       .Float("alpha", alpha)
                       .Input(RandomOf(t, Shape{4, 5}, 5, -20, 20))
                       .Reference1([alpha](const std::vector<Tensor>& in) {
                         return RefUnaryDouble(in[0], [alpha](double x) {
                           return x > 0 ? x : x * std::trunc(static_cast<double>(alpha));
                         });
                       })
                       .Build());
    }
  }
  // ComplexAbs: |a + bi| = hypot(a, b).
  for (bool wide : {false, true}) {
    const Shape s{3, 4};
    Tensor z(wide ? DType::kComplex128 : DType::kComplex64, s);
    Tensor parts = RandomOf(DType::kDouble, Shape{24}, 9, -4, 4);
    for (int64_t i = 0; i < 12; ++i) {
      const double re = parts.data<double>()[2 * i], im = parts.data<double>()[2 * i + 1];
      if (wide) {
        z.data<std::complex<double>>()[i] = {re, im};
      } else {
        z.data<std::complex<float>>()[i] = {static_cast<float>(re), static_cast<float>(im)};
      }
    }
    OpCaseBuilder b("ComplexAbs");
    if (wide) b.T(DType::kComplex128).Type("Tout", DType::kDouble);
    c->push_back(b.Input(z)
                     .Reference1([wide](const std::vector<Tensor>& in) {
                       Tensor out(wide ? DType::kDouble : DType::kFloat, in[0].shape());
                       for (int64_t i = 0; i < out.NumElements(); ++i) {
                         if (wide) {
                           const auto v = in[0].data<std::complex<double>>()[i];
                           out.data<double>()[i] = std::hypot(v.real(), v.imag());
                         } else {
                           const auto v = in[0].data<std::complex<float>>()[i];
                           out.data<float>()[i] =
                               static_cast<float>(std::hypot(double{v.real()}, double{v.imag()}));
                         }
                       }
                       return out;
                     })
                     .Tolerance(1e-6)
                     .Build());
  }
  // CheckNumerics passes finite values on unchanged.
  for (DType t : kFloats) {
    c->push_back(OpCaseBuilder("CheckNumerics")
                     .T(t)
                     .String("message", "checked")
                     .Input(RandomOf(t, Shape{3, 5}, 2))
                     .Reference1([](const std::vector<Tensor>& in) { return in[0]; })
                     .Build());
  }
}

void BinaryCases(std::vector<OpCase>* c) {
  const auto div = [](double a, double b) { return a / b; };
  const auto trunc_div = [](double a, double b) { return std::trunc(a / b); };
  const auto rem = [](double a, double b) { return std::fmod(a, b); };
  for (DType t : kFloats) {
    AddBinary(c, "Div", t, div, -5, 5, 0.5, 4);
    AddBinary(
        c, "Atan2", t, [](double y, double x) { return std::atan2(y, x); }, -3, 3, -3, 3);
    // 0 wherever the divisor (or multiplier) is 0, -0 too, whatever the other operand holds.
    AddBinary(
        c, "DivNoNan", t, [](double a, double b) { return b == 0 ? 0.0 : a / b; }, -5, 5, 0.5, 4);
    AddBinary(
        c, "MulNoNan", t, [](double a, double b) { return b == 0 ? 0.0 : a * b; }, -5, 5, -4, 4);
    AddBinary(c, "Xdivy", t, div, -5, 5, 0.5, 4);
    AddBinary(
        c, "Xlogy", t, [](double x, double y) { return x * std::log(y); }, -5, 5, 0.1, 6,
        TolFor(t) * 4);
    AddBinary(
        c, "SquaredDifference", t, [](double a, double b) { return (a - b) * (a - b); }, -5, 5, -5,
        5);
    AddBinary(c, "TruncateDiv", t, trunc_div, -9, 9, 0.5, 3);
    AddBinary(
        c, "Xlog1py", t, [](double x, double y) { return x * std::log1p(y); }, -5, 5, -0.5, 6,
        TolFor(t) * 4);
  }
  // Igamma and Igammac: P(a, x) and Q = 1 - P; Polygamma(0, x) is digamma, and for n >= 1
  // (-1)^(n+1) n! zeta(n + 1, x), whose values at x = 1 are Riemann's zeta.
  for (DType t : {DType::kFloat, DType::kDouble}) {
    AddBinary(
        c, "Igamma", t, [](double a, double x) { return RegularizedGammaP(a, x); }, 0.2, 6, 0, 9,
        t == DType::kFloat ? 2e-5 : 1e-10);
    AddBinary(
        c, "Igammac", t, [](double a, double x) { return 1 - RegularizedGammaP(a, x); }, 0.2, 6, 0,
        4, t == DType::kFloat ? 2e-5 : 1e-10);
  }
  c->push_back(
      OpCaseBuilder("Polygamma", "Polygamma n = 0 is digamma")
          .T(DType::kDouble)
          .Input(Make<double>({0, 0, 0, 0}, {4}))
          .Input(Make<double>({0.3, 1, 2.5, 7}, {4}))
          .Reference1([](const std::vector<Tensor>& in) { return RefUnaryDouble(in[1], Digamma); })
          .Tolerance(1e-10)
          .Build());
  c->push_back(OpCaseBuilder("Polygamma", "Polygamma at 1 is a signed zeta")
                   .T(DType::kFloat)
                   .Input(Make<float>({1, 2, 3, 4}, {4}))
                   .Input(Make<float>({1, 1, 1, 1}, {4}))
                   .Reference1([](const std::vector<Tensor>& in) {
                     return RefUnaryDouble(in[0], [](double n) {
                       return (static_cast<int>(n) % 2 == 1 ? 1 : -1) * std::tgamma(n + 1) *
                              std::riemann_zeta(n + 1);
                     });
                   })
                   .Tolerance(2e-6)
                   .Build());
  // ApproximateEqual: |x - y| < tolerance (strict), NaN never equal.
  for (DType t : {DType::kFloat, DType::kDouble}) {
    c->push_back(OpCaseBuilder("ApproximateEqual", "ApproximateEqual " + DTypeShortName(t))
                     .T(t)
                     .Float("tolerance", 0.5f)
                     .Input(RandomOf(t, Shape{4, 30}, 71, -2, 2))
                     .Input(RandomOf(t, Shape{4, 30}, 72, -2, 2))
                     .Reference1([](const std::vector<Tensor>& in) {
                       return RefBinaryDouble(
                           in[0], in[1],
                           [](double x, double y) {
                             return std::abs(x - y) < static_cast<double>(0.5f) ? 1.0 : 0.0;
                           },
                           DType::kBool);
                     })
                     .Build());
  }
  // Betainc: I_x(a, b), closed forms for b = 1 (x^a) and a = 1 (1 - (1 - x)^b); TF-recorded
  // values for the rest are in tests/tf. Scalars stand for the other inputs' shape.
  c->push_back(OpCaseBuilder("Betainc", "Betainc closed forms")
                   .T(DType::kDouble)
                   .Input(Make<double>({0.5, 2, 3.5, 1, 1, 1}, {6}))
                   .Input(Make<double>({1, 1, 1, 0.5, 2, 3.5}, {6}))
                   .Input(Make<double>({0.3, 0.6, 0.9, 0.3, 0.6, 0.9}, {6}))
                   .Reference1([](const std::vector<Tensor>& in) {
                     Tensor out(DType::kDouble, Shape{6});
                     for (int i = 0; i < 6; ++i) {
                       const double a = in[0].data<double>()[i], b = in[1].data<double>()[i],
                                    x = in[2].data<double>()[i];
                       out.data<double>()[i] = b == 1 ? std::pow(x, a) : 1 - std::pow(1 - x, b);
                     }
                     return out;
                   })
                   .Tolerance(1e-10)
                   .Build());
  c->push_back(OpCaseBuilder("Betainc", "Betainc scalar a and x")
                   .T(DType::kFloat)
                   .Input(Tensor::Scalar(1.0f))
                   .Input(Make<float>({1, 2, 3}, {3}))
                   .Input(Tensor::Scalar(0.5f))
                   .Reference1([](const auto&) {
                     return Make<float>({0.5f, 0.75f, 0.875f}, {3});
                   })
                   .Tolerance(1e-6)
                   .Build());
  // Zeta(x, 1) is Riemann's zeta, which the C++ library has (the other special functions of two
  // arguments are checked against TF in tests/tf). NextAfter steps one float ulp.
  c->push_back(OpCaseBuilder("Zeta", "Zeta Riemann")
                   .T(DType::kDouble)
                   .Input(Make<double>({2, 3, 4.5, 7}, {4}))
                   .Input(Make<double>({1, 1, 1, 1}, {4}))
                   .Reference1([](const std::vector<Tensor>& in) {
                     return RefUnaryDouble(in[0], [](double x) { return std::riemann_zeta(x); });
                   })
                   .Tolerance(1e-12)
                   .Build());
  c->push_back(Values<float>(
      "NextAfter", "NextAfter float", {1, 1, 0, -2}, {2, 0, 1, -3}, [](double x, double y) {
        return static_cast<double>(std::nextafter(static_cast<float>(x), static_cast<float>(y)));
      }));
  for (DType t : {DType::kFloat, DType::kDouble}) {
    AddBinary(c, "Mod", t, rem, -9, 9, 0.5, 4);
    AddBinary(c, "TruncateMod", t, rem, -9, 9, -4, -0.5);
  }
  for (DType t : {DType::kInt32, DType::kInt64}) {
    AddBinary(c, "Mod", t, rem, -50, 50, 1, 7);
    AddBinary(c, "TruncateMod", t, rem, -50, 50, -7, -1);
    AddBinary(
        c, "SquaredDifference", t, [](double a, double b) { return (a - b) * (a - b); }, -50, 50,
        -50, 50);
  }
  for (DType t : {DType::kInt32, DType::kInt8, DType::kUInt8, DType::kInt64, DType::kUInt32}) {
    const bool u = t == DType::kUInt8 || t == DType::kUInt32;
    AddBinary(c, "Div", t, trunc_div, u ? 0 : -100, 100, 1, 9);
    AddBinary(c, "TruncateDiv", t, trunc_div, u ? 0 : -100, 100, u ? 1 : -9, u ? 9 : -1);
  }
  // Integer edge cases: the lowest value divided by -1 wraps, its remainder is 0.
  const int32_t lowest = std::numeric_limits<int32_t>::lowest();
  c->push_back(Values<int32_t>(
      "Div", "Div int32 signs and wrap", {-7, 7, -7, lowest}, {2, -2, -2, -1},
      [](double a, double b) { return a == -2147483648.0 && b == -1 ? a : std::trunc(a / b); }));
  c->push_back(
      Values<int32_t>("Mod", "Mod int32 signs", {-7, 7, -7, lowest}, {2, -2, -2, -1}, rem));
  // The *NoNan ops and x-ops where their zero wins over NaN and Inf.
  c->push_back(Values<float>("DivNoNan", "DivNoNan zero divisor", {1, kNan, kInf, 6}, {0, 0, 0, 2},
                             [](double a, double b) { return b == 0 ? 0 : a / b; }));
  c->push_back(Values<float>("MulNoNan", "MulNoNan zero factor", {kInf, kNan, 2, 3},
                             {0, 0, kNan, 2},
                             [](double a, double b) { return b == 0 ? 0 : a * b; }));
  c->push_back(Values<float>("Xdivy", "Xdivy zero x", {0, 0, 1, 3}, {0, kNan, 0, 2},
                             [](double x, double y) { return x == 0 ? 0 : x / y; }));
  c->push_back(Values<double>("Xlogy", "Xlogy zero x", {0, 0, 1, kNan}, {0, kNan, 0, 1},
                              [](double x, double y) { return x == 0 ? 0 : x * std::log(y); }));
  // Bit ops over ints of every width; shifts clamp their amount to [0, bits - 1].
  for (DType t : {DType::kInt32, DType::kUInt8, DType::kInt16, DType::kUInt64, DType::kInt8}) {
    const bool u = t == DType::kUInt8 || t == DType::kUInt64;
    const double lo = u ? 0 : -100;
    AddBinary(
        c, "BitwiseAnd", t,
        [](double a, double b) {
          return static_cast<double>(static_cast<int64_t>(a) & static_cast<int64_t>(b));
        },
        lo, 100, lo, 100);
    AddBinary(
        c, "BitwiseOr", t,
        [](double a, double b) {
          return static_cast<double>(static_cast<int64_t>(a) | static_cast<int64_t>(b));
        },
        lo, 100, lo, 100);
    AddBinary(
        c, "BitwiseXor", t,
        [](double a, double b) {
          return static_cast<double>(static_cast<int64_t>(a) ^ static_cast<int64_t>(b));
        },
        lo, 100, lo, 100);
  }
  AddBinary(
      c, "LeftShift", DType::kInt32,
      [](double x, double y) {
        return static_cast<double>(static_cast<int32_t>(
            static_cast<uint32_t>(static_cast<int32_t>(x)) << ClampShift(y, 32)));
      },
      -100, 100, -3, 40);
  AddBinary(
      c, "RightShift", DType::kInt32,
      [](double x, double y) {
        return std::floor(x / std::ldexp(1.0, ClampShift(y, 32)));  // arithmetic: rounds down
      },
      -1000, 1000, -3, 40);
  AddBinary(
      c, "LeftShift", DType::kUInt8,
      [](double x, double y) { return std::fmod(x * std::ldexp(1.0, ClampShift(y, 8)), 256); }, 0,
      255, 0, 12);
  AddBinary(
      c, "RightShift", DType::kInt8,
      [](double x, double y) { return std::floor(x / std::ldexp(1.0, ClampShift(y, 8))); }, -128,
      127, -2, 12);

  // Activation gradients: inputs of one shape.
  for (DType t : {DType::kFloat, DType::kDouble, DType::kHalf, DType::kInt32}) {
    for (const Shape& s : {Shape{2, 3}, Shape{64, 1000}}) {
      for (auto [op, f] : std::vector<std::pair<std::string, Fn2>>{
               {"ReluGrad", [](double g, double x) { return x > 0 ? g : 0; }},
               {"Relu6Grad", [](double g, double x) { return x > 0 && x < 6 ? g : 0; }}}) {
        const Fn2 fn = f;
        c->push_back(OpCaseBuilder(op)
                         .T(t)
                         .Input(RandomOf(t, s, 1))
                         .Input(RandomOf(t, s, 2, -3, 9))
                         .Reference1([fn](const std::vector<Tensor>& in) {
                           return RefBinaryDouble(in[0], in[1], fn);
                         })
                         .Build());
      }
    }
  }
  // The other activation gradients: (gradients, outputs) of Elu and Selu, (gradients, features)
  // of Softplus, Softsign and LeakyRelu (alpha 0.2 and 1.5).
  const double selu_scale = 1.0507009873554804934193349852946;
  const double selu_alpha = 1.6732632423543772848170429916717;
  for (DType t : kFloats) {
    for (auto [op, f] : std::vector<std::pair<std::string, Fn2>>{
             {"EluGrad", [](double g, double y) { return y < 0 ? g * (y + 1) : g; }},
             {"SeluGrad",
              [=](double g, double y) {
                return y < 0 ? g * (y + selu_scale * selu_alpha) : g * selu_scale;
              }},
             {"SoftplusGrad", [](double g, double x) { return g / (1 + std::exp(-x)); }},
             {"SoftsignGrad",
              [](double g, double x) { return g / ((1 + std::abs(x)) * (1 + std::abs(x))); }},
             {"LeakyReluGrad",
              [](double g, double x) { return x > 0 ? g : static_cast<double>(0.2f) * g; }}}) {
      const Fn2 fn = f;
      c->push_back(OpCaseBuilder(op)
                       .T(t)
                       .Input(RandomOf(t, Shape{8, 300}, 5))
                       .Input(RandomOf(t, Shape{8, 300}, 6, -2, 3))
                       .Reference1([fn](const std::vector<Tensor>& in) {
                         return RefBinaryDouble(in[0], in[1], fn);
                       })
                       .Tolerance(TolFor(t) * 4)
                       .Build());
    }
  }
  c->push_back(OpCaseBuilder("LeakyReluGrad", "LeakyReluGrad alpha 1.5")
                   .T(DType::kFloat)
                   .Float("alpha", 1.5f)
                   .Input(RandomOf(DType::kFloat, Shape{40}, 7))
                   .Input(RandomOf(DType::kFloat, Shape{40}, 8))
                   .Reference1([](const std::vector<Tensor>& in) {
                     return RefBinaryDouble(in[0], in[1],
                                            [](double g, double x) { return x > 0 ? g : 1.5 * g; });
                   })
                   .Tolerance(TolFor(DType::kFloat))
                   .Build());
  for (DType t : kFloats) {
    for (auto [op, f] : std::vector<std::pair<std::string, Fn2>>{
             {"SigmoidGrad", [](double y, double dy) { return dy * y * (1 - y); }},
             {"TanhGrad", [](double y, double dy) { return dy * (1 - y * y); }},
             // 0 where dy is 0, whatever y is (TF's).
             {"ReciprocalGrad", [](double y, double dy) { return dy == 0 ? 0 : -dy * y * y; }},
             {"InvGrad", [](double y, double dy) { return dy == 0 ? 0 : -dy * y * y; }},
             {"SqrtGrad", [](double y, double dy) { return dy == 0 ? 0 : dy * 0.5 / y; }},
             {"RsqrtGrad",
              [](double y, double dy) { return dy == 0 ? 0 : -0.5 * dy * y * y * y; }}}) {
      const Fn2 fn = f;
      c->push_back(OpCaseBuilder(op)
                       .T(t)
                       .Input(RandomOf(t, Shape{64, 1000}, 3, -1, 1))
                       .Input(RandomOf(t, Shape{64, 1000}, 4))
                       .Reference1([fn](const std::vector<Tensor>& in) {
                         return RefBinaryDouble(in[0], in[1], fn);
                       })
                       .Tolerance(TolFor(t) * 4)
                       .Build());
    }
  }

  // ClipByValue: scalar bounds, bounds of t's shape, a lower bound above the upper one.
  const auto clip = [](const std::vector<Tensor>& in) {
    const Tensor x = AsDouble(in[0]), lo = AsDouble(in[1]), hi = AsDouble(in[2]);
    Tensor out(DType::kDouble, x.shape());
    for (int64_t i = 0; i < out.NumElements(); ++i) {
      const double l = lo.data<double>()[lo.rank() == 0 ? 0 : i];
      const double h = hi.data<double>()[hi.rank() == 0 ? 0 : i];
      out.data<double>()[i] = std::max(std::min(x.data<double>()[i], h), l);
    }
    return AsType(out, in[0].dtype());
  };
  for (DType t : {DType::kFloat, DType::kInt32, DType::kHalf, DType::kUInt8}) {
    const bool u = t == DType::kUInt8;
    c->push_back(OpCaseBuilder("ClipByValue", "ClipByValue scalars " + DTypeShortName(t))
                     .T(t)
                     .Input(RandomOf(t, Shape{50, 40}, 1, u ? 0 : -10, 10))
                     .Input(RandomOf(t, Shape{}, 2, u ? 0 : -5, u ? 2 : -1))
                     .Input(RandomOf(t, Shape{}, 3, 2, 6))
                     .Reference1(clip)
                     .Build());
  }
  c->push_back(OpCaseBuilder("ClipByValue", "ClipByValue tensor bounds")
                   .T(DType::kDouble)
                   .Input(RandomOf(DType::kDouble, Shape{3, 7}, 1, -10, 10))
                   .Input(RandomOf(DType::kDouble, Shape{3, 7}, 2, -6, 0))
                   .Input(RandomOf(DType::kDouble, Shape{}, 3, 1, 5))
                   .Reference1(clip)
                   .Build());
  // Complex: the real and imaginary parts clip apart (values TF 2.21 gives).
  c->push_back(OpCaseBuilder("ClipByValue", "ClipByValue complex64")
                   .T(DType::kComplex64)
                   .Input(Make<std::complex<float>>({{1, 2}, {3, -1}, {-2, 0.5f}, {0.2f, 5}}, {4}))
                   .Input(Make<std::complex<float>>({{0.5f, 1}}, {}))
                   .Input(Make<std::complex<float>>({{2, 0}}, {}))
                   .Reference1([](const std::vector<Tensor>&) {
                     return Make<std::complex<float>>({{1, 1}, {2, 1}, {0.5f, 1}, {0.5f, 1}}, {4});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("ClipByValue", "ClipByValue min above max")
                   .T(DType::kFloat)
                   .Input(Make<float>({1, 3, 5}, {3}))
                   .Input(Make<float>({4, 4, 4}, {3}))
                   .Input(Make<float>({2, 2, 2}, {3}))
                   .Reference1(clip)
                   .Build());
}

// ZerosLike, OnesLike and AddN over the dtypes TF registers beyond the first kernels'.
void WidenedCases(std::vector<OpCase>* c) {
  for (DType t : {DType::kHalf, DType::kBFloat16, DType::kUInt8, DType::kInt8, DType::kUInt64,
                  DType::kBool}) {
    for (double value : {0.0, 1.0}) {
      c->push_back(OpCaseBuilder(value == 0 ? "ZerosLike" : "OnesLike")
                       .T(t)
                       .Input(RandomOf(t, Shape{3, 5}, 2, 0, 9))
                       .Reference1([value](const std::vector<Tensor>& in) {
                         return RefUnaryDouble(in[0], [value](double) { return value; });
                       })
                       .Build());
    }
  }
  c->push_back(OpCaseBuilder("ZerosLike", "ZerosLike string")
                   .T(DType::kString)
                   .Input(Make<std::string>({"a", "bc"}, {2}))
                   .Reference1([](const auto&) {
                     return Make<std::string>({"", ""}, {2});
                   })
                   .Build());
  for (DType t : {DType::kHalf, DType::kBFloat16, DType::kInt8, DType::kUInt16, DType::kDouble}) {
    const bool u = t == DType::kUInt16;
    c->push_back(OpCaseBuilder("AddN")
                     .T(t)
                     .Int("N", 3)
                     .Input(RandomOf(t, Shape{4, 300}, 1, u ? 0 : -9, 9))
                     .Input(RandomOf(t, Shape{4, 300}, 2, u ? 0 : -9, 9))
                     .Input(RandomOf(t, Shape{4, 300}, 3, u ? 0 : -9, 9))
                     .Reference1([](const std::vector<Tensor>& in) {
                       const Tensor a = AsDouble(in[0]), b = AsDouble(in[1]), d = AsDouble(in[2]);
                       Tensor sum(DType::kDouble, a.shape());
                       for (int64_t i = 0; i < sum.NumElements(); ++i)
                         sum.data<double>()[i] =
                             a.data<double>()[i] + b.data<double>()[i] + d.data<double>()[i];
                       return AsType(sum, in[0].dtype());
                     })
                     .Tolerance(TolFor(t))
                     .Build());
  }
  // Variants: tensor lists, element by element, as TF's TensorListZerosLike and
  // TensorListBinaryAdd (values TF 2.21 gives); an unset element (index 1 of `a`) stays unset,
  // and added to a set one gives that one.
  auto list = [](std::vector<Tensor> items) {
    Tensor t(DType::kVariant, Shape{});
    t.scalar<VariantPtr>() =
        std::make_shared<const exec::TensorList>(DType::kFloat, PartialShape{2}, std::move(items));
    return t;
  };
  const Tensor a = list({Make<float>({1, 2}, {2}), Tensor(), Make<float>({5, -6}, {2})});
  const Tensor b =
      list({Make<float>({10, 20}, {2}), Make<float>({3, 4}, {2}), Make<float>({0.5f, 0.25f}, {2})});
  c->push_back(OpCaseBuilder("ZerosLike", "ZerosLike of a tensor list")
                   .T(DType::kVariant)
                   .Input(a)
                   .Reference1([list](const auto&) {
                     return list({Make<float>({0, 0}, {2}), Tensor(), Make<float>({0, 0}, {2})});
                   })
                   .Build());
  c->push_back(OpCaseBuilder("AddN", "AddN of tensor lists")
                   .T(DType::kVariant)
                   .Int("N", 3)
                   .Input(a)
                   .Input(b)
                   .Input(a)
                   .Reference1([list](const auto&) {
                     return list({Make<float>({12, 24}, {2}), Make<float>({3, 4}, {2}),
                                  Make<float>({10.5f, -11.75f}, {2})});
                   })
                   .Build());
}

// A complex tensor of `shape` with parts drawn from [-4, 4].
Tensor RandomComplex(bool wide, const Shape& shape, uint32_t seed) {
  Tensor z(wide ? DType::kComplex128 : DType::kComplex64, shape);
  Tensor parts = RandomOf(DType::kDouble, Shape{2 * shape.num_elements()}, seed, -4, 4);
  for (int64_t i = 0; i < shape.num_elements(); ++i) {
    const double re = parts.data<double>()[2 * i], im = parts.data<double>()[2 * i + 1];
    if (wide) {
      z.data<std::complex<double>>()[i] = {re, im};
    } else {
      z.data<std::complex<float>>()[i] = {static_cast<float>(re), static_cast<float>(im)};
    }
  }
  return z;
}

// Real, Imag, Angle: a part of every element; Complex: parts put together, broadcast; Conj.
void ComplexCases(std::vector<OpCase>* c) {
  uint32_t seed = 31;
  for (bool wide : {false, true}) {
    OpCaseBuilder conj("Conj", std::string("Conj ") + (wide ? "complex128" : "complex64"));
    c->push_back(conj.T(wide ? DType::kComplex128 : DType::kComplex64)
                     .Input(RandomComplex(wide, Shape{3, 5}, NextSeed(seed)))
                     .Reference1([wide](const std::vector<Tensor>& in) {
                       Tensor out = in[0].DeepCopy();
                       for (int64_t i = 0; i < out.NumElements(); ++i) {
                         if (wide) {
                           auto& v = out.data<std::complex<double>>()[i];
                           v = {v.real(), -v.imag()};
                         } else {
                           auto& v = out.data<std::complex<float>>()[i];
                           v = {v.real(), -v.imag()};
                         }
                       }
                       return out;
                     })
                     .Build());
    for (const std::string op : {"Real", "Imag", "Angle"}) {
      OpCaseBuilder b(op);
      if (wide) b.T(DType::kComplex128).Type("Tout", DType::kDouble);
      c->push_back(b.Input(RandomComplex(wide, Shape{3, 5}, NextSeed(seed)))
                       .Reference1([wide, op](const std::vector<Tensor>& in) {
                         Tensor out(wide ? DType::kDouble : DType::kFloat, in[0].shape());
                         for (int64_t i = 0; i < out.NumElements(); ++i) {
                           const std::complex<double> v =
                               wide ? in[0].data<std::complex<double>>()[i]
                                    : std::complex<double>(in[0].data<std::complex<float>>()[i]);
                           const double r = op == "Real"   ? v.real()
                                            : op == "Imag" ? v.imag()
                                                           : std::atan2(v.imag(), v.real());
                           if (wide) {
                             out.data<double>()[i] = r;
                           } else {
                             out.data<float>()[i] = static_cast<float>(r);
                           }
                         }
                         return out;
                       })
                       .Tolerance(1e-6)
                       .Build());
    }
    const DType part = wide ? DType::kDouble : DType::kFloat;
    for (const auto& [sa, sb] : std::vector<std::pair<Shape, Shape>>{
             {Shape{2, 3}, Shape{2, 3}}, {Shape{2, 3}, Shape{3}}, {Shape{}, Shape{4, 1}}}) {
      OpCaseBuilder b("Complex");
      if (wide) b.T(DType::kDouble).Type("Tout", DType::kComplex128);
      c->push_back(b.Input(RandomOf(part, sa, NextSeed(seed)))
                       .Input(RandomOf(part, sb, NextSeed(seed)))
                       .Reference1([wide](const std::vector<Tensor>& in) {
                         // Broadcast through the double reference, one part at a time.
                         const Tensor re = RefBinaryDouble(
                             in[0], in[1], [](double a, double) { return a; }, DType::kDouble);
                         const Tensor im = RefBinaryDouble(
                             in[0], in[1], [](double, double b) { return b; }, DType::kDouble);
                         Tensor out(wide ? DType::kComplex128 : DType::kComplex64, re.shape());
                         for (int64_t i = 0; i < out.NumElements(); ++i) {
                           const double r = re.data<double>()[i], m = im.data<double>()[i];
                           if (wide) {
                             out.data<std::complex<double>>()[i] = {r, m};
                           } else {
                             out.data<std::complex<float>>()[i] = {static_cast<float>(r),
                                                                   static_cast<float>(m)};
                           }
                         }
                         return out;
                       })
                       .Build());
    }
  }
}

// Complex64 and complex128 through the float math TF also registers for them, against
// std::complex<double>: TF's formulas (Sign x/|x|; the gradients dy * conj(f'(x)); squared
// difference d * conj(d)).
using CplxD = std::complex<double>;
CplxD CplxAt(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kComplex128 ? t.data<CplxD>()[i]
                                         : CplxD(t.data<std::complex<float>>()[i]);
}
void SetCplx(Tensor* t, int64_t i, CplxD v) {
  if (t->dtype() == DType::kComplex128) {
    t->data<CplxD>()[i] = v;
  } else {
    t->data<std::complex<float>>()[i] = std::complex<float>(v);
  }
}
Tensor CplxMap(const std::vector<Tensor>& in, const std::function<CplxD(const CplxD*)>& f) {
  Tensor out(in[0].dtype(), in[0].shape());
  std::vector<CplxD> args(in.size());
  for (int64_t i = 0; i < out.NumElements(); ++i) {
    for (size_t k = 0; k < in.size(); ++k) args[k] = CplxAt(in[k], i);
    SetCplx(&out, i, f(args.data()));
  }
  return out;
}

void ComplexMathCases(std::vector<OpCase>* c) {
  const std::vector<std::pair<std::string, std::function<CplxD(CplxD)>>> unary = {
      {"Sin", [](CplxD z) { return std::sin(z); }},
      {"Cos", [](CplxD z) { return std::cos(z); }},
      {"Tan", [](CplxD z) { return std::tan(z); }},
      {"Asin", [](CplxD z) { return std::asin(z); }},
      {"Acos", [](CplxD z) { return std::acos(z); }},
      {"Atan", [](CplxD z) { return std::atan(z); }},
      {"Sinh", [](CplxD z) { return std::sinh(z); }},
      {"Cosh", [](CplxD z) { return std::cosh(z); }},
      {"Asinh", [](CplxD z) { return std::asinh(z); }},
      {"Acosh", [](CplxD z) { return std::acosh(z); }},
      {"Atanh", [](CplxD z) { return std::atanh(z); }},
      {"Expm1", [](CplxD z) { return std::exp(z) - 1.0; }},
      {"Log1p", [](CplxD z) { return std::log(1.0 + z); }},
      {"Sigmoid", [](CplxD z) { return 1.0 / (1.0 + std::exp(-z)); }},
      {"Rsqrt", [](CplxD z) { return 1.0 / std::sqrt(z); }},
      {"Reciprocal", [](CplxD z) { return 1.0 / z; }},
      {"Inv", [](CplxD z) { return 1.0 / z; }},
      {"Sign", [](CplxD z) { return z == 0.0 ? CplxD(0) : z / std::abs(z); }},
      {"ZerosLike", [](CplxD) { return CplxD(0); }},
      {"OnesLike", [](CplxD) { return CplxD(1); }},
  };
  const std::vector<std::pair<std::string, std::function<CplxD(CplxD, CplxD)>>> binary = {
      {"Div", [](CplxD a, CplxD b) { return a / b; }},
      {"DivNoNan", [](CplxD a, CplxD b) { return b == 0.0 ? CplxD(0) : a / b; }},
      {"MulNoNan", [](CplxD a, CplxD b) { return b == 0.0 ? CplxD(0) : a * b; }},
      {"Pow", [](CplxD a, CplxD b) { return std::pow(a, b); }},
      {"SquaredDifference", [](CplxD a, CplxD b) { return (a - b) * std::conj(a - b); }},
      {"Xdivy", [](CplxD a, CplxD b) { return a == 0.0 ? CplxD(0) : a / b; }},
      {"Xlogy", [](CplxD a, CplxD b) { return a == 0.0 ? CplxD(0) : a * std::log(b); }},
      {"Xlog1py", [](CplxD a, CplxD b) { return a == 0.0 ? CplxD(0) : a * std::log(1.0 + b); }},
      {"SigmoidGrad", [](CplxD y, CplxD dy) { return dy * std::conj(y * (1.0 - y)); }},
      {"TanhGrad", [](CplxD y, CplxD dy) { return dy * std::conj(1.0 - y * y); }},
      {"ReciprocalGrad", [](CplxD y, CplxD dy) { return -dy * std::conj(y * y); }},
      {"InvGrad", [](CplxD y, CplxD dy) { return -dy * std::conj(y * y); }},
      {"SqrtGrad", [](CplxD y, CplxD dy) { return 0.5 * dy / std::conj(y); }},
      {"RsqrtGrad", [](CplxD y, CplxD dy) { return -0.5 * dy * std::conj(y * y * y); }},
  };
  uint32_t seed = 71;
  for (bool wide : {false, true}) {
    const DType t = wide ? DType::kComplex128 : DType::kComplex64;
    const double tol = wide ? 1e-12 : 2e-5;
    for (const auto& [op, f] : unary) {
      c->push_back(OpCaseBuilder(op)
                       .T(t)
                       .Input(RandomComplex(wide, Shape{2, 5}, NextSeed(seed)))
                       .Reference1([f = f](const std::vector<Tensor>& in) {
                         return CplxMap(in, [&](const CplxD* z) { return f(z[0]); });
                       })
                       .Tolerance(tol)
                       .Build());
    }
    for (const auto& [op, f] : binary) {
      c->push_back(OpCaseBuilder(op)
                       .T(t)
                       .Input(RandomComplex(wide, Shape{2, 5}, NextSeed(seed)))
                       .Input(RandomComplex(wide, Shape{2, 5}, NextSeed(seed)))
                       .Reference1([f = f](const std::vector<Tensor>& in) {
                         return CplxMap(in, [&](const CplxD* z) { return f(z[0], z[1]); });
                       })
                       .Tolerance(tol)
                       .Build());
    }
    c->push_back(OpCaseBuilder("AddN")
                     .T(t)
                     .Int("N", 3)
                     .Input(RandomComplex(wide, Shape{4}, NextSeed(seed)))
                     .Input(RandomComplex(wide, Shape{4}, NextSeed(seed)))
                     .Input(RandomComplex(wide, Shape{4}, NextSeed(seed)))
                     .Reference1([](const std::vector<Tensor>& in) {
                       return CplxMap(in, [](const CplxD* z) { return z[0] + z[1] + z[2]; });
                     })
                     .Tolerance(tol)
                     .Build());
    const Tensor a = RandomComplex(wide, Shape{6}, NextSeed(seed));
    Tensor b = RandomComplex(wide, Shape{6}, NextSeed(seed));
    for (int64_t i : {0, 3}) SetCplx(&b, i, CplxAt(a, i));  // equal elements
    for (const std::string op : {"Equal", "NotEqual"}) {
      c->push_back(OpCaseBuilder(op)
                       .T(t)
                       .Input(a)
                       .Input(b)
                       .Reference1([op](const std::vector<Tensor>& in) {
                         Tensor out(DType::kBool, in[0].shape());
                         for (int64_t i = 0; i < out.NumElements(); ++i)
                           out.data<bool>()[i] =
                               (CplxAt(in[0], i) == CplxAt(in[1], i)) == (op == "Equal");
                         return out;
                       })
                       .Build());
    }
    // Reductions over axis 1 of [2, 3], the cumulative ones along axis 1 too, BiasAdd.
    const Tensor m = RandomComplex(wide, Shape{2, 3}, NextSeed(seed));
    for (const std::string op : {"Sum", "Mean", "Prod", "EuclideanNorm", "Cumsum", "Cumprod"}) {
      const bool cumulative = op.starts_with("Cum");
      OpCaseBuilder b(op);
      b.T(t).Input(m).ConstInput(Tensor::Scalar<int32_t>(1));
      if (cumulative) {
        b.Bool("exclusive", false).Bool("reverse", false);
      } else {
        b.Bool("keep_dims", false);
      }
      c->push_back(b.Reference1([op, cumulative](const std::vector<Tensor>& in) {
                      Tensor out(in[0].dtype(), cumulative ? Shape{2, 3} : Shape{2});
                      for (int64_t r = 0; r < 2; ++r) {
                        CplxD acc = op == "Prod" || op == "Cumprod" ? CplxD(1) : CplxD(0);
                        for (int64_t k = 0; k < 3; ++k) {
                          const CplxD v = CplxAt(in[0], r * 3 + k);
                          acc = op == "Prod" || op == "Cumprod" ? acc * v
                                : op == "EuclideanNorm"         ? acc + v * std::conj(v)
                                                                : acc + v;
                          if (cumulative) SetCplx(&out, r * 3 + k, acc);
                        }
                        if (op == "EuclideanNorm") acc = std::sqrt(acc);
                        if (!cumulative) SetCplx(&out, r, op == "Mean" ? acc / 3.0 : acc);
                      }
                      return out;
                    })
                       .Tolerance(tol)
                       .Build());
    }
    // MatMul's transpose_a transposes; BatchMatMulV2's adj_x conjugates too.
    for (const std::string op : {"MatMul", "BatchMatMulV2"}) {
      const bool batched = op != "MatMul";
      c->push_back(OpCaseBuilder(op)
                       .T(t)
                       .Bool(batched ? "adj_x" : "transpose_a", true)
                       .Bool(batched ? "adj_y" : "transpose_b", false)
                       .Input(RandomComplex(wide, Shape{3, 2}, NextSeed(seed)))
                       .Input(RandomComplex(wide, Shape{3, 4}, NextSeed(seed)))
                       .Reference1([batched](const std::vector<Tensor>& in) {
                         Tensor out(in[0].dtype(), Shape{2, 4});
                         for (int64_t i = 0; i < 2; ++i)
                           for (int64_t j = 0; j < 4; ++j) {
                             CplxD acc = 0;
                             for (int64_t k = 0; k < 3; ++k) {
                               const CplxD a = CplxAt(in[0], k * 2 + i);
                               acc += (batched ? std::conj(a) : a) * CplxAt(in[1], k * 4 + j);
                             }
                             SetCplx(&out, i * 4 + j, acc);
                           }
                         return out;
                       })
                       .Tolerance(tol)
                       .Build());
    }
    c->push_back(OpCaseBuilder("Einsum")
                     .T(t)
                     .String("equation", "ij,jk->ik")
                     .Int("N", 2)
                     .Input(RandomComplex(wide, Shape{2, 3}, NextSeed(seed)))
                     .Input(RandomComplex(wide, Shape{3, 4}, NextSeed(seed)))
                     .Reference1([](const std::vector<Tensor>& in) {
                       Tensor out(in[0].dtype(), Shape{2, 4});
                       for (int64_t i = 0; i < 2; ++i)
                         for (int64_t j = 0; j < 4; ++j) {
                           CplxD acc = 0;
                           for (int64_t k = 0; k < 3; ++k)
                             acc += CplxAt(in[0], i * 3 + k) * CplxAt(in[1], k * 4 + j);
                           SetCplx(&out, i * 4 + j, acc);
                         }
                       return out;
                     })
                     .Tolerance(tol)
                     .Build());
    c->push_back(OpCaseBuilder("UnsortedSegmentSum")
                     .T(t)
                     .Type("Tindices", DType::kInt32)
                     .Type("Tnumsegments", DType::kInt32)
                     .Input(m)
                     .Input(Make<int32_t>({1, 1}, {2}))
                     .ConstInput(Tensor::Scalar<int32_t>(3))
                     .Reference1([](const std::vector<Tensor>& in) {
                       Tensor out(in[0].dtype(), Shape{3, 3});
                       for (int64_t i = 0; i < 9; ++i) SetCplx(&out, i, 0);
                       for (int64_t j = 0; j < 3; ++j)
                         SetCplx(&out, 3 + j, CplxAt(in[0], j) + CplxAt(in[0], 3 + j));
                       return out;
                     })
                     .Tolerance(tol)
                     .Build());
    c->push_back(OpCaseBuilder("BiasAdd")
                     .T(t)
                     .Input(m)
                     .Input(RandomComplex(wide, Shape{3}, NextSeed(seed)))
                     .Reference1([](const std::vector<Tensor>& in) {
                       Tensor out(in[0].dtype(), in[0].shape());
                       for (int64_t i = 0; i < 6; ++i)
                         SetCplx(&out, i, CplxAt(in[0], i) + CplxAt(in[1], i % 3));
                       return out;
                     })
                     .Tolerance(tol)
                     .Build());
    c->push_back(OpCaseBuilder("SelectV2")
                     .T(t)
                     .Input(Make<bool>({true, false, false, true, true, false}, {6}))
                     .Input(a)
                     .Input(b)
                     .Reference1([](const std::vector<Tensor>& in) {
                       Tensor out = in[1].DeepCopy();
                       for (int64_t i = 0; i < out.NumElements(); ++i)
                         if (!in[0].data<bool>()[i]) SetCplx(&out, i, CplxAt(in[2], i));
                       return out;
                     })
                     .Build());
  }
}

// Bucketize: the number of boundaries <= each value (a value on a boundary goes right).
void BucketizeCases(std::vector<OpCase>* c) {
  const std::vector<float> bounds = {-2.5f, -1.0f, 0.0f, 0.5f, 2.0f};
  uint32_t seed = 41;
  for (DType t : {DType::kFloat, DType::kDouble, DType::kInt32, DType::kInt64}) {
    Tensor x = RandomOf(t, Shape{4, 6}, NextSeed(seed), -4, 4);
    // Values exactly on boundaries.
    if (t == DType::kFloat) x.data<float>()[0] = -1.0f, x.data<float>()[1] = 0.5f;
    if (t == DType::kDouble) x.data<double>()[0] = 2.0, x.data<double>()[1] = -2.5;
    c->push_back(OpCaseBuilder("Bucketize")
                     .T(t)
                     .FloatList("boundaries", bounds)
                     .Input(x)
                     .Reference1([bounds](const std::vector<Tensor>& in) {
                       Tensor out(DType::kInt32, in[0].shape());
                       for (int64_t i = 0; i < out.NumElements(); ++i) {
                         const double v = ValueAt(in[0], i);
                         int32_t n = 0;
                         // TF's upper_bound: NaN goes past every boundary.
                         for (float b : bounds) n += v < static_cast<double>(b) ? 0 : 1;
                         out.data<int32_t>()[i] = n;
                       }
                       return out;
                     })
                     .Build());
  }
  // No boundaries: every value in bucket 0.
  c->push_back(OpCaseBuilder("Bucketize", "Bucketize no boundaries")
                   .T(DType::kFloat)
                   .FloatList("boundaries", {})
                   .Input(RandomOf(DType::kFloat, Shape{5}, 3))
                   .Reference1([](const std::vector<Tensor>& in) {
                     Tensor out(DType::kInt32, in[0].shape());
                     for (int64_t i = 0; i < out.NumElements(); ++i) out.data<int32_t>()[i] = 0;
                     return out;
                   })
                   .Build());
}

}  // namespace

std::vector<OpCase> MathCases() {
  std::vector<OpCase> c;
  UnaryCases(&c);
  BinaryCases(&c);
  WidenedCases(&c);
  ComplexCases(&c);
  ComplexMathCases(&c);
  BucketizeCases(&c);
  return c;
}

}  // namespace kiln::testing
