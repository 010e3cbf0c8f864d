// Image codecs: DecodeJpeg, DecodeAndCropJpeg, ExtractJpegShape, EncodeJpeg and
// EncodeJpegVariableQuality (libjpeg-turbo), DecodePng and EncodePng (libpng), DecodeBmp,
// DecodeGif (our own decoder, giflib's results), DecodeWebP (libwebp) and DecodeImage
// (tf.io.decode_image: any of them, as uint8, uint16 or float32 scaled to [0, 1]). As in
// TensorFlow (decode_image_op.cc), the decode ops sniff the contents and decode JPEG, PNG or GIF
// whichever they are named for (BMP only through DecodeBmp and DecodeImage; a GIF of one frame
// through DecodeJpeg and DecodePng; WebP through DecodeWebP, DecodeImage and DecodeGif, as
// [frames, h, w, c] uint8 of the file's 3 or 4 channels). The decoders set libjpeg and
// libpng up the way TensorFlow's jpeg_mem.cc and png_io.cc do, so the pixels are the ones
// TensorFlow gets from the same library versions:
//   - JPEG: channels 0 (the file's, CMYK converted to RGB), 1 or 3; ratio as the DCT scale
//     denominator; fancy_upscaling; dct_method "" and INTEGER_FAST = JDCT_IFAST (TF's default),
//     INTEGER_ACCURATE = JDCT_ISLOW; truncated data handled by TF's memory source (a fake EOI
//     with try_recover_truncated), rows short of acceptable_fraction an error, the rest black.
//   - PNG: channels 0 (the file's; palettes to RGB or RGBA), 1..4 with alpha added (opaque),
//     stripped or taken from tRNS, RGB to gray with ITU-R 601 weights; uint8 strips 16-bit
//     samples, uint16 widens 8-bit ones as v * 257.
//   - EncodeJpeg: TF's jpeg_mem.cc settings (quality, progressive, optimize_size, chroma
//     subsampling off when asked, JFIF density, an XMP APP1 marker); bytes may differ from TF's
//     with another libjpeg build, the decoded pixels do not.
//   - EncodePng: 8- or 16-bit gray, gray+alpha, RGB or RGBA, zlib level `compression` (-1 the
//     default), no interlace; byte streams may differ from TF's (another zlib build) but decode
//     to the same pixels.
// The CPU kernels are in kernels/cpu/full/image_codec_ops.cc (PNG: kernels/cpu/full/image_png.cc).
#include "kernels/full/image_codec_ops.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using image_codec::DecodeOp;
using image_codec::DecodeState;
using image_codec::EncodeState;
using image_codec::JpegEncodeState;

template <DecodeOp kOp>
Status PrepareDecode(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(kOp == DecodeOp::kJpegCrop ? 2 : 1));
  if (kOp == DecodeOp::kJpegCrop) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "crop_window", DType::kInt32));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "crop_window", 1));
  }
  auto st = std::make_shared<DecodeState>();
  st->op = kOp;
  KILN_PREPARE_ASSIGN(ctx, int64_t channels, ctx.attrs.GetInt("channels", 0));
  if (channels != 0 && channels != 1 && channels != 3 && channels != 4) {
    return ctx.Error("attr 'channels' must be 0, 1, 3 or 4, got ", channels);
  }
  if (kOp == DecodeOp::kBmp && channels == 1)
    return ctx.Error("attr 'channels' must be 0, 3 or 4 for BMP, got 1");
  if (kOp == DecodeOp::kWebp && channels == 1)
    return ctx.Error("attr 'channels' must be 0, 3 or 4 for WebP, got 1");
  st->channels = static_cast<int>(channels);
  if (kOp == DecodeOp::kPng) {
    KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("dtype", DType::kUInt8));
    KILN_RETURN_IF_ERROR(
        ExpectAttrDTypeIn(ctx, "dtype", st->dtype, {DType::kUInt8, DType::kUInt16}));
  } else if (kOp == DecodeOp::kImage) {
    KILN_PREPARE_ASSIGN(ctx, st->dtype, ctx.attrs.GetType("dtype", DType::kUInt8));
    KILN_RETURN_IF_ERROR(
        ExpectAttrDTypeIn(ctx, "dtype", st->dtype, {DType::kUInt8, DType::kUInt16, DType::kFloat}));
    KILN_PREPARE_ASSIGN(ctx, st->expand_animations, ctx.attrs.GetBool("expand_animations", true));
  } else if (kOp == DecodeOp::kJpeg || kOp == DecodeOp::kJpegCrop) {
    KILN_PREPARE_ASSIGN(ctx, int64_t ratio, ctx.attrs.GetInt("ratio", 1));
    if (ratio != 1 && ratio != 2 && ratio != 4 && ratio != 8) {
      return ctx.Error("attr 'ratio' must be 1, 2, 4, or 8, got ", ratio);
    }
    st->ratio = static_cast<int>(ratio);
    KILN_PREPARE_ASSIGN(ctx, st->fancy_upscaling, ctx.attrs.GetBool("fancy_upscaling", true));
    KILN_PREPARE_ASSIGN(ctx, st->try_recover_truncated,
                        ctx.attrs.GetBool("try_recover_truncated", false));
    KILN_PREPARE_ASSIGN(ctx, st->acceptable_fraction,
                        ctx.attrs.GetFloat("acceptable_fraction", 1.0f));
    KILN_PREPARE_ASSIGN(ctx, std::string dct, ctx.attrs.GetString("dct_method", ""));
    if (dct.empty() || dct == "INTEGER_FAST") {
      st->dct_method = JDCT_IFAST;
    } else if (dct == "INTEGER_ACCURATE") {
      st->dct_method = JDCT_ISLOW;
    } else {
      return ctx.Error(
          "attr 'dct_method' must be one of '', 'INTEGER_FAST', 'INTEGER_ACCURATE', "
          "got '",
          dct, "'");
    }
  }
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "contents", DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "contents", 0));
  ctx.outputs = {TensorSpec{st->dtype, PartialShape{-1, -1, channels == 0 ? -1 : channels}}};
  if (kOp == DecodeOp::kGif) ctx.outputs[0].shape = PartialShape{-1, -1, -1, 3};
  if (kOp == DecodeOp::kWebp)
    ctx.outputs[0].shape = PartialShape{-1, -1, -1, channels == 0 ? -1 : channels};
  // DecodeImage of a GIF is [frames, h, w, c] when animations expand: the rank is not known.
  if (kOp == DecodeOp::kImage && st->expand_animations)
    ctx.outputs[0].shape = PartialShape::UnknownRank();
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- DecodeAndCropJpeg, ExtractJpegShape
// ---------------------------------------------------------

Status PrepareExtractJpegShape(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "contents", DType::kString));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "contents", 0));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("output_type", DType::kInt32));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "output_type", t, {DType::kInt32, DType::kInt64}));
  ctx.outputs = {TensorSpec{t, PartialShape{3}}};
  return OkStatus();
}

// ---- EncodeJpeg, EncodeJpegVariableQuality
// --------------------------------------------------------

Status PrepareEncodeJpeg(PrepareContext& ctx) {
  const bool variable = ctx.op == "EncodeJpegVariableQuality";
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(variable ? 2 : 1));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, variable ? "images" : "image", DType::kUInt8));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, variable ? "images" : "image", 3));
  auto st = std::make_shared<JpegEncodeState>();
  if (variable) {
    KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 1, "quality", DType::kInt32));
    KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 1, "quality", 0));
  } else {
    KILN_PREPARE_ASSIGN(ctx, std::string format, ctx.attrs.GetString("format", ""));
    if (format == "grayscale") {
      st->channels = 1;
    } else if (format == "rgb") {
      st->channels = 3;
    } else if (!format.empty()) {
      return ctx.Error("attr 'format' must be '', 'grayscale' or 'rgb', got '", format, "'");
    }
    KILN_PREPARE_ASSIGN(ctx, int64_t quality, ctx.attrs.GetInt("quality", 95));
    if (quality < 0 || quality > 100) {
      return ctx.Error("quality must be in [0,100], got ", quality);
    }
    st->quality = static_cast<int>(quality);
    KILN_PREPARE_ASSIGN(ctx, st->progressive, ctx.attrs.GetBool("progressive", false));
    KILN_PREPARE_ASSIGN(ctx, st->optimize_size, ctx.attrs.GetBool("optimize_size", false));
    KILN_PREPARE_ASSIGN(ctx, st->chroma_downsampling,
                        ctx.attrs.GetBool("chroma_downsampling", true));
    KILN_PREPARE_ASSIGN(ctx, std::string unit, ctx.attrs.GetString("density_unit", "in"));
    if (unit != "in" && unit != "cm") {
      return ctx.Error("attr 'density_unit' must be 'in' or 'cm', got '", unit, "'");
    }
    st->density_unit = unit == "in" ? 1 : 2;
    KILN_PREPARE_ASSIGN(ctx, int64_t xd, ctx.attrs.GetInt("x_density", 300));
    KILN_PREPARE_ASSIGN(ctx, int64_t yd, ctx.attrs.GetInt("y_density", 300));
    if (xd < 0 || xd > 65535 || yd < 0 || yd > 65535) {
      return ctx.Error("x_density and y_density must be in [0, 65535], got ", xd, " and ", yd);
    }
    st->x_density = static_cast<int>(xd);
    st->y_density = static_cast<int>(yd);
    KILN_PREPARE_ASSIGN(ctx, st->xmp, ctx.attrs.GetString("xmp_metadata", ""));
  }
  ctx.outputs = {TensorSpec{DType::kString, PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

// ---- EncodePng ---------------------------------------------------------------------------------

Status PrepareEncodePng(PrepareContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.ExpectInputs(1));
  KILN_PREPARE_ASSIGN(ctx, DType t, ctx.attrs.GetType("T", DType::kUInt8));
  KILN_RETURN_IF_ERROR(ExpectAttrDTypeIn(ctx, "T", t, {DType::kUInt8, DType::kUInt16}));
  KILN_RETURN_IF_ERROR(ExpectInputDType(ctx, 0, "image", t));
  KILN_RETURN_IF_ERROR(ExpectInputRank(ctx, 0, "image", 3));
  auto st = std::make_shared<EncodeState>();
  KILN_PREPARE_ASSIGN(ctx, int64_t level, ctx.attrs.GetInt("compression", -1));
  if (level < -1 || level > 9) {
    return ctx.Error("attr 'compression' must be in [-1, 9], got ", level);
  }
  st->compression = static_cast<int>(level);
  const PartialShape& s = ctx.inputs[0].shape;
  if (!s.unknown_rank() && s.dim(2) >= 0 && (s.dim(2) < 1 || s.dim(2) > 4)) {
    return ctx.Error("image must have 1, 2, 3, or 4 channels, got shape ", s.ToPythonString());
  }
  ctx.outputs = {TensorSpec{DType::kString, PartialShape::Scalar()}};
  ctx.state = std::move(st);
  return OkStatus();
}

constexpr OpDefinition kDefs[] = {
    {"DecodeJpeg", "image", kOpFreshOutputs, PrepareDecode<DecodeOp::kJpeg>},
    {"DecodePng", "image", kOpFreshOutputs, PrepareDecode<DecodeOp::kPng>},
    {"DecodeImage", "image", kOpFreshOutputs, PrepareDecode<DecodeOp::kImage>},
    {"DecodeBmp", "image", kOpFreshOutputs, PrepareDecode<DecodeOp::kBmp>},
    {"DecodeGif", "image", kOpFreshOutputs, PrepareDecode<DecodeOp::kGif>},
    {"DecodeWebP", "image", kOpFreshOutputs, PrepareDecode<DecodeOp::kWebp>},
    {"EncodePng", "contents", kOpFreshOutputs, PrepareEncodePng},
    {"DecodeAndCropJpeg", "image", kOpFreshOutputs, PrepareDecode<DecodeOp::kJpegCrop>},
    {"ExtractJpegShape", "image_shape", kOpFreshOutputs, PrepareExtractJpegShape},
    {"EncodeJpeg", "contents", kOpFreshOutputs, PrepareEncodeJpeg},
    {"EncodeJpegVariableQuality", "contents", kOpFreshOutputs, PrepareEncodeJpeg},
};

}  // namespace

std::span<const OpDefinition> ImageCodecOpDefs() { return kDefs; }

}  // namespace kiln::exec
