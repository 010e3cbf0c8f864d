// TensorFlow writes a dilated (atrous) convolution as SpaceToBatchND, a dense convolution and
// BatchToSpaceND (tf.nn.convolution's with_space_to_batch, behind every Keras Conv1D, Conv2D and
// DepthwiseConv2D with dilation_rate > 1: TCNs, WaveNets, DeepLab). Run as written, each call
// shuffles the activations into d blocks and back around every convolution; oneDNN computes the
// dilated convolution directly, reading the input once.
#pragma once

#include <vector>

#include "graph/flat_graph.h"
#include "graph/fusion.h"

namespace kiln::exec {

// Whether `g` has a live SpaceToBatchND (a cheap look; no values needed).
bool HasSpaceToBatch(const FlatGraph& g, const std::vector<char>& live);

// Rewrites in place each live SpaceToBatchND (x, block, paddings) -> [ExpandDims of axis 1] ->
// Conv2D or DepthwiseConv2dNative (NHWC, VALID, strides and dilations 1) -> [Squeeze] ->
// BatchToSpaceND (block, crops), each read only by the next and block, paddings and crops known
// in `facts`, where the padded input divides by the block and no crop exceeds its padding: the
// convolution reads x with dilations `block` and explicit padding `paddings - crops`, and what
// read the BatchToSpaceND reads the convolution (or its Squeeze). The SpaceToBatchND and
// BatchToSpaceND are left unread (the caller marks what is live again). Returns how many
// convolutions it rewrote.
int FoldSpaceToBatchConvolutions(FlatGraph* g, const std::vector<NodeFacts>& facts,
                                 const std::vector<char>& live);

}  // namespace kiln::exec
