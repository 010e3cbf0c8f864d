// Element-type lists: one list per kind of op says both which dtypes Prepare accepts and which
// C++ types the kernel is instantiated for, so the two can never disagree.
#pragma once

#include <Eigen/Core>
#include <array>
#include <complex>
#include <string>
#include <type_traits>

#include "kiln/core/dtype.h"
#include "kiln/core/float8.h"
#include "kiln/core/status.h"
#include "kiln/core/tensor.h"

namespace kiln::exec {

template <typename... Ts>
struct TypeList {
  static constexpr std::array<DType, sizeof...(Ts)> kDTypes = {kDTypeOf<Ts>...};
  static constexpr bool Contains(DType t) {
    for (DType d : kDTypes)
      if (d == t) return true;
    return false;
  }
};

// Standard lists, named as TensorFlow's kernel registrations group types.
using FloatTypes = TypeList<float, double, Half, BFloat16>;
using SignedIntTypes = TypeList<int8_t, int16_t, int32_t, int64_t>;
using IntTypes = TypeList<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;
using RealTypes = TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t,
                           uint8_t, uint16_t, uint32_t, uint64_t>;
using SignedRealTypes = TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t>;
using RealAndBoolTypes = TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t,
                                  uint8_t, uint16_t, uint32_t, uint64_t, bool>;
using RealBoolStringTypes =
    TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
             uint32_t, uint64_t, bool, std::string>;
using RealAndStringTypes = TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t,
                                    int64_t, uint8_t, uint16_t, uint32_t, uint64_t, std::string>;
// The four types of kernels that take no half precision or narrow integers (fill, pooling's
// double path, resource arithmetic): float, double, int32, int64.
using BasicRealTypes = TypeList<float, double, int32_t, int64_t>;
using BasicFloatTypes = TypeList<float, double>;
// TF's "number" types: real and complex.
using NumberTypes =
    TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
             uint32_t, uint64_t, std::complex<float>, std::complex<double>>;
// Every type a tensor holds data in, quantized types aside (equality, selection, scatter updates).
using NumberBoolStringTypes =
    TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
             uint32_t, uint64_t, bool, std::string, std::complex<float>, std::complex<double>>;
using NumberAndStringTypes =
    TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
             uint32_t, uint64_t, std::complex<float>, std::complex<double>, std::string>;
using SignedNumberTypes = TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t,
                                   std::complex<float>, std::complex<double>>;
// Every dtype, quantized and handles (resources, variants) included: kernels that only move
// elements (TF's Select, for one, takes them all).
using AllTypes =
    TypeList<float, double, Half, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t,
             uint32_t, uint64_t, bool, std::string, std::complex<float>, std::complex<double>,
             QInt8, QUInt8, QInt16, QUInt16, QInt32, ResourcePtr, VariantPtr>;
// Floating-point and complex (TF's exp, log, sqrt, tanh kernels).
using FloatAndComplexTypes =
    TypeList<float, double, Half, BFloat16, std::complex<float>, std::complex<double>>;

template <typename List>
struct ListDispatch;
template <typename... Ts>
struct ListDispatch<TypeList<Ts...>> {
  template <typename F>
  static Status Run(DType dt, F&& f) {
    Status result;
    bool found = false;
    (void)((dt == kDTypeOf<Ts> ? (result = f(std::type_identity<Ts>{}), found = true) : false) ||
           ...);
    // Built only on the error path: running stays free of string work.
    if (!found) return Internal("no kernel instantiated for dtype ", DTypeShortName(dt));
    return result;
  }
};

// Calls f(std::type_identity<T>{}) for the T of `List` whose dtype is `dt`; an Internal error for
// any other dtype (Prepare has rejected those already).
template <typename List, typename F>
Status Dispatch(DType dt, F&& f) {
  return ListDispatch<List>::Run(dt, std::forward<F>(f));
}

// The type kernels compute with: the storage types Half and BFloat16 become Eigen's arithmetic
// types of the same layout.
template <typename T>
struct ComputeTypeOf {
  using type = T;
};
template <>
struct ComputeTypeOf<Half> {
  using type = Eigen::half;
};
template <>
struct ComputeTypeOf<BFloat16> {
  using type = Eigen::bfloat16;
};
template <>
struct ComputeTypeOf<Float8E5M2> {
  using type = F8E5M2;
};
template <>
struct ComputeTypeOf<Float8E4M3FN> {
  using type = F8E4M3FN;
};
template <typename T>
using ComputeType = typename ComputeTypeOf<T>::type;
static_assert(sizeof(Eigen::half) == sizeof(Half) && sizeof(Eigen::bfloat16) == sizeof(BFloat16));

template <typename T>
const ComputeType<T>* ComputeData(const Tensor& t) {
  return reinterpret_cast<const ComputeType<T>*>(t.data<T>());
}
template <typename T>
ComputeType<T>* MutableComputeData(Tensor* t) {
  return reinterpret_cast<ComputeType<T>*>(t->data<T>());
}

// Traits that work for both storage and compute types.
template <typename T>
inline constexpr bool kIsFloating =
    std::is_floating_point_v<T> || std::is_same_v<T, Eigen::half> ||
    std::is_same_v<T, Eigen::bfloat16> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <typename T>
inline constexpr bool kIsInteger = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <typename T>
inline constexpr bool kIsComplex =
    std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

}  // namespace kiln::exec
