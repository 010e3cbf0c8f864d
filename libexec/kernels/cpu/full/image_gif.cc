// GIF decoding as TensorFlow gets it: giflib 5's DGifSlurp (records, sub-blocks, its LZW
// decoder with the table entry of the previous code completed one code late, interlaced rows
// reordered) and TF's gif_io.cc composing the frames. Errors and cut files behave as TF 2.21's
// do (checked on files cut at several places). Written here rather than linked: the format
// is small and fixed, and the decoder then needs nothing the runtime does not already have.
#include "kernels/cpu/full/image_gif.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cstddef>
#include <cstring>
#include <optional>

namespace kiln::exec {
namespace {

// giflib's error codes that matter to TF's decision, and their strings.
enum class GifError {
  kNone,
  kUnknown,  // giflib's failures without an error code (a frame of zero width or height)
  kReadFailed,
  kNotGif,
  kWrongRecord,
  kImageDefect,
  kEofTooSoon,
  kNoImage,
  kTooLarge,
};

const char* ErrorString(GifError e) {
  switch (e) {
    case GifError::kReadFailed:
      return "Failed to read from given file";
    case GifError::kNotGif:
      return "Data is not in GIF format";
    case GifError::kWrongRecord:
      return "Wrong record type detected";
    case GifError::kImageDefect:
      return "Image is defective, decoding aborted";
    case GifError::kEofTooSoon:
      return "Image EOF detected before image complete";
    case GifError::kNoImage:
      return "No Image Descriptor detected";
    case GifError::kUnknown:
    case GifError::kTooLarge:
    case GifError::kNone:
      break;
  }
  return "Unknown error";
}

struct ColorMap {
  int count = 0;
  std::vector<uint8_t> rgb;  // count * 3
};

struct Image {
  int left = 0, top = 0, width = 0, height = 0;
  bool interlace = false;
  std::optional<ColorMap> colors;
  std::vector<uint8_t> raster;  // empty until its pixels were read
  int transparent = -1;         // from the first graphic control extension before it
};

class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  bool Read(void* out, size_t n) {
    if (data_.size() - pos_ < n) {
      pos_ = data_.size();
      return false;
    }
    std::memcpy(out, data_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  bool Byte(uint8_t* b) { return Read(b, 1); }
  bool Word(int* w) {
    uint8_t b[2];
    if (!Read(b, 2)) return false;
    *w = b[0] | (b[1] << 8);
    return true;
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

bool ReadColorMap(Reader& r, int bits, ColorMap* map) {
  map->count = 1 << bits;
  map->rgb.resize(static_cast<size_t>(map->count) * 3);
  return r.Read(map->rgb.data(), map->rgb.size());
}

// giflib's LZW decoder (DGifDecompressLine and DGifDecompressInput) over one image's sub-blocks.
class Lzw {
 public:
  static constexpr int kMaxCode = 4095, kBits = 12, kNoCode = 4098;

  Lzw(Reader& r, int code_size) : r_(r), bits_per_pixel_(code_size) {
    clear_ = 1 << code_size;
    eof_ = clear_ + 1;
    Reset();
  }

  // The next `n` pixels into `out`.
  GifError Line(uint8_t* out, int64_t n) {
    int64_t i = 0;
    while (stack_size_ != 0 && i < n) out[i++] = stack_[--stack_size_];
    while (i < n) {
      int code = 0;
      if (GifError e = NextCode(&code); e != GifError::kNone) return e;
      if (code == eof_) return GifError::kEofTooSoon;
      if (code == clear_) {
        Reset();
        continue;
      }
      if (code < clear_) {
        out[i++] = static_cast<uint8_t>(code);
      } else {
        // Trace the chain back to a pixel, pushing suffixes; a code not yet in the table is
        // only valid as the one being defined (KwKwK).
        int prefix = code;
        if (prefix_[code] == kNoCode) {
          prefix = last_;
          const int from = code == running_ - 2 ? last_ : code;
          suffix_[running_ - 2] = stack_[stack_size_++] = FirstPixel(from);
        }
        while (stack_size_ < kMaxCode && prefix > clear_ && prefix <= kMaxCode) {
          stack_[stack_size_++] = suffix_[prefix];
          prefix = prefix_[prefix];
        }
        if (stack_size_ >= kMaxCode || prefix > kMaxCode) return GifError::kImageDefect;
        stack_[stack_size_++] = static_cast<uint8_t>(prefix);
        while (stack_size_ != 0 && i < n) out[i++] = stack_[--stack_size_];
      }
      if (last_ != kNoCode && running_ - 2 < kMaxCode + 1 && prefix_[running_ - 2] == kNoCode) {
        prefix_[running_ - 2] = last_;
        suffix_[running_ - 2] = FirstPixel(code == running_ - 2 ? last_ : code);
      }
      last_ = code;
    }
    return GifError::kNone;
  }

  // Skips the rest of the image's sub-blocks up to the empty one.
  GifError Finish() {
    for (;;) {
      uint8_t size = 0;
      if (!r_.Byte(&size)) return GifError::kReadFailed;
      if (size == 0) return GifError::kNone;
      uint8_t skip[255];
      if (!r_.Read(skip, size)) return GifError::kReadFailed;
    }
  }

 private:
  void Reset() {
    prefix_.fill(kNoCode);
    running_ = eof_ + 1;
    running_bits_ = bits_per_pixel_ + 1;
    max_code1_ = 1 << running_bits_;
    last_ = kNoCode;
  }

  // The first pixel of `code`'s string (giflib's DGifGetPrefixChar, with its loop bound; a
  // broken chain gives its no-code marker's low byte, as giflib stores it).
  uint8_t FirstPixel(int code) const {
    int i = 0;
    while (code > clear_ && i++ <= kMaxCode) {
      if (code > kMaxCode) return static_cast<uint8_t>(kNoCode & 0xff);
      code = prefix_[code];
    }
    return static_cast<uint8_t>(code);
  }

  GifError NextCode(int* code) {
    if (running_bits_ > kBits) return GifError::kImageDefect;
    while (shift_state_ < running_bits_) {
      if (block_pos_ == block_size_) {
        uint8_t size = 0;
        if (!r_.Byte(&size)) return GifError::kReadFailed;
        if (size == 0) return GifError::kImageDefect;
        if (!r_.Read(block_.data(), size)) return GifError::kReadFailed;
        block_size_ = size;
        block_pos_ = 0;
      }
      shift_ |= static_cast<uint32_t>(block_[block_pos_++]) << shift_state_;
      shift_state_ += 8;
    }
    *code = static_cast<int>(shift_ & ((1u << running_bits_) - 1));
    shift_ >>= running_bits_;
    shift_state_ -= running_bits_;
    if (running_ < kMaxCode + 2 && ++running_ > max_code1_ && running_bits_ < kBits) {
      max_code1_ <<= 1;
      ++running_bits_;
    }
    return GifError::kNone;
  }

  Reader& r_;
  int bits_per_pixel_, clear_ = 0, eof_ = 0, running_ = 0, running_bits_ = 0, max_code1_ = 0;
  int last_ = kNoCode;
  uint32_t shift_ = 0;
  int shift_state_ = 0;
  std::array<uint8_t, 255> block_{};
  int block_size_ = 0, block_pos_ = 0;
  std::array<int, kMaxCode + 1> prefix_{};
  std::array<uint8_t, kMaxCode + 1> suffix_{};
  std::array<uint8_t, kMaxCode + 1> stack_{};
  int stack_size_ = 0;
};

// One image record after its ',' (DGifGetImageDesc, then DGifSlurp's pixel reads). Appends the
// image once its descriptor and code size were read (raster left empty on a later failure).
GifError ReadImage(Reader& r, int transparent, std::vector<Image>* images) {
  Image im;
  uint8_t flags = 0;
  if (!r.Word(&im.left) || !r.Word(&im.top) || !r.Word(&im.width) || !r.Word(&im.height) ||
      !r.Byte(&flags))
    return GifError::kReadFailed;
  im.interlace = (flags & 0x40) != 0;
  if ((flags & 0x80) != 0) {
    ColorMap map;
    if (!ReadColorMap(r, (flags & 0x07) + 1, &map)) return GifError::kReadFailed;
    im.colors = std::move(map);
  }
  im.transparent = transparent;
  uint8_t code_size = 0;
  if (!r.Byte(&code_size)) return GifError::kReadFailed;
  images->push_back(std::move(im));
  if (code_size > 8) return GifError::kReadFailed;
  Image& sp = images->back();
  if (sp.width <= 0 || sp.height <= 0 || sp.width > INT_MAX / sp.height) return GifError::kUnknown;
  if (static_cast<int64_t>(sp.width) * sp.height > (int64_t{1} << 28)) return GifError::kTooLarge;
  // giflib leaves what it could not decode as it was allocated; zeros here.
  sp.raster.assign(static_cast<size_t>(sp.width) * sp.height, 0);
  Lzw lzw(r, code_size);
  GifError e = GifError::kNone;
  if (sp.interlace) {
    static constexpr int kOffset[] = {0, 4, 2, 1}, kJump[] = {8, 8, 4, 2};
    for (int pass = 0; pass < 4 && e == GifError::kNone; ++pass)
      for (int row = kOffset[pass]; row < sp.height && e == GifError::kNone; row += kJump[pass])
        e = lzw.Line(sp.raster.data() + static_cast<size_t>(row) * sp.width, sp.width);
  } else {
    e = lzw.Line(sp.raster.data(), static_cast<int64_t>(sp.raster.size()));
  }
  if (e == GifError::kNone) e = lzw.Finish();
  // A frame whose pixels could not all be read is dropped (TF 2.21's giflib: a file cut inside
  // its third frame decodes to two).
  if (e != GifError::kNone) images->pop_back();
  return e;
}

// An extension record after its '!': the transparent index of a graphic control extension
// (block of 4 bytes, flag bit 0), else `transparent` unchanged.
GifError ReadExtension(Reader& r, bool* seen_gce, int* transparent) {
  uint8_t function = 0;
  if (!r.Byte(&function)) return GifError::kReadFailed;
  bool first = true;
  for (;;) {
    uint8_t size = 0;
    if (!r.Byte(&size)) return GifError::kReadFailed;
    if (size == 0) return GifError::kNone;
    std::array<uint8_t, 255> block{};
    if (!r.Read(block.data(), size)) return GifError::kReadFailed;
    if (first && function == 0xF9 && !*seen_gce) {
      *seen_gce = true;
      *transparent = size == 4 && (block[0] & 0x01) != 0 ? block[3] : -1;
    }
    first = false;
  }
}

}  // namespace

Result<GifFrames> DecodeGif(std::string_view data, bool all_frames) {
  Reader r(data);
  char stamp[6];
  if (!r.Read(stamp, 6))
    return InvalidArgument("failed to open gif file: ", ErrorString(GifError::kReadFailed));
  if (std::memcmp(stamp, "GIF", 3) != 0)
    return InvalidArgument("failed to open gif file: ", ErrorString(GifError::kNotGif));
  int screen_w = 0, screen_h = 0;
  uint8_t flags = 0, background = 0, aspect = 0;
  std::optional<ColorMap> global;
  // giflib reports any failure of the screen descriptor or the global colour table as this.
  const auto no_screen = [] {
    return InvalidArgument("failed to open gif file: No screen descriptor detected");
  };
  if (!r.Word(&screen_w) || !r.Word(&screen_h) || !r.Byte(&flags) || !r.Byte(&background) ||
      !r.Byte(&aspect))
    return no_screen();
  if ((flags & 0x80) != 0) {
    ColorMap map;
    if (!ReadColorMap(r, (flags & 0x07) + 1, &map)) return no_screen();
    global = std::move(map);
  }

  // DGifSlurp: records until the trailer; a graphic control extension belongs to the next image.
  std::vector<Image> images;
  GifError error = GifError::kNone;
  bool seen_gce = false;
  int transparent = -1;
  for (bool done = false; !done && error == GifError::kNone;) {
    uint8_t record = 0;
    if (!r.Byte(&record)) {
      error = GifError::kReadFailed;
      break;
    }
    switch (record) {
      case ',':
        error = ReadImage(r, transparent, &images);
        seen_gce = false;
        transparent = -1;
        break;
      case '!':
        error = ReadExtension(r, &seen_gce, &transparent);
        break;
      case ';':
        done = true;
        break;
      default:
        error = GifError::kWrongRecord;
    }
  }
  if (error == GifError::kNone && images.empty()) error = GifError::kNoImage;
  if (error == GifError::kTooLarge)
    return InvalidArgument("failed to slurp gif file: a frame of more than 2^28 pixels");
  // TF goes on with the frames read (a missing trailer, a file cut inside a later frame), not
  // when there are none or the last has no pixels (a frame of zero size, a bad code size).
  if (error != GifError::kNone &&
      (images.empty() || images.back().raster.empty() || error == GifError::kEofTooSoon))
    return InvalidArgument("failed to slurp gif file: ", ErrorString(error));
  if (images.empty()) return InvalidArgument("gif file does not contain any image");

  GifFrames out;
  for (const Image& im : images) {
    out.height = std::max<int64_t>(out.height, im.height);
    out.width = std::max<int64_t>(out.width, im.width);
  }
  out.frames = all_frames ? static_cast<int64_t>(images.size()) : 1;
  const int64_t frame_size = out.height * out.width * 3;
  // A few KB of LZW can describe gigabytes of frames: bounded, with the sizes named.
  if (frame_size * out.frames > (int64_t{1} << 32))
    return InvalidArgument(out.frames, " frames of ", out.height, " x ", out.width,
                           " pixels exceed the 4 GiB this decoder allows");
  out.rgb.assign(static_cast<size_t>(out.frames * frame_size), 0);
  for (int64_t k = 0; k < out.frames; ++k) {
    const Image& im = images[static_cast<size_t>(k)];
    uint8_t* frame = out.rgb.data() + k * frame_size;
    if (k > 0) std::memcpy(frame, frame - frame_size, static_cast<size_t>(frame_size));
    const int64_t top = std::max<int64_t>(im.top, 0), left = std::max<int64_t>(im.left, 0);
    const int64_t bottom = std::min<int64_t>(int64_t{im.top} + im.height, out.height);
    const int64_t right = std::min<int64_t>(int64_t{im.left} + im.width, out.width);
    const ColorMap* colors = im.colors ? &*im.colors : global ? &*global : nullptr;
    if (colors == nullptr) return InvalidArgument("missing color map for frame ", k);
    for (int64_t i = top; i < bottom; ++i) {
      for (int64_t j = left; j < right; ++j) {
        const int index = im.raster[static_cast<size_t>((i - im.top) * im.width + (j - im.left))];
        uint8_t* p = frame + (i * out.width + j) * 3;
        if (index == im.transparent) {
          if (k == 0) p[0] = p[1] = p[2] = 0;
          continue;
        }
        if (index >= colors->count)
          return InvalidArgument("found color index ", index, " outside of color map range ",
                                 colors->count);
        std::memcpy(p, colors->rgb.data() + static_cast<ptrdiff_t>(index) * 3, 3);
      }
    }
  }
  return out;
}

}  // namespace kiln::exec
