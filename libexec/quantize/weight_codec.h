// The numbers of weight quantization: a float32 weight encoded as symmetric int8 with one
// scale per tensor or per index of an axis, or as float16/bfloat16, and how far the decoded
// weight is from the original.
#pragma once

#include "kiln/core/dtype.h"
#include "kiln/core/status.h"
#include "kiln/core/tensor.h"

namespace kiln::exec::quantize {

struct EncodedWeight {
  Tensor stored;  // int8, float16 or bfloat16, the weight's shape
  // int8: the float32 scales, shaped to broadcast against the weight ([n, 1, ..., 1] for an
  // axis of size n; a scalar per tensor). Not set for half precision.
  Tensor scale;
  float min_scale = 0, max_scale = 0;
  double relative_error = 0;  // ||w - decoded|| / ||w|| (0 for an all-zero weight)
  double max_abs_error = 0;
};

// q = round(w / s) in [-127, 127] with s = max|w| / 127 over the tensor (axis -1) or over each
// index of `axis` (an all-zero slice gets s = 1). FailedPrecondition for non-finite weights.
Result<EncodedWeight> EncodeInt8(const Tensor& weight, int axis);

// Round to nearest even. FailedPrecondition for non-finite weights and, for float16, weights
// beyond its range (65504).
Result<EncodedWeight> EncodeHalf(const Tensor& weight, DType to);

}  // namespace kiln::exec::quantize
