// Partitioned variables in a tensor bundle, as TensorFlow's savers write them: a variable saved
// in slices has one entry under its name (its full shape, the slices' extents) and one entry per
// slice under a key that encodes the name and the extents (TF's EncodeTensorNameSlice, in its
// OrderedCode); RestoreV2 asks for a slice with a spec such as "10 6 0,4:0,6" (the full shape,
// then start,length per dimension, "-" for a whole one).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/core/shape.h"
#include "kiln/core/status.h"

namespace kiln::exec::tensor_slices {

// (start, length) per dimension; length -1 is the whole dimension.
using Extents = std::vector<std::pair<int64_t, int64_t>>;

// The key of one stored slice's data.
std::string EncodeTensorNameSlice(std::string_view name, const Extents& slice);

struct ShapeAndSlice {
  Shape full;
  Extents slice;  // lengths resolved (no -1)
};
// A RestoreV2 shape_and_slices entry; errors say what is malformed.
Result<ShapeAndSlice> ParseShapeAndSlice(std::string_view spec);

}  // namespace kiln::exec::tensor_slices
