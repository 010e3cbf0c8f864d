#include "feed_convert.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kiln/core/allocator.h"

namespace kiln::cli {
namespace {

// The dtypes a fed array converts to (half, bfloat16 and bool inputs are fed as they are).
bool IsNumeric(DType t) { return IsInteger(t) || t == DType::kFloat || t == DType::kDouble; }
// The dtypes ElementAt reads: NumPy's astype converts float16 (and ml_dtypes' bfloat16) exactly
// and bool as 1 and 0.
bool IsConvertibleSource(DType t) {
  return IsNumeric(t) || t == DType::kHalf || t == DType::kBFloat16 || t == DType::kBool;
}

float HalfToFloat(uint16_t h) {
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  float v;
  if (exponent == 0) {
    v = std::ldexp(static_cast<float>(mantissa), -24);  // zero and subnormals
  } else if (exponent == 31) {
    v = mantissa == 0 ? std::numeric_limits<float>::infinity()
                      : std::numeric_limits<float>::quiet_NaN();
  } else {
    v = std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
  }
  return (h & 0x8000) != 0 ? -v : v;
}

float BFloat16ToFloat(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

// long double holds every int64/uint64 and double exactly, so casts through it check ranges
// and fractions without surprises.
long double ElementAt(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat:
      return t.data<float>()[i];
    case DType::kDouble:
      return t.data<double>()[i];
    case DType::kInt8:
      return t.data<int8_t>()[i];
    case DType::kInt16:
      return t.data<int16_t>()[i];
    case DType::kInt32:
      return t.data<int32_t>()[i];
    case DType::kInt64:
      return t.data<int64_t>()[i];
    case DType::kUInt8:
      return t.data<uint8_t>()[i];
    case DType::kUInt16:
      return t.data<uint16_t>()[i];
    case DType::kUInt32:
      return t.data<uint32_t>()[i];
    case DType::kUInt64:
      return t.data<uint64_t>()[i];
    case DType::kHalf:
      return HalfToFloat(t.data<Half>()[i].bits);
    case DType::kBFloat16:
      return BFloat16ToFloat(t.data<BFloat16>()[i].bits);
    case DType::kBool:
      return t.data<bool>()[i] ? 1 : 0;
    default:
      return 0;
  }
}

template <typename T>
Status CastInto(const Tensor& src, Tensor* dst, std::string_view key) {
  T* out = dst->data<T>();
  for (int64_t i = 0; i < src.NumElements(); ++i) {
    const long double v = ElementAt(src, i);
    if constexpr (std::is_integral_v<T>) {
      if (!std::isfinite(v) || v != std::floor(v) ||
          v < static_cast<long double>(std::numeric_limits<T>::min()) ||
          v > static_cast<long double>(std::numeric_limits<T>::max()))
        return InvalidArgument("input '", key, "': element ", i, " (", static_cast<double>(v),
                               ") of the ", DTypeShortName(src.dtype()),
                               " array is not representable as ", DTypeShortName(dst->dtype()));
    }
    out[i] = static_cast<T>(v);
  }
  return OkStatus();
}

}  // namespace

Result<Tensor> CastToInputDType(const Tensor& src, DType want, std::string_view key) {
  if (src.dtype() == want || !IsConvertibleSource(src.dtype()) || !IsNumeric(want)) return src;
  // Checked: a large array converted is a ResourceExhausted error when memory runs out.
  KILN_ASSIGN_OR_RETURN(Tensor dst, Tensor::Allocate(CpuAllocator(), want, src.shape()));
  switch (want) {
    case DType::kFloat:
      KILN_RETURN_IF_ERROR(CastInto<float>(src, &dst, key));
      break;
    case DType::kDouble:
      KILN_RETURN_IF_ERROR(CastInto<double>(src, &dst, key));
      break;
    case DType::kInt8:
      KILN_RETURN_IF_ERROR(CastInto<int8_t>(src, &dst, key));
      break;
    case DType::kInt16:
      KILN_RETURN_IF_ERROR(CastInto<int16_t>(src, &dst, key));
      break;
    case DType::kInt32:
      KILN_RETURN_IF_ERROR(CastInto<int32_t>(src, &dst, key));
      break;
    case DType::kInt64:
      KILN_RETURN_IF_ERROR(CastInto<int64_t>(src, &dst, key));
      break;
    case DType::kUInt8:
      KILN_RETURN_IF_ERROR(CastInto<uint8_t>(src, &dst, key));
      break;
    case DType::kUInt16:
      KILN_RETURN_IF_ERROR(CastInto<uint16_t>(src, &dst, key));
      break;
    case DType::kUInt32:
      KILN_RETURN_IF_ERROR(CastInto<uint32_t>(src, &dst, key));
      break;
    case DType::kUInt64:
      KILN_RETURN_IF_ERROR(CastInto<uint64_t>(src, &dst, key));
      break;
    default:
      return src;
  }
  return dst;
}

}  // namespace kiln::cli
