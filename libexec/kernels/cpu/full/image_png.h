// PNG decoding and encoding for the image codec ops' CPU kernels
// (kernels/cpu/full/image_codec_ops.cc), in image_png.cc.
#pragma once

#include <string>

#include "kiln/exec/op_table.h"

namespace kiln::exec {

// Decodes a PNG into a new output 0 of `dtype` (uint8 or uint16) with `channels` channels (0:
// the file's); *decoded points at it.
Status DecodePngInto(const KernelContext& ctx, int channels, const std::string& data, DType dtype,
                     Tensor** decoded);

// EncodePng: 8- or 16-bit gray, gray+alpha, RGB or RGBA at zlib level `compression`.
Status ComputeEncodePng(const KernelContext& ctx);

}  // namespace kiln::exec
