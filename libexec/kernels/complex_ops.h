// Complex's dtype helpers, shared by its definitions and its CPU kernels.
#pragma once

#include "kiln/core/dtype.h"

namespace kiln::exec::complex_ops {

// The real dtype of a complex one's parts, and back.
inline DType PartOf(DType complex) {
  return complex == DType::kComplex64 ? DType::kFloat : DType::kDouble;
}
inline DType ComplexOf(DType part) {
  return part == DType::kFloat ? DType::kComplex64 : DType::kComplex128;
}

}  // namespace kiln::exec::complex_ops
