// str() of a NumPy array as `saved_model_cli run` prints each output: 0-d "61.0", 1-d
// "[1. 2. 3.]", "[[1 2]\n [3 4]]", with numpy's default print options (precision 8, 75 columns,
// "..." beyond 1000 elements). Deviations from numpy are listed in docs/cli.md.
#pragma once

#include <string>

#include "kiln/core/tensor.h"

namespace kiln::cli {

std::string NumpyStr(const Tensor& tensor);

}  // namespace kiln::cli
