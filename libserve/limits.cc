#include "kiln/serve/limits.h"

namespace kiln::serve {

Result<Shape> CheckedShape(std::span<const int64_t> dims, DType dtype, const RequestLimits& limits,
                           std::string_view what) {
  if (dims.size() > static_cast<size_t>(kMaxRank))
    return InvalidArgument(what, ": rank ", dims.size(), " exceeds the supported maximum of ",
                           kMaxRank);
  const int64_t elem = DTypeIsPod(dtype) ? static_cast<int64_t>(DTypeSize(dtype)) : 1;
  const int64_t max_elements = limits.max_tensor_bytes / (elem > 0 ? elem : 1);
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return InvalidArgument(what, ": negative dimension ", d, " in the shape");
    if (d != 0 && n > max_elements / d)
      return InvalidArgument(what, ": a shape with dimension ", d,
                             " makes the tensor larger than the limit of ", limits.max_tensor_bytes,
                             " bytes");
    n *= d;
  }
  return Shape::FromDims(dims);
}

}  // namespace kiln::serve
