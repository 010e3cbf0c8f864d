// WebP decoding for the image codec ops' CPU kernels (kernels/cpu/full/image_codec_ops.cc), in
// image_webp.cc: libwebp's decoder for a still image, its demuxer's animation decoder for an
// animated one, as TensorFlow's webp_io.cc uses them.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "kiln/core/status.h"

namespace kiln::exec {

struct WebpFrames {
  int64_t frames = 0, height = 0, width = 0;
  int channels = 0;             // the file's: 4 with alpha or animated, 3 without
  std::vector<uint8_t> pixels;  // [frames, height, width, channels]
};

// The channels `data` decodes to (3 or 4), without decoding it; an error reads as TF's
// "Failed to decode WebP header."
Result<int> WebpChannels(std::string_view data);

// Every frame of `data` (only the first unless `all_frames`); an animation's frames are whole
// canvases, each composed on the ones before as the file says (libwebp's WebPAnimDecoder).
Result<WebpFrames> DecodeWebp(std::string_view data, bool all_frames);

}  // namespace kiln::exec
