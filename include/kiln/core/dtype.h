// Element types, numbered as TensorFlow's DataType enum so protos convert by value.
#pragma once

#include <array>
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
// 8-bit floating point (OCP FP8, as TF and ml_dtypes have them): e5m2 has IEEE infinities and
// NaNs, e4m3fn ("finite") has no infinity and one NaN pattern per sign. Bit patterns only.
struct Float8E5M2 {
  uint8_t bits;
};
struct Float8E4M3FN {
  uint8_t bits;
};

// Quantized storage types (TF's qint8, quint8, ...): an integer whose meaning, a float range,
// travels beside the tensor as min/max inputs; distinct types so the list maps each to one dtype.
struct QInt8 {
  int8_t value;
};
struct QUInt8 {
  uint8_t value;
};
struct QInt16 {
  int16_t value;
};
struct QUInt16 {
  uint16_t value;
};
struct QInt32 {
  int32_t value;
};

// Element types that refer to runtime objects (the list's C++ types for resource, variant).
using ResourcePtr = std::shared_ptr<ResourceBase>;
using VariantPtr = std::shared_ptr<const VariantBase>;

// The one list of dtypes. Columns:
//   X(enumerator, TF number, C++ element type, TF enum name, python name,
//     f: floating point, i: integer, s: signed, c: complex, q: quantized, p: POD, h: handle)
// The last seven are 0/1: "integer" excludes bool; "signed" holds for every signed integer,
// floating-point and complex type; "POD" means elements are plain bytes (memcpy-able, sized by
// DTypeSize); "handle" marks elements that refer to runtime objects (resources, variants).
// The predicates below (IsFloatingPoint, ...) come from these columns.
//                                                                        f  i  s  c  q  p  h
// clang-format off
#define KILN_DTYPES(X)                                                                          \
  X(kFloat,      1,  float,                "DT_FLOAT",      "float32",    1, 0, 1, 0, 0, 1, 0)  \
  X(kDouble,     2,  double,               "DT_DOUBLE",     "float64",    1, 0, 1, 0, 0, 1, 0)  \
  X(kInt32,      3,  int32_t,              "DT_INT32",      "int32",      0, 1, 1, 0, 0, 1, 0)  \
  X(kUInt8,      4,  uint8_t,              "DT_UINT8",      "uint8",      0, 1, 0, 0, 0, 1, 0)  \
  X(kInt16,      5,  int16_t,              "DT_INT16",      "int16",      0, 1, 1, 0, 0, 1, 0)  \
  X(kInt8,       6,  int8_t,               "DT_INT8",       "int8",       0, 1, 1, 0, 0, 1, 0)  \
  X(kString,     7,  std::string,          "DT_STRING",     "string",     0, 0, 0, 0, 0, 0, 0)  \
  X(kComplex64,  8,  std::complex<float>,  "DT_COMPLEX64",  "complex64",  0, 0, 1, 1, 0, 1, 0)  \
  X(kInt64,      9,  int64_t,              "DT_INT64",      "int64",      0, 1, 1, 0, 0, 1, 0)  \
  X(kBool,       10, bool,                 "DT_BOOL",       "bool",       0, 0, 0, 0, 0, 1, 0)  \
  X(kQInt8,      11, QInt8,                "DT_QINT8",      "qint8",      0, 0, 1, 0, 1, 1, 0)  \
  X(kQUInt8,     12, QUInt8,               "DT_QUINT8",     "quint8",     0, 0, 0, 0, 1, 1, 0)  \
  X(kQInt32,     13, QInt32,               "DT_QINT32",     "qint32",     0, 0, 1, 0, 1, 1, 0)  \
  X(kBFloat16,   14, BFloat16,             "DT_BFLOAT16",   "bfloat16",   1, 0, 1, 0, 0, 1, 0)  \
  X(kQInt16,     15, QInt16,               "DT_QINT16",     "qint16",     0, 0, 1, 0, 1, 1, 0)  \
  X(kQUInt16,    16, QUInt16,              "DT_QUINT16",    "quint16",    0, 0, 0, 0, 1, 1, 0)  \
  X(kUInt16,     17, uint16_t,             "DT_UINT16",     "uint16",     0, 1, 0, 0, 0, 1, 0)  \
  X(kComplex128, 18, std::complex<double>, "DT_COMPLEX128", "complex128", 0, 0, 1, 1, 0, 1, 0)  \
  X(kHalf,       19, Half,                 "DT_HALF",       "float16",    1, 0, 1, 0, 0, 1, 0)  \
  X(kResource,   20, ResourcePtr,          "DT_RESOURCE",   "resource",   0, 0, 0, 0, 0, 0, 1)  \
  X(kVariant,    21, VariantPtr,           "DT_VARIANT",    "variant",    0, 0, 0, 0, 0, 0, 1)  \
  X(kUInt32,     22, uint32_t,             "DT_UINT32",     "uint32",     0, 1, 0, 0, 0, 1, 0)  \
  X(kUInt64,     23, uint64_t,             "DT_UINT64",     "uint64",     0, 1, 0, 0, 0, 1, 0)  \
  X(kFloat8E5M2, 24, Float8E5M2,       "DT_FLOAT8_E5M2", "float8_e5m2", 1, 0, 1, 0, 0, 1, 0)  \
  X(kFloat8E4M3FN, 25, Float8E4M3FN, "DT_FLOAT8_E4M3FN", "float8_e4m3fn", 1, 0, 1, 0, 0, 1, 0)
// clang-format on

enum class DType : int {
  kInvalid = 0,
#define KILN_X(e, n, ...) e = n,
  KILN_DTYPES(KILN_X)
#undef KILN_X
};

// "DT_FLOAT"; "DT_INVALID" for kInvalid; "DT_<number>" for numbers we do not know.
std::string DTypeEnumName(DType t);
// "float32" (the name tf.float32 prints with); "invalid" for kInvalid.
std::string DTypeShortName(DType t);
// Size of one element in a tensor's flat byte layout; 0 for string, resource, variant.
size_t DTypeSize(DType t);

// The 0/1 columns of KILN_DTYPES for one dtype; all false for kInvalid and unknown numbers.
struct DTypeTraits {
  bool floating_point = false, integer = false, is_signed = false, complex = false,
       quantized = false, pod = false, handle = false;
};

namespace internal {
// The columns by TF number (every number in the list is below 32).
inline constexpr std::array<DTypeTraits, 32> kDTypeTraits = [] {
  std::array<DTypeTraits, 32> traits{};
#define KILN_X(e, n, T, tf, py, fp, integer, sign, cplx, quant, pod, handle) \
  traits[n] = {bool(fp),    bool(integer), bool(sign),  bool(cplx),          \
               bool(quant), bool(pod),     bool(handle)};
  KILN_DTYPES(KILN_X)
#undef KILN_X
  return traits;
}();
}  // namespace internal

constexpr DTypeTraits TraitsOf(DType t) {
  const auto n = static_cast<size_t>(t);
  return n < internal::kDTypeTraits.size() ? internal::kDTypeTraits[n] : DTypeTraits{};
}

// half, bfloat16, float32, float64 and the float8 types (TF's DataTypeIsFloating).
constexpr bool IsFloatingPoint(DType t) { return TraitsOf(t).floating_point; }
// int8 ... uint64; not bool (TF's DataTypeIsInteger).
constexpr bool IsInteger(DType t) { return TraitsOf(t).integer; }
// Signed integers, floating-point and complex types.
constexpr bool IsSigned(DType t) { return TraitsOf(t).is_signed; }
// uint8 ... uint64 (TF's DataTypeIsUnsigned).
constexpr bool IsUnsignedInteger(DType t) { return IsInteger(t) && !IsSigned(t); }
// complex64, complex128.
constexpr bool IsComplex(DType t) { return TraitsOf(t).complex; }
// qint8, quint8, qint16, quint16, qint32.
constexpr bool IsQuantized(DType t) { return TraitsOf(t).quantized; }
// Floating-point or integer: the dtypes host numbers convert to.
constexpr bool IsRealNumber(DType t) { return IsFloatingPoint(t) || IsInteger(t); }
// Elements are plain bytes (everything but string, resource, variant).
constexpr bool DTypeIsPod(DType t) { return TraitsOf(t).pod; }
// Elements refer to runtime objects (resource, variant): they have no value to store in a
// constant or a checkpoint.
constexpr bool IsHandle(DType t) { return TraitsOf(t).handle; }
// Elements are data a constant, a checkpoint or a .npy file can hold: POD types and strings.
constexpr bool HoldsData(DType t) { return DTypeIsPod(t) || t == DType::kString; }
// Whether `number` is a dtype this runtime knows (the list above, or DT_INVALID).
bool DTypeIsKnown(int number);
// A TensorFlow DataType number as a DType: an error for unknown numbers and the TF1 _ref
// types; 0 (DT_INVALID) is DType::kInvalid.
Result<DType> DTypeFromProto(int dtype_number);
int DTypeToProto(DType t);
// Parses "float32", "float", "DT_FLOAT", "int32", ...
Result<DType> DTypeFromName(std::string_view name);

template <typename T>
struct DTypeOf;
#define KILN_X(e, n, T, ...)                 \
  template <>                                \
  struct DTypeOf<T> {                        \
    static constexpr DType value = DType::e; \
  };
KILN_DTYPES(KILN_X)
#undef KILN_X
template <typename T>
inline constexpr DType kDTypeOf = DTypeOf<T>::value;

}  // namespace kiln
