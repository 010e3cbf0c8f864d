// What TensorFlow's session does with a fed numpy array, shared by savedmodel-cli run/bench and
// kiln-run: convert it to the input's dtype (numeric to numeric, with range and fraction checks).
#pragma once

#include <string_view>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"

namespace kiln::cli {

// `src` converted to `want` when they differ, `want` is numeric (integers, float32, float64) and
// `src` numeric, float16, bfloat16 or bool (NumPy's astype: float16 exactly, true as 1, false as
// 0); otherwise `src` itself, for the signature to refuse. An element the target type cannot
// hold (out of range, a fraction into an integer, NaN) is an error naming input `key`.
Result<Tensor> CastToInputDType(const Tensor& src, DType want, std::string_view key);

}  // namespace kiln::cli
