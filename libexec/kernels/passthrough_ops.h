// What EnsureShape's definition (kernels/passthrough_ops.cc) and CPU kernel
// (kernels/cpu/passthrough_ops.cc) share: its state and TF's way of printing a shape.
#pragma once

#include <string>

#include "kernels/array_util.h"

namespace kiln::exec::passthrough {

// ---- EnsureShape -----------------------------------------------------------------------------

using ShapeState = TypedOpState<PartialShape>;

// TF writes shapes in brackets with '?' for unknown dims: "[3,?]".
inline std::string BracketShape(const PartialShape& s) {
  if (s.unknown_rank()) return "<unknown>";
  std::string out = "[";
  for (int i = 0; i < s.rank(); ++i) {
    out += i ? "," : "";
    out += s.dim(i) < 0 ? "?" : std::to_string(s.dim(i));
  }
  return out + "]";
}

}  // namespace kiln::exec::passthrough
