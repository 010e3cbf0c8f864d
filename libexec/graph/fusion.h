// Prepare-time fusion: a matrix product or convolution and the chain of element-wise ops that
// follows it become one fused node (TF's _FusedMatMul / _FusedConv2D /
// _FusedDepthwiseConv2dNative), which oneDNN runs as one kernel with post-ops.
#pragma once

#include <vector>

#include "graph/flat_graph.h"

namespace kiln::exec {

// What the executor's first look at the graph found out about each node's outputs.
struct NodeFacts {
  std::vector<TensorSpec> specs;
  std::vector<const Tensor*> values;  // known at prepare time, else null
};

// The spec and the known value of edge e; null where the analysis has none (a node a rewrite
// added after it, an output it did not see, a value unknown at prepare time).
inline const TensorSpec* SpecAt(const std::vector<NodeFacts>& facts, const Edge& e) {
  if (e.node < 0 || e.node >= static_cast<int>(facts.size()) || e.output < 0 ||
      e.output >= static_cast<int>(facts[e.node].specs.size()))
    return nullptr;
  return &facts[e.node].specs[e.output];
}
inline const Tensor* ValueAt(const std::vector<NodeFacts>& facts, const Edge& e) {
  if (e.node < 0 || e.node >= static_cast<int>(facts.size()) || e.output < 0 ||
      e.output >= static_cast<int>(facts[e.node].values.size()))
    return nullptr;
  return facts[e.node].values[e.output];
}

// Rewrites `g` in place. For each float32 Conv2D, DepthwiseConv2dNative or MatMul whose output
// feeds only the next op, it absorbs, in order: a BiasAdd; adds, subtractions, products and
// divisions by constant per-channel vectors (the folded form of a Keras batch norm) and
// inference FusedBatchNorms with constant statistics, folded into the (constant) weights and a
// bias; one residual Add of a same-shaped tensor (unknown dims proved equal by their source,
// fusion_shapes.cc); and one activation (Relu, Relu6, Elu,
// LeakyRelu, Tanh, Sigmoid, x * sigmoid(x), TF's GELU, exact or tanh-approximated, or Keras's
// hard_swish, x * relu6(x + 3) / 6: fusion_activations.cc), and after
// the activation, products and sums by constant per-channel vectors (a batch norm after
// Conv or Dense(activation=...): kiln's _KilnScaleShift; float32, no other device). The chain
// may pass one view the per-channel ops commute with (a Squeeze of a size-1 spatial dim, a Reshape
// that keeps the channels innermost), which moves after the fused node. The last absorbed op
// becomes an Identity (or that view) of the fused node; the others lose their consumers and are
// pruned. Before that, Keras's layer normalization over the last axis (mean, variance, rsqrt, scale
// and shift) becomes TF's fused _MklLayerNorm. With `half` (another device in the load), float16
// and bfloat16 producers fuse too, their chains passing through a float32 batch norm between
// Casts (Keras's mixed precision; the folded weights and bias round to the producer's type
// once), and a float32 softmax or layer norm between a Cast from a half type and a Cast back
// runs in that type, and Keras's attention core (einsum, scale, optional additive mask, softmax,
// einsum) becomes one _KilnAttention (fusion_attention.cc). int8 bundles' FakeQuant inputs and
// int8-level weights make integer products (fusion_int8.cc), chained through 8-bit levels where
// nothing else reads between them; that needs `pruned` (the nodes left unread are not run). Returns
// how many rewrites it made.
int FuseGraph(FlatGraph* g, const std::vector<NodeFacts>& facts, const std::vector<char>& live,
              bool half = false, bool pruned = true);

}  // namespace kiln::exec
