// What the image codec ops' definitions (kernels/full/image_codec_ops.cc) and CPU kernels
// (kernels/cpu/full/image_codec_ops.cc, image_png.cc, image_gif.cc) share: the decode ops and
// their state, and the encoders' states.
#pragma once

// jpeglib.h needs size_t and FILE declared before it.
// clang-format off
#include <cstddef>
#include <cstdio>
#include <jerror.h>
#include <jpeglib.h>
// clang-format on

#include <string>

#include "kiln/core/dtype.h"
#include "kiln/exec/op_table.h"

namespace kiln::exec::image_codec {

enum class DecodeOp { kJpeg, kPng, kImage, kBmp, kJpegCrop, kGif, kWebp };

struct DecodeState : OpState {
  DecodeOp op = DecodeOp::kJpeg;
  int channels = 0;
  DType dtype = DType::kUInt8;  // DecodeImage: uint8, uint16 or float32
  bool expand_animations = true;
  // JPEG
  int ratio = 1;
  bool fancy_upscaling = true;
  bool try_recover_truncated = false;
  float acceptable_fraction = 1;
  J_DCT_METHOD dct_method = JDCT_IFAST;
};

struct JpegEncodeState : OpState {
  int channels = 0;  // 0: the image's (1 or 3)
  int quality = 95;
  bool progressive = false;
  bool optimize_size = false;
  bool chroma_downsampling = true;
  int density_unit = 1;  // 1: dots per inch, 2: per cm
  int x_density = 300, y_density = 300;
  std::string xmp;
};

// EncodePng: the zlib level (-1: zlib's default).
struct EncodeState : OpState {
  int compression = -1;
};

}  // namespace kiln::exec::image_codec
