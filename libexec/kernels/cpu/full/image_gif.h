// GIF decoding for the image codec ops' CPU kernels (kernels/cpu/full/image_codec_ops.cc), in
// image_gif.cc: the frames as TensorFlow's gif_io.cc composes them from giflib's DGifSlurp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"

namespace kiln::exec {

struct GifFrames {
  int64_t frames = 0, height = 0, width = 0;
  std::vector<uint8_t> rgb;  // [frames, height, width, 3]
};

// Every frame of `data` (only the first unless `all_frames`) on a canvas of the largest frame's
// width and height: a frame starts as the previous one (black for the first), its transparent
// colour index keeps what is there, and it is clipped to the canvas. Errors read as TF's after
// "Invalid GIF data (size N), ".
Result<GifFrames> DecodeGif(std::string_view data, bool all_frames);

}  // namespace kiln::exec
