// Element types, numbered as TensorFlow's DataType enum so protos convert by value.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "kiln/core/status.h"

namespace kiln {

class ResourceBase;
class VariantBase;

// Half-precision storage types: bit patterns only, no arithmetic.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

// The one list of dtypes: X(enumerator, TF number, C++ element type, TF enum name, python name).
#define KILN_DTYPES(X)                                                         \
  X(kFloat, 1, float, "DT_FLOAT", "float32")                                   \
  X(kDouble, 2, double, "DT_DOUBLE", "float64")                                \
  X(kInt32, 3, int32_t, "DT_INT32", "int32")                                   \
  X(kUInt8, 4, uint8_t, "DT_UINT8", "uint8")                                   \
  X(kInt16, 5, int16_t, "DT_INT16", "int16")                                   \
  X(kInt8, 6, int8_t, "DT_INT8", "int8")                                       \
  X(kString, 7, std::string, "DT_STRING", "string")                            \
  X(kComplex64, 8, std::complex<float>, "DT_COMPLEX64", "complex64")           \
  X(kInt64, 9, int64_t, "DT_INT64", "int64")                                   \
  X(kBool, 10, bool, "DT_BOOL", "bool")                                        \
  X(kBFloat16, 14, BFloat16, "DT_BFLOAT16", "bfloat16")                        \
  X(kUInt16, 17, uint16_t, "DT_UINT16", "uint16")                              \
  X(kComplex128, 18, std::complex<double>, "DT_COMPLEX128", "complex128")      \
  X(kHalf, 19, Half, "DT_HALF", "float16")                                     \
  X(kResource, 20, std::shared_ptr<ResourceBase>, "DT_RESOURCE", "resource")   \
  X(kVariant, 21, std::shared_ptr<const VariantBase>, "DT_VARIANT", "variant") \
  X(kUInt32, 22, uint32_t, "DT_UINT32", "uint32")                              \
  X(kUInt64, 23, uint64_t, "DT_UINT64", "uint64")

enum class DType : int {
  kInvalid = 0,
#define KILN_X(e, n, T, tf, py) e = n,
  KILN_DTYPES(KILN_X)
#undef KILN_X
};

// "DT_FLOAT"; "DT_INVALID" for kInvalid; "DT_<number>" for numbers we do not know.
std::string DTypeEnumName(DType t);
// "float32" (the name tf.float32 prints with); "invalid" for kInvalid.
std::string DTypeShortName(DType t);
// Size of one element in a tensor's flat byte layout; 0 for string, resource, variant.
size_t DTypeSize(DType t);
// True for dtypes whose elements are plain bytes (everything but string, resource, variant).
bool DTypeIsPod(DType t);
// Whether `number` is a dtype this runtime knows (the list above, or DT_INVALID).
bool DTypeIsKnown(int number);
// Parses "float32", "float", "DT_FLOAT", "int32", ...
Result<DType> DTypeFromName(std::string_view name);

template <typename T>
struct DTypeOf;
#define KILN_X(e, n, T, tf, py)              \
  template <>                                \
  struct DTypeOf<T> {                        \
    static constexpr DType value = DType::e; \
  };
KILN_DTYPES(KILN_X)
#undef KILN_X
template <typename T>
inline constexpr DType kDTypeOf = DTypeOf<T>::value;

}  // namespace kiln
