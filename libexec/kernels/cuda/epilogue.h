// The fused epilogue of a product or convolution (Epilogue, read by the CPU's kernels)
// as the GPU's activation kinds: shared by matmul.cc and conv.cc (host code, not nvcc's).
#pragma once

#include "kernels/cuda/cuda_kernels.h"
#include "kernels/epilogue.h"

namespace kiln::exec::cuda {

// The GPU activation of a fused op's activation (kRelu for kNone and kRelu: callers check).
Activation ActivationOf(Epilogue::Act act);

}  // namespace kiln::exec::cuda
