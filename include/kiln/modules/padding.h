// Padding and window geometry shared by the convolution and pooling layers (Keras's
// conv_utils): "valid" keeps only whole windows, "same" pads so that the output has
// ceil(input / stride) positions.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"

namespace kiln::modules {

enum class Padding { kValid, kSame };

// "valid" / "same" (Keras's spelling; TensorFlow's op attr is the upper-case form).
std::string_view PaddingName(Padding p);
Result<Padding> PaddingFromName(std::string_view name);

// Output positions of a window of `kernel` taps, `dilation` apart, moved by `stride` over
// `input` positions; -1 when the input is unknown. May be <= 0 for "valid" on a small input.
int64_t ConvOutputLength(int64_t input, int64_t kernel, Padding padding, int64_t stride,
                         int64_t dilation = 1);
// Conv2DTranspose's output positions (Keras's deconv_output_length, no output_padding).
int64_t DeconvOutputLength(int64_t input, int64_t kernel, Padding padding, int64_t stride,
                           int64_t dilation = 1);

// A per-dimension option (kernel_size, strides, ...) given as one value for all `n` spatial
// dimensions or one each; each must be positive. `what` names it in the error ("Conv2D
// 'conv2d': kernel_size").
Result<std::vector<int64_t>> SpatialOption(const std::vector<int64_t>& value, int n,
                                           std::string_view what);

}  // namespace kiln::modules
