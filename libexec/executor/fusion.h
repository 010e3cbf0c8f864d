// Prepare-time fusion: a matrix product or convolution and the chain of element-wise ops that
// follows it become one fused node (TF's _FusedMatMul / _FusedConv2D /
// _FusedDepthwiseConv2dNative), which oneDNN runs as one kernel with post-ops.
#pragma once

#include <vector>

#include "executor/flat_graph.h"

namespace kiln::exec {

// What the executor's first look at the graph found out about each node's outputs.
struct NodeFacts {
  std::vector<TensorSpec> specs;
  std::vector<const Tensor*> values;  // known at prepare time, else null
};

// Rewrites `g` in place. For each float32 Conv2D, DepthwiseConv2dNative or MatMul whose output
// feeds only the next op, it absorbs, in order: a BiasAdd; adds, subtractions, products and
// divisions by constant per-channel vectors (the folded form of a Keras batch norm) and
// inference FusedBatchNorms with constant statistics, folded into the (constant) weights and a
// bias; one residual Add of a same-shaped tensor; and one activation (Relu, Relu6, Elu,
// LeakyRelu, Tanh, Sigmoid, or x * sigmoid(x)). The last absorbed op becomes an Identity of the
// fused node; the others lose their consumers and are pruned. Returns how many fusions it made.
// Before that, Keras's layer normalization over the last axis (mean, variance, rsqrt, scale and
// shift) becomes TF's fused _MklLayerNorm. With `half`, float16 and bfloat16 producers fuse too (for an accelerator's native half
// kernels), their chains passing through a float32 batch norm between Casts (Keras's mixed
// precision); the folded weights and bias are rounded to the producer's type once.
int FuseGraph(FlatGraph* g, const std::vector<NodeFacts>& facts, const std::vector<char>& live,
              bool half = false);

}  // namespace kiln::exec
