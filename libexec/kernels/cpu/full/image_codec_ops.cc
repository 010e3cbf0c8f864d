// The CPU kernels of the image codec ops in kernels/full/image_codec_ops.cc: JPEG (libjpeg-turbo)
// and BMP here, PNG (libpng) in kernels/cpu/full/image_png.cc, the libraries set up as TensorFlow's
// jpeg_mem.cc and png_io.cc set them up (kernels/full/image_codec_ops.cc says how).
// libjpeg and libpng report fatal errors by longjmp: the functions that call them hold no C++
// objects with destructors between their setjmp and the library calls.
// jpeglib.h needs size_t and FILE declared before it.
// clang-format off
#include <cstddef>
#include <cstdio>
#include <jerror.h>
#include <jpeglib.h>
// clang-format on

#include "kernels/full/image_codec_ops.h"

#include <algorithm>
#include <csetjmp>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/cpu/full/image_gif.h"
#include "kernels/cpu/full/image_png.h"
#include "kernels/cpu/full/image_webp.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

using image_codec::DecodeOp;
using image_codec::DecodeState;
using image_codec::JpegEncodeState;

enum class Format { kUnknown, kJpeg, kPng, kGif, kBmp, kWebp };

Format Classify(std::string_view data) {
  auto starts = [&](std::string_view magic) { return data.substr(0, magic.size()) == magic; };
  if (starts(std::string_view("\xff\xd8\xff", 3))) return Format::kJpeg;
  if (starts(std::string_view("\x89PNG\r\n\x1a\n", 8))) return Format::kPng;
  if (starts("GIF")) return Format::kGif;
  if (starts("BM")) return Format::kBmp;
  if (starts("RIFF") && data.size() > 12 && data.substr(8, 4) == "WEBP") return Format::kWebp;
  return Format::kUnknown;
}

// ---- JPEG --------------------------------------------------------------------------------------

struct JpegError {
  jpeg_error_mgr mgr;
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void JpegErrorExit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}
void JpegOutputMessage(j_common_ptr) {}  // warnings are not printed

// TensorFlow's memory source (jpeg_handle.cc): an empty input or a read past the end is an error,
// unless try_recover_truncated, which first feeds a fake EOI marker.
struct JpegSource {
  jpeg_source_mgr pub;
  const JOCTET* data;
  bool try_recover;
};
const JOCTET kFakeEoi[2] = {0xff, JPEG_EOI};

void SourceInit(j_decompress_ptr) {}
void SourceTerm(j_decompress_ptr) {}
boolean SourceFill(j_decompress_ptr cinfo) {
  auto* src = reinterpret_cast<JpegSource*>(cinfo->src);
  if (src->pub.bytes_in_buffer == 0 && src->pub.next_input_byte == src->data) {
    ERREXIT(cinfo, JERR_INPUT_EMPTY);
    return FALSE;
  }
  if (src->pub.bytes_in_buffer != 0) return src->try_recover ? TRUE : FALSE;
  if (src->pub.next_input_byte != kFakeEoi && src->try_recover) {
    WARNMS(cinfo, JWRN_JPEG_EOF);
    src->pub.next_input_byte = kFakeEoi;
    src->pub.bytes_in_buffer = 2;
    return TRUE;
  }
  ERREXIT(cinfo, JERR_FILE_READ);
  return FALSE;
}
void SourceSkip(j_decompress_ptr cinfo, long jump) {  // NOLINT(google-runtime-int): libjpeg's
  auto* src = reinterpret_cast<JpegSource*>(cinfo->src);
  if (jump < 0) return;
  if (static_cast<size_t>(jump) > src->pub.bytes_in_buffer) {
    src->pub.bytes_in_buffer = 0;
    (void)SourceFill(cinfo);
  } else {
    src->pub.bytes_in_buffer -= jump;
    src->pub.next_input_byte += jump;
  }
}

struct JpegDecoder {
  jpeg_decompress_struct cinfo;
  JpegError err;
  JpegSource src;
  bool created = false;
  int components = 0;
  bool cmyk = false;
};

// Reads the header and sets the output parameters. False on a libjpeg error (err.message).
bool JpegStart(JpegDecoder* d, const DecodeState& st, const std::string& data) {
  d->cinfo.err = jpeg_std_error(&d->err.mgr);
  d->err.mgr.error_exit = JpegErrorExit;
  d->err.mgr.output_message = JpegOutputMessage;
  d->err.message[0] = '\0';
  if (setjmp(d->err.jump)) return false;
  jpeg_create_decompress(&d->cinfo);
  d->created = true;
  d->src.pub.init_source = SourceInit;
  d->src.pub.fill_input_buffer = SourceFill;
  d->src.pub.skip_input_data = SourceSkip;
  d->src.pub.resync_to_restart = jpeg_resync_to_restart;
  d->src.pub.term_source = SourceTerm;
  d->src.data = reinterpret_cast<const JOCTET*>(data.data());
  d->src.pub.next_input_byte = d->src.data;
  d->src.pub.bytes_in_buffer = data.size();
  d->src.try_recover = st.try_recover_truncated;
  d->cinfo.src = &d->src.pub;
  jpeg_read_header(&d->cinfo, TRUE);
  d->components = st.channels == 0 ? std::min(d->cinfo.num_components, 3) : st.channels;
  if (d->components == 1) {
    d->cinfo.out_color_space = JCS_GRAYSCALE;
  } else {
    d->cmyk = d->cinfo.jpeg_color_space == JCS_CMYK || d->cinfo.jpeg_color_space == JCS_YCCK;
    d->cinfo.out_color_space = d->cmyk ? JCS_CMYK : JCS_RGB;
  }
  d->cinfo.do_fancy_upsampling = st.fancy_upscaling ? TRUE : FALSE;
  d->cinfo.scale_num = 1;
  d->cinfo.scale_denom = st.ratio;
  d->cinfo.dct_method = st.dct_method;
  jpeg_calc_output_dimensions(&d->cinfo);
  return true;
}

// Decodes the scanlines into `out` (height x width x components); `cmyk_row` holds one CMYK row.
// Sets *rows_read; false on a libjpeg error.
bool JpegRead(JpegDecoder* d, uint8_t* out, JSAMPLE* cmyk_row, int64_t* rows_read,
              bool try_recover) {
  if (setjmp(d->err.jump)) return false;
  jpeg_start_decompress(&d->cinfo);
  const int64_t height = d->cinfo.output_height, width = d->cinfo.output_width;
  const int64_t stride = width * d->components;
  *rows_read = height;
  bool truncated = false;
  uint8_t* line = out;
  while (d->cinfo.output_scanline < d->cinfo.output_height) {
    JSAMPLE* target = d->cmyk ? cmyk_row : line;
    const JDIMENSION n = jpeg_read_scanlines(&d->cinfo, &target, 1);
    if (n == 0) {
      if (!try_recover) {
        *rows_read = d->cinfo.output_scanline;
        truncated = true;
      } else {
        for (int64_t r = d->cinfo.output_scanline; r < height; ++r, line += stride) {
          if (r == 0) {
            std::memset(line, 0, stride);
          } else {
            std::memcpy(line, line - stride, stride);
          }
        }
        d->cinfo.output_scanline = d->cinfo.output_height;
      }
      break;
    }
    if (d->cmyk) {
      for (int64_t x = 0; x < width; ++x) {
        const int c = cmyk_row[4 * x], m = cmyk_row[4 * x + 1], y = cmyk_row[4 * x + 2],
                  k = cmyk_row[4 * x + 3];
        if (d->cinfo.saw_Adobe_marker) {
          line[3 * x] = static_cast<uint8_t>((k * c) / 255);
          line[3 * x + 1] = static_cast<uint8_t>((k * m) / 255);
          line[3 * x + 2] = static_cast<uint8_t>((k * y) / 255);
        } else {
          line[3 * x] = static_cast<uint8_t>((255 - k) * (255 - c) / 255);
          line[3 * x + 1] = static_cast<uint8_t>((255 - k) * (255 - m) / 255);
          line[3 * x + 2] = static_cast<uint8_t>((255 - k) * (255 - y) / 255);
        }
      }
    }
    line += stride;
  }
  if (truncated) {
    jpeg_abort(reinterpret_cast<j_common_ptr>(&d->cinfo));
  } else {
    jpeg_finish_decompress(&d->cinfo);
  }
  return true;
}

// DecodeAndCropJpeg's way (TF's jpeg_mem.cc): libjpeg-turbo decodes only the crop's columns,
// widened to whole iMCUs (jpeg_crop_scanline), skipping the rows above it; the pixels at the
// crop's edges then come from upsampling within that window, as TF's do. `row` holds one
// decoded row (output_width * components); false on a libjpeg error.
bool JpegReadCrop(JpegDecoder* d, const int32_t* crop, uint8_t* out, JSAMPLE* row) {
  if (setjmp(d->err.jump)) return false;
  jpeg_start_decompress(&d->cinfo);
  JDIMENSION x = static_cast<JDIMENSION>(crop[1]), w = static_cast<JDIMENSION>(crop[3]);
  jpeg_crop_scanline(&d->cinfo, &x, &w);
  if (crop[0] > 0) jpeg_skip_scanlines(&d->cinfo, static_cast<JDIMENSION>(crop[0]));
  const int64_t comps = d->components;
  const int64_t skip = (crop[1] - static_cast<int64_t>(x)) * comps;
  for (int32_t r = 0; r < crop[2]; ++r) {
    if (jpeg_read_scanlines(&d->cinfo, &row, 1) != 1) return false;
    std::memcpy(out + r * int64_t{crop[3]} * comps, row + skip, int64_t{crop[3]} * comps);
  }
  jpeg_abort_decompress(&d->cinfo);
  return true;
}

template <typename Out>
Status DecodeJpegInto(const KernelContext& ctx, const DecodeState& st, const std::string& data,
                      Tensor** decoded) {
  if (st.channels == 4) return ctx.Error("JPEG does not support 4 channels");
  JpegDecoder d;
  auto fail = [&](std::string_view what) {
    const std::string msg = d.err.message[0] ? std::string(": ") + d.err.message : std::string();
    if (d.created) jpeg_destroy_decompress(&d.cinfo);
    return ctx.Error("invalid JPEG data (", what, msg, ")");
  };
  if (!JpegStart(&d, st, data)) return fail("header");
  const int64_t h = d.cinfo.output_height, w = d.cinfo.output_width;
  if (h <= 0 || w <= 0 || h * w * d.cinfo.num_components >= (int64_t{1} << 29)) {
    jpeg_destroy_decompress(&d.cinfo);
    return ctx.Error("invalid JPEG image size ", w, " x ", h);
  }
  if (st.op == DecodeOp::kJpegCrop && !d.cmyk && std::is_same_v<Out, uint8_t>) {
    const Tensor& window = ctx.input(1);
    const int32_t* c = window.data<int32_t>();
    if (window.NumElements() != 4 || c[0] < 0 || c[1] < 0 || c[2] <= 0 || c[3] <= 0 ||
        c[0] + int64_t{c[2]} > h || c[1] + int64_t{c[3]} > w) {
      jpeg_destroy_decompress(&d.cinfo);
      return ctx.Error("Invalid JPEG data or crop window: crop ", window.DebugString(),
                       " does not fit the ", h, " x ", w, " image");
    }
    auto row = ctx.AllocateTemp(w * d.components);
    auto out = ctx.AllocateOutput(0, kDTypeOf<Out>, Shape{c[2], c[3], d.components});
    if (!row.ok() || !out.ok()) {
      jpeg_destroy_decompress(&d.cinfo);
      return !row.ok() ? row.status() : out.status();
    }
    *decoded = *out;
    if (!JpegReadCrop(&d, c, (*out)->template data<uint8_t>(), static_cast<JSAMPLE*>(*row))) {
      return fail("scan data");
    }
    jpeg_destroy_decompress(&d.cinfo);
    return OkStatus();
  }
  auto out = ctx.AllocateOutput(0, kDTypeOf<Out>, Shape{h, w, d.components});
  if (!out.ok()) {
    jpeg_destroy_decompress(&d.cinfo);
    return out.status();
  }
  *decoded = *out;
  uint8_t* pixels = nullptr;
  if constexpr (std::is_same_v<Out, uint8_t>) {
    pixels = (*out)->template data<uint8_t>();
  } else {
    auto mem = ctx.AllocateTemp(h * w * d.components);
    if (!mem.ok()) {
      jpeg_destroy_decompress(&d.cinfo);
      return mem.status();
    }
    pixels = static_cast<uint8_t*>(*mem);
  }
  JSAMPLE* cmyk_row = nullptr;
  if (d.cmyk) {
    auto mem = ctx.AllocateTemp(4 * w);
    if (!mem.ok()) {
      jpeg_destroy_decompress(&d.cinfo);
      return mem.status();
    }
    cmyk_row = static_cast<JSAMPLE*>(*mem);
  }
  int64_t rows = 0;
  if (!JpegRead(&d, pixels, cmyk_row, &rows, st.try_recover_truncated)) return fail("scan data");
  jpeg_destroy_decompress(&d.cinfo);
  const float fraction = static_cast<float>(rows) / static_cast<float>(h);
  if (fraction < std::min(1.0f, st.acceptable_fraction)) {
    return ctx.Error("invalid JPEG data: only ", rows, " of ", h,
                     " rows could be decoded (acceptable_fraction ", st.acceptable_fraction, ")");
  }
  const int64_t stride = w * d.components;
  if (rows < h) std::memset(pixels + rows * stride, 0, (h - rows) * stride);
  if constexpr (!std::is_same_v<Out, uint8_t>) {
    // DecodePng with dtype uint16 on JPEG data: TF scales by 65536 / 256.
    Out* o = (*out)->template data<Out>();
    for (int64_t i = 0; i < h * stride; ++i) o[i] = static_cast<Out>(pixels[i] * 256);
  }
  return OkStatus();
}

// ---- DecodeAndCropJpeg, ExtractJpegShape
// ---------------------------------------------------------

// The crop window [y, x, height, width] of the decoded image (TF's decode-then-crop result).
Status CropDecoded(const KernelContext& ctx, const Tensor& window, Tensor* decoded) {
  if (window.NumElements() != 4) {
    return ctx.Error("crop_window must have 4 elements, got shape ", window.shape().ToString());
  }
  const int32_t* c = window.data<int32_t>();
  const int64_t h = decoded->dim(0), w = decoded->dim(1), ch = decoded->dim(2);
  if (c[0] < 0 || c[1] < 0 || c[2] <= 0 || c[3] <= 0 || c[0] + int64_t{c[2]} > h ||
      c[1] + int64_t{c[3]} > w) {
    return ctx.Error("Invalid JPEG data or crop window: crop [", c[0], ", ", c[1], ", ", c[2], ", ",
                     c[3], "] does not fit the ", h, " x ", w, " image");
  }
  const Tensor full = decoded->DeepCopy();
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, full.dtype(), Shape{c[2], c[3], ch}));
  const int64_t row = int64_t{c[3]} * ch * static_cast<int64_t>(DTypeSize(full.dtype()));
  for (int64_t y = 0; y < c[2]; ++y) {
    std::memcpy(static_cast<char*>(out->raw_data()) + y * row,
                static_cast<const char*>(full.raw_data()) +
                    ((c[0] + y) * w + c[1]) * ch * static_cast<int64_t>(DTypeSize(full.dtype())),
                row);
  }
  return OkStatus();
}

// [height, width, components] from the JPEG header, without decoding the scans.
Status ComputeExtractJpegShape(const KernelContext& ctx) {
  const std::string& data = ctx.input(0).data<std::string>()[0];
  JpegDecoder d;
  const DecodeState st;
  const bool ok = !data.empty() && JpegStart(&d, st, data);
  const std::string msg = d.err.message;
  int64_t dims[3] = {0, 0, 0};
  if (ok) {
    dims[0] = d.cinfo.image_height;
    dims[1] = d.cinfo.image_width;
    dims[2] = d.cinfo.num_components;
  }
  if (d.created) jpeg_destroy_decompress(&d.cinfo);
  if (!ok) return ctx.Error("Invalid JPEG data, size ", data.size(), msg.empty() ? "" : ": ", msg);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{3}));
  for (int i = 0; i < 3; ++i) {
    if (out->dtype() == DType::kInt64) {
      out->data<int64_t>()[i] = dims[i];
    } else {
      out->data<int32_t>()[i] = static_cast<int32_t>(dims[i]);
    }
  }
  return OkStatus();
}

// ---- EncodeJpeg, EncodeJpegVariableQuality
// --------------------------------------------------------

struct JpegEncoder {
  jpeg_compress_struct cinfo;
  JpegError err;
  unsigned char* buffer = nullptr;
  unsigned long size = 0;  // NOLINT(google-runtime-int): libjpeg's type
  bool created = false;
};

// Compresses `image` (height x width x components) into d->buffer; false on a libjpeg error.
bool JpegCompress(JpegEncoder* d, const JpegEncodeState& st, int quality, const uint8_t* image,
                  int64_t height, int64_t width, int components) {
  d->cinfo.err = jpeg_std_error(&d->err.mgr);
  d->err.mgr.error_exit = JpegErrorExit;
  d->err.mgr.output_message = JpegOutputMessage;
  d->err.message[0] = '\0';
  if (setjmp(d->err.jump)) return false;
  jpeg_create_compress(&d->cinfo);
  d->created = true;
  jpeg_mem_dest(&d->cinfo, &d->buffer, &d->size);
  d->cinfo.image_width = static_cast<JDIMENSION>(width);
  d->cinfo.image_height = static_cast<JDIMENSION>(height);
  d->cinfo.input_components = components;
  d->cinfo.in_color_space = components == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&d->cinfo);
  if (st.optimize_size) d->cinfo.optimize_coding = TRUE;
  d->cinfo.density_unit = static_cast<UINT8>(st.density_unit);
  d->cinfo.X_density = static_cast<UINT16>(st.x_density);
  d->cinfo.Y_density = static_cast<UINT16>(st.y_density);
  jpeg_set_quality(&d->cinfo, quality, TRUE);
  if (st.progressive) jpeg_simple_progression(&d->cinfo);
  if (!st.chroma_downsampling) {
    for (int i = 0; i < d->cinfo.num_components; ++i) {
      d->cinfo.comp_info[i].h_samp_factor = 1;
      d->cinfo.comp_info[i].v_samp_factor = 1;
    }
  }
  jpeg_start_compress(&d->cinfo, TRUE);
  if (!st.xmp.empty()) {
    // XMP lives in an APP1 marker after its namespace, NUL-terminated.
    static constexpr char kNamespace[] = "http://ns.adobe.com/xap/1.0/";
    std::vector<JOCTET> marker(kNamespace, kNamespace + sizeof(kNamespace));
    marker.insert(marker.end(), st.xmp.begin(), st.xmp.end());
    jpeg_write_marker(&d->cinfo, JPEG_APP0 + 1, marker.data(),
                      static_cast<unsigned int>(marker.size()));
  }
  const int64_t stride = width * components;
  while (d->cinfo.next_scanline < d->cinfo.image_height) {
    auto* row = const_cast<JSAMPLE*>(image + d->cinfo.next_scanline * stride);
    jpeg_write_scanlines(&d->cinfo, &row, 1);
  }
  jpeg_finish_compress(&d->cinfo);
  return true;
}

Status ComputeEncodeJpeg(const KernelContext& ctx) {
  const auto& st = ctx.state<JpegEncodeState>();
  const Tensor& image = ctx.input(0);
  if (image.rank() != 3) {
    return ctx.Error("image must be 3-dimensional, got shape ", image.shape().ToString());
  }
  const int64_t h = image.dim(0), w = image.dim(1), c = image.dim(2);
  int quality = st.quality;
  if (ctx.num_inputs() > 1) {
    quality = ctx.input(1).data<int32_t>()[0];
    if (quality < 0 || quality > 100) return ctx.Error("quality must be in [0,100], got ", quality);
  }
  if (st.channels == 0 && c != 1 && c != 3) {
    return ctx.Error("image must have 1 or 3 channels, got ", image.shape().ToString());
  }
  if (st.channels != 0 && c != st.channels) {
    return ctx.Error("format ", st.channels == 1 ? "grayscale" : "rgb", " expects ", st.channels,
                     " channels, got ", image.shape().ToString());
  }
  if (h <= 0 || w <= 0 || h >= (int64_t{1} << 16) || w >= (int64_t{1} << 16)) {
    return ctx.Error("image of shape ", image.shape().ToString(),
                     " cannot be a JPEG: both sides must be in [1, 65535]");
  }
  JpegEncoder d;
  const bool ok = JpegCompress(&d, st, quality, image.data<uint8_t>(), h, w, static_cast<int>(c));
  const std::string msg = d.err.message;
  std::string bytes;
  if (ok) bytes.assign(reinterpret_cast<const char*>(d.buffer), d.size);
  if (d.created) jpeg_destroy_compress(&d.cinfo);
  std::free(d.buffer);
  if (!ok) return ctx.Error("JPEG encoding failed: ", msg);
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{}));
  out->data<std::string>()[0] = std::move(bytes);
  return OkStatus();
}

// ---- BMP ---------------------------------------------------------------------------------------

// An uncompressed BMP as TF reads one: the pixel offset at byte 10, width at 18, height at 22
// (negative: rows top down), bits per pixel at 28 (8, 24 or 32); rows padded to 4 bytes; BGR(A)
// to RGB(A), gray repeated, alpha 255 where the file has none.
Status DecodeBmpInto(const KernelContext& ctx, const DecodeState& st, const std::string& data,
                     Tensor** decoded) {
  if (st.channels == 1) return ctx.Error("'channels' must be 0, 3 or 4 for BMP, got 1");
  if (data.size() < 32)
    return ctx.Error("incomplete BMP content: at least 32 bytes are needed for the header, got ",
                     data.size());
  auto le32 = [&](size_t at) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(data[at + i]);
    return static_cast<int32_t>(v);
  };
  const int64_t header = le32(10), width = le32(18), height = le32(22);
  const int bpp = static_cast<uint8_t>(data[28]) | (static_cast<uint8_t>(data[29]) << 8);
  const int in_channels = bpp / 8;
  if (in_channels != 1 && in_channels != 3 && in_channels != 4)
    return ctx.Error("number of channels inherent in the BMP must be 1, 3 or 4, was ", in_channels);
  if (width <= 0) return ctx.Error("BMP width must be positive, got ", width);
  if (height == 0) return ctx.Error("BMP height must be nonzero");
  if (header < 0) return ctx.Error("BMP header size must be nonnegative, got ", header);
  const int64_t rows = std::abs(height);
  if (width * rows >= std::numeric_limits<int32_t>::max() / 8)
    return ctx.Error("BMP of ", width, " x ", rows, " pixels is too large");
  const int64_t row_size = (in_channels * width + 3) / 4 * 4;
  const int64_t diff = static_cast<int64_t>(data.size()) - header - row_size * rows;
  if (diff != 0)
    return ctx.Error("BMP input size should match (header_size + row_size * abs_height) but they ",
                     "differ by ", diff);
  const int out_channels = st.channels != 0 ? st.channels : in_channels;
  KILN_ASSIGN_OR_RETURN(Tensor * out,
                        ctx.AllocateOutput(0, DType::kUInt8, Shape{rows, width, out_channels}));
  *decoded = out;
  const auto* src = reinterpret_cast<const uint8_t*>(data.data()) + header;
  uint8_t* dst = out->data<uint8_t>();
  for (int64_t i = 0; i < rows; ++i) {
    const uint8_t* row = src + (height < 0 ? i : rows - 1 - i) * row_size;
    for (int64_t j = 0; j < width; ++j) {
      const uint8_t* p = row + j * in_channels;
      uint8_t* o = dst + (i * width + j) * out_channels;
      if (in_channels == 1) {
        for (int c = 0; c < std::min(out_channels, 3); ++c) o[c] = p[0];
      } else {
        o[0] = p[2];
        if (out_channels > 1) o[1] = p[1];
        if (out_channels > 2) o[2] = p[0];
      }
      if (out_channels == 4) o[3] = in_channels == 4 ? p[3] : 255;
    }
  }
  return OkStatus();
}

// ---- GIF ---------------------------------------------------------------------------------------

// TF's DecodeGifV2: every frame, [frames, h, w, 3], for DecodeGif and DecodeImage expanding
// animations; the first frame, [h, w, 3], for DecodeImage that does not; DecodeJpeg and DecodePng
// take a GIF of one frame.
Status DecodeGifInto(const KernelContext& ctx, const DecodeState& st, const std::string& data,
                     Tensor** decoded) {
  if (st.channels != 0 && st.channels != 3)
    return ctx.Error("channels must be 0 or 3 for GIF, got ", st.channels);
  const bool single = st.op == DecodeOp::kImage && !st.expand_animations;
  Result<GifFrames> gif = DecodeGif(data, !single);
  if (!gif.ok())
    return ctx.Error("Invalid GIF data (size ", data.size(), "), ", gif.status().message());
  Shape shape{gif->frames, gif->height, gif->width, 3};
  if (st.op == DecodeOp::kJpeg || st.op == DecodeOp::kPng) {
    if (gif->frames != 1)
      return ctx.Error("Got ", gif->frames, " frames, but animated gifs can only be decoded by ",
                       "tf.io.decode_gif or tf.io.decode_image");
    shape = Shape{gif->height, gif->width, 3};
  } else if (single) {
    shape = Shape{gif->height, gif->width, 3};
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, DType::kUInt8, shape));
  std::copy(gif->rgb.begin(), gif->rgb.end(), out->data<uint8_t>());
  *decoded = out;
  return OkStatus();
}

// ---- WebP --------------------------------------------------------------------------------------

// TF 2.21's WebP decoding: uint8 only, the file's channels (3, or 4 with alpha and for every
// animation), [frames, h, w, c] for DecodeWebP, DecodeGif and DecodeImage expanding animations,
// the first frame as [h, w, c] for DecodeImage that does not. TF's DecodeJpeg, DecodePng,
// DecodeBmp and DecodeAndCropJpeg return the 4-D array too, against their own 3-D shapes (and
// the crop is ignored): those are refused here, pointing to decode_webp and decode_image.
Status DecodeWebpInto(const KernelContext& ctx, const DecodeState& st, const std::string& data,
                      Tensor** decoded) {
  if (st.op != DecodeOp::kWebp && st.op != DecodeOp::kImage && st.op != DecodeOp::kGif)
    return ctx.Error("WebP contents; decode them with tf.io.decode_webp or tf.io.decode_image");
  if (st.dtype != DType::kUInt8) return ctx.Error("WebP only supports uint8 for dtype");
  const int want = st.op == DecodeOp::kGif ? 3 : st.channels;
  if (want != 0 && want != 3 && want != 4) return ctx.Error("WebP only supports 3 or 4 channels");
  Result<int> channels = WebpChannels(data);
  if (!channels.ok()) return ctx.Error(channels.status().message());
  if (want != 0 && want != *channels)
    return ctx.Error("Number of channels requested does not match input");
  const bool single = st.op == DecodeOp::kImage && !st.expand_animations;
  Result<WebpFrames> webp = DecodeWebp(data, !single);
  if (!webp.ok()) {
    if (webp.status().code() == StatusCode::kResourceExhausted) return webp.status();
    return ctx.Error(webp.status().message());
  }
  const Shape shape = single ? Shape{webp->height, webp->width, webp->channels}
                             : Shape{webp->frames, webp->height, webp->width, webp->channels};
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, DType::kUInt8, shape));
  std::copy(webp->pixels.begin(), webp->pixels.end(), out->data<uint8_t>());
  *decoded = out;
  return OkStatus();
}

// ---- the decode ops --------------------------------------------------------------------------

// DecodeImage's uint16 of an 8-bit decode (BMP, GIF): each value times 65536 / 256, as TF.
Status WidenTo16(const KernelContext& ctx, Tensor** decoded) {
  const Tensor src = (*decoded)->DeepCopy();  // output 0 is rewritten below
  KILN_ASSIGN_OR_RETURN(*decoded, ctx.AllocateOutput(0, DType::kUInt16, src.shape()));
  for (int64_t i = 0; i < src.NumElements(); ++i)
    (*decoded)->data<uint16_t>()[i] = static_cast<uint16_t>(src.data<uint8_t>()[i] * 256);
  return OkStatus();
}

// DecodeImage's float32: the 8-bit decode times 1/255, a 16-bit PNG's times 1/65535 (TF's
// scales, multiplied in float).
Status ConvertToFloat(const KernelContext& ctx, Tensor* decoded) {
  // A copy: output 0 may be a buffer the caller bound, which the decode wrote into too.
  const Tensor src = decoded->DeepCopy();
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, DType::kFloat, src.shape()));
  float* o = out->data<float>();
  const int64_t n = src.NumElements();
  if (src.dtype() == DType::kUInt16) {
    const float scale = static_cast<float>(1.0 / 65535);
    const uint16_t* p = src.data<uint16_t>();
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<float>(p[i]) * scale;
  } else {
    const float scale = static_cast<float>(1.0 / 255);
    const uint8_t* p = src.data<uint8_t>();
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<float>(p[i]) * scale;
  }
  return OkStatus();
}

Status ComputeDecode(const KernelContext& ctx) {
  const auto& st = ctx.state<DecodeState>();
  const Tensor& contents = ctx.input(0);
  if (contents.rank() != 0) {
    return ctx.Error("'contents' must be a scalar, got shape ", contents.shape().ToString());
  }
  const std::string& data = contents.data<std::string>()[0];
  if (data.empty()) return ctx.Error("input is empty");
  if (data.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return ctx.Error("input contents are too large: ", data.size(), " bytes");
  }
  const Format format = Classify(data);
  if (st.op == DecodeOp::kBmp && format != Format::kBmp && format != Format::kUnknown)
    return ctx.Error("trying to decode a non-BMP image with DecodeBmp; use decode_image");
  if (format == Format::kBmp && st.op != DecodeOp::kBmp && st.op != DecodeOp::kImage)
    return ctx.Error(
        "trying to decode BMP format using a wrong op; use decode_bmp or "
        "decode_image");
  static constexpr const char* kNames[] = {"unknown", "JPEG", "PNG", "GIF", "BMP", "WebP"};
  if (st.op == DecodeOp::kJpegCrop && format != Format::kJpeg && format != Format::kUnknown) {
    return ctx.Error("DecodeAndCropJpeg operation can run on JPEG only, but detected ",
                     kNames[static_cast<int>(format)], ".");
  }
  // TF's DecodeWebP returns such contents as [h, w, c], against its own 4-D shape.
  if (st.op == DecodeOp::kWebp && format != Format::kWebp && format != Format::kUnknown)
    return ctx.Error("DecodeWebP got ", kNames[static_cast<int>(format)],
                     " contents; decode them with tf.io.decode_image");
  Tensor* decoded = nullptr;
  Status s;
  switch (format) {
    case Format::kJpeg:
      s = st.dtype == DType::kUInt16 ? DecodeJpegInto<uint16_t>(ctx, st, data, &decoded)
                                     : DecodeJpegInto<uint8_t>(ctx, st, data, &decoded);
      break;
    case Format::kPng:
      s = DecodePngInto(ctx, st.channels, data,
                        st.dtype == DType::kUInt8 ? DType::kUInt8 : DType::kUInt16, &decoded);
      break;
    case Format::kBmp:
      s = DecodeBmpInto(ctx, st, data, &decoded);
      if (s.ok() && st.dtype == DType::kUInt16) s = WidenTo16(ctx, &decoded);
      break;
    case Format::kGif:
      s = DecodeGifInto(ctx, st, data, &decoded);
      if (s.ok() && st.dtype == DType::kUInt16) s = WidenTo16(ctx, &decoded);
      break;
    case Format::kWebp:
      s = DecodeWebpInto(ctx, st, data, &decoded);
      break;
    case Format::kUnknown:
      return ctx.Error("unknown image file format; one of JPEG, PNG, GIF, BMP, WebP required");
  }
  KILN_RETURN_IF_ERROR(s);
  // DecodeGif of a JPEG or PNG: one frame, [1, h, w, c].
  if (st.op == DecodeOp::kGif && format != Format::kGif && format != Format::kWebp)
    *decoded = decoded->Reshaped(Shape{1, decoded->dim(0), decoded->dim(1), decoded->dim(2)});
  if (st.dtype == DType::kFloat) return ConvertToFloat(ctx, decoded);
  // The JPEG decoder crops as it decodes; a CMYK JPEG is decoded whole, then cropped here.
  if (st.op == DecodeOp::kJpegCrop) {
    const int32_t* c = ctx.input(1).data<int32_t>();
    if (ctx.input(1).NumElements() != 4 || decoded->dim(0) != c[2] || decoded->dim(1) != c[3]) {
      return CropDecoded(ctx, ctx.input(1), decoded);
    }
  }
  return OkStatus();
}

constexpr KernelEntry kCpu[] = {
    {"DecodeJpeg", ComputeDecode},
    {"DecodePng", ComputeDecode},
    {"DecodeImage", ComputeDecode},
    {"DecodeBmp", ComputeDecode},
    {"DecodeGif", ComputeDecode},
    {"DecodeWebP", ComputeDecode},
    {"EncodePng", ComputeEncodePng},
    {"DecodeAndCropJpeg", ComputeDecode},
    {"ExtractJpegShape", ComputeExtractJpegShape},
    {"EncodeJpeg", ComputeEncodeJpeg},
    {"EncodeJpegVariableQuality", ComputeEncodeJpeg},
};

}  // namespace

std::span<const KernelEntry> ImageCodecCpuKernels() { return kCpu; }

}  // namespace kiln::exec
