// cuDNN, loaded with dlopen the first time a convolution is placed on a GPU (as cuBLASLt,
// cublaslt_api.h). The legacy convolution API of cuDNN 9 (still in every 9.x) is what kiln
// calls: descriptors per shape, the algorithm cuDNN measured fastest on them, one forward (or
// backward-data: Conv2DBackpropInput) call.
#pragma once

#include <cudnn.h>

#include "kiln/core/status.h"

namespace kiln::exec::cuda {

#define KILN_CUDNN_FUNCTIONS(X)                   \
  X(cudnnCreate)                                  \
  X(cudnnGetVersion)                              \
  X(cudnnSetStream)                               \
  X(cudnnGetErrorString)                          \
  X(cudnnCreateTensorDescriptor)                  \
  X(cudnnDestroyTensorDescriptor)                 \
  X(cudnnSetTensor4dDescriptor)                   \
  X(cudnnCreateFilterDescriptor)                  \
  X(cudnnDestroyFilterDescriptor)                 \
  X(cudnnSetFilter4dDescriptor)                   \
  X(cudnnCreateConvolutionDescriptor)             \
  X(cudnnDestroyConvolutionDescriptor)            \
  X(cudnnSetConvolution2dDescriptor)              \
  X(cudnnSetConvolutionGroupCount)                \
  X(cudnnSetConvolutionMathType)                  \
  X(cudnnGetConvolutionForwardAlgorithm_v7)       \
  X(cudnnFindConvolutionForwardAlgorithmEx)       \
  X(cudnnGetConvolutionForwardWorkspaceSize)      \
  X(cudnnConvolutionForward)                      \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7)  \
  X(cudnnFindConvolutionBackwardDataAlgorithmEx)  \
  X(cudnnGetConvolutionBackwardDataWorkspaceSize) \
  X(cudnnConvolutionBackwardData)

struct DnnApi {
#define KILN_X(f) decltype(&::f) f = nullptr;
  KILN_CUDNN_FUNCTIONS(KILN_X)
#undef KILN_X
};

// The loaded library (process-wide), or why it could not be loaded.
Result<const DnnApi*> Dnn();

// OK, or an error naming `what` and cuDNN's words for the status.
Status CheckDnn(cudnnStatus_t status, std::string_view what);

}  // namespace kiln::exec::cuda
