// Tensor summaries beside Tensor::SummarizeValue (TF 2's numpy-like form).
#pragma once

#include <cstdint>
#include <string>

#include "kiln/core/tensor.h"

namespace kiln {

// TensorFlow's Tensor::SummarizeValue(max_entries, print_v2=false), what TF1's Print writes: the
// first max_entries elements (all when negative) in row-major order in nested brackets, "..."
// where cut; strings C-escaped without quotes, bools as 1 and 0.
std::string SummarizeValueV1(const Tensor& t, int64_t max_entries);

}  // namespace kiln
