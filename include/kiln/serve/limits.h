// Limits on what one request may ask the server to do. Every decoder checks them before it
// allocates, so a hostile request costs at most what these numbers allow (TF Serving's
// CVE-2025-0649 class: unbounded JSON recursion; and shapes that claim 2^62 elements).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "kiln/core/dtype.h"
#include "kiln/core/shape.h"
#include "kiln/core/status.h"

namespace kiln::serve {

struct RequestLimits {
  int max_json_depth = 64;  // nesting of arrays/objects in a JSON body
  // What a JSON body may cost once parsed, estimated from its tokens before parsing: 60 MiB of
  // "{}," would otherwise become 2.3 GB of parsed objects.
  int64_t max_json_parsed_bytes = int64_t{512} << 20;
  int64_t max_tensor_bytes = int64_t{1} << 30;  // decoded size of one request tensor
  int64_t max_batch_rows = 1 << 20;             // instances in one row-format request
};

// The shape `dims` when every dimension is >= 0, the rank is supported and the tensor's
// decoded size (strings count 1 byte per element here; their bytes are checked as they are
// read) stays within limits.max_tensor_bytes. `what` names the tensor in errors.
Result<Shape> CheckedShape(std::span<const int64_t> dims, DType dtype, const RequestLimits& limits,
                           std::string_view what);

}  // namespace kiln::serve
