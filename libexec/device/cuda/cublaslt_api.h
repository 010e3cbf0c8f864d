// cuBLASLt, loaded with dlopen the first time a matrix product is placed on a GPU: kiln links
// only the static CUDA runtime, so its programs start on machines without CUDA's libraries
// (TensorFlow's dso_loader does the same). The types come from cublasLt.h; the functions are
// pointers into libcublasLt.so.13.
#pragma once

#include <cublasLt.h>

#include "kiln/core/status.h"

namespace kiln::exec::cuda {

#define KILN_CUBLASLT_FUNCTIONS(X)        \
  X(cublasLtCreate)                       \
  X(cublasLtDestroy)                      \
  X(cublasLtMatmulDescCreate)             \
  X(cublasLtMatmulDescDestroy)            \
  X(cublasLtMatmulDescSetAttribute)       \
  X(cublasLtMatrixLayoutCreate)           \
  X(cublasLtMatrixLayoutDestroy)          \
  X(cublasLtMatrixLayoutSetAttribute)     \
  X(cublasLtMatmulPreferenceCreate)       \
  X(cublasLtMatmulPreferenceDestroy)      \
  X(cublasLtMatmulPreferenceSetAttribute) \
  X(cublasLtMatmulAlgoGetHeuristic)       \
  X(cublasLtMatmul)

struct BlasLtApi {
#define KILN_X(f) decltype(&::f) f = nullptr;
  KILN_CUBLASLT_FUNCTIONS(KILN_X)
#undef KILN_X
};

// The loaded library (process-wide), or why it could not be loaded.
Result<const BlasLtApi*> BlasLt();

// OK, or an error naming `what` and the cuBLAS status.
Status CheckBlas(cublasStatus_t status, std::string_view what);

}  // namespace kiln::exec::cuda
