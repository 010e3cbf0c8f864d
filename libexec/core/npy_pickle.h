// The data of an .npy file of Python objects (dtype 'O', which numpy.save pickles): an array of
// bytes or str, as TensorFlow's saved_model_cli reads one (np.load with allow_pickle) to feed a
// string input, such as encoded images whose bytes end in NULs that a fixed-width 'S' array
// would drop. The pickle is interpreted, never executed: a small machine that knows the opcodes
// of protocols 2 to 5 builds values in one arena (no recursion, no ownership cycles) and calls
// nothing; the result must be numpy's _reconstruct of an ndarray whose elements are bytes or
// str. Anything else is an error naming what was found.
#pragma once

#include <string_view>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"

namespace kiln::internal {

// A string tensor of `shape` (the .npy header's) from `pickle`, the bytes after the header.
Result<Tensor> DecodeNpyObjects(std::string_view pickle, const Shape& shape, std::string_view name);

}  // namespace kiln::internal
