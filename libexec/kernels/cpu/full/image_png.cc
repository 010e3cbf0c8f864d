// PNG for the image codec ops' CPU kernels (kernels/cpu/full/image_codec_ops.cc): decoding and
// encoding with libpng, set up as TensorFlow's png_io.cc sets it up (see the opening comment of
// kernels/full/image_codec_ops.cc). libpng reports fatal errors by longjmp: the functions that
// call it hold no C++ objects with destructors between their setjmp and the library calls.
// Op families: ImageCodec
#include "kernels/cpu/full/image_png.h"

#include <png.h>
#include <zlib.h>

#include <algorithm>
#include <csetjmp>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/full/image_codec_ops.h"
#include "kernels/kernel_util.h"

namespace kiln::exec {
namespace {

// ---- PNG ---------------------------------------------------------------------------------------

struct PngReader {
  png_structp png = nullptr;
  png_infop info = nullptr;
  const uint8_t* data = nullptr;
  size_t left = 0;
  png_uint_32 width = 0, height = 0;
  int bit_depth = 0, color_type = 0, channels = 0, passes = 1;
  bool synthesize_16 = false;
  char message[256] = {};
};

void PngError(png_structp png, png_const_charp msg) {
  auto* r = static_cast<PngReader*>(png_get_error_ptr(png));
  std::snprintf(r->message, sizeof(r->message), "%s", msg);
  png_longjmp(png, 1);
}
void PngWarning(png_structp, png_const_charp) {}
void PngRead(png_structp png, png_bytep out, png_size_t n) {
  auto* r = static_cast<PngReader*>(png_get_io_ptr(png));
  if (r->left < n) png_error(png, "More bytes requested to read than available");
  std::memcpy(out, r->data, n);
  r->data += n;
  r->left -= n;
}

// TF's CommonInitDecode: reads the header and sets the transformations.
bool PngStart(PngReader* r, int desired_channels, int bits) {
  r->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, r, PngError, PngWarning);
  if (!r->png) return false;
  if (setjmp(png_jmpbuf(r->png))) return false;
  r->info = png_create_info_struct(r->png);
  if (!r->info) return false;
  png_set_read_fn(r->png, r, PngRead);
  png_read_info(r->png, r->info);
  png_get_IHDR(r->png, r->info, &r->width, &r->height, &r->bit_depth, &r->color_type, nullptr,
               nullptr, nullptr);
  if (r->width == 0 || r->height == 0) return false;
  const bool trns = png_get_valid(r->png, r->info, PNG_INFO_tRNS) != 0;
  r->channels = desired_channels;
  if (r->channels == 0) {
    r->channels = r->color_type == PNG_COLOR_TYPE_PALETTE ? (trns ? 4 : 3)
                                                          : png_get_channels(r->png, r->info);
  }
  const bool has_alpha = (r->color_type & PNG_COLOR_MASK_ALPHA) != 0;
  if ((r->channels & 1) == 0) {
    if (!has_alpha) {
      if (trns) {
        png_set_tRNS_to_alpha(r->png);
      } else {
        png_set_add_alpha(r->png, (1 << r->bit_depth) - 1, PNG_FILLER_AFTER);
      }
    }
  } else if (has_alpha || trns) {
    png_set_strip_alpha(r->png);
  }
  if (r->bit_depth > 8 && bits <= 8) png_set_strip_16(r->png);
  r->synthesize_16 = r->bit_depth <= 8 && bits == 16;
  png_set_packing(r->png);
  r->passes = png_set_interlace_handling(r->png);
  if (bits > 8) png_set_swap(r->png);  // little-endian hosts
  if (r->color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(r->png);
  const bool want_gray = r->channels < 3;
  const bool is_gray = (r->color_type & PNG_COLOR_MASK_COLOR) == 0;
  if (is_gray && r->bit_depth < 8) png_set_expand_gray_1_2_4_to_8(r->png);
  if (want_gray) {
    if (!is_gray) png_set_rgb_to_gray(r->png, 1, 0.299, 0.587);
  } else if (is_gray) {
    png_set_gray_to_rgb(r->png);
  }
  png_read_update_info(r->png, r->info);
  return true;
}

bool PngFinish(PngReader* r, png_bytep data, int64_t row_bytes) {
  if (setjmp(png_jmpbuf(r->png))) return false;
  for (int p = 0; p < r->passes; ++p) {
    png_bytep row = data;
    for (png_uint_32 h = 0; h < r->height; ++h, row += row_bytes)
      png_read_row(r->png, row, nullptr);
  }
  png_read_end(r->png, r->info);
  return true;
}

void PngFree(PngReader* r) {
  if (r->png) png_destroy_read_struct(&r->png, r->info ? &r->info : nullptr, nullptr);
  r->png = nullptr;
  r->info = nullptr;
}

}  // namespace

Status DecodePngInto(const KernelContext& ctx, int channels, const std::string& data, DType dtype,
                     Tensor** decoded) {
  const int bits = dtype == DType::kUInt16 ? 16 : 8;
  PngReader r;
  r.data = reinterpret_cast<const uint8_t*>(data.data());
  r.left = data.size();
  if (!PngStart(&r, channels, bits)) {
    const std::string msg = r.message;
    PngFree(&r);
    return ctx.Error("invalid PNG: failed to initialise the decoder", msg.empty() ? "" : ": ", msg);
  }
  const int64_t w = r.width, h = r.height;
  if (w >= (int64_t{1} << 27) || h >= (int64_t{1} << 27) || w * h >= (int64_t{1} << 29)) {
    PngFree(&r);
    return ctx.Error("PNG size too large: ", w, " by ", h);
  }
  auto out = ctx.AllocateOutput(0, dtype, Shape{h, w, r.channels});
  if (!out.ok()) {
    PngFree(&r);
    return out.status();
  }
  *decoded = *out;
  const int64_t row_bytes = w * r.channels * (bits / 8);
  auto* bytes = static_cast<png_bytep>((*out)->raw_data());
  if (!PngFinish(&r, bytes, row_bytes)) {
    const std::string msg = r.message;
    PngFree(&r);
    return ctx.Error("invalid PNG data", msg.empty() ? "" : ": ", msg);
  }
  PngFree(&r);
  if (r.synthesize_16) {
    // 8-bit samples were read into the first half of each 16-bit row: widen in place, last first.
    uint16_t* o = (*out)->data<uint16_t>();
    for (int64_t y = h; y-- > 0;) {
      const uint8_t* src = bytes + y * row_bytes;
      uint16_t* dst = o + y * (row_bytes / 2);
      for (int64_t i = w * r.channels; i-- > 0;) dst[i] = static_cast<uint16_t>(src[i] * 257);
    }
  }
  return OkStatus();
}

// ---- EncodePng ---------------------------------------------------------------------------------

namespace {

struct PngWriter {
  std::string* out;
  char message[256];
};

void PngWriteData(png_structp png, png_bytep data, png_size_t n) {
  static_cast<PngWriter*>(png_get_io_ptr(png))->out->append(reinterpret_cast<const char*>(data), n);
}
void PngFlush(png_structp) {}
void PngWriteError(png_structp png, png_const_charp msg) {
  auto* w = static_cast<PngWriter*>(png_get_error_ptr(png));
  std::snprintf(w->message, sizeof(w->message), "%s", msg);
  png_longjmp(png, 1);
}

bool PngWrite(PngWriter* w, const uint8_t* image, int64_t width, int64_t height, int channels,
              int bits, int compression, png_structp* png, png_infop* info) {
  *png = png_create_write_struct(PNG_LIBPNG_VER_STRING, w, PngWriteError, PngWarning);
  if (!*png) return false;
  if (setjmp(png_jmpbuf(*png))) return false;
  *info = png_create_info_struct(*png);
  if (!*info) return false;
  static constexpr int kColor[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA,
                                   PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA};
  png_set_write_fn(*png, w, PngWriteData, PngFlush);
  png_set_compression_level(*png, compression < 0 ? Z_DEFAULT_COMPRESSION : compression);
  png_set_compression_mem_level(*png, MAX_MEM_LEVEL);
  png_set_IHDR(*png, *info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), bits,
               kColor[channels - 1], PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(*png, *info);
  if (bits > 8) png_set_swap(*png);  // little-endian hosts
  const int64_t row_bytes = width * channels * (bits / 8);
  for (int64_t y = 0; y < height; ++y)
    png_write_row(*png, const_cast<png_bytep>(image + y * row_bytes));
  png_write_end(*png, nullptr);
  return true;
}

}  // namespace

Status ComputeEncodePng(const KernelContext& ctx) {
  const auto& st = ctx.state<image_codec::EncodeState>();
  const Tensor& image = ctx.input(0);
  if (image.rank() != 3) {
    return ctx.Error("image must be 3-dimensional, got shape ", image.shape().ToString());
  }
  const int64_t h = image.dim(0), w = image.dim(1), c = image.dim(2);
  if (c < 1 || c > 4) {
    return ctx.Error("image must have 1, 2, 3, or 4 channels, got shape ",
                     image.shape().ToString());
  }
  if (w >= (int64_t{1} << 31) || h >= (int64_t{1} << 31) || w * h * c >= (int64_t{1} << 31)) {
    return ctx.Error("image too large to encode: shape ", image.shape().ToString());
  }
  if (h == 0 || w == 0) {
    return ctx.Error("PNG encoding failed: the image ", image.shape().ToString(), " is empty");
  }
  KILN_ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, Shape{}));
  std::string& bytes = out->data<std::string>()[0];
  bytes.clear();
  PngWriter writer{&bytes, {}};
  png_structp png = nullptr;
  png_infop info = nullptr;
  const bool ok =
      PngWrite(&writer, static_cast<const uint8_t*>(image.raw_data()), w, h, static_cast<int>(c),
               image.dtype() == DType::kUInt16 ? 16 : 8, st.compression, &png, &info);
  if (png) png_destroy_write_struct(&png, info ? &info : nullptr);
  if (!ok) return ctx.Error("PNG encoding failed: ", writer.message);
  return OkStatus();
}

}  // namespace kiln::exec
