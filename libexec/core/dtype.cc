#include "kiln/core/dtype.h"

namespace kiln {

std::string DTypeEnumName(DType t) {
  switch (t) {
    case DType::kInvalid:
      return "DT_INVALID";
#define KILN_X(e, n, T, tf, ...) \
  case DType::e:                 \
    return tf;
      KILN_DTYPES(KILN_X)
#undef KILN_X
  }
  return "DT_" + std::to_string(static_cast<int>(t));
}

std::string DTypeShortName(DType t) {
  switch (t) {
    case DType::kInvalid:
      return "invalid";
#define KILN_X(e, n, T, tf, py, ...) \
  case DType::e:                     \
    return py;
      KILN_DTYPES(KILN_X)
#undef KILN_X
  }
  return "dtype_" + std::to_string(static_cast<int>(t));
}

size_t DTypeSize(DType t) {
  if (!DTypeIsPod(t)) return 0;
  switch (t) {
#define KILN_X(e, n, T, ...) \
  case DType::e:             \
    return sizeof(T);
    KILN_DTYPES(KILN_X)
#undef KILN_X
    default:
      return 0;
  }
}

bool DTypeIsKnown(int number) {
  switch (number) {
    case 0:
#define KILN_X(e, n, ...) case n:
      KILN_DTYPES(KILN_X)
#undef KILN_X
      return true;
    default:
      return false;
  }
}

Result<DType> DTypeFromName(std::string_view name) {
  if (name == "float") return DType::kFloat;
  if (name == "double") return DType::kDouble;
  if (name == "half") return DType::kHalf;
#define KILN_X(e, n, T, tf, py, ...) \
  if (name == tf || name == py) return DType::e;
  KILN_DTYPES(KILN_X)
#undef KILN_X
  return InvalidArgument("unknown dtype name '", name, "' (expected e.g. float32, int32, string)");
}

Result<DType> DTypeFromProto(int n) {
  if (n == 0) return DType::kInvalid;
  if (!DTypeIsKnown(n)) {
    if (n > 100 && n < 200)
      return Unimplemented("reference dtype ", n, " (TF1 _ref types) is not supported");
    return InvalidArgument("unknown DataType number ", n);
  }
  return static_cast<DType>(n);
}

int DTypeToProto(DType t) { return static_cast<int>(t); }

}  // namespace kiln
