// Running a float32 model in half precision (LoadOptions::precision, `--precision fp16|bf16`):
// on a load with an accelerator, the nodes that compute well in float16 or bfloat16 (products,
// convolutions, pooling, element-wise arithmetic and activations, softmax, normalizations' parts,
// data movement) switch to the half type; float32 constants they read are rounded once, a Cast
// is added where a float32 value enters the half region and where a half value leaves it (a
// node kept in float32, a result: the signature's dtypes do not change). What loses accuracy in
// half precision (exp, log, pow, sums of many terms, ...) stays float32, as TensorFlow's
// automatic mixed precision keeps its deny list. Fusion then fuses the half chains as it fuses a
// Keras mixed-precision model's. The GPU's half kernels accumulate in float32; the tolerance
// against float32 is the half type's (docs/gpu.md, "Precision").
#pragma once

#include <vector>

#include "graph/flat_graph.h"
#include "graph/fusion.h"

namespace kiln::exec {

// Rewrites `g` in place as above; `facts` is an analysis prepare of `g`. Returns how many nodes
// now compute in `half`; the caller prepares the graph again.
int ComputeFloatToHalf(FlatGraph* g, const std::vector<NodeFacts>& facts,
                       const std::vector<char>& live, DType half);

// With TF32 allowed (LoadOptions::precision kTF32), float32 products and convolutions carry
// the attr _kiln_allow_tf32 = true, which the GPU kernels read (cuBLASLt's fast TF32 compute,
// cuDNN's tensor-op math); returns how many nodes it marked.
int MarkTf32(FlatGraph* g, const std::vector<char>& live);

}  // namespace kiln::exec
