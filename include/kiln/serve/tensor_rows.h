// Row (dimension 0) operations used by batching and by the row-oriented JSON formats.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kiln/core/status.h"
#include "kiln/core/tensor.h"

namespace kiln::serve {

// Stacks tensors along dimension 0. All parts must have the same dtype, rank >= 1 and the same
// dimensions after the first. `pad_to` > total rows appends copies of the first row (as TF
// Serving pads a batch up to an allowed size).
Result<Tensor> ConcatRows(std::span<const Tensor> parts, int64_t pad_to = 0);
// Rows [begin, begin + count) of t (rank >= 1), as a tensor of its own.
Tensor SliceRows(const Tensor& t, int64_t begin, int64_t count);

}  // namespace kiln::serve
