// The CPU kernels of the ops in kernels/math_ops.cc: element-wise arithmetic with numpy
// broadcasting, unary math, and Cast.
#include "kernels/math_ops.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/vector_math.h"
#include "kernels/eigen_functors.h"
#include "kernels/elementwise_functors.h"
#include "kernels/kernel_util.h"
#include "kernels/type_lists.h"

namespace kiln::exec {
namespace {

using math::AddTypes;
using math::CastTypes;

template <typename T>
const T* Data(const Tensor& t) {
  return t.data<T>();
}
template <typename T>
T* Data(Tensor& t) {
  return t.data<T>();
}

// ---- Cast ------------------------------------------------------------------------------------

// A float to an integer type as TensorFlow's vectorised CPU cast converts it, which is what any
// tensor of more than a few elements gets (C++ leaves out-of-range conversions undefined, and
// TF's scalar tail differs): truncation toward zero; NaN and values out of range give the lowest
// int32 / int64 (x86's cvtt); 8- and 16-bit types take that int32 saturated to their range (so
// an image cast to uint8 clamps at 0 and 255); uint32 and uint64 wrap a negative value through
// the signed type and give 2^31 / 2^63 out of range.
template <typename D, typename W>
D IntFromFloat(W w) {
  if constexpr (sizeof(D) <= 2) {
    const int32_t i = IntFromFloat<int32_t>(w);
    return static_cast<D>(
        std::clamp<int32_t>(i, std::numeric_limits<D>::min(), std::numeric_limits<D>::max()));
  } else {
    using Signed = std::make_signed_t<D>;
    const W half = std::ldexp(W(1), std::numeric_limits<Signed>::digits);  // 2^31 or 2^63
    if constexpr (std::is_signed_v<D>) {
      return w >= -half && w < half ? static_cast<D>(w) : std::numeric_limits<D>::min();
    } else {
      if (w >= -half && w < half) return static_cast<D>(static_cast<Signed>(w));
      if (w >= half && w < 2 * half) return static_cast<D>(w);
      return static_cast<D>(D{1} << std::numeric_limits<Signed>::digits);
    }
  }
}

// One element, as TF's Cast converts it: complex to real keeps the real part, anything to bool
// is "not zero", half precision goes through float (exact), float to integer truncates
// (IntFromFloat).
template <typename Src, typename Dst>
Dst CastValue(ComputeType<Src> v) {
  using S = ComputeType<Src>;
  using D = ComputeType<Dst>;
  if constexpr (std::is_same_v<S, D>) {
    return std::bit_cast<Dst>(v);
  } else if constexpr (std::is_same_v<Dst, bool>) {
    return v != S(0);
  } else {
    // Through a wide real (or complex) type both ends convert to exactly.
    using Wide = std::conditional_t<std::is_same_v<S, double> || std::is_same_v<D, double> ||
                                        std::is_same_v<S, std::complex<double>> ||
                                        std::is_same_v<D, std::complex<double>> ||
                                        std::is_same_v<S, int64_t> || std::is_same_v<S, uint64_t>,
                                    double, float>;
    Wide w;
    if constexpr (kIsComplex<S>)
      w = static_cast<Wide>(v.real());
    else if constexpr (std::is_same_v<S, bool>)
      w = v ? Wide(1) : Wide(0);
    else
      w = static_cast<Wide>(v);
    D d;
    if constexpr (kIsComplex<D>) {
      if constexpr (kIsComplex<S>)
        d = D(v);
      else
        d = D(static_cast<typename D::value_type>(w), 0);
    } else if constexpr (std::is_same_v<S, int64_t> || std::is_same_v<S, uint64_t>) {
      // Integers go straight across (no detour through double's 53 bits).
      if constexpr (kIsFloating<D>)
        d = static_cast<D>(static_cast<float>(v));
      else
        d = static_cast<D>(v);
    } else if constexpr (kIsInteger<D>) {
      d = IntFromFloat<D>(w);
    } else {
      d = static_cast<D>(w);
    }
    return std::bit_cast<Dst>(d);
  }
}

// The significant bits of a floating type's values, the hidden bit included (a complex type's
// parts'); 0 for others.
template <typename T>
constexpr int MantissaDigits() {
  if constexpr (kIsComplex<T>) {
    return std::numeric_limits<typename T::value_type>::digits;
  } else if constexpr (kIsFloating<ComputeType<T>>) {
    return std::numeric_limits<ComputeType<T>>::digits;
  } else {
    return 0;
  }
}

// `v` with the low mantissa bits that Dst lacks zeroed (TF's LSBZeroSetter: NaN kept), for
// Cast with Truncate=True; complex values part by part.
template <typename Dst, typename S>
S ZeroLowBits(S v) {
  if constexpr (kIsComplex<S>) {
    return S(ZeroLowBits<Dst>(v.real()), ZeroLowBits<Dst>(v.imag()));
  } else {
    constexpr int kDropped = MantissaDigits<S>() - MantissaDigits<Dst>();
    static_assert(kDropped > 0, "truncation narrows the mantissa");
    using Bits = std::conditional_t<sizeof(S) == 8, uint64_t, uint32_t>;
    if (std::isnan(v)) return v;
    return std::bit_cast<S>(std::bit_cast<Bits>(v) & (~Bits{0} << kDropped));
  }
}

// Cast with Truncate=True (math::CastTruncates' pairs): each element's surplus mantissa bits
// zeroed, then converted as usual. False for a pair that does not narrow the mantissa.
bool CastTruncated(const KernelContext& ctx, const Tensor& x, Tensor* out) {
  using From = TypeList<float, double, std::complex<float>, std::complex<double>>;
  using To = TypeList<float, Half, BFloat16, std::complex<float>>;
  bool done = false;
  const Status s = Dispatch<From>(x.dtype(), [&](auto src_tag) {
    using Src = typename decltype(src_tag)::type;
    return Dispatch<To>(out->dtype(), [&](auto dst_tag) {
      using Dst = typename decltype(dst_tag)::type;
      if constexpr (MantissaDigits<Src>() > MantissaDigits<Dst>()) {
        const Src* in = x.data<Src>();
        Dst* o = out->data<Dst>();
        ctx.threads().ParallelFor(x.NumElements(), 4096, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) o[i] = CastValue<Src, Dst>(ZeroLowBits<Dst>(in[i]));
        });
        done = true;
      }
      return OkStatus();
    });
  });
  return s.ok() && done;
}

// The types the Eigen path below has always handled; the rest convert element by element.
template <typename T>
inline constexpr bool kEigenCastType = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                       kIsInteger<T> || std::is_same_v<T, bool>;

// float32 <-> float16/bfloat16 through vector_math's loops (F16C where the CPU has it): the
// casts at the edges of every half-precision region. False for other pairs.
bool CastHalfVectorised(const KernelContext& ctx, const Tensor& x, Tensor* out) {
  using Loop = void (*)(const void*, void*, int64_t);
  Loop loop = nullptr;
  const DType from = x.dtype(), to = out->dtype();
  if (from == DType::kHalf && to == DType::kFloat) {
    loop = [](const void* a, void* b, int64_t n) {
      vmath::HalfToFloat(static_cast<const uint16_t*>(a), static_cast<float*>(b), n);
    };
  } else if (from == DType::kFloat && to == DType::kHalf) {
    loop = [](const void* a, void* b, int64_t n) {
      vmath::FloatToHalf(static_cast<const float*>(a), static_cast<uint16_t*>(b), n);
    };
  } else if (from == DType::kBFloat16 && to == DType::kFloat) {
    loop = [](const void* a, void* b, int64_t n) {
      vmath::BFloat16ToFloat(static_cast<const uint16_t*>(a), static_cast<float*>(b), n);
    };
  } else if (from == DType::kFloat && to == DType::kBFloat16) {
    loop = [](const void* a, void* b, int64_t n) {
      vmath::FloatToBFloat16(static_cast<const float*>(a), static_cast<uint16_t*>(b), n);
    };
  }
  if (loop == nullptr) return false;
  const auto* in = static_cast<const char*>(x.raw_data());
  auto* o = static_cast<char*>(out->raw_data());
  const size_t in_size = DTypeSize(from), out_size = DTypeSize(to);
  ctx.threads().ParallelFor(x.NumElements(), 1 << 14, [&](int64_t b, int64_t e) {
    loop(in + b * in_size, o + b * out_size, e - b);
  });
  return true;
}

Status ComputeCast(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const auto& state = ctx.state<math::CastState>();
  const DType dst = state.dst;
  if (x.dtype() == dst) {
    ctx.SetOutput(0, x);
    return OkStatus();
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.ForwardInputOrAllocateOutput(0, 0, x.shape()));
  if (state.truncate && CastTruncated(ctx, x, out)) return OkStatus();
  if (CastHalfVectorised(ctx, x, out)) return OkStatus();
  return Dispatch<CastTypes>(x.dtype(), [&](auto src_tag) {
    using Src = typename decltype(src_tag)::type;
    return Dispatch<CastTypes>(dst, [&](auto dst_tag) {
      using Dst = typename decltype(dst_tag)::type;
      const int64_t n = x.NumElements();
      if constexpr (std::is_floating_point_v<Src> && kIsInteger<Dst> &&
                    !std::is_same_v<Dst, int32_t>) {
        // Float to integer: IntFromFloat's defined results (int32 keeps Eigen's vector
        // conversion, which is x86's cvtt already).
        const Src* in = Data<Src>(x);
        Dst* o = Data<Dst>(*out);
        ctx.threads().ParallelFor(n, 4096, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) o[i] = IntFromFloat<Dst>(in[i]);
        });
      } else if constexpr (kEigenCastType<Src> && kEigenCastType<Dst>) {
        functor::CastFunctor<EigenCpuDevice, Src, Dst>()(Cpu(),
                                                         functor::ConstFlat<Src>(Data<Src>(x), n),
                                                         functor::Flat<Dst>(Data<Dst>(*out), n));
      } else {
        const ComputeType<Src>* in = ComputeData<Src>(x);
        Dst* o = Data<Dst>(*out);
        ctx.threads().ParallelFor(n, 8, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) o[i] = CastValue<Src, Dst>(in[i]);
        });
      }
      return OkStatus();
    });
  });
}

// ---- tables ----------------------------------------------------------------------------------

constexpr KernelEntry kCpu[] = {
    {"Add", ComputeBinary<fn::Add, AddTypes>},
    {"AddV2", ComputeBinary<fn::Add, AddTypes>},
    {"Sub", ComputeBinary<fn::Sub, NumberTypes>},
    {"Mul", ComputeBinary<fn::Mul, NumberTypes>},
    {"RealDiv", ComputeBinary<fn::Div, NumberTypes>},
    {"Maximum", ComputeBinary<fn::Maximum, RealTypes>},
    {"Minimum", ComputeBinary<fn::Minimum, RealTypes>},
    {"Neg", ComputeUnary<fn::Neg, SignedNumberTypes>},
    {"Abs", ComputeUnary<fn::Abs, SignedRealTypes>},
    {"Square", ComputeUnary<fn::Square, NumberTypes>},
    {"Sqrt", ComputeUnary<fn::Sqrt, FloatAndComplexTypes>},
    {"Exp", ComputeUnary<fn::Exp, FloatAndComplexTypes>},
    {"Log", ComputeUnary<fn::Log, FloatAndComplexTypes>},
    {"Tanh", ComputeUnary<fn::Tanh, FloatAndComplexTypes>},
    {"Sigmoid", ComputeUnary<fn::Sigmoid, FloatAndComplexTypes>},
    {"Cast", ComputeCast},
};

}  // namespace

std::span<const KernelEntry> MathCpuKernels() { return kCpu; }

}  // namespace kiln::exec
